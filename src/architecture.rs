//! The layering rule, checked: imports run one way, down the pipeline.
//!
//! This test-only module reads every source file under `src/`, collects the crate paths each
//! one names outside its test module and its comments (`use crate::…`, `crate::…::f()`,
//! `super::…`), and fails when a module names a module of its own rank or above, or when two
//! files name each other, or when a stage (anything but `app`, `main` and `cli`) names
//! `crate::cli`. The ranks are the picture in `docs/architecture.md`; a module added without
//! a rank fails the test too, so the picture cannot go stale.
//!
//! It also keeps the house's size limits: no source file over [`MAX_FILE_LINES`] lines, no
//! function over [`MAX_FN_LINES`] lines (from its `fn` line to the closing brace at the same
//! indentation) unless it carries `#[allow(clippy::too_many_lines)]` with a `//` reason, or
//! is listed in [`LONG_FNS`].

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

/// Most lines a source file may have.
const MAX_FILE_LINES: usize = 800;

/// Most lines a function may have without a justified allow.
const MAX_FN_LINES: usize = 80;

/// Functions over [`MAX_FN_LINES`] that this test lets stand for now, each as (file, name),
/// with why they are not split or justified in place.
const LONG_FNS: &[(&str, &str)] = &[];

/// Imports allowed to run against the ranks, each with its reason. Keep at most two.
const EXCEPTIONS: &[(&str, &str, &str)] = &[(
    "host",
    "shell",
    "host::call joins an argv array into a command with the shell's own quoting \
     (shell::quote) and carries the command model's context, so a call is read once at the edge",
)];

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

/// The code of a file without its inline `#[cfg(test)] mod tests { … }` and its comments (a
/// `mod tests;` declaration is not a cut: the code after it is checked too).
fn code(text: &str) -> String {
    let text = text
        .find("#[cfg(test)]\nmod tests {")
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

/// Every function longer than [`MAX_FN_LINES`] in `text`, as (name, first line, lines), with
/// whether it carries `#[allow(clippy::too_many_lines)]` and a `//` reason.
fn long_fns(text: &str) -> Vec<(String, usize, usize, bool)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some((indent, name)) = fn_start(line) else {
            continue;
        };
        let Some(end) = fn_end(&lines, i, indent) else {
            continue;
        };
        let len = end - i + 1;
        if len > MAX_FN_LINES {
            out.push((name, i + 1, len, justified(&lines[..i])));
        }
    }
    out
}

/// The indentation and name of a line that starts a function with a body.
fn fn_start(line: &str) -> Option<(usize, String)> {
    let body = line.trim_start();
    let indent = line.len() - body.len();
    let mut rest = body;
    for prefix in [
        "pub(crate) ",
        "pub(super) ",
        "pub ",
        "const ",
        "async ",
        "unsafe ",
    ] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest);
    }
    rest = rest.strip_prefix("extern \"C\" ").unwrap_or(rest);
    let rest = rest.strip_prefix("fn ")?;
    let name: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    // A declaration without a body, or a one-line function.
    let one_line = line.trim_end().ends_with(';') || line.trim_end().ends_with('}');
    (!name.is_empty() && !one_line).then_some((indent, name))
}

/// The line of the brace that closes the function starting at `start`: the first line that
/// is that brace at the function's indentation. `None` when the scope ends first.
fn fn_end(lines: &[&str], start: usize, indent: usize) -> Option<usize> {
    let close = format!("{}}}", " ".repeat(indent));
    for (j, line) in lines.iter().enumerate().skip(start + 1) {
        if *line == close {
            return Some(j);
        }
        let body = line.trim_start();
        if !body.is_empty() && line.len() - body.len() < indent {
            return None;
        }
    }
    None
}

/// Whether the attributes and comments right above a function allow `too_many_lines` and
/// say why in a `//` comment.
fn justified(above: &[&str]) -> bool {
    let block: Vec<&str> = above
        .iter()
        .rev()
        .map(|l| l.trim())
        .take_while(|l| l.starts_with("#[") || l.starts_with("//"))
        .collect();
    let allowed = block
        .iter()
        .any(|l| l.starts_with("#[allow(clippy::too_many_lines)]"));
    let reason = block.iter().any(|l| {
        (l.starts_with("//") && !l.starts_with("///") && l.len() > 3)
            || l.strip_prefix("#[allow(clippy::too_many_lines)]")
                .is_some_and(|r| r.trim_start().starts_with("//"))
    });
    allowed && reason
}

/// Every source file under `src/`, as (path relative to the package, text).
fn sources() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut all = Vec::new();
    files(&root.join("src"), &mut all);
    all.sort();
    all.into_iter()
        .map(|f| {
            let rel = f
                .strip_prefix(root)
                .unwrap_or(&f)
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(&f).unwrap();
            (rel, text)
        })
        .collect()
}

#[test]
fn no_source_file_is_over_the_limit() {
    let long: Vec<String> = sources()
        .into_iter()
        .map(|(path, text)| (path, text.lines().count()))
        .filter(|(_, n)| *n > MAX_FILE_LINES)
        .map(|(path, n)| format!("{path}: {n} lines"))
        .collect();
    assert!(
        long.is_empty(),
        "files over {MAX_FILE_LINES} lines (split them, one concept per file):\n{}",
        long.join("\n")
    );
}

#[test]
fn no_function_is_over_the_limit_without_a_reason() {
    let mut long = Vec::new();
    let mut listed_but_fine: Vec<&(&str, &str)> = LONG_FNS.iter().collect();
    for (path, text) in sources() {
        for (name, line, len, justified) in long_fns(&text) {
            let listed = LONG_FNS.iter().any(|(p, n)| *p == path && *n == name);
            listed_but_fine.retain(|(p, n)| !(*p == path && *n == name));
            if !justified && !listed {
                long.push(format!("{path}:{line}: fn {name}: {len} lines"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_FN_LINES} lines (split them, or justify an allow of too_many_lines):\n{}",
        long.join("\n")
    );
    assert!(
        listed_but_fine.is_empty(),
        "LONG_FNS lists functions that are no longer too long: {listed_but_fine:?}"
    );
}

#[test]
fn the_size_reader_measures_functions_and_reads_their_reasons() {
    let body = "    x();\n".repeat(MAX_FN_LINES - 1);
    let text = format!("fn long() {{\n{body}}}\n\nfn short() {{ x() }}\n");
    assert_eq!(
        long_fns(&text),
        vec![("long".into(), 1, MAX_FN_LINES + 1, false)]
    );
    let fits = format!(
        "fn fits() {{\n{}}}\n",
        "    x();\n".repeat(MAX_FN_LINES - 2)
    );
    assert!(long_fns(&fits).is_empty());
    let method =
        format!("impl A {{\n    pub(crate) fn m(\n        a: u8,\n    ) {{\n{body}    }}\n}}\n");
    assert_eq!(long_fns(&method)[0].0, "m");
    assert_eq!(long_fns(&method)[0].2, MAX_FN_LINES + 3);
    let reason =
        format!("// a renderer: one list of sections\n#[allow(clippy::too_many_lines)]\n{text}");
    assert!(long_fns(&reason)[0].3);
    let trailing = format!("#[allow(clippy::too_many_lines)] // one table\n{text}");
    assert!(long_fns(&trailing)[0].3);
    let bare = format!("#[allow(clippy::too_many_lines)]\n/// Docs are no reason.\n{text}");
    assert!(!long_fns(&bare)[0].3);
    assert!(fn_start("    fn decl(&self) -> u8;").is_none());
    assert_eq!(
        fn_start("pub(super) unsafe fn f() {"),
        Some((0, "f".into()))
    );
}

/// Files that may still cite the callusguard spec, which is not in the repository: none is
/// left, so a new citation fails the test.
const SPEC_CITERS: &[&str] = &[];

#[test]
fn every_cited_document_is_in_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut texts = sources();
    for entry in std::fs::read_dir(root.join("docs")).unwrap().flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "md") {
            let rel = format!("docs/{}", path.file_name().unwrap().to_string_lossy());
            texts.push((rel, std::fs::read_to_string(&path).unwrap()));
        }
    }
    let mut bad = Vec::new();
    for (path, text) in &texts {
        let exempt = SPEC_CITERS.iter().any(|p| path.starts_with(p));
        if !exempt && text.contains("spec \u{a7}") {
            bad.push(format!(
                "{path}: cites the callusguard spec, which is not in the repo"
            ));
        }
        for word in text.split(|c: char| c.is_whitespace() || "()`,;[]".contains(c)) {
            let Some((file, anchor)) = word.split_once(".md#") else {
                continue;
            };
            let Some(at) = file.find("docs/").or_else(|| file.find("README")) else {
                continue;
            };
            let file = format!("{}.md", &file[at..]);
            let anchor = anchor.trim_end_matches(['.', ':']);
            let Ok(doc) = std::fs::read_to_string(root.join(&file)) else {
                bad.push(format!("{path}: cites {file}, which does not exist"));
                continue;
            };
            if !doc.lines().any(|l| l.starts_with('#') && slug(l) == anchor) {
                bad.push(format!(
                    "{path}: cites {file}#{anchor}, which has no such heading"
                ));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A Markdown heading's anchor as GitHub makes it: lowercase, spaces to hyphens, other
/// punctuation dropped.
fn slug(heading: &str) -> String {
    heading
        .trim_start_matches('#')
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}
