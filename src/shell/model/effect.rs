//! [`Effect`]: one thing a command does, as the line rules match and a sentence for people.
//! The model's vocabulary; the program table's effect functions build these.

use super::paths::Class;

/// One thing a command does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Effect {
    /// The effect's kind (`deletes`, `pushes` …).
    pub kind: &'static str,
    /// The line rules match: the kind, then `key=value` attributes, the path last
    /// (`deletes class=system recursive=true via=rm path=/usr`).
    pub line: String,
    /// A sentence for people (`deletes /usr recursively: a system directory`).
    pub human: String,
}

impl Effect {
    fn new(kind: &'static str, attrs: &[(&str, &str)], human: String) -> Self {
        let mut line = kind.to_string();
        for (k, v) in attrs {
            line.push(' ');
            line.push_str(k);
            line.push('=');
            // One token per attribute, so `via=\S+` and `key=value` patterns hold; only the
            // path, always last, is kept as written (it may contain blanks).
            if *k == "path" {
                line.push_str(v);
            } else {
                line.extend(v.chars().map(|c| if c.is_whitespace() { '_' } else { c }));
            }
        }
        Effect { kind, line, human }
    }

    /// An effect on a classified path; `verb` names the path (`deletes /usr recursively`).
    pub(crate) fn on_path(
        kind: &'static str,
        verb: &str,
        attrs: &[(&str, &str)],
        class: Class,
        path: &str,
    ) -> Self {
        let mut all: Vec<(&str, &str)> = vec![("class", class.name())];
        all.extend_from_slice(attrs);
        all.push(("path", path));
        Effect::new(kind, &all, format!("{verb}: {}", class.phrase()))
    }

    /// An effect without a path.
    pub(crate) fn plain(kind: &'static str, attrs: &[(&str, &str)], human: String) -> Self {
        Effect::new(kind, attrs, human)
    }
}
