//! Path globs of a scope declaration: gitignore-flavoured, not `fnmatch`.
//!
//! A glob is matched against a `/`-separated path relative to the run root, anchored at both
//! ends. `*` matches within one path segment (never `/`), `?` one character other than `/`,
//! `**/` any number of leading directories (including none), `**` anything. Every other
//! character is literal — `[` included, there are no character classes. Matching is
//! case-sensitive.
//!
//! Patterns are normalised when compiled: surrounding blanks are trimmed, a leading `./` is
//! dropped and a trailing `/` means "everything under" (`docs/` ≡ `docs/**`). A pattern that
//! is empty, absolute or climbs out of the root (`..`) is refused, because it could never
//! match a root-relative path and would silently declare nothing.

use regex::Regex;

/// One compiled glob.
#[derive(Debug, Clone)]
pub(crate) struct Glob {
    pattern: String,
    re: Regex,
}

impl Glob {
    /// Compile `pattern`; the error says what is wrong with it (the caller names the field).
    pub(crate) fn new(pattern: &str) -> Result<Glob, String> {
        let mut p = pattern.trim();
        while let Some(rest) = p.strip_prefix("./") {
            p = rest;
        }
        if p.is_empty() {
            return Err(format!("pattern '{pattern}' is empty"));
        }
        if p.starts_with('/') {
            return Err(format!(
                "pattern '{pattern}' is absolute; patterns are relative to the run root"
            ));
        }
        if p.split('/').any(|seg| seg == "..") {
            return Err(format!(
                "pattern '{pattern}' climbs out of the run root with '..'"
            ));
        }
        let normal = if p.ends_with('/') {
            format!("{p}**")
        } else {
            p.to_string()
        };
        let re = Regex::new(&to_regex(&normal))
            .map_err(|e| format!("pattern '{pattern}' does not compile: {e}"))?;
        Ok(Glob {
            pattern: normal,
            re,
        })
    }

    /// Does the root-relative `/`-separated `path` match?
    pub(crate) fn matches(&self, path: &str) -> bool {
        self.re.is_match(path)
    }

    /// The normalised pattern text.
    pub(crate) fn as_str(&self) -> &str {
        &self.pattern
    }

    /// True when the pattern names one exact path (no `*` or `?`).
    pub(crate) fn is_literal(&self) -> bool {
        !self.pattern.contains(['*', '?'])
    }
}

/// Translate a glob to an anchored regex, left to right.
fn to_regex(glob: &str) -> String {
    let mut out = String::with_capacity(glob.len() * 2 + 2);
    out.push('^');
    let mut rest = glob;
    while let Some(c) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix("**/") {
            out.push_str("(?:.*/)?");
            rest = after;
        } else if let Some(after) = rest.strip_prefix("**") {
            out.push_str(".*");
            rest = after;
        } else {
            match c {
                '*' => out.push_str("[^/]*"),
                '?' => out.push_str("[^/]"),
                _ => out.push_str(&regex::escape(c.encode_utf8(&mut [0; 4]))),
            }
            rest = &rest[c.len_utf8()..];
        }
    }
    out.push('$');
    out
}

#[cfg(test)]
mod tests {
    use super::Glob;

    fn m(pattern: &str, path: &str) -> bool {
        Glob::new(pattern).unwrap().matches(path)
    }

    #[test]
    fn pinned_cases_of_the_spec() {
        assert!(m("src/*.py", "src/app.py"));
        assert!(!m("src/*.py", "src/sub/app.py"));
        assert!(m("src/**/*.py", "src/sub/deep/app.py"));
        assert!(m("src/**/*.py", "src/app.py"));
        assert!(m("**/*.env", "config/prod.env"));
        assert!(m("**/*.env", "prod.env"));
        assert!(m("docs/**", "docs/a/b/c.md"));
        assert!(!m("docs/**", "src/a.md"));
        assert!(m("a?c.txt", "abc.txt"));
        assert!(!m("a?c.txt", "a/c.txt"));
        assert!(m("file+v1.py", "file+v1.py"));
        assert!(!m("file+v1.py", "filev1.py"));
        assert!(m("[ab].txt", "[ab].txt"));
        assert!(!m("[ab].txt", "a.txt"));
    }

    #[test]
    fn fnmatch_would_have_been_wrong() {
        // fnmatch lets `*` cross `/`; a declaration of `src/*.py` must not cover subdirectories.
        assert!(!m("*.py", "src/app.py"));
        assert!(m("*.py", "app.py"));
    }

    #[test]
    fn dot_directories_are_ordinary_segments() {
        assert!(m(".claude/**", ".claude/settings.json"));
        assert!(m("**/.git", "sub/.git"));
        assert!(m("**/.git", ".git"));
        assert!(!m("src/*", "src/.hidden/x"));
    }

    #[test]
    fn normalisation_and_refusals() {
        assert!(m("./src/a.rs", "src/a.rs"));
        assert!(m("docs/", "docs/x/y.md"));
        assert_eq!(Glob::new(" docs/ ").unwrap().as_str(), "docs/**");
        assert!(Glob::new("").is_err());
        assert!(Glob::new("   ").is_err());
        assert!(Glob::new("/etc/passwd").unwrap_err().contains("absolute"));
        assert!(Glob::new("../x").unwrap_err().contains(".."));
        assert!(Glob::new("a/../../x").is_err());
        assert!(Glob::new("a..b").is_ok());
    }

    #[test]
    fn literal_detection() {
        assert!(Glob::new("docs/a.md").unwrap().is_literal());
        assert!(!Glob::new("docs/*.md").unwrap().is_literal());
        assert!(!Glob::new("a?.md").unwrap().is_literal());
    }
}
