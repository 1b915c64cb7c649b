//! What derive reads in a recorded Bash command beyond its program (which, with the segment
//! a failure is blamed on, is `shell::program`'s, shared with the recorder): whether the
//! command is a poll loop, which host a name-resolution failure was about, and the text the
//! backtest's literal prefilter searches.

use std::sync::OnceLock;

use crate::rules::Pattern;

/// The regex that recognises a poll loop in a command's text; also the loop candidates'
/// pattern, so cluster membership and the backtest agree by construction.
pub(crate) const POLL_LOOP_PATTERN: &str =
    r"(?:^|[;&|({]|\n)\s*(?:while|until|for)\s[\s\S]*?\bdo\b[\s\S]*?\bsleep\b[\s\S]*?\bdone\b";

/// Error text that means a host name did not resolve.
const RESOLUTION_MARKERS: &[&str] = &[
    "could not resolve host",
    "unable to resolve host",
    "name or service not known",
    "temporary failure in name resolution",
    "nodename nor servname provided",
    "no address associated with hostname",
    "getaddrinfo enotfound",
    "unknown host",
    "failed to resolve",
];

/// The compiled poll-loop detector.
pub(crate) fn poll_loop() -> &'static Pattern {
    static P: OnceLock<Pattern> = OnceLock::new();
    P.get_or_init(|| Pattern::new(POLL_LOOP_PATTERN, false))
}

/// Is `command` a `while/until/for … do … sleep … done` poll loop?
pub(crate) fn is_poll_loop(command: &str) -> bool {
    command.contains("sleep") && poll_loop().is_match(command).unwrap_or(false)
}

/// The host a name-resolution failure was about: named in the error, else the single host
/// of the command's URLs. `None` when the error is not a resolution failure.
pub(crate) fn dead_host(error: &str, command: &str) -> Option<String> {
    static NAMED: OnceLock<regex::Regex> = OnceLock::new();
    static URL: OnceLock<regex::Regex> = OnceLock::new();
    let lower = error.to_ascii_lowercase();
    if !RESOLUTION_MARKERS.iter().any(|m| lower.contains(m)) {
        return None;
    }
    // curl, ssh, node, wget, java/python spellings of "this host did not resolve".
    let named = NAMED.get_or_init(|| {
        regex::Regex::new(
            r"(?:could not resolve host(?:name)?:?|resolve host address|enotfound|unknown host:?|failed to resolve)\s+['\x22]?([a-z0-9][a-z0-9.-]*[a-z0-9])",
        )
        .expect("valid")
    });
    if let Some(c) = named.captures(&lower) {
        return Some(c[1].to_string());
    }
    let url = URL.get_or_init(|| {
        regex::Regex::new(
            r"(?i)\b[a-z][a-z0-9+.-]*://(?:[^/\s'\x22@]+@)?([a-z0-9][a-z0-9.-]*[a-z0-9])",
        )
        .expect("valid")
    });
    let mut hosts: Vec<String> = url
        .captures_iter(command)
        .map(|c| c[1].to_ascii_lowercase())
        .collect();
    hosts.sort();
    hosts.dedup();
    match hosts.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

/// The text the backtest's literal prefilter searches, written into a reused buffer:
/// lowercased, with quotes and backslashes removed, so `p"s"ql` and `\psql` still contain
/// `psql` as the splitter will see them.
pub(crate) fn prefilter_into(command: &str, out: &mut String) {
    out.clear();
    out.extend(
        command
            .chars()
            .filter(|c| !matches!(c, '\'' | '"' | '\\'))
            .map(|c| c.to_ascii_lowercase()),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poll_loops_and_dead_hosts() {
        assert!(is_poll_loop(
            "until curl -sf localhost:8080/health; do sleep 2; done"
        ));
        assert!(is_poll_loop(
            "cd app && for i in $(seq 30); do nc -z db 5432 && break; sleep 1; done"
        ));
        assert!(!is_poll_loop("for f in *.log; do gzip $f; done"));
        assert!(!is_poll_loop("sleep 5 && curl x"));
        assert_eq!(
            dead_host(
                "curl: (6) Could not resolve host: api.dead.example",
                "curl x"
            )
            .as_deref(),
            Some("api.dead.example")
        );
        assert_eq!(
            dead_host(
                "getaddrinfo failed: Name or service not known",
                "wget -q https://Old.Mirror.example/pkg.tgz"
            )
            .as_deref(),
            Some("old.mirror.example")
        );
        assert_eq!(
            dead_host("connection refused", "curl http://x.example"),
            None
        );
    }

    #[test]
    fn prefilter_text_sees_through_quotes() {
        let mut out = String::from("stale");
        prefilter_into(r#"P"s"ql \ls"#, &mut out);
        assert_eq!(out, "psql ls");
    }
}
