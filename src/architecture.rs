//! The layering rule, checked: imports run one way, down the pipeline.
//!
//! This test-only module reads every source file under `src/`, collects the crate paths each
//! one names outside its test module and its comments (`use crate::…`, `crate::…::f()`,
//! `super::…`), and fails when a module names a module of its own rank or above, or when two
//! files name each other, or when a stage (anything but `app`, `main` and `cli`) names
//! `crate::cli`. The ranks are the picture in `docs/architecture.md`; a module added without
//! a rank fails the test too, so the picture cannot go stale.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level modules from the bottom up; a module may import only lower ranks.
const RANKS: &[(&str, u8)] = &[
    // basics every stage may use
    ("error", 0),
    ("output", 0),
    ("window", 0),
    ("redact", 0),
    ("untrusted", 0),
    ("config", 1),
    ("digest", 2),
    ("runtime", 2),
    ("host", 3),
    ("store", 3),
    // the pipeline's middle: a rule knows whether it fires; the guard resolves among rules
    ("shell", 4),
    ("rules", 5),
    ("recuse", 5),
    ("guard", 6),
    ("record", 6),
    // the commands' stages: each takes its own plain request, none reads clap
    ("sync", 7),
    ("install", 7),
    ("derive", 8),
    ("scope", 8),
    ("session", 8),
    ("prune", 9),
    ("report", 10),
    ("doctor", 10),
    ("demo", 10),
    // the clap types: only the command layer reads them
    ("cli", 11),
    // the command layer: clap arguments turned into each stage's request
    ("app", 12),
    // what the integration tests and fuzz targets reach
    ("testing", 13),
];

/// The modules that may name `crate::cli`: the command layer, the binary and `cli` itself.
const READS_CLI: &[&str] = &["app", "main", "cli"];

/// Imports allowed to run against the ranks, each with its reason. Keep at most two.
const EXCEPTIONS: &[(&str, &str, &str)] = &[];

/// A file's module path (`src/rules/index.rs` → `["rules", "index"]`).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap_or(file).with_extension("");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a file without its `#[cfg(test)] mod tests` and its comments.
fn code(text: &str) -> String {
    let text = text
        .find("#[cfg(test)]\nmod tests")
        .map_or(text, |i| &text[..i]);
    text.lines()
        .map(|l| l.find("//").map_or(l, |i| &l[..i]))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `crate::a::b…` / `super::…` path in `code`, with `use` groups expanded.
fn paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let rest = &code[i..];
        let starts = (rest.starts_with("crate::") || rest.starts_with("super::"))
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'));
        if !starts {
            i += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        }
        let end = path_end(rest);
        expand(&rest[..end], &[], &mut out);
        i += end.max(1);
    }
    out
}

/// Length of the path at the start of `s`, including a balanced `{…}` group.
fn path_end(s: &str) -> usize {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return i,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            c if depth == 0 && !(c.is_alphanumeric() || c == '_' || c == ':') => return i,
            _ => {}
        }
    }
    s.len()
}

fn expand(path: &str, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let (head, group) = match path.find('{') {
        Some(i) => (&path[..i], Some(&path[i + 1..path.len().saturating_sub(1)])),
        None => (path, None),
    };
    let mut full = prefix.to_vec();
    full.extend(
        head.split("::")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string),
    );
    let Some(group) = group else {
        out.push(full);
        return;
    };
    let mut depth = 0;
    let mut start = 0;
    let mut items = Vec::new();
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&group[start..]);
    for item in items {
        let item = item.trim();
        let item = if item.contains('{') {
            item
        } else {
            item.split(" as ").next().unwrap_or("").trim()
        };
        if item.is_empty() || item == "self" {
            out.push(full.clone());
        } else {
            expand(item, &full, out);
        }
    }
}

/// Resolve a path seen in `module` to the longest known module it names.
fn resolve(
    module: &[String],
    is_dir: bool,
    path: &[String],
    known: &BTreeSet<Vec<String>>,
) -> Option<Vec<String>> {
    let mut base: Vec<String>;
    let mut rest = path;
    if rest.first().map(String::as_str) == Some("crate") {
        base = Vec::new();
        rest = &rest[1..];
    } else {
        // `super` in a directory's mod.rs is the parent of the directory.
        base = module.to_vec();
        if !is_dir {
            base.pop();
        }
        while rest.first().map(String::as_str) == Some("super") {
            if base.is_empty() {
                return None;
            }
            if rest.len() > 1 && rest[1] == "super" {
                base.pop();
            }
            rest = &rest[1..];
        }
        if is_dir {
            base.pop();
        }
    }
    let full: Vec<String> = base.into_iter().chain(rest.iter().cloned()).collect();
    (0..=full.len())
        .rev()
        .map(|k| full[..k].to_vec())
        .find(|p| known.contains(p))
}

struct Graph {
    /// file module → modules it names.
    edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
}

fn graph() -> Graph {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&src, &mut all);
    let known: BTreeSet<Vec<String>> = all.iter().map(|f| module_of(&src, f)).collect();
    let mut edges = BTreeMap::new();
    for file in &all {
        let module = module_of(&src, file);
        let is_dir = file
            .file_name()
            .is_some_and(|n| n == "mod.rs" || n == "lib.rs");
        let text = std::fs::read_to_string(file).unwrap();
        let named: BTreeSet<Vec<String>> = paths(&code(&text))
            .iter()
            .filter_map(|p| resolve(&module, is_dir, p, &known))
            .filter(|m| !m.is_empty() && *m != module)
            .collect();
        edges.insert(module, named);
    }
    Graph { edges }
}

fn rank(top: &str) -> Option<u8> {
    RANKS.iter().find(|(m, _)| *m == top).map(|(_, r)| *r)
}

#[test]
fn every_top_level_module_has_a_rank() {
    let g = graph();
    let tops: BTreeSet<&str> = g
        .edges
        .keys()
        .filter_map(|m| m.first().map(String::as_str))
        .filter(|m| !matches!(*m, "architecture" | "main"))
        .collect();
    let missing: Vec<&&str> = tops.iter().filter(|m| rank(m).is_none()).collect();
    assert!(missing.is_empty(), "modules without a rank: {missing:?}");
}

#[test]
fn imports_run_down_the_layers() {
    let g = graph();
    let mut up = Vec::new();
    for (from, tos) in &g.edges {
        let Some(a) = from.first() else { continue };
        for to in tos {
            let b = &to[0];
            if a == b {
                continue;
            }
            let (Some(ra), Some(rb)) = (rank(a), rank(b)) else {
                continue;
            };
            if rb >= ra && !EXCEPTIONS.iter().any(|(x, y, _)| x == a && y == b) {
                up.push(format!("{} -> {}", from.join("::"), to.join("::")));
            }
        }
    }
    assert!(EXCEPTIONS.len() <= 2);
    assert!(
        up.is_empty(),
        "imports that run up the layers:\n{}",
        up.join("\n")
    );
}

#[test]
fn no_stage_reads_the_command_line() {
    let g = graph();
    let cli = vec!["cli".to_string()];
    let readers: Vec<String> = g
        .edges
        .iter()
        .filter(|(from, tos)| {
            from.first()
                .is_some_and(|top| !READS_CLI.contains(&top.as_str()))
                && tos.contains(&cli)
        })
        .map(|(from, _)| from.join("::"))
        .collect();
    assert!(
        readers.is_empty(),
        "stages that read the cli module (turn clap's arguments into a request in app/):\n{}",
        readers.join("\n")
    );
}

#[test]
fn no_two_files_import_each_other() {
    let g = graph();
    let mut loops = Vec::new();
    for (a, tos) in &g.edges {
        for b in tos {
            if a < b && g.edges.get(b).is_some_and(|t| t.contains(a)) {
                loops.push(format!("{} <-> {}", a.join("::"), b.join("::")));
            }
        }
    }
    assert!(
        loops.is_empty(),
        "files that import each other:\n{}",
        loops.join("\n")
    );
}

#[test]
fn the_path_reader_sees_groups_nesting_and_super() {
    let p = paths("use crate::{a::{b, c as d}, e};\nlet x = super::f::g();");
    assert_eq!(
        p,
        vec![
            vec!["crate", "a", "b"],
            vec!["crate", "a", "c"],
            vec!["crate", "e"],
            vec!["super", "f", "g"],
        ]
    );
    let known: BTreeSet<Vec<String>> = [
        vec!["x".into()],
        vec!["x".into(), "y".into()],
        vec!["x".into(), "z".into()],
    ]
    .into_iter()
    .collect();
    let module = vec!["x".to_string(), "y".to_string()];
    let sup = vec!["super".to_string(), "z".to_string(), "f".to_string()];
    assert_eq!(
        resolve(&module, false, &sup, &known),
        Some(vec!["x".into(), "z".into()])
    );
}
