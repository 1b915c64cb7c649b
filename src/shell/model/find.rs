//! `find`: which of its runs delete, and how much (`-delete`, `-exec rm …`), judged by the
//! tests that narrow what it selects.

use super::effect::Effect;
use super::effect::EffectKind;
use super::walk::Walk;

/// `find` predicates that narrow what `-delete` removes.
const NARROW: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-regex",
    "-iregex",
    "-newer",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-size",
    "-empty",
    "-user",
    "-group",
    "-perm",
    "-links",
    "-inum",
    "-samefile",
    "-wholename",
    "-iwholename",
    "-lname",
    "-ilname",
    "-nouser",
    "-nogroup",
];

impl Walk<'_> {
    /// Does one of `find`'s tests narrow what it selects? A name or path test whose pattern
    /// matches every name (`-name '*'`, `-path '*'`, `-regex '.*'`) narrows nothing.
    pub(crate) fn narrows(args: &[String]) -> bool {
        args.iter().enumerate().any(|(i, a)| {
            NARROW.contains(&a.as_str()) && {
                let value = args.get(i + 1).map(|v| v.trim_matches(['\'', '"']));
                let all = match a.as_str() {
                    "-name" | "-iname" | "-path" | "-ipath" | "-wholename" | "-iwholename" => {
                        value.is_some_and(|v| !v.is_empty() && v.chars().all(|c| c == '*'))
                    }
                    "-regex" | "-iregex" => value.is_some_and(|v| v == ".*"),
                    _ => false,
                };
                !all
            }
        })
    }

    pub(crate) fn find(&self, args: &[String], fx: &mut Vec<Effect>) {
        let roots: Vec<&String> = args
            .iter()
            .take_while(|a| !a.starts_with('-') && *a != "(" && *a != "!")
            .collect();
        let deletes = args.iter().enumerate().any(|(i, a)| {
            a == "-delete"
                || (matches!(a.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir")
                    && args.get(i + 1).is_some_and(|n| {
                        matches!(n.rsplit('/').next(), Some("rm" | "shred" | "unlink"))
                    }))
        });
        if !deletes {
            return;
        }
        let narrow = Self::narrows(args);
        let roots: Vec<String> = if roots.is_empty() {
            vec![".".into()]
        } else {
            roots.into_iter().cloned().collect()
        };
        for r in roots {
            let (class, path) = self.class(&r);
            let verb = format!(
                "deletes everything under {}",
                if path.is_empty() { "." } else { &path }
            );
            fx.push(Effect::on_path(
                EffectKind::Deletes,
                &verb,
                &[
                    ("recursive", if narrow { "filtered" } else { "true" }),
                    ("via", "find"),
                ],
                class,
                &path,
            ));
        }
    }
}
