//! A file's spellings: one key for every way a host spells the same path (either separator,
//! `.` and `..`, a drive letter in either case, Git-Bash's `/c/…`), and the one pattern that
//! matches each spelling of it, so a missing file read three ways recurs as one path.
//!
//! Guarantees: the key compares paths as replay and the guard do
//! ([`crate::rules::condition::resolve`]); only the drive and Git-Bash folding is its own.

use super::pattern::escape;

/// One file's key whatever the spelling: compared as replay compares paths
/// ([`crate::rules::condition::resolve`]: `\\` read as `/`, `.` and `..` resolved), a drive
/// letter lowercased, and
/// Git-Bash's (MSYS) `/c/…` read as the drive `c:/…`. The same missing file read as
/// `C:\\p\\A.md`, `C:/p/A.md` and `/c/p/A.md` is one path that recurs, not three guesses.
pub(super) fn key(path: &str) -> String {
    let p = crate::rules::condition::resolve(None, path);
    let b = p.as_bytes();
    let drive = if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
        Some((b[0], 2))
    } else if b.len() >= 3 && b[0] == b'/' && b[1].is_ascii_alphabetic() && b[2] == b'/' {
        Some((b[1], 2))
    } else {
        None
    };
    match drive {
        Some((letter, rest)) => format!("{}:{}", letter.to_ascii_lowercase() as char, &p[rest..]),
        None => p,
    }
}

/// The anchored pattern of a recurring path: its one spelling, or, for the [`key`] of a
/// file spelled several ways (`c:/…`), every spelling of it (either separator, either case
/// of the drive letter, `C:` or Git-Bash's `/c`).
pub(super) fn pattern(path: &str) -> String {
    let b = path.as_bytes();
    if !(b.len() >= 3 && b[0].is_ascii_lowercase() && b[1] == b':' && b[2] == b'/') {
        return format!("^{}$", escape(path));
    }
    let rest: Vec<String> = path[2..].split('/').map(escape).collect();
    let (lo, up) = (char::from(b[0]), char::from(b[0].to_ascii_uppercase()));
    format!("^(?:[{up}{lo}]:|/[{up}{lo}]){}$", rest.join(r"[\\/]"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_files_windows_spellings_share_one_key_and_one_pattern() {
        for p in [
            r"C:\p\A.md",
            "C:/p/A.md",
            "c:/p/A.md",
            "/c/p/A.md",
            r" c:\p/A.md ",
        ] {
            assert_eq!(key(p), "c:/p/A.md", "{p}");
        }
        // Not a drive: kept, `\` read as `/`.
        assert_eq!(key("/repo/A.md"), "/repo/A.md");
        assert_eq!(key(r"docs\A.md"), "docs/A.md");
        assert_eq!(key("/c"), "/c");
        assert_eq!(key("/cd/A.md"), "/cd/A.md");
        assert_eq!(key("1:/A.md"), "1:/A.md");
        let re = regex::Regex::new(&pattern("c:/p/A.md")).unwrap();
        for p in [
            r"C:\p\A.md",
            "C:/p/A.md",
            "c:/p/A.md",
            "/c/p/A.md",
            r"/C/p\A.md",
        ] {
            assert!(re.is_match(p), "{p}");
        }
        for p in [
            "D:/p/A.md",
            "C:/p/AxMD",
            "C:/p/A.md.bak",
            "x/c/p/A.md",
            "C:/q/A.md",
        ] {
            assert!(!re.is_match(p), "{p}");
        }
        // One spelling is matched as it is.
        assert_eq!(pattern("/c/p/A.md"), r"^/c/p/A\.md$");
        assert_eq!(pattern(r"C:\p\A.md"), r"^C:\\p\\A\.md$");
        assert_eq!(pattern("C:/p"), r"^C:/p$");
        assert_eq!(pattern("c:"), "^c:$");
    }
}
