//! `callus install` / `callus uninstall`: wire callus's hooks into Claude Code, Codex,
//! Gemini CLI, Cursor and Copilot CLI, and take them out again.
//!
//! Where: Claude Code's `.claude/settings.json` in the repo root of the current directory
//! (`--project`) or `~/.claude/settings.json` (`--user`, the default); Codex's
//! `$CODEX_HOME/hooks.json` (`--user`) or `<repo>/.codex/hooks.json` (`--project`), plus the
//! trust entries in `$CODEX_HOME/config.toml` without which Codex skips the hooks silently.
//! The other hosts' files are in the host table (`crate::host::HOSTS`); Cursor's and Copilot
//! CLI's versioned files go through [`versioned`].
//!
//! Guarantees: user-scope hooks call the running binary by absolute path; project-scope
//! hooks (a file usually committed, shared by everyone who clones the repository) call
//! `callus` by name, found on `PATH`, so no one's home directory ends up in it (install
//! warns when the `callus` on `PATH` is not this binary); other hooks and keys are
//! never changed ([`settings`]); a malformed file is reported with file and line and left
//! untouched; a second install changes nothing and says so; `--dry-run` prints a unified
//! diff and writes nothing. Before the first change a copy of the file goes to
//! `$CALLUS_HOME/backups/`, and uninstall puts those exact bytes back when the document
//! minus our hooks is the document we started from — so install + uninstall leaves a file
//! byte-identical (an absent file absent again, with the folders install created for it); if the file was edited meanwhile, only our
//! hooks are taken out.

pub(crate) mod codex_trust;
pub(crate) mod diff;
pub(crate) mod settings;
pub(crate) mod spec;
pub(crate) mod versioned;

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::config::Home;
use crate::host::{Host, Trust};
use crate::{Error, Exit, Result};
use settings::Doc;

/// Which settings file: the project's or the user's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// The repo root of the current directory.
    Project,
    /// The user's home.
    User,
}

impl Scope {
    /// `project` or `user`.
    #[must_use]
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Scope::Project => "project",
            Scope::User => "user",
        }
    }
}

/// One hooks file install can write.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    /// The host.
    pub host: Host,
    /// The scope.
    pub scope: Scope,
    /// The hooks file.
    pub path: PathBuf,
}

impl Target {
    /// The file for `host` in `scope`, seen from `cwd`.
    #[must_use]
    pub(crate) fn resolve(host: Host, scope: Scope, cwd: &Path) -> Self {
        let root = || crate::config::repo_root(cwd).unwrap_or_else(|| cwd.to_path_buf());
        let spec = host.spec();
        let path = match scope {
            Scope::Project => root().join(spec.project_hooks),
            Scope::User => (spec.user_hooks)(),
        };
        Target { host, scope, path }
    }

    /// `claude-code user` etc.
    #[must_use]
    pub(crate) fn label(&self) -> String {
        format!("{} {}", self.host.slug(), self.scope.as_str())
    }
}

pub(crate) use crate::host::codex_home;

fn cwd() -> Result<PathBuf> {
    std::env::current_dir().map_err(|e| Error::io(".", e))
}

/// What `callus install` / `callus uninstall` was asked for.
#[derive(Debug, Clone, Default)]
pub(crate) struct Request {
    /// The hosts named (`--claude`, `--codex`, …); none named means the host table's first.
    pub hosts: Vec<Host>,
    /// The project's settings instead of the user's (`--project`).
    pub project: bool,
    /// Say what would change, change nothing (`--dry-run`).
    pub dry_run: bool,
}

fn targets(args: &Request) -> Result<Vec<Target>> {
    let cwd = cwd()?;
    let scope = if args.project {
        Scope::Project
    } else {
        Scope::User
    };
    if scope == Scope::Project && crate::config::repo_root(&cwd).is_none() {
        // Project hooks belong to a repository; writing `$PWD/.claude/settings.json` in
        // some folder would wire nothing the user meant.
        return Err(Error::Invalid(format!(
            "{}: not inside a git repository (no .git here or above): run it in the repository's folder, or use --user",
            cwd.display()
        )));
    }
    // Every host of the table, in its order; no host named means the first (Claude Code).
    let none_named = args.hosts.is_empty();
    let hosts: Vec<Host> = crate::host::HOSTS
        .iter()
        .enumerate()
        .filter(|&(i, spec)| args.hosts.contains(&spec.host) || (none_named && i == 0))
        .map(|(_, spec)| spec.host)
        .collect();
    Ok(hosts
        .into_iter()
        .map(|h| Target::resolve(h, scope, &cwd))
        .collect())
}

/// `callus install`.
pub(crate) fn install(home: &Home, args: &Request) -> Result<Exit> {
    let targets = targets(args)?;
    let binary = spec::hook_binary();
    if targets.iter().any(|t| t.scope == Scope::Project) {
        spec::warn_unless_on_path();
    }
    let mut exit = Exit::Ok;
    for target in targets {
        let binary = match target.scope {
            Scope::Project => PathBuf::from(spec::BY_NAME),
            Scope::User => binary.clone(),
        };
        match install_one(home, &target, &binary, args.dry_run) {
            Ok(e) => exit = worse(exit, e),
            Err(e) => {
                eprintln!("callus: {}: {e}", target.label());
                exit = worse(exit, e.exit());
            }
        }
    }
    if !args.dry_run && exit == Exit::Ok {
        println!("· start a new agent session for the hooks to load, then run `callus doctor`");
    }
    Ok(exit)
}

/// `callus uninstall`.
pub(crate) fn uninstall(home: &Home, args: &Request) -> Result<Exit> {
    let mut exit = Exit::Ok;
    for target in targets(args)? {
        match uninstall_one(home, &target, args.dry_run) {
            Ok(e) => exit = worse(exit, e),
            Err(e) => {
                eprintln!("callus: {}: {e}", target.label());
                exit = worse(exit, e.exit());
            }
        }
    }
    Ok(exit)
}

fn worse(a: Exit, b: Exit) -> Exit {
    if b.code() > a.code() { b } else { a }
}

/// What our handlers carry beyond the command: Claude Code's guard gets `onFailure:
/// "block"` when fail-closed is configured and the installed Claude Code honours it
/// (≥ 2.1.295), so a guard that crashes or times out blocks the call instead of letting it
/// run; install says when it cannot.
fn handler_options(home: &Home, host: Host) -> spec::HandlerOptions {
    spec::HandlerOptions {
        block_on_failure: block_on_failure(home, host),
        timeout_per_second: host.spec().timeout.per_second,
    }
}

fn block_on_failure(home: &Home, host: Host) -> bool {
    let support = spec::BlockOnFailure::of(host, home.fail_policy());
    if let Some(why) = support.shortfall(host) {
        println!("· {why}");
    }
    support == spec::BlockOnFailure::Honoured
}

fn install_one(home: &Home, target: &Target, binary: &Path, dry_run: bool) -> Result<Exit> {
    let doc = versioned::load(target.host, &target.path)?;
    let had_ours = !settings::find_ours(&doc.value).is_empty();
    let opts = handler_options(home, target.host);
    let specs = target.host.specs_for_client();
    say_unwired(target, &specs);
    let merged = settings::merge(&doc.value, &specs, binary, opts);
    let new_text = if merged == doc.value {
        doc.text.clone()
    } else {
        versioned::render(target.host, &doc, &merged)
    };
    let trust = match target.host.spec().trust {
        Trust::CodexHash => Some(trust_plan(&target.path, &merged)?),
        Trust::Implicit => None,
    };
    let label = target.label();
    let path = target.path.display();
    let changed = new_text != doc.text;
    if dry_run {
        print!("{}", diff::unified(&path.to_string(), &doc.text, &new_text));
        if let Some((config, old, codex_trust::Plan::Write(new))) = &trust {
            print!("{}", diff::unified(&config.display().to_string(), old, new));
        }
        if !changed && !matches!(trust, Some((_, _, codex_trust::Plan::Write(_)))) {
            println!("✓ {label}: already installed in {path}; nothing would change");
        }
        return Ok(trust_manual(trust.as_ref()));
    }
    if changed {
        if !had_ours {
            let b = backup(home, &doc)?;
            println!("· {label}: backup of the previous file in {}", b.display());
        }
        settings::write_atomic(&target.path, &new_text)?;
        println!(
            "✓ {label}: {} callus's hooks in {path}",
            if had_ours { "updated" } else { "installed" }
        );
        for f in settings::find_ours(&merged) {
            println!(
                "    {:<19} {:<46} {}{}",
                f.event,
                f.matcher.as_deref().unwrap_or("(all)"),
                f.command,
                if f.is_async { " (async)" } else { "" }
            );
        }
    } else {
        println!("✓ {label}: already installed in {path}; nothing changed");
    }
    if let (Scope::Project, Some(note)) = (target.scope, target.host.spec().project_note) {
        println!("· {note}");
    }
    if let Some((config, _, plan)) = &trust {
        write_trust(home, target, config, plan)?;
    }
    Ok(trust_manual(trust.as_ref()))
}

/// Says which of the host's events the installed client predates (they are not wired).
fn say_unwired(target: &Target, specs: &[crate::host::HookSpec]) {
    if specs.len() < target.host.specs().len() {
        let left: Vec<&str> = target
            .host
            .specs()
            .iter()
            .filter(|s| !specs.contains(s))
            .map(|s| s.event)
            .collect();
        println!(
            "· {}: the installed {} predates {}: not wired (run install again after upgrading)",
            target.label(),
            target.host.spec().label,
            left.join(", ")
        );
    }
}

/// Records Codex's trust for the hooks (or says it already has it); a project's trust also
/// needs the user's own step, which it names.
fn write_trust(
    home: &Home,
    target: &Target,
    config: &Path,
    plan: &codex_trust::Plan,
) -> Result<()> {
    let label = target.label();
    match plan {
        codex_trust::Plan::Write(text) => {
            if !config.exists() {
                // Remember that install created it, so uninstall can remove it again.
                let marker = absent_marker(&backup_path(home, config));
                crate::config::ensure_private_dir(marker.parent().expect("has a parent"))?;
                std::fs::write(&marker, b"").map_err(|e| Error::io(&marker, e))?;
            }
            settings::write_atomic(config, text)?;
            println!(
                "✓ {label}: recorded Codex's trust for them in {}",
                config.display()
            );
        }
        codex_trust::Plan::Unchanged => {
            println!(
                "✓ {label}: Codex already trusts them ({})",
                config.display()
            );
        }
        codex_trust::Plan::Manual(_) => {}
    }
    if target.scope == Scope::Project {
        project_trust_note(config, &target.path);
    }
    Ok(())
}

/// The config.toml path, its text and the trust plan for the hooks document `merged`.
fn trust_plan(source: &Path, merged: &Value) -> Result<(PathBuf, String, codex_trust::Plan)> {
    let config = codex_home().join("config.toml");
    let text = match std::fs::read_to_string(&config) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(Error::io(&config, e)),
    };
    // Appending trust entries to a file Codex cannot parse would wire nothing and hide the
    // breakage: refuse before anything is written.
    codex_trust::validate(&config, &text)?;
    let entries = codex_trust::entries(source, merged, &settings::find_ours(merged));
    let plan = codex_trust::plan(&text, source, &entries);
    if let codex_trust::Plan::Manual(why) = &plan {
        println!(
            "⚠ codex: cannot record the hooks' trust safely ({why}). Codex skips untrusted hooks \
             without a word: trust them in Codex with /hooks, or add to {}:",
            config.display()
        );
        print!("{}", codex_trust::block(source, &entries));
    }
    Ok((config, text, plan))
}

fn trust_manual(trust: Option<&(PathBuf, String, codex_trust::Plan)>) -> Exit {
    match trust {
        Some((_, _, codex_trust::Plan::Manual(_))) => Exit::Problem,
        _ => Exit::Ok,
    }
}

fn project_trust_note(config: &Path, hooks: &Path) {
    let Some(root) = hooks.parent().and_then(Path::parent) else {
        return;
    };
    let header = format!(
        "[projects.{}]",
        codex_trust::toml_string(&root.display().to_string())
    );
    let trusted = std::fs::read_to_string(config).is_ok_and(|t| t.contains(&header));
    if !trusted {
        println!(
            "· codex loads project hooks only in a trusted project: trust {} when Codex asks, or add \
             `{header}` with `trust_level = \"trusted\"` to {}",
            root.display(),
            config.display()
        );
    }
}

fn uninstall_one(home: &Home, target: &Target, dry_run: bool) -> Result<Exit> {
    let doc = versioned::load(target.host, &target.path)?;
    let (stripped, removed) = settings::strip(&doc.value);
    let label = target.label();
    let path = target.path.display();
    let backup_file = backup_path(home, &target.path);
    let restored = restore_from_backup(target.host, &backup_file, &target.path, &stripped);
    // None = delete the file (it did not exist before install).
    let new_text: Option<String> = if removed == 0 {
        Some(doc.text.clone())
    } else {
        match restored {
            Some(Restore::Bytes(ref b)) => Some(b.clone()),
            Some(Restore::Absent) => None,
            None => Some(versioned::render(target.host, &doc, &stripped)),
        }
    };
    let trust = if target.host.spec().trust == Trust::CodexHash {
        let config = codex_home().join("config.toml");
        let text = std::fs::read_to_string(&config).unwrap_or_default();
        codex_trust::remove(&text, &target.path).map(|new| (config, text, new))
    } else {
        None
    };
    if target.host.spec().trust == Trust::CodexHash && removed > 0 {
        warn_shifted_keys(&target.path, &doc.value, &stripped);
    }
    if dry_run {
        let new = new_text.clone().unwrap_or_default();
        print!("{}", diff::unified(&path.to_string(), &doc.text, &new));
        if new_text.is_none() && doc.existed {
            println!("· {path} would be removed (install created it)");
        }
        if let Some((config, old, new)) = &trust {
            print!("{}", diff::unified(&config.display().to_string(), old, new));
        }
        if removed == 0 && trust.is_none() {
            println!("· {label}: callus's hooks are not installed in {path}; nothing would change");
        }
        return Ok(Exit::Ok);
    }
    if removed == 0 {
        println!("· {label}: callus's hooks are not installed in {path}; nothing changed");
    } else {
        if let Some(text) = &new_text {
            settings::write_atomic(&target.path, text)?;
        } else {
            std::fs::remove_file(&target.path).map_err(|e| Error::io(&target.path, e))?;
            remove_created_dirs(&backup_file);
        }
        let how = match restored {
            Some(Restore::Bytes(_)) => " (the file is back as it was before install)",
            Some(Restore::Absent) => " (install had created the file: removed it)",
            None => "",
        };
        println!("✓ {label}: removed {removed} callus hook(s) from {path}{how}");
        let _ = std::fs::remove_file(&backup_file);
        let _ = std::fs::remove_file(absent_marker(&backup_file));
    }
    if let Some((config, _, new)) = &trust {
        let marker = absent_marker(&backup_path(home, config));
        if new.is_empty() && marker.exists() {
            std::fs::remove_file(config).map_err(|e| Error::io(config, e))?;
            let _ = std::fs::remove_file(&marker);
        } else {
            settings::write_atomic(config, new)?;
        }
        println!(
            "✓ {label}: removed callus's trust entries from {}",
            config.display()
        );
    }
    Ok(Exit::Ok)
}

/// Warn when removing our hooks moves other hooks to new positions: Codex's trust keys are
/// positional, so those hooks become untrusted (and silently skipped) until re-trusted.
fn warn_shifted_keys(source: &Path, before: &Value, after: &Value) {
    let foreign = |doc: &Value| -> Vec<(String, String)> {
        all_handlers(doc)
            .into_iter()
            .filter(|(_, _, _, cmd)| spec::parse_ours(cmd).is_none())
            .filter_map(|(event, g, h, cmd)| {
                Some((
                    format!(
                        "{}:{}:{g}:{h}",
                        source.display(),
                        codex_trust::event_label(&event)?
                    ),
                    cmd,
                ))
            })
            .collect()
    };
    let (b, a) = (foreign(before), foreign(after));
    let moved = b.iter().filter(|pair| !a.contains(pair)).count();
    if moved > 0 {
        println!(
            "⚠ codex: {moved} other hook(s) in {} change position; Codex will skip them until they \
             are trusted again (/hooks in Codex)",
            source.display()
        );
    }
}

fn all_handlers(doc: &Value) -> Vec<(String, usize, usize, String)> {
    let mut out = Vec::new();
    if let Some(events) = doc.get("hooks").and_then(Value::as_object) {
        for (event, groups) in events {
            for (gi, g) in groups.as_array().into_iter().flatten().enumerate() {
                let hs = g.get("hooks").and_then(Value::as_array);
                for (hi, h) in hs.into_iter().flatten().enumerate() {
                    if let Some(c) = h.get("command").and_then(Value::as_str) {
                        out.push((event.clone(), gi, hi, c.to_string()));
                    }
                }
            }
        }
    }
    out
}

/// Where the pre-install copy of `path` is kept.
#[must_use]
pub(crate) fn backup_path(home: &Home, path: &Path) -> PathBuf {
    let id = crate::digest::sha256_hex(path.as_os_str().as_encoded_bytes());
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    home.dir
        .join("backups")
        .join(format!("{}.{name}", &id[..16]))
}

fn absent_marker(backup: &Path) -> PathBuf {
    let mut p = backup.as_os_str().to_owned();
    p.push(".absent");
    PathBuf::from(p)
}

/// Keep the file as it is before install (or note that there was none).
fn backup(home: &Home, doc: &Doc) -> Result<PathBuf> {
    let b = backup_path(home, &doc.path);
    let dir = b.parent().expect("backup paths have a parent");
    crate::config::ensure_private_dir(dir)?;
    let marker = absent_marker(&b);
    if doc.existed {
        let _ = std::fs::remove_file(&marker);
        std::fs::write(&b, &doc.text).map_err(|e| Error::io(&b, e))?;
        Ok(b)
    } else {
        let _ = std::fs::remove_file(&b);
        // The folders install is about to create, deepest first, so uninstall can take
        // them out again when they are left empty.
        let mut created = String::new();
        for d in doc
            .path
            .ancestors()
            .skip(1)
            .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
        {
            created.push_str(&d.to_string_lossy());
            created.push('\n');
        }
        std::fs::write(&marker, created).map_err(|e| Error::io(&marker, e))?;
        Ok(marker)
    }
}

/// Remove the folders install created for `backup`'s file (listed in its absent marker),
/// deepest first, each only when empty.
fn remove_created_dirs(backup: &Path) {
    let Ok(list) = std::fs::read_to_string(absent_marker(backup)) else {
        return;
    };
    for dir in list.lines().filter(|l| !l.is_empty()) {
        if std::fs::remove_dir(dir).is_err() {
            break;
        }
    }
}

enum Restore {
    Bytes(String),
    Absent,
}

/// The pre-install state, when the document minus our hooks is still that state.
fn restore_from_backup(
    host: Host,
    backup: &Path,
    path: &Path,
    stripped: &Value,
) -> Option<Restore> {
    if absent_marker(backup).exists() {
        return (normalize(stripped) == normalize(&Value::Object(serde_json::Map::new())))
            .then_some(Restore::Absent);
    }
    let before = std::fs::read_to_string(backup).ok()?;
    let value = versioned::parse(host, path, &before).ok()?;
    (normalize(&value) == normalize(stripped)).then_some(Restore::Bytes(before))
}

/// A document with empty event arrays and an empty `hooks` object dropped.
fn normalize(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(root) = v.as_object_mut() {
        if let Some(events) = root.get_mut("hooks").and_then(Value::as_object_mut) {
            events.retain(|_, g| g.as_array().is_none_or(|a| !a.is_empty()));
        }
        if root
            .get("hooks")
            .and_then(Value::as_object)
            .is_some_and(serde_json::Map::is_empty)
        {
            root.remove("hooks");
        }
    }
    v
}
