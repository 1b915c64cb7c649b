//! Doctor's client check: the installed Claude Code and Codex versions against the versions
//! the end-to-end tests last passed on. The hook protocol is the clients' to change, so a
//! newer (or older) client is a warning — `block` or `deny` may behave differently — never a
//! failure. A client not on `PATH` is information only.

use super::{Report, Status};
use crate::host::client::{find_on_path, parse_version, run_version};

/// Claude Code version the end-to-end suite last passed on.
pub(crate) const TESTED_CLAUDE: &str = "2.1.328";

/// Codex version the end-to-end suite last passed on.
pub(crate) const TESTED_CODEX: &str = "0.169.0";

/// Check both clients.
pub(crate) fn check(report: &mut Report) {
    for (name, label, tested) in [
        ("claude", "Claude Code", TESTED_CLAUDE),
        ("codex", "Codex", TESTED_CODEX),
    ] {
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
        match found.cmp(&parse_version(tested).unwrap_or_default()) {
            std::cmp::Ordering::Equal => report.add(
                "clients",
                Status::Ok,
                format!("{label} {shown}: the version the end-to-end tests passed on"),
            ),
            order => report.add(
                "clients",
                Status::Warn,
                format!(
                    "{label} {shown} is {} than {tested}, the version the end-to-end tests passed on: hook behaviour may differ",
                    if order.is_gt() { "newer" } else { "older" }
                ),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_from_either_client() {
        assert_eq!(parse_version("2.1.328 (Claude Code)\n"), Some((2, 1, 328)));
        assert_eq!(parse_version("codex-cli 0.169.0\n"), Some((0, 169, 0)));
        assert_eq!(parse_version("v10.2"), None);
        assert!(parse_version("2.1.400").unwrap() > parse_version(TESTED_CLAUDE).unwrap());
    }
}
