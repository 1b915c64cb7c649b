//! Where a path points, as a class a rule can name: the filesystem root, a system
//! directory, the home directory, the repository root or above it, the working directory's
//! contents, a device, the control plane (hook settings, callus's own state), a temporary or
//! build directory. Paths are normalised lexically (`~`, `$HOME`, `${HOME:?}`, `$PWD`, `.`,
//! `..`, `//`, a trailing glob) against the [`Context`] and the command's own `cd`s; the
//! filesystem is never touched here (the caller may resolve symlinks first).

use super::context::Context;

/// Where a path points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// `/` (or a glob over it).
    Root,
    /// A system directory (`/usr`, `/etc`, `/var/lib` …) or one level under it.
    System,
    /// The home directory, a home-wide glob or a home directory that holds keys or settings.
    Home,
    /// The repository root, its `.git`, or the working directory when that is the root.
    ProjectRoot,
    /// A directory that contains the repository (`..` from its root).
    AboveProject,
    /// The working directory itself or a glob over its contents (`.`, `*`, `"$PWD"`).
    WorkingDir,
    /// A block device (`/dev/sda`, `/dev/nvme0n1`, `/dev/root` …).
    Device,
    /// Hook settings and callus's own state (`.claude/settings*.json`, `~/.codex`,
    /// `.callus/`, `$CALLUS_HOME`).
    ControlPlane,
    /// A temporary directory.
    Temp,
    /// A path whose value is only known at run time (`$DIR/x`).
    Dynamic,
    /// Anything else.
    Other,
}

impl Class {
    /// The name rules match (`class=system`).
    #[must_use]
    pub(crate) fn name(self) -> &'static str {
        match self {
            Class::Root => "root",
            Class::System => "system",
            Class::Home => "home",
            Class::ProjectRoot => "project-root",
            Class::AboveProject => "above-project",
            Class::WorkingDir => "working-dir",
            Class::Device => "device",
            Class::ControlPlane => "control-plane",
            Class::Temp => "temp",
            Class::Dynamic => "dynamic",
            Class::Other => "other",
        }
    }

    /// How `callus guard test` explains the class.
    #[must_use]
    pub(crate) fn phrase(self) -> &'static str {
        match self {
            Class::Root => "the filesystem root",
            Class::System => "a system directory",
            Class::Home => "the home directory or its keys and settings",
            Class::ProjectRoot => "the repository root",
            Class::AboveProject => "a directory above the repository",
            Class::WorkingDir => "the working directory's contents",
            Class::Device => "a disk device",
            Class::ControlPlane => "the guard's own control plane",
            Class::Temp => "a temporary directory",
            Class::Dynamic => "a path known only at run time",
            Class::Other => "an ordinary path",
        }
    }
}

const SYSTEM: &[&str] = &[
    "bin",
    "boot",
    "dev",
    "etc",
    "lib",
    "lib32",
    "lib64",
    "libx32",
    "opt",
    "proc",
    "root",
    "sbin",
    "srv",
    "sys",
    "usr",
    "var",
    "snap",
    "System",
    "Library",
    "Applications",
    "private",
    "nix",
    "mnt",
    "media",
    "home",
    "Users",
    "Volumes",
];

const HOME_KEEP: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".kube",
    ".docker",
    ".config",
    ".local",
    ".bashrc",
    ".zshrc",
    ".profile",
    ".bash_profile",
    ".gitconfig",
    ".netrc",
    ".azure",
    ".gcloud",
    "Documents",
    "Desktop",
    "Downloads",
    "Pictures",
    "Library",
    "Music",
    "Videos",
    ".password-store",
];

const DEVICES: &[&str] = &[
    "sd", "hd", "vd", "xvd", "nvme", "mmcblk", "disk", "rdisk", "md", "dm-", "mapper/", "root",
    "loop", "sr", "nbd",
];

/// The working directory a command has moved to with `cd`, relative to where it started.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum Cwd {
    /// Where the command started (the context's cwd, maybe unknown).
    #[default]
    Start,
    /// An absolute directory.
    At(String),
    /// Somewhere the command cannot know (`cd "$(mktemp -d)"`).
    Unknown,
    /// A path relative to the start (`cd build`).
    Below(String),
}

/// Expand the leading variables and `~` a path may start with; `None` when it starts with
/// another variable or a substitution (then its value is unknown).
fn expand(word: &str, ctx: &Context) -> Option<String> {
    let w = word.trim();
    for (prefix, value) in [
        ("~", ctx.home.as_deref().unwrap_or("~")),
        ("$HOME", ctx.home.as_deref().unwrap_or("~")),
        ("$PWD", "."),
        // The temp directory: usually `/tmp`; what matters is `$TMPDIR/../..` climbing out.
        ("$TMPDIR", "/tmp"),
        ("$TMP", "/tmp"),
        ("$TEMP", "/tmp"),
        ("$(pwd)", "."),
        ("`pwd`", "."),
        (
            "$CALLUS_HOME",
            ctx.callus_home.as_deref().unwrap_or("$CALLUS_HOME"),
        ),
    ] {
        if let Some(rest) = w.strip_prefix(prefix)
            && (rest.is_empty() || rest.starts_with('/'))
        {
            return Some(format!("{value}{rest}"));
        }
    }
    if let Some(inner) = w.strip_prefix("${") {
        let (expr, rest) = inner.split_once('}')?;
        let (name, op) = expr
            .find([':', '-', '?', '=', '+'])
            .map_or((expr, ""), |i| (&expr[..i], &expr[i..]));
        let value = match name {
            "HOME" => ctx.home.as_deref().unwrap_or("~"),
            "PWD" => ".",
            "TMPDIR" | "TMP" | "TEMP" if op.is_empty() || op.starts_with(":-") => "/tmp",
            "CALLUS_HOME" => ctx.callus_home.as_deref().unwrap_or("$CALLUS_HOME"),
            // `${X:-/}`: the default is what runs when X is unset; fail closed on it.
            _ => op
                .strip_prefix(":-")
                .or_else(|| op.strip_prefix(":="))
                .or_else(|| op.strip_prefix('-'))
                .or_else(|| op.strip_prefix('='))
                .filter(|d| !d.is_empty() && !d.starts_with('$'))?,
        };
        return Some(format!("{value}{rest}"));
    }
    if let Some(user) = w.strip_prefix('~')
        && !user.is_empty()
        && !user.starts_with('/')
    {
        // `~name/…`: another user's home.
        let (name, rest) = user.split_once('/').map_or((user, ""), |(n, r)| (n, r));
        if name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            let base = if name == "root" {
                "/root".to_string()
            } else {
                format!("/home/{name}")
            };
            return Some(if rest.is_empty() {
                base
            } else {
                format!("{base}/{rest}")
            });
        }
    }
    if let Some(rest) = w.strip_prefix("$(git rev-parse --show-toplevel)") {
        return Some(format!(
            "{}{rest}",
            ctx.repo_root.as_deref().unwrap_or("$REPO")
        ));
    }
    if w.starts_with('$') || w.starts_with('`') {
        return None;
    }
    Some(w.to_string())
}

/// Lexically normalise `path` (`a/./b/../c//d` → `a/c/d`); a relative path keeps leading
/// `..`s; `/..` stays `/`.
pub(crate) fn normalise(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !absolute {
                    parts.push("..");
                }
            }
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    if absolute {
        format!("/{joined}")
    } else {
        joined
    }
}

/// The path `word` names after expansion and the command's `cd`s: absolute when it can be
/// known, else relative to the start (`""` is the start itself); `None` when it depends on a
/// run-time value.
pub(crate) fn resolve(word: &str, cwd: &Cwd, ctx: &Context) -> Option<String> {
    let w = expand(word, ctx)?;
    if w.starts_with('/') || w.starts_with('~') || w.starts_with("$CALLUS_HOME") {
        return Some(normalise(&w));
    }
    let base = match cwd {
        Cwd::Start => ctx.cwd.clone().unwrap_or_default(),
        Cwd::At(dir) => dir.clone(),
        Cwd::Unknown => return None,
        Cwd::Below(rel) => match &ctx.cwd {
            Some(c) => format!("{c}/{rel}"),
            None => rel.clone(),
        },
    };
    let joined = if base.is_empty() {
        w
    } else {
        format!("{base}/{w}")
    };
    Some(normalise(&joined))
}

/// `path` with a trailing glob (`/*`, `/.*`, `*`) removed, and whether there was one.
fn strip_glob(path: &str) -> (String, bool) {
    let mut p = path.to_string();
    let mut glob = false;
    loop {
        let before = p.len();
        for suffix in ["/*", "/.*", "/.[!.]*", "/..?*", "/{*,.*}"] {
            if let Some(s) = p.strip_suffix(suffix) {
                p = if s.is_empty() && path.starts_with('/') {
                    "/".into()
                } else {
                    s.into()
                };
                glob = true;
            }
        }
        if matches!(p.as_str(), "*" | ".*" | "./*" | "./.*") {
            p.clear();
            glob = true;
        }
        if p.len() == before {
            return (p, glob);
        }
    }
}

/// Is `path` part of the control plane?
pub(crate) fn is_control_plane(path: &str, ctx: &Context) -> bool {
    let parts: Vec<&str> = path.split('/').collect();
    for (i, p) in parts.iter().enumerate() {
        let next = parts.get(i + 1).copied();
        match *p {
            ".claude" => match next {
                None | Some("") => return true,
                Some(n)
                    if n.starts_with("settings") && n.to_ascii_lowercase().ends_with(".json") =>
                {
                    return true;
                }
                Some("hooks") => return true,
                _ => {}
            },
            ".codex" | ".callus" => return true,
            ".claude.json" if next.is_none() => return true,
            _ => {}
        }
    }
    if path.starts_with("$CALLUS_HOME") {
        return true;
    }
    let under =
        |dir: &str, p: &str| !dir.is_empty() && (p == dir || p.starts_with(&format!("{dir}/")));
    ctx.callus_home.as_deref().is_some_and(|h| {
        // A home directory inside `$CALLUS_HOME` (a test sandbox) stays the home.
        under(h, path)
            && !ctx
                .home
                .as_deref()
                .is_some_and(|home| under(h, home) && home != h && under(home, path))
    })
}

/// The class of a path as written in the command (`word`), resolved against `cwd`.
/// A brace list in a word expanded (`/{usr,etc}` → `/usr`, `/etc`), at most 16 words; a
/// word without one is itself.
fn braces(word: &str) -> Vec<String> {
    let (Some(open), Some(close)) = (word.find('{'), word.find('}')) else {
        return vec![word.to_string()];
    };
    let inner = word.get(open + 1..close).unwrap_or_default();
    if close < open || !inner.contains(',') || word.starts_with("${") {
        return vec![word.to_string()];
    }
    inner
        .split(',')
        .take(16)
        .map(|alt| format!("{}{alt}{}", &word[..open], &word[close + 1..]))
        .collect()
}

/// The class of a path as written in the command (`word`), resolved against `cwd`; of a
/// brace list's words, the first that is not ordinary.
///
/// `runtime`: whether a variable left in the word is one the command does not set, so may
/// be empty at run time (the walk over the command as written, before its own assignments
/// are expanded, passes `false`: `X=build; rm -rf "$X"/` is read again with `X` expanded).
pub(crate) fn classify(word: &str, cwd: &Cwd, ctx: &Context, runtime: bool) -> (Class, String) {
    let words = braces(word);
    let mut first = None;
    for w in &words {
        let found = classify_one(w, cwd, ctx, runtime);
        if found.0 != Class::Other {
            return found;
        }
        first.get_or_insert(found);
    }
    first.unwrap_or_else(|| (Class::Other, word.to_string()))
}

fn classify_one(word: &str, cwd: &Cwd, ctx: &Context, runtime: bool) -> (Class, String) {
    // `/$X`, `~/$(f)`, `/usr/${D}`: a run-time last component that may be empty leaves the
    // directory before it; where that is `/`, a system directory or the home, the command
    // may delete it, so it is classified as that directory.
    if runtime
        && let Some(prefix) = dynamic_tail(word)
        && let Some(dir) = resolve(prefix, cwd, ctx)
    {
        let class = class_of(strip_glob(&dir).0.as_str(), cwd, ctx);
        if matches!(class, Class::Root | Class::System | Class::Home) {
            return (class, dir);
        }
    }
    let Some(resolved) = resolve(word, cwd, ctx) else {
        // `$X/*`, `"${D}"/`: a run-time first component that may be empty leaves the path
        // after it, from `/`; where that is `/`, a system directory or the home, so is this.
        if runtime
            && let Some(rest) = dynamic_head(word)
            && let Some(dir) = resolve(rest, cwd, ctx)
        {
            let class = class_of(strip_glob(&dir).0.as_str(), cwd, ctx);
            if matches!(class, Class::Root | Class::System | Class::Home) {
                return (class, dir);
            }
        }
        return (Class::Dynamic, word.to_string());
    };
    let (path, _) = strip_glob(&resolved);
    (class_of(&path, cwd, ctx), resolved)
}

/// `DIR/` of a word `DIR/$X` (or `${X}`, `$(…)`, `` `…` ``) whose last component is one
/// run-time value.
fn dynamic_tail(word: &str) -> Option<&str> {
    let cut = word.rfind('/')? + 1;
    let (dir, tail) = word.split_at(cut);
    let one_value = if let Some(t) = tail.strip_prefix("${") {
        t.strip_suffix('}').is_some_and(|n| !n.contains(['}', '/']))
    } else if let Some(t) = tail.strip_prefix("$(") {
        t.ends_with(')')
    } else if let Some(t) = tail.strip_prefix('`') {
        t.ends_with('`')
    } else if let Some(t) = tail.strip_prefix('$') {
        !t.is_empty() && t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    } else {
        false
    };
    one_value.then_some(dir)
}

/// `/REST` of a word `$X/REST` or `${X}/REST` whose first component is one plain variable
/// (not `${X:?}`, which stops the shell when `X` is empty, nor one with a default).
fn dynamic_head(word: &str) -> Option<&str> {
    let name_len = |t: &str| {
        t.bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count()
    };
    let rest = if let Some(t) = word.strip_prefix("${") {
        let (name, rest) = t.split_once('}')?;
        (!name.is_empty() && name_len(name) == name.len()).then_some(rest)?
    } else {
        let t = word.strip_prefix('$')?;
        let n = name_len(t);
        (n > 0).then(|| &t[n..])?
    };
    rest.starts_with('/').then_some(rest)
}

fn has_glob(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

fn class_of(path: &str, cwd: &Cwd, ctx: &Context) -> Class {
    if is_control_plane(path, ctx) {
        return Class::ControlPlane;
    }
    if path == "/" || path.is_empty() && matches!(cwd, Cwd::At(d) if d == "/") {
        return Class::Root;
    }
    let home = ctx.home.as_deref().unwrap_or("~");
    let in_home = path
        .strip_prefix(home)
        .or_else(|| path.strip_prefix('~'))
        .filter(|r| r.is_empty() || r.starts_with('/'))
        .map(|r| r.trim_start_matches('/'));
    if let Some(rest) = in_home
        && home_itself(path, rest)
    {
        return Class::Home;
    }
    if let Some(class) = project_class(path, ctx) {
        return class;
    }
    if path.is_empty() {
        return match (cwd, &ctx.cwd, &ctx.repo_root) {
            (Cwd::Start, Some(c), Some(r)) if c == r => Class::ProjectRoot,
            (Cwd::Below(_), _, _) => Class::Other,
            _ => Class::WorkingDir,
        };
    }
    if path == ".." || path.starts_with("../") && path.split('/').all(|p| p == "..") {
        return Class::AboveProject;
    }
    if let Some(dev) = path.strip_prefix("/dev/") {
        return if DEVICES.iter().any(|d| dev.starts_with(d)) {
            Class::Device
        } else {
            Class::Other
        };
    }
    if ["/tmp", "/var/tmp", "/private/tmp", "/dev/shm"]
        .iter()
        .any(|t| path == *t || path.starts_with(&format!("{t}/")))
    {
        return Class::Temp;
    }
    match path.strip_prefix('/') {
        Some(abs) if in_home.is_none() => absolute_class(abs),
        _ => Class::Other,
    }
}

/// Whether `path`, `rest` below the home, is the home itself in a rule's eyes: the home,
/// a top-level entry it keeps (`~/Documents`, `~/*`), or its keys and credentials
/// (`~/.ssh/…`, `~/.aws/credentials`, a `.env` of the user's own), wherever the home is.
fn home_itself(path: &str, rest: &str) -> bool {
    if rest.is_empty() {
        return true;
    }
    let first = rest.split('/').next().unwrap_or("");
    (HOME_KEEP.contains(&first) || has_glob(first)) && !rest.contains('/')
        || first == ".ssh"
        || first == ".gnupg"
        || super::net::is_secret(path)
}

/// The repository's own paths: its `.git`, its root, a directory above it.
fn project_class(path: &str, ctx: &Context) -> Option<Class> {
    let last = path.rsplit('/').next().unwrap_or(path);
    if last == ".git" {
        if let Some(root) = ctx.repo_root.as_deref() {
            if path == format!("{root}/.git") {
                return Some(Class::ProjectRoot);
            }
        } else if !path.starts_with('/') {
            return Some(Class::ProjectRoot);
        }
        if path == ".git" {
            return Some(Class::ProjectRoot);
        }
    }
    if let Some(root) = ctx.repo_root.as_deref()
        && path.starts_with('/')
    {
        if path == root {
            return Some(Class::ProjectRoot);
        }
        if root.starts_with(&format!("{}/", path.trim_end_matches('/'))) {
            return Some(Class::AboveProject);
        }
    }
    None
}

/// An absolute path outside the home (`abs` without its leading `/`): a system directory
/// or one a glob may name, a home directory (`/home/u`), or other.
fn absolute_class(abs: &str) -> Class {
    let mut parts = abs.split('/');
    let first = parts.next().unwrap_or("");
    let depth = 1 + parts.count();
    if has_glob(first) {
        // `/u*`, `/e?c`: may name any top-level directory.
        return Class::System;
    }
    if SYSTEM.contains(&first) && depth <= 2 {
        return if matches!(first, "home" | "Users") && depth == 2 {
            Class::Home
        } else {
            Class::System
        };
    }
    Class::Other
}

/// The class of a path a tool names (relative paths against `ctx.cwd`), and the path
/// resolved; symlinks followed through `ctx.realpath` when that finds a stronger class.
#[must_use]
pub(crate) fn classify_path(path: &str, ctx: &Context) -> (Class, String) {
    classify_at(path, &Cwd::Start, ctx)
}

/// [`classify_path`] from the working directory `cwd` the walk has reached (after `cd`s).
pub(crate) fn classify_at(path: &str, cwd: &Cwd, ctx: &Context) -> (Class, String) {
    classify_walked(path, cwd, ctx, true)
}

/// [`classify_at`], saying whether a variable left in `path` may be empty at run time (see
/// [`classify`]).
pub(crate) fn classify_walked(
    path: &str,
    cwd: &Cwd,
    ctx: &Context,
    runtime: bool,
) -> (Class, String) {
    let (class, resolved) = classify(path, cwd, ctx, runtime);
    if matches!(class, Class::Other | Class::WorkingDir)
        && let Some(real) = ctx.realpath.and_then(|f| f(&resolved))
        && real != resolved
    {
        let (c, _) = classify(&real, &Cwd::Start, ctx, runtime);
        if c != Class::Other {
            return (c, real);
        }
    }
    (class, resolved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::model::tests::ctx;

    fn class(word: &str) -> &'static str {
        classify(word, &Cwd::Start, &ctx(), true).0.name()
    }

    #[test]
    fn classes_of_delete_targets() {
        for (w, c) in [
            ("/", "root"),
            ("/*", "root"),
            ("//", "root"),
            ("/usr", "system"),
            ("/etc/", "system"),
            ("/usr/lib", "system"),
            ("/usr/local/lib/x", "other"),
            ("~", "home"),
            ("${HOME:?}/", "home"),
            ("$HOME/*", "home"),
            ("~/.ssh", "home"),
            ("~/.cache/pip", "other"),
            ("/home/u", "home"),
            (".", "project-root"),
            ("*", "project-root"),
            ("./.claude/../.claude//settings.json", "control-plane"),
            ("$CALLUS_HOME", "control-plane"),
            ("/home/u/.callus/callus.db", "control-plane"),
            ("..", "above-project"),
            ("/work", "above-project"),
            ("/work/proj", "project-root"),
            (".git", "project-root"),
            ("build", "other"),
            ("/dev/sda", "device"),
            ("/dev/null", "other"),
            ("/tmp/x", "temp"),
            ("$DIR/x", "dynamic"),
            ("/{usr,etc}", "system"),
            ("./{build,.git}", "project-root"),
            ("/u*", "system"),
            ("~/.s*", "home"),
            ("~root", "system"),
            ("~bob/", "home"),
            ("${X:-/}", "root"),
            ("${X}", "dynamic"),
        ] {
            assert_eq!(class(w), c, "{w}");
        }
        let below = Cwd::Below("build".into());
        assert_eq!(classify(".", &below, &ctx(), true).0, Class::Other);
        assert_eq!(
            classify("*", &Cwd::At("/".into()), &ctx(), true).0,
            Class::Root
        );
    }

    #[test]
    fn a_home_under_a_system_directory_stays_a_home() {
        let c = Context {
            home: Some("/root".into()),
            ..Context::default()
        };
        assert_eq!(
            classify("~/notes.txt", &Cwd::Start, &c, true).0,
            Class::Other
        );
        assert_eq!(classify("/root", &Cwd::Start, &c, true).0, Class::Home);
        assert_eq!(classify("/root/.ssh", &Cwd::Start, &c, true).0, Class::Home);
        // A home inside $CALLUS_HOME (a sandbox) is not the control plane.
        let sandbox = Context {
            home: Some("/s/home".into()),
            callus_home: Some("/s".into()),
            ..Context::default()
        };
        assert_eq!(
            classify("~/x/y", &Cwd::Start, &sandbox, true).0,
            Class::Other
        );
        assert_eq!(
            classify("/s/callus.db", &Cwd::Start, &sandbox, true).0,
            Class::ControlPlane
        );
    }

    #[test]
    fn without_a_known_cwd_dot_is_the_working_dir() {
        let c = Context::default();
        assert_eq!(classify("./*", &Cwd::Start, &c, true).0, Class::WorkingDir);
        assert_eq!(classify("..", &Cwd::Start, &c, true).0, Class::AboveProject);
        assert_eq!(classify("~/", &Cwd::Start, &c, true).0, Class::Home);
    }
}
