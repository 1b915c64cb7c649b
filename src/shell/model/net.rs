//! The network side of the model's vocabulary: which files hold secrets, which programs
//! print one, the substitutions in a word, remote locations, and the interpreter
//! code that opens a remote shell. Which programs fetch, decode, send, open sockets or
//! interpret code is their rows' ([`crate::shell::programs`]).

/// How much of an unclosed substitution's text is looked at (bash refuses an unclosed one
/// as a syntax error, so nothing of it runs; the window only keeps the scan linear).
const UNCLOSED_WINDOW: usize = 256;

/// The substitutions (`$(…)`, `` `…` ``, `<(…)`) in a word, each as its text from after the
/// opener to its closing `)` or `` ` `` (nested ones included in the outer's text and
/// yielded again on their own); an unclosed one as at most [`UNCLOSED_WINDOW`] bytes.
/// One pass over the word finds every close, so the total text yielded grows with the
/// word's length times its nesting, never with the number of openers times the length.
pub(crate) fn substitutions(word: &str) -> impl Iterator<Item = &str> {
    let b = word.as_bytes();
    let mut spans: Vec<(usize, Option<usize>)> = Vec::new();
    // Open parentheses: `Some(index into spans)` for a substitution's, `None` for a plain one.
    let mut parens: Vec<Option<usize>> = Vec::new();
    let mut tick: Option<usize> = None;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'(' if i > 0 && matches!(b[i - 1], b'$' | b'<') => {
                parens.push(Some(spans.len()));
                spans.push((i + 1, None));
            }
            b'(' => parens.push(None),
            b')' => {
                if let Some(Some(k)) = parens.pop() {
                    spans[k].1 = Some(i);
                }
            }
            b'`' => {
                if let Some(k) = tick.take() {
                    spans[k].1 = Some(i);
                } else {
                    tick = Some(spans.len());
                    spans.push((i + 1, None));
                }
            }
            _ => {}
        }
        i += 1;
    }
    spans.into_iter().map(move |(start, end)| {
        let mut end = end.unwrap_or_else(|| (start + UNCLOSED_WINDOW).min(b.len()));
        while !word.is_char_boundary(end) {
            end -= 1;
        }
        &word[start..end]
    })
}

/// Does `path` name a secret (keys, credentials, `.env`)?
pub(crate) fn is_secret(path: &str) -> bool {
    let p = path.trim_matches(|c| c == '"' || c == '\'');
    let name = p.rsplit('/').next().unwrap_or(p);
    if name.to_ascii_lowercase().ends_with(".pub") {
        return false;
    }
    if matches!(
        name,
        ".env" | ".ssh" | ".gnupg" | ".aws" | ".password-store"
    ) {
        return true;
    }
    if let Some(ext) = name.strip_prefix(".env.") {
        return !matches!(
            ext,
            "example" | "sample" | "template" | "dist" | "defaults" | "tmpl" | "schema"
        );
    }
    if name.starts_with("id_") && (p.contains(".ssh/") || !name.contains('.')) {
        return true;
    }
    let under = |dir: &str| p.contains(dir);
    if under(".ssh/") && !matches!(name, "config" | "known_hosts" | "authorized_keys") {
        return true;
    }
    if under(".gnupg/") || under(".password-store/") {
        return true;
    }
    matches!(
        name,
        ".netrc"
            | ".pgpass"
            | ".git-credentials"
            | ".npmrc"
            | ".pypirc"
            | "credentials"
            | "credentials.json"
            | "hosts.yml"
            | ".vault-token"
            | "shadow"
            | "secrets.yml"
            | "secrets.yaml"
            | "secrets.json"
            | "master.key"
    ) && (name != "hosts.yml" || under("gh/"))
        && (name != "shadow" || p == "/etc/shadow")
        || (name == "config" && (under(".kube/") || under(".docker/")))
        || (name == "config.json" && under(".docker/"))
        || [".pem", ".key", ".p12", ".pfx", ".keystore", ".jks"]
            .iter()
            .any(|e| name.to_ascii_lowercase().ends_with(e))
}

/// The secret a program prints (`gpg --export-secret-keys`, `gh auth token`, a keychain
/// password), for the pipeline stages after it.
pub(crate) fn prints_secret(p: &str, args: &[String]) -> Option<&'static str> {
    let has = |w: &str| args.iter().any(|a| a == w);
    let starts = |w: &str| args.first().is_some_and(|a| a == w);
    Some(match p {
        "gpg" | "gpg2" if args.iter().any(|a| a.starts_with("--export-secret")) => {
            "gpg secret keys"
        }
        "gh" if starts("auth") && has("token") => "a GitHub token",
        "gcloud" if has("print-access-token") || has("print-identity-token") => "a cloud token",
        "aws" if has("export-credentials") || has("get-session-token") => "cloud credentials",
        "az" if has("get-access-token") => "a cloud token",
        "security" if has("-w") && args.iter().any(|a| a.ends_with("-password")) => {
            "a keychain password"
        }
        "pass" | "gopass" if starts("show") || args.len() == 1 => "a password store entry",
        "op" if starts("read") || starts("item") => "a 1Password secret",
        "vault"
            if starts("read") || args.get(..2).is_some_and(|a| a[0] == "kv" && a[1] == "get") =>
        {
            "a Vault secret"
        }
        _ => return None,
    })
}

/// A word that names a remote location (`host:path`, `user@host:path`), for scp and rsync.
pub(crate) fn is_remote(word: &str) -> bool {
    if word.contains("://") {
        return true;
    }
    match word.split_once(':') {
        Some((host, _)) => !host.is_empty() && !host.contains('/'),
        None => false,
    }
}

/// Does inline interpreter code open a socket and hand it a shell?
pub(crate) fn is_reverse_shell_code(code: &str) -> bool {
    let c = code.to_ascii_lowercase();
    let socket = c.contains("socket") || c.contains("fsockopen") || c.contains("tcpsocket");
    let shell = [
        "subprocess",
        "pty.spawn",
        "dup2",
        "/bin/sh",
        "/bin/bash",
        "exec(",
        "popen",
        "system(",
        "spawn",
        "cmd.exe",
    ]
    .iter()
    .any(|s| c.contains(s));
    (socket && shell) || c.contains("/dev/tcp/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_and_their_look_alikes() {
        for s in [
            ".env",
            "./.env.production",
            "~/.ssh/id_rsa",
            "/home/u/.ssh/id_ed25519",
            "~/.aws/credentials",
            "~/.netrc",
            "server.pem",
            "~/.kube/config",
            "/etc/shadow",
        ] {
            assert!(is_secret(s), "{s}");
        }
        for s in [
            ".env.example",
            "~/.ssh/id_rsa.pub",
            "src/env.rs",
            "~/.ssh/config",
            "README.md",
            "config",
        ] {
            assert!(!is_secret(s), "{s}");
        }
    }

    #[test]
    fn substitutions_end_at_their_close_and_an_unclosed_one_is_bounded() {
        assert_eq!(substitutions("a$(b)c<(d)").count(), 2);
        let subs: Vec<&str> = substitutions("a$(b (c) $(d))e`f`<(g)$(h").collect();
        assert_eq!(subs, ["b (c) $(d)", "d", "f", "g", "h"]);
        let unclosed = format!("$({})", "x".repeat(1000));
        let unclosed = &unclosed[..unclosed.len() - 1];
        assert_eq!(
            substitutions(unclosed).next().unwrap().len(),
            UNCLOSED_WINDOW
        );
        // Many unclosed openers: the text yielded is bounded per opener, not the rest of
        // the word each time.
        let many = "$(".repeat(20_000);
        let total: usize = substitutions(&many).map(str::len).sum();
        assert!(total <= 20_000 * UNCLOSED_WINDOW, "{total}");
        assert!(substitutions("`a$(b`c)").all(|s| !s.is_empty()));
        // A multibyte character at the window's edge is not split.
        let wide = format!("$({}", "é".repeat(200));
        assert!(substitutions(&wide).next().unwrap().len() <= UNCLOSED_WINDOW);
    }
}
