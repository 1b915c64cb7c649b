//! Doctor's client check: each host's installed client against the version callus was
//! verified on (the host table's `verified`: end-to-end for Claude Code and Codex, protocol
//! tests for the others). The hook protocol is the clients' to change, so a newer (or
//! older) client is a warning — `block` or `deny` may behave differently — never a
//! failure. A client not on `PATH` is information only.

use super::{Report, Status};
use crate::host::Verified;
use crate::host::client::{find_on_path, parse_version, run_version};

/// Check every host's client.
pub(crate) fn check(report: &mut Report) {
    for spec in crate::host::HOSTS {
        let (name, label, tested) = (spec.executable, spec.label, spec.verified.0);
        let how = match spec.verified.1 {
            Verified::EndToEnd => "the end-to-end tests passed on",
            Verified::Protocol => "callus's protocol tests were checked against",
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
        match found.cmp(&pinned) {
            std::cmp::Ordering::Equal => report.add(
                "clients",
                Status::Ok,
                format!("{label} {shown}: the version {how}"),
            ),
            order => report.add(
                "clients",
                Status::Warn,
                format!(
                    "{label} {shown} is {} than {tested}, the version {how}: hook behaviour may differ",
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
        assert!(
            parse_version("2.1.400").unwrap()
                > parse_version(crate::host::CLAUDE_VERIFIED).unwrap()
        );
    }
}
