//! The paths conditions compare: which tools name one file, the path a stored call's summary
//! names, and a path resolved against a cwd lexically (no file system), so two spellings of
//! one path compare equal in the hook and in replay alike.

use serde_json::Value;

/// Tools whose input names one file, by host (Claude Code, Gemini CLI, Copilot CLI): their
/// stored summary is its path.
pub(crate) const FILE_TOOLS: &[&str] = &[
    "Read",
    "Edit",
    "Write",
    "MultiEdit",
    "read_file",
    "write_file",
    "replace",
    "view",
    "edit",
    "create",
];

/// The path a stored Read summary names: the text itself, or the `file_path` (`path`,
/// `absolute_path`) of a summary stored as a JSON object.
#[must_use]
pub(crate) fn read_path(summary: &str) -> Option<String> {
    let summary = summary.trim();
    if summary.starts_with('{') {
        let v: Value = serde_json::from_str(summary).ok()?;
        return ["file_path", "path", "absolute_path"]
            .iter()
            .find_map(|k| v.get(*k).and_then(Value::as_str))
            .map(str::to_string);
    }
    (!summary.is_empty()).then(|| summary.to_string())
}

/// `path` made absolute against `cwd` (when it is relative and a cwd is known) and
/// normalised lexically (`.` and `..` resolved, `\` read as `/`), for comparing paths.
#[must_use]
pub(crate) fn resolve(cwd: Option<&str>, path: &str) -> String {
    let path = path.trim();
    let absolute = path.starts_with(['/', '\\']) || path.as_bytes().get(1) == Some(&b':');
    let joined = match cwd {
        Some(c) if !absolute && !c.is_empty() => format!("{c}/{path}"),
        _ => path.to_string(),
    };
    let lead = if joined.starts_with(['/', '\\']) {
        "/"
    } else {
        ""
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in joined.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    format!("{lead}{}", parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_resolve_lexically_and_read_summaries_name_their_path() {
        assert_eq!(resolve(Some("/w"), "a/./b/../c"), "/w/a/c");
        assert_eq!(resolve(Some("/w"), "/x/y/"), "/x/y");
        assert_eq!(resolve(None, "a"), "a");
        assert_eq!(resolve(Some(""), "a"), "a");
        assert_eq!(resolve(Some("/w"), "C:\\src\\a.rs"), "C:/src/a.rs");
        assert_eq!(resolve(Some("C:\\src"), "a.rs"), "C:/src/a.rs");
        assert_eq!(resolve(Some("/w"), "../../.."), "/");
        assert_eq!(read_path(" /w/a "), Some("/w/a".into()));
        assert_eq!(read_path(""), None);
        assert_eq!(
            read_path(r#"{"file_path":"/w/a","limit":5}"#),
            Some("/w/a".into())
        );
        assert_eq!(
            read_path(r#"{"absolute_path":"/w/b"}"#),
            Some("/w/b".into())
        );
        assert_eq!(read_path(r#"{"limit":5}"#), None);
        assert_eq!(read_path("{broken"), None);
    }
}
