//! The one redaction module: every path that stores text (the recorder, import, the audit
//! preview, derive's samples, the busy-store spool, logs) runs it through here first.
//!
//! Guarantees: secrets are replaced by `***` (keeping a harmless prefix such as the variable
//! name or `Bearer ` so the text stays readable); redaction happens before truncation, so a
//! secret straddling the cut never leaks a prefix; redacting redacted text changes nothing
//! (the spool and derive redact again); each pattern is compiled only when the text
//! contains its trigger literal, so the common case (no secret) costs a few substring
//! scans, not a dozen regex compilations on the hook path.
//!
//! What is covered, by kind (the corpus in `tests/fixtures/redact/forms.tsv` has a case of
//! each, and a test sends each through every path that writes): private key blocks; URL
//! user information (passwords holding `/`, `:` or `@` included); `Authorization` headers of
//! any scheme, `Cookie` headers, bare bearer tokens and `Basic` credentials outside a header;
//! JWTs; cloud keys (AWS, Google, Azure client secrets, SAS and presigned-URL signatures);
//! service tokens by prefix (GitHub, GitLab, Grafana, Slack tokens and Slack and Discord
//! webhooks, Stripe, `OpenAI`, Anthropic, npm, `PyPI`, Hugging Face, `SendGrid`, `DigitalOcean`,
//! Vault, Databricks, age, Twilio, Telegram, Mapbox, …); secret-named values in every syntax
//! (`NAME=v`, `"name": "v"`, `'name': 'v'`, `name: v`, `<name>v</name>`, `--name v`, query
//! strings, conninfo, ODBC `Pwd=`), where a secret name ends in SECRET, TOKEN, PASSWORD,
//! PASSWD, PASSPHRASE, KEY, CREDENTIAL(S) or SIGNATURE, or in `_PASS`/`_PWD`/`_PW`, plus the
//! short names `pass=`, `_auth=` (.npmrc) and `pwd=`/`pw=` in a query; program-specific flags
//! (`mysql -pPW`, `sshpass -p`, `redis-cli -a`, `docker login -p`, `curl -u user:pw`,
//! `http -a user:pw`, `openssl pass:PW`, `keytool -storepass`, `ldapsearch -w`, `mongosh -p`,
//! `sqlcmd -P`, `zip -P`, `7z -pPW`, `ssh-keygen -N`, `smbclient -U user%PW`); `.netrc` lines.
//!
//! Why no secret-scanning crate: the ones on crates.io compile hundreds of rules up front
//! (tens of milliseconds, every hook call pays it) to find secrets in files, and have no
//! notion of the readable prefix we keep; these patterns are written for commands and
//! their output, from the rule families the public scanners agree on.

use std::borrow::Cow;
use std::sync::OnceLock;

use regex::Regex;

/// The replacement for a secret.
pub(crate) const MASK: &str = "***";

/// Length of the audit chain's command preview, in characters.
pub(crate) const PREVIEW_CHARS: usize = 120;

struct Rule {
    /// Any of these (lowercase) must occur in the lowercased text for the pattern to run.
    triggers: &'static [&'static str],
    pattern: &'static str,
    /// Replacement; `$name` groups keep a non-secret prefix (and suffix).
    replace: &'static str,
}

/// Names whose value is a secret wherever they are assigned (`NAME=v`, `"name": "v"`,
/// `name: v`, `--name v`), matched case-insensitively as the end of a name, optionally
/// followed by one `_SUFFIX` segment (`SECRET_KEY_BASE`, `TOKEN_V2`): `GITHUB_TOKEN`,
/// `db_password`, `AccountKey`, `client-secret`. `MAX_TOKENS`, `KEYBOARD` or `--password-file`
/// do not end in one of them and stay. The short forms (`PASS`, `PWD`) count only after an
/// `_` (`MYSQL_PWD`, `DB_PASS`), so the shell's `PWD` stays.
macro_rules! secret_name {
    () => {
        r"(?:[A-Za-z0-9_.\-]*?(?:SECRET|TOKEN|PASSWORD|PASSWD|PASSPHRASE|KEY|CREDENTIALS?|SIGNATURE)|[A-Za-z0-9.\-]*_(?:PASS|PWD|PW))(?:_[A-Za-z0-9]+)?"
    };
}

/// A value: a quoted string, or a run up to whitespace or a shell/query separator; never
/// starts with `=` (so `key == x` is a comparison, not an assignment).
macro_rules! value {
    () => {
        r#"(?:\*\*\*|"[^"]*"|'[^']*'|[^\s;&|'"=][^\s;&|'"]*)"#
    };
}

const NAME_TRIGGERS: &[&str] = &[
    "secret",
    "token",
    "passw",
    "passphrase",
    "key",
    "credential",
    "signature",
    "_pass",
    "_pwd",
    "_pw",
];

const RULES: &[Rule] = &[
    // PEM private key blocks (a block cut off before its END line is masked to the end).
    Rule {
        triggers: &["-----begin"],
        pattern: r"(?s)(?P<head>-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----).*?(?P<tail>-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)",
        replace: "$head***$tail",
    },
    // user:password@ in any URL scheme. The password may hold `/`, `:` and `@`: it runs to
    // the last `@` that is followed by a host (no further `@` before the path).
    Rule {
        triggers: &["://"],
        pattern: r#"(?P<head>\b[A-Za-z][A-Za-z0-9+.\-]*://[^:@/\s'"]*):[^\s'"]*?@(?P<host>[^\s@/?#'"]*(?:[/?#\s'"]|\z))"#,
        replace: "$head:***@$host",
    },
    // Authorization / Proxy-Authorization headers, any scheme (Basic, Bearer, token, …).
    Rule {
        triggers: &["authorization"],
        pattern: r#"(?i)(?P<head>\b(?:proxy-)?authorization\\?["']?\s*[:=]\s*\\?["']?(?:[A-Za-z\-]+\s+)?)(?:\*\*\*|[A-Za-z0-9._~+/=:\-]{4,})"#,
        replace: "$head***",
    },
    // Cookie headers: session cookies are credentials (the whole value is masked).
    Rule {
        triggers: &["cookie"],
        pattern: r#"(?i)(?P<head>\b(?:set-)?cookie\\?["']?\s*:\s*)(?:\*\*\*|[^"'\s*][^"'\n]*)"#,
        replace: "$head***",
    },
    // Bearer tokens outside a header.
    Rule {
        triggers: &["bearer"],
        pattern: r"(?i)(?P<head>\bbearer\s+)[A-Za-z0-9._~+/=\-]{8,}",
        replace: "$head***",
    },
    // Basic credentials outside an `Authorization` header (`X-Upstream: Basic …`, a dict in
    // code): base64 after a capitalised `Basic`, holding a digit, `+`, `/` or `=` (so prose
    // such as "Basic usage" stays).
    Rule {
        triggers: &["basic "],
        pattern: r"(?P<head>\b[Bb]asic\s+)(?:[A-Za-z0-9+/]*[0-9+/][A-Za-z0-9+/]*={0,2}|[A-Za-z0-9+/]+={1,2})",
        replace: "$head***",
    },
    // JSON Web Tokens, and Mapbox secret tokens (`sk.` and two JWT-like parts).
    Rule {
        triggers: &["sk.eyj"],
        pattern: r"\bsk\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}",
        replace: "***",
    },
    Rule {
        triggers: &["eyj"],
        pattern: r"\beyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}",
        replace: "***",
    },
    // AWS access key ids.
    Rule {
        triggers: &["akia", "asia", "abia", "acca", "a3t"],
        pattern: r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[0-9A-Z]{16}\b",
        replace: "***",
    },
    // AWS secret access keys given after their name with a space (`aws configure set …`).
    Rule {
        triggers: &["aws_secret_access_key"],
        pattern: r#"(?i)(?P<head>\baws_secret_access_key["']?\s*[=:]?\s*["']?)[A-Za-z0-9/+=]{40}"#,
        replace: "$head***",
    },
    // OpenAI and Anthropic keys (sk-, sk-proj-, sk-ant-…).
    Rule {
        triggers: &["sk-"],
        pattern: r"\bsk-[A-Za-z0-9_\-]{20,}",
        replace: "***",
    },
    // GitHub tokens (classic prefixes and fine-grained PATs).
    Rule {
        triggers: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
        pattern: r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})",
        replace: "***",
    },
    // GitLab tokens (personal, deploy, runner, trigger, OAuth, feed, incoming mail…).
    Rule {
        triggers: &[
            "glpat-", "gldt-", "glrt-", "glptt-", "glsoat-", "glcbt-", "glft-", "glimt-", "gloas-",
            "glagent-",
        ],
        pattern: r"\bgl(?:pat|dt|rt|ptt|soat|cbt|ft|imt|oas|agent)-[A-Za-z0-9_\-]{20,}",
        replace: "***",
    },
    // Grafana service-account and cloud tokens.
    Rule {
        triggers: &["glsa_", "glc_"],
        pattern: r"\b(?:glsa_[A-Za-z0-9_]{20,}|glc_[A-Za-z0-9+/=_]{20,})",
        replace: "***",
    },
    // Slack tokens and webhooks.
    Rule {
        triggers: &["xox", "xapp-"],
        pattern: r"\b(?:xox[abposrecd]|xapp)-[A-Za-z0-9\-]{10,}",
        replace: "***",
    },
    Rule {
        triggers: &["hooks.slack.com", "/api/webhooks/"],
        pattern: r"(?P<head>\b(?:hooks\.slack\.com/(?:services|workflows|triggers)|discord(?:app)?\.com/api/webhooks)/)[A-Za-z0-9/_\-]+",
        replace: "$head***",
    },
    // Google: API keys, OAuth access tokens, OAuth client secrets.
    Rule {
        triggers: &["aiza", "ya29.", "gocspx-"],
        pattern: r"\b(?:AIza[0-9A-Za-z_\-]{35}|ya29\.[0-9A-Za-z_\-]{20,}|GOCSPX-[A-Za-z0-9_\-]{20,})",
        replace: "***",
    },
    // Azure AD client secrets.
    Rule {
        triggers: &["q~"],
        pattern: r"\b[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}",
        replace: "***",
    },
    // Azure SAS signatures.
    Rule {
        triggers: &["sig="],
        pattern: r#"(?i)(?P<head>[?&]sig=)(?:\*\*\*|[^&\s"']+)"#,
        replace: "$head***",
    },
    // Stripe keys and webhook secrets.
    Rule {
        triggers: &["_live_", "_test_", "whsec_"],
        pattern: r"\b(?:(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9]{20,})",
        replace: "***",
    },
    // Twilio API key secrets' SIDs (`SK` + 32 hex) and Telegram bot tokens (`ID:AA…`).
    Rule {
        triggers: &["sk"],
        pattern: r"\bSK[0-9a-fA-F]{32}\b",
        replace: "***",
    },
    Rule {
        triggers: &[":aa"],
        pattern: r"(?P<head>(?:^|[^0-9]))[0-9]{8,10}:AA[A-Za-z0-9_\-]{33,}",
        replace: "$head***",
    },
    // Package registries: npm, PyPI, Hugging Face.
    Rule {
        triggers: &["npm_", "pypi-", "hf_"],
        pattern: r"\b(?:npm_[A-Za-z0-9]{36}|pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{20,}|hf_[A-Za-z]{30,})",
        replace: "***",
    },
    // Other services with a recognisable prefix: SendGrid, Shopify, DigitalOcean,
    // Vault, Databricks, age, Linear, Postman, Doppler, New Relic, Sentry, Atlassian.
    Rule {
        triggers: &[
            "sg.",
            "shp",
            "_v1_",
            "hvs.",
            "hvb.",
            "dapi",
            "age-secret-key-",
            "lin_api_",
            "pmak-",
            "dp.pt.",
            "nrak-",
            "sntrys_",
            "atatt3",
        ],
        pattern: r"\b(?:SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}|shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}|do[opr]_v1_[a-f0-9]{64}|hv[sb]\.[A-Za-z0-9_\-]{20,}|dapi[a-f0-9]{32}|AGE-SECRET-KEY-1[0-9A-Z]{58}|lin_api_[A-Za-z0-9]{40}|PMAK-[A-Za-z0-9\-]{20,}|dp\.pt\.[A-Za-z0-9]{20,}|NRAK-[A-Z0-9]{20,}|sntrys_[A-Za-z0-9+/=_]{20,}|ATATT3[A-Za-z0-9_\-=]{20,})",
        replace: "***",
    },
    // JSON / Python keys: `"password": "…"`, `\"token\":\"…\"`, `'secret': '…'`.
    Rule {
        triggers: NAME_TRIGGERS,
        pattern: concat!(
            r#"(?i)(?P<head>\\?"(?:"#,
            secret_name!(),
            r#")\\?"\s*:\s*\\?")(?:[^"\\]|\\[^"])*"#
        ),
        replace: "$head***",
    },
    Rule {
        triggers: NAME_TRIGGERS,
        pattern: concat!(r"(?i)(?P<head>'(?:", secret_name!(), r")'\s*:\s*')[^']*"),
        replace: "$head***",
    },
    // XML elements: `<password>…</password>` (Maven's settings.xml, .NET configs).
    Rule {
        triggers: NAME_TRIGGERS,
        pattern: concat!(
            r"(?i)(?P<head><(?:",
            secret_name!(),
            r")(?:\s[^>]*)?>)[^<]+"
        ),
        replace: "$head***",
    },
    // NAME=value: env assignments, query strings, conninfo, `--password=…`.
    Rule {
        triggers: NAME_TRIGGERS,
        pattern: concat!(
            r"(?i)(?P<head>\b(?:",
            secret_name!(),
            r")\s*=\s*)",
            value!()
        ),
        replace: "$head***",
    },
    // The short names that are secrets only on their own: `pass=` (login forms), `_auth=`
    // (.npmrc), and `pwd=`/`pw=` in a query string (the shell's `PWD=` stays).
    Rule {
        triggers: &["pass", "_auth", "pwd=", "pw="],
        pattern: concat!(
            r#"(?i)(?P<head>(?:(?:^|[\s&?;,:"'])(?:pass|_auth)\s*=\s*|[?&](?:pwd|pw)=))"#,
            value!()
        ),
        replace: "$head***",
    },
    // name: value (YAML, headers such as `X-Api-Key:` or `PRIVATE-TOKEN:`, logs).
    Rule {
        triggers: NAME_TRIGGERS,
        pattern: concat!(
            r#"(?i)(?P<head>\b(?:"#,
            secret_name!(),
            r#")[ \t]*:[ \t]*)(?:"[^"\n]*"|'[^'\n]*'|[^\s*"'][^\s"']*)"#
        ),
        replace: "$head***",
    },
    // --password VALUE, --api-key VALUE, -pass VALUE (a flag named for a secret, then a
    // separate value that is not another flag).
    Rule {
        triggers: &["pass", "secret", "token", "key", "credential"],
        pattern: r#"(?i)(?P<head>(?:^|[\s"'])--?(?:[A-Za-z0-9]+[\-_])*(?:password|passwd|passphrase|pass|(?:src|dest|new)?(?:store|key)pass|secret|token|api-?key|apikey|access-key|secret-key|private-key|auth-key|credentials?)\s+)(?:\*\*\*|"[^"]*"|'[^']*'|[^\s\-"'][^\s]*)"#,
        replace: "$head***",
    },
    // mysql -pPASSWORD (the password glued to -p: `-p PW` would name a database).
    Rule {
        triggers: &["mysql", "mariadb"],
        pattern: r#"(?P<head>\b(?:mysql|mariadb|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlsh|mysqlpump|mariadb-dump)\b[^|;&\n]*?\s-p)(?:\*\*\*|"[^"]*"|'[^']*'|[^\s"'][^\s]*)"#,
        replace: "$head***",
    },
    // sshpass -p PW, redis-cli -a PW, docker/podman/helm … login -p PW.
    Rule {
        triggers: &["sshpass", "redis-cli", "login"],
        pattern: r#"(?P<head>\b(?:sshpass\b[^|;&\n]*?\s-p|redis-cli\b[^|;&\n]*?\s-a|(?:docker|podman|nerdctl|buildah|skopeo|helm|oras)\b[^|;&\n]*?\blogin\b[^|;&\n]*?\s-p)\s*)(?:\*\*\*|"[^"]*"|'[^']*'|[^\s\-"'][^\s]*)"#,
        replace: "$head***",
    },
    // Password flags of other clients: ldapsearch & co `-w PW`, mongosh/mongo `-p PW`,
    // sqlcmd/bcp `-P PW`, zip/unzip `-P PW`, 7z `-pPW`, ssh-keygen `-N PW`/`-P PW`,
    // smbclient/rpcclient `-U user%PW`.
    Rule {
        triggers: &[
            "ldap",
            "mongo",
            "sqlcmd",
            "bcp",
            "zip",
            "7z",
            "ssh-keygen",
            "smb",
            "rpcclient",
        ],
        pattern: r#"(?P<head>\b(?:ldap(?:search|add|modify|delete|passwd|whoami|compare|modrdn|exop)\b[^|;&\n]*?\s-w\s*|(?:mongosh|mongo|mongodump|mongorestore|mongoexport|mongoimport|mongostat|mongotop)\b[^|;&\n]*?\s-p\s+|(?:sqlcmd|bcp)\b[^|;&\n]*?\s-P\s*|(?:zip|unzip|zipcloak)\b[^|;&\n]*?\s-P\s*|7z[ar]?\b[^|;&\n]*?\s-p|ssh-keygen\b[^|;&\n]*?\s-[NP]\s*|(?:smbclient|rpcclient|smbcacls|smbget|smbtree)\b[^|;&\n]*?\s(?:-U|--user(?:name)?)(?:\s+|=)["']?[^\s%"']*%))(?:\*\*\*|"[^"]*"|'[^']*'|[^\s\-"'][^\s"']*)"#,
        replace: "$head***",
    },
    // curl -u user:password (also --user, --proxy-user, -U, glued or with `=`).
    Rule {
        triggers: &["curl", "wget", "http ", "https ", "xh "],
        pattern: r#"(?P<head>\b(?:curl|wget|http|https|xh)\b[^|;&\n]*?\s(?:-u|--user|--proxy-user|-U|-a|--auth)(?:\s+|=)?["']?[^\s:"']*:)(?:\*\*\*|[^\s"']+)"#,
        replace: "$head***",
    },
    // openssl -pass pass:PW / -passin pass:PW.
    Rule {
        triggers: &["pass:"],
        pattern: r"(?P<head>\bpass:)(?:\*\*\*|\S+)",
        replace: "$head***",
    },
    // .netrc lines: machine H login U password PW.
    Rule {
        triggers: &["machine"],
        pattern: r"(?i)(?P<head>\bmachine\s+\S+\s+login\s+\S+\s+password\s+)(?:\*\*\*|\S+)",
        replace: "$head***",
    },
    // ODBC / ADO.NET connection strings: `;Pwd=…;`.
    Rule {
        triggers: &["pwd"],
        pattern: r#"(?i)(?P<head>(?:^|[;"'])\s*pwd\s*=\s*)(?:\*\*\*|[^;"'\s]+)"#,
        replace: "$head***",
    },
];

fn compiled(i: usize) -> &'static Regex {
    static CELLS: [OnceLock<Regex>; RULES.len()] = [const { OnceLock::new() }; RULES.len()];
    CELLS[i].get_or_init(|| Regex::new(RULES[i].pattern).expect("redaction patterns are valid"))
}

/// The same patterns without Unicode, for ASCII text: the patterns are ASCII, so on ASCII
/// text both mean the same, and these compile several times faster (the hook path).
fn compiled_ascii(i: usize) -> &'static regex::bytes::Regex {
    static CELLS: [OnceLock<regex::bytes::Regex>; RULES.len()] =
        [const { OnceLock::new() }; RULES.len()];
    CELLS[i].get_or_init(|| {
        regex::bytes::RegexBuilder::new(RULES[i].pattern)
            .unicode(false)
            .build()
            .expect("redaction patterns are valid")
    })
}

/// Replace every secret in `text` with `MASK`.
#[must_use]
pub fn redact(text: &str) -> Cow<'_, str> {
    let lower = text.to_ascii_lowercase();
    let ascii = text.is_ascii();
    let mut out: Cow<'_, str> = Cow::Borrowed(text);
    for (i, rule) in RULES.iter().enumerate() {
        if !rule.triggers.iter().any(|t| lower.contains(t)) {
            continue;
        }
        let replaced = if ascii {
            match compiled_ascii(i).replace_all(out.as_bytes(), rule.replace.as_bytes()) {
                // ASCII in, ASCII replacement: still UTF-8.
                Cow::Owned(bytes) => String::from_utf8(bytes).ok(),
                Cow::Borrowed(_) => None,
            }
        } else {
            match compiled(i).replace_all(&out, rule.replace) {
                Cow::Owned(s) => Some(s),
                Cow::Borrowed(_) => None,
            }
        };
        if let Some(s) = replaced {
            out = Cow::Owned(s);
        }
    }
    out
}

/// Redact, then keep at most `max_chars` characters (appending `…` when cut).
#[must_use]
pub(crate) fn redact_capped(text: &str, max_chars: usize) -> String {
    let clean = redact(text);
    truncate_chars(&clean, max_chars)
}

/// Redact, then keep at most `max_bytes` bytes on a character boundary (appending `…`).
#[must_use]
pub(crate) fn redact_capped_bytes(text: &str, max_bytes: usize) -> String {
    let clean = redact(text);
    if clean.len() <= max_bytes {
        return clean.into_owned();
    }
    let mut end = max_bytes.saturating_sub('…'.len_utf8());
    while !clean.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &clean[..end])
}

/// The audit chain's command preview: redacted, then cut to [`PREVIEW_CHARS`].
#[must_use]
pub(crate) fn preview(command: &str) -> String {
    redact_capped(command, PREVIEW_CHARS)
}

fn truncate_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gone(input: &str, secret: &str) -> String {
        let out = redact(input).into_owned();
        assert!(!out.contains(secret), "{secret} survived in {out}");
        assert!(out.contains(MASK), "no mask in {out}");
        out
    }

    fn kept(input: &str) {
        assert_eq!(redact(input), input);
    }

    /// `(kind, secret, text)` for every line of the shared corpus.
    fn corpus() -> Vec<(&'static str, &'static str, String)> {
        include_str!("../tests/fixtures/redact/forms.tsv")
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| {
                let mut parts = l.splitn(3, '\t');
                let kind = parts.next().unwrap();
                let secret = parts.next().unwrap();
                let text = parts.next().unwrap_or_else(|| panic!("{kind}: no text"));
                (kind, secret, text.replace("\\n", "\n"))
            })
            .collect()
    }

    #[test]
    fn every_form_of_the_corpus_is_redacted_and_ordinary_text_kept() {
        let mut leaks = Vec::new();
        for (kind, secret, text) in corpus() {
            let out = redact(&text);
            if kind == "keep" {
                if out != text {
                    leaks.push(format!("{kind}: changed {text:?} -> {out:?}"));
                }
            } else if out.contains(secret) || !out.contains(MASK) {
                leaks.push(format!("{kind}: {out:?}"));
            } else if out.len() < (text.len() - secret.len()) / 2 {
                leaks.push(format!("{kind}: masked too much: {out:?}"));
            }
            // Redaction is idempotent: stored text redacted again (the spool, derive)
            // stays as stored.
            if redact(&out) != out {
                leaks.push(format!(
                    "{kind}: not idempotent: {out:?} -> {:?}",
                    redact(&out)
                ));
            }
        }
        assert!(leaks.is_empty(), "{}", leaks.join("\n"));
    }

    #[test]
    fn the_issue_15_forms_keep_their_readable_prefix() {
        for (input, want) in [
            ("password=hunter2 ./x", "password=*** ./x"),
            ("mysql -u r -pPW7 db", "mysql -u r -p*** db"),
            ("curl -u u:pw9 h", "curl -u u:*** h"),
            (
                "curl -H 'Authorization: Basic YWJjOmRlZg==' h",
                "curl -H 'Authorization: Basic ***' h",
            ),
            (r#"{"password": "x y"}"#, r#"{"password": "***"}"#),
            ("https://u:a/b@c@host/p", "https://u:***@host/p"),
        ] {
            assert_eq!(redact(input), want);
        }
    }

    #[test]
    fn callusguard_patterns() {
        assert_eq!(
            gone(
                "AWS_KEY=AKIAIOSFODNN7EXAMPLE aws s3 ls",
                "AKIAIOSFODNN7EXAMPLE"
            ),
            "AWS_KEY=*** aws s3 ls"
        );
        gone(
            "export API_KEY=sk-abcdefghijklmnopqrstuvwx",
            "sk-abcdefghijklmnopqrstuvwx",
        );
        gone(
            "git clone https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/x",
            "ghp_abcdefghij",
        );
        gone("glpat-abcdefghijklmnopqrstu", "glpat-abcdefghijklmnopqrstu");
        gone("SLACK=xoxb-1234567890-abcdef", "xoxb-1234567890");
        assert_eq!(
            gone("psql postgresql://u:hunter2@h/db -c x", "hunter2"),
            "psql postgresql://u:***@h/db -c x"
        );
        gone("mysql --password: hunter2hunter2", "hunter2hunter2");
        kept("AKIA is a prefix");
        kept("ls -la src/");
        kept("git push origin main");
    }

    #[test]
    fn extended_patterns() {
        gone(
            "curl -H 'Authorization: Bearer abc.def-ghi_jkl123' x",
            "abc.def-ghi_jkl123",
        );
        gone(
            "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0",
        );
        gone("redis://admin:s3cr3tpass@cache:6379/0", "s3cr3tpass");
        gone("https://bob:pa55word@example.com/x", "pa55word");
        gone(
            "key sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
            "abcdefghijklmnopqrstuvwxyz",
        );
        gone(
            "sk-proj-abcdefghijklmnopqrstuvwxyz01",
            "abcdefghijklmnopqrstuvwxyz01",
        );
        gone(
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
            "github_pat_11ABCDEFG",
        );
        gone(
            "GOOGLE=AIzaSyA1234567890abcdefghijklmnopqrstuv",
            "AIzaSyA1234567890",
        );
        gone("stripe sk_live_abcdefghij1234567890", "sk_live_abcdefghij");
        gone(
            "DB_PASSWORD='hunter2 with spaces' ./run",
            "hunter2 with spaces",
        );
        gone("export GITHUB_TOKEN=abc123def456", "abc123def456");
        gone("MY_SECRET=\"quoted value\" make", "quoted value");
        let pem =
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----";
        gone(pem, "MIIEpAIBAAKCAQEA");
        gone(
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk (cut",
            "b3BlbnNzaC1rZXk",
        );
        kept("https://example.com/path?q=1");
        kept("echo password rotation policy");
        kept("git commit -m 'fix token refresh'");
        kept("KEYBOARD_LAYOUT");
        kept("eyJ is how JWTs start");
    }

    #[test]
    fn non_ascii_text_is_redacted_too() {
        gone(
            "café AWS_KEY=AKIAIOSFODNN7EXAMPLE ☕",
            "AKIAIOSFODNN7EXAMPLE",
        );
        gone("psql postgresql://ü:hunter2@h/db", "hunter2");
        kept("naïve text with no secret");
    }

    #[test]
    fn redaction_happens_before_truncation() {
        let cmd = format!("{} sk-abcdefghijklmnopqrstuvwxyz", "x".repeat(110));
        let p = preview(&cmd);
        assert!(!p.contains("sk-a"), "{p}");
        let long = "y".repeat(200);
        assert_eq!(preview(&long).chars().count(), PREVIEW_CHARS + 1);
        assert!(preview(&long).ends_with('…'));
        let capped = redact_capped_bytes(&"é".repeat(100), 11);
        assert!(capped.len() <= 11 && capped.ends_with('…'));
    }

    #[test]
    fn the_byte_cap_walks_back_to_a_character_boundary() {
        // 12 bytes leave 9 for text before the 3-byte ellipsis: byte 9 is inside the fifth
        // `é`, so the cut walks back to 8.
        let text = "é".repeat(100);
        assert_eq!(redact_capped_bytes(&text, 12), "éééé…");
        // A 4-byte character walks back up to three bytes.
        assert_eq!(redact_capped_bytes(&"🦀".repeat(10), 3 + 7), "🦀…");
        // Text that fits exactly is kept whole; one byte over is cut.
        assert_eq!(redact_capped_bytes("abcdef", 6), "abcdef");
        assert_eq!(redact_capped_bytes("abcdefg", 6), "abc…");
        // The cap counts the redacted text, not the raw one.
        assert_eq!(
            redact_capped_bytes("T=sk-abcdefghijklmnopqrstuvwxyz", 8),
            "T=***"
        );
        // A cap below the ellipsis keeps only the ellipsis.
        assert_eq!(redact_capped_bytes("abcdef", 2), "…");
    }
}

#[cfg(test)]
mod properties {
    use proptest::prelude::*;

    /// Fragments that make the rules fire, overlap and meet at their edges.
    const PIECES: &[&str] = &[
        "password",
        "TOKEN",
        "key",
        "_PWD",
        "secret",
        "=",
        ":",
        " ",
        "\"",
        "'",
        "\\",
        "@",
        "/",
        "://",
        "https",
        "postgres",
        "u",
        "pw",
        "***",
        "-p",
        "--password ",
        "mysql ",
        "curl ",
        "-u ",
        "Authorization: ",
        "Basic ",
        "Bearer ",
        "Cookie: ",
        "eyJabcdef.",
        "AKIA",
        "ghp_",
        "sk-",
        "-----BEGIN RSA PRIVATE KEY-----",
        "-----END RSA PRIVATE KEY-----",
        "\n",
        ";",
        "&",
        "?",
        "é",
        "x9Yz0123456789abcdefghij",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        #[test]
        fn redaction_is_idempotent_and_never_panics(
            parts in proptest::collection::vec(0..PIECES.len(), 0..24)
        ) {
            let text: String = parts.iter().map(|&i| PIECES[i]).collect();
            let once = super::redact(&text).into_owned();
            let twice = super::redact(&once).into_owned();
            prop_assert_eq!(&twice, &once, "input {:?}", text);
        }
    }
}
