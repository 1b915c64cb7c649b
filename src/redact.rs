//! The one redaction module: every path that stores text (the recorder, import, the audit
//! preview, derive's samples) runs it through here first.
//!
//! Guarantees: secrets are replaced by `***` (keeping a harmless prefix such as the variable
//! name or `Bearer ` so the text stays readable); redaction happens before truncation, so a
//! secret straddling the cut never leaks a prefix; each pattern is compiled only when the
//! text contains its trigger literal, so the common case (no secret) costs a few substring
//! scans, not a dozen regex compilations on the hook path.

use std::borrow::Cow;
use std::sync::OnceLock;

use regex::Regex;

/// The replacement for a secret.
pub const MASK: &str = "***";

/// Length of the audit chain's command preview, in characters.
pub const PREVIEW_CHARS: usize = 120;

struct Rule {
    /// Any of these (lowercase) must occur in the lowercased text for the pattern to run.
    triggers: &'static [&'static str],
    pattern: &'static str,
    /// Replacement; `$name` groups keep a non-secret prefix.
    replace: &'static str,
}

const RULES: &[Rule] = &[
    // PEM private key blocks (a block cut off before its END line is masked to the end).
    Rule {
        triggers: &["-----begin"],
        pattern: r"(?s)(?P<head>-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----).*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)",
        replace: "$head***",
    },
    // user:password@ in any URL scheme.
    Rule {
        triggers: &["@"],
        pattern: r"(?P<head>\b[A-Za-z][A-Za-z0-9+.\-]*://[^:@/\s]+):[^@\s/]+@",
        replace: "$head:***@",
    },
    // Authorization bearer tokens.
    Rule {
        triggers: &["bearer"],
        pattern: r"(?i)(?P<head>\bbearer\s+)[A-Za-z0-9._~+/=\-]{8,}",
        replace: "$head***",
    },
    // JSON Web Tokens.
    Rule {
        triggers: &["eyj"],
        pattern: r"\beyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}",
        replace: "***",
    },
    // AWS access key ids.
    Rule {
        triggers: &["akia", "asia"],
        pattern: r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
        replace: "***",
    },
    // OpenAI and Anthropic keys (sk-, sk-proj-, sk-ant-…).
    Rule {
        triggers: &["sk-"],
        pattern: r"\bsk-[A-Za-z0-9_\-]{20,}",
        replace: "***",
    },
    // GitHub tokens (classic prefixes and fine-grained PATs).
    Rule {
        triggers: &["gh", "github_pat_"],
        pattern: r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})",
        replace: "***",
    },
    // GitLab personal access tokens.
    Rule {
        triggers: &["glpat-"],
        pattern: r"\bglpat-[A-Za-z0-9_\-]{20,}",
        replace: "***",
    },
    // Slack tokens.
    Rule {
        triggers: &["xox", "xapp-"],
        pattern: r"\b(?:xox[baprs]|xapp)-[A-Za-z0-9\-]{10,}",
        replace: "***",
    },
    // Google API keys.
    Rule {
        triggers: &["aiza"],
        pattern: r"\bAIza[0-9A-Za-z_\-]{35}",
        replace: "***",
    },
    // Stripe keys.
    Rule {
        triggers: &["_live_", "_test_"],
        pattern: r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}",
        replace: "***",
    },
    // NAME=value where NAME contains SECRET, TOKEN, PASSWORD/PASSWD or KEY.
    Rule {
        triggers: &["secret", "token", "passw", "key"],
        pattern: r#"(?i)(?P<head>\b[A-Za-z_][A-Za-z0-9_\-]*(?:SECRET|TOKEN|PASSWORD|PASSWD|KEY)[A-Za-z0-9_]*\s*=\s*)(?:"[^"]*"|'[^']*'|[^\s;&|]+)"#,
        replace: "$head***",
    },
    // password: value, token = value, api_key: value (callusguard's pattern 7).
    Rule {
        triggers: &["secret", "token", "passw", "key"],
        pattern: r"(?i)(?P<head>\b(?:password|passwd|secret|api[_\-]?key|token)(?:\s*:\s*|\s+=\s*))[^\s*]\S*",
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

/// Replace every secret in `text` with [`MASK`].
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
pub fn redact_capped(text: &str, max_chars: usize) -> String {
    let clean = redact(text);
    truncate_chars(&clean, max_chars)
}

/// Redact, then keep at most `max_bytes` bytes on a character boundary (appending `…`).
#[must_use]
pub fn redact_capped_bytes(text: &str, max_bytes: usize) -> String {
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
pub fn preview(command: &str) -> String {
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
