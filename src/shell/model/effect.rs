//! [`Effect`]: one thing a command does, as the line rules match and a sentence for people.
//! The model's vocabulary; the program table's effect functions build these.

use super::paths::Class;

/// The kinds of effect: a closed set, each spelt once ([`EffectKind::as_str`]). The
/// starter policy and `docs/effects.md` name them by that spelling; a test pins all three
/// together, so a renamed kind cannot silently disable a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EffectKind {
    /// `changes-permissions`.
    ChangesPermissions,
    /// `deletes`.
    Deletes,
    /// `deletes-schedule`.
    DeletesSchedule,
    /// `deletes-secret`.
    DeletesSecret,
    /// `destroys-data`.
    DestroysData,
    /// `discards-git-work`.
    DiscardsGitWork,
    /// `escalates-privilege`.
    EscalatesPrivilege,
    /// `exceeds-limit`.
    ExceedsLimit,
    /// `kills-all-processes`.
    KillsAllProcesses,
    /// `moves`.
    Moves,
    /// `opens-remote-shell`.
    OpensRemoteShell,
    /// `overwrites`.
    Overwrites,
    /// `pushes`.
    Pushes,
    /// `runs-fetched-code`.
    RunsFetchedCode,
    /// `sends-secret`.
    SendsSecret,
    /// `writes`.
    Writes,
}

impl EffectKind {
    /// Every kind, in the order `as_str` sorts them.
    pub const ALL: [EffectKind; 16] = [
        EffectKind::ChangesPermissions,
        EffectKind::Deletes,
        EffectKind::DeletesSchedule,
        EffectKind::DeletesSecret,
        EffectKind::DestroysData,
        EffectKind::DiscardsGitWork,
        EffectKind::EscalatesPrivilege,
        EffectKind::ExceedsLimit,
        EffectKind::KillsAllProcesses,
        EffectKind::Moves,
        EffectKind::OpensRemoteShell,
        EffectKind::Overwrites,
        EffectKind::Pushes,
        EffectKind::RunsFetchedCode,
        EffectKind::SendsSecret,
        EffectKind::Writes,
    ];

    /// The kind as effect lines and rules spell it (`deletes`, `sends-secret` …).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            EffectKind::ChangesPermissions => "changes-permissions",
            EffectKind::Deletes => "deletes",
            EffectKind::DeletesSchedule => "deletes-schedule",
            EffectKind::DeletesSecret => "deletes-secret",
            EffectKind::DestroysData => "destroys-data",
            EffectKind::DiscardsGitWork => "discards-git-work",
            EffectKind::EscalatesPrivilege => "escalates-privilege",
            EffectKind::ExceedsLimit => "exceeds-limit",
            EffectKind::KillsAllProcesses => "kills-all-processes",
            EffectKind::Moves => "moves",
            EffectKind::OpensRemoteShell => "opens-remote-shell",
            EffectKind::Overwrites => "overwrites",
            EffectKind::Pushes => "pushes",
            EffectKind::RunsFetchedCode => "runs-fetched-code",
            EffectKind::SendsSecret => "sends-secret",
            EffectKind::Writes => "writes",
        }
    }
}

impl std::fmt::Display for EffectKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for EffectKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// One thing a command does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Effect {
    /// The effect's kind (`deletes`, `pushes` …).
    pub kind: EffectKind,
    /// The line rules match: the kind, then `key=value` attributes, the path last
    /// (`deletes class=system recursive=true via=rm path=/usr`).
    pub line: String,
    /// A sentence for people (`deletes /usr recursively: a system directory`).
    pub human: String,
}

impl Effect {
    fn new(kind: EffectKind, attrs: &[(&str, &str)], human: String) -> Self {
        let mut line = kind.as_str().to_string();
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
        kind: EffectKind,
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
    pub(crate) fn plain(kind: EffectKind, attrs: &[(&str, &str)], human: String) -> Self {
        Effect::new(kind, attrs, human)
    }
}

#[cfg(test)]
mod tests {
    use super::EffectKind;

    /// The kinds `docs/effects.md`'s "Effect lines" table names, in its first column.
    fn documented() -> Vec<String> {
        let doc = include_str!("../../../docs/effects.md");
        let table = doc
            .split("## Effect lines")
            .nth(1)
            .and_then(|t| t.split("\n## ").next())
            .unwrap_or_default();
        table
            .lines()
            .filter_map(|l| l.strip_prefix("| `"))
            .filter_map(|l| l.split_once('`').map(|(k, _)| k.to_string()))
            .collect()
    }

    /// The kinds each effect pattern of the starter policy starts with (`^deletes …`,
    /// `^(?:writes|moves) …`).
    fn starter_kinds() -> Vec<String> {
        let policy: serde_json::Value =
            serde_json::from_str(include_str!("../../../src/rules/starter.json")).unwrap();
        let mut out = Vec::new();
        for rule in policy["rules"].as_array().unwrap() {
            if rule["match"] != "effect" {
                continue;
            }
            let patterns = ["pattern", "any", "all"]
                .iter()
                .flat_map(|k| match &rule[*k] {
                    serde_json::Value::String(s) => vec![s.clone()],
                    serde_json::Value::Array(a) => a
                        .iter()
                        .filter_map(|p| p.as_str().map(String::from))
                        .collect(),
                    _ => Vec::new(),
                });
            for p in patterns {
                let head = p
                    .strip_prefix('^')
                    .expect("an effect pattern anchors its kind");
                let names = match head.strip_prefix("(?:") {
                    Some(group) => group.split(')').next().unwrap_or_default(),
                    None => head.split([' ', '$']).next().unwrap_or_default(),
                };
                out.extend(names.split('|').map(String::from));
            }
        }
        out
    }

    #[test]
    fn every_kind_is_documented_and_every_kind_a_rule_names_exists() {
        let all: Vec<&str> = EffectKind::ALL.iter().map(|k| k.as_str()).collect();
        let mut sorted = all.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(all, sorted, "ALL is sorted and each kind is there once");
        let mut documented = documented();
        documented.sort_unstable();
        assert_eq!(documented, all, "docs/effects.md's table names exactly ALL");
        let starter = starter_kinds();
        assert!(
            starter.len() > 20,
            "the starter's effect patterns were read"
        );
        for kind in &starter {
            assert!(
                all.contains(&kind.as_str()),
                "starter.json names unknown kind {kind}"
            );
        }
        assert_eq!(EffectKind::SendsSecret.to_string(), "sends-secret");
        assert_eq!(
            serde_json::to_string(&EffectKind::DeletesSchedule).unwrap(),
            "\"deletes-schedule\""
        );
    }
}
