//! Doctor's client check: each host's installed client against the versions callus was
//! verified on (the host table's `verified`, oldest to newest: end-to-end for Claude Code,
//! Codex, Gemini CLI and Copilot CLI, protocol tests for Cursor). The hook protocol is the
//! clients' to change, so a client outside that range is a warning — `block` or `deny` may behave differently — never a
//! failure. A client not on `PATH` is information only.

use super::{Report, Status};
use crate::host::Verified;
use crate::host::client::{find_on_path, parse_version, run_version};

/// Check every host's client.
pub(crate) fn check(report: &mut Report) {
    for spec in crate::host::HOSTS {
        let (name, label) = (spec.executable, spec.label);
        let (oldest, tested, kind) = spec.verified;
        let how = match kind {
            Verified::EndToEnd => "verified: the end-to-end tests passed on",
            Verified::Protocol => "verified: callus's protocol tests were checked against",
        };
        let Some(bin) = find_on_path(name) else {
            report.add(
                "clients",
                Status::Info,
                format!("{label}: `{name}` is not on PATH"),
            );
            continue;
        };
        let Some(out) = run_version(&bin) else {
            report.add(
                "clients",
                Status::Info,
                format!("{label}: `{} --version` did not answer", bin.display()),
            );
            continue;
        };
        let Some(found) = parse_version(&out) else {
            report.add(
                "clients",
                Status::Warn,
                format!(
                    "{label}: cannot read a version from `{name} --version`: {}",
                    out.trim()
                ),
            );
            continue;
        };
        let shown = format!("{}.{}.{}", found.0, found.1, found.2);
        let Some(pinned) = parse_version(tested) else {
            report.add(
                "clients",
                Status::Info,
                format!("{label} {shown}: no client version pinned; callus's protocol tests follow its documentation ({tested})"),
            );
            continue;
        };
        let oldest_v = parse_version(oldest).unwrap_or(pinned);
        if (oldest_v..=pinned).contains(&found) {
            report.add(
                "clients",
                Status::Ok,
                format!("{label} {shown}: {how} {}", range(oldest, tested)),
            );
        } else {
            let (order, edge) = if found > pinned {
                ("newer", tested)
            } else {
                ("older", oldest)
            };
            report.add(
                "clients",
                Status::Warn,
                format!(
                    "{label} {shown} is {order} than {edge}: {how} {}, and hook behaviour may differ",
                    range(oldest, tested)
                ),
            );
        }
    }
}

/// `2.1.332`, or `2.1.328 to 2.1.332`.
fn range(oldest: &str, newest: &str) -> String {
    if oldest == newest {
        newest.to_string()
    } else {
        format!("{oldest} to {newest}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `scripts/install-clients` installs exactly the versions the host table calls
    /// verified: the newest of every npm client, and the oldest Claude Code.
    #[test]
    fn install_clients_pins_the_verified_versions() {
        use crate::host::Host;
        let script = include_str!("../../scripts/install-clients");
        let default = |var: &str| -> String {
            let line = script
                .lines()
                .find(|l| l.contains(&format!("${{{var}:-")))
                .unwrap_or_else(|| panic!("{var} has no default"));
            let start = line.find(":-").unwrap() + 2;
            line[start..line[start..].find('}').unwrap() + start].to_string()
        };
        let spec = |h: Host| h.spec().verified;
        assert_eq!(
            default("CALLUS_E2E_CLAUDE_VERSION"),
            spec(Host::ClaudeCode).1
        );
        assert_eq!(
            default("CALLUS_E2E_CLAUDE_OLDEST"),
            spec(Host::ClaudeCode).0
        );
        assert_eq!(default("CALLUS_E2E_CODEX_VERSION"), spec(Host::Codex).1);
        assert_eq!(default("CALLUS_E2E_GEMINI_VERSION"), spec(Host::Gemini).1);
        assert_eq!(default("CALLUS_E2E_COPILOT_VERSION"), spec(Host::Copilot).1);
    }

    #[test]
    fn versions_are_read_from_either_client() {
        assert_eq!(parse_version("2.1.328 (Claude Code)\n"), Some((2, 1, 328)));
        assert_eq!(parse_version("codex-cli 0.169.0\n"), Some((0, 169, 0)));
        assert_eq!(parse_version("v10.2"), None);
        assert!(
            parse_version("2.1.400").unwrap()
                > parse_version(crate::host::CLAUDE_VERIFIED).unwrap()
        );
    }
}
