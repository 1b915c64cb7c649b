//! `callus demo`: the whole loop on a bundled trace, in a temporary `CALLUS_HOME`.
//!
//! It runs this very binary's own commands — `record import`, `derive`, `rules promote`,
//! `guard` (as the hook), `guard audit verify`, `guard prune`, `scope` — exactly as a user
//! would, and prints each stage. Nothing outside the temporary directory is read or written
//! (the user's real home, store and rulesets are never touched); the directory is removed at
//! the end unless `--keep` is given. The bundled trace's timestamps are shifted to the last
//! few days so the default derive window sees them.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::{Error, Exit, Result};

/// The bundled trace: callusguard's JSONL format, `ts` given as hours before now.
const TRACE: &str = include_str!("demo_trace.jsonl");

/// Run the demo; `keep` leaves the temporary directory in place (`--keep`).
pub(crate) fn run(keep: bool) -> Result<Exit> {
    let dir = tempfile::Builder::new()
        .prefix("callus-demo-")
        .tempdir()
        .map_err(|e| Error::io(std::env::temp_dir(), e))?;
    let root = dir.path().to_path_buf();
    let home = root.join("home");
    let project = root.join("project");
    for d in [&home, &project.join(".git"), &project.join("scripts")] {
        std::fs::create_dir_all(d).map_err(|e| Error::io(d.as_path(), e))?;
    }
    let trace_path = root.join("trace.jsonl");
    std::fs::write(&trace_path, shifted_trace()).map_err(|e| Error::io(&trace_path, e))?;
    let demo = Demo {
        exe: std::env::current_exe().map_err(|e| Error::io("current executable", e))?,
        home,
        project: project.clone(),
    };

    stage("1. RECORD — import a recorded session trace");
    demo.show(&["record", "import", path_str(&trace_path)], None)?;
    demo.show(&["record", "stats"], None)?;

    stage("2. DERIVE — cluster the failures that keep recurring");
    demo.show(&["derive"], None)?;
    let candidates = demo.json(&["derive", "--json"])?;
    let Some(candidate) = candidates["rules"]
        .as_array()
        .and_then(|r| r.first())
        .cloned()
    else {
        println!("no candidate was derived; stopping here");
        return Ok(Exit::Problem);
    };
    let id = candidate["id"].as_str().unwrap_or_default().to_string();
    let ceiling = candidate["meta"]["action_ceiling"]
        .as_str()
        .unwrap_or("nudge")
        .to_string();
    println!(
        "candidate {id}: tier {}, ceiling {ceiling}",
        candidate["meta"]["tier"]
    );

    stage("3. REVIEW — a human promotes it, at most to its evidence ceiling");
    let rules_file = project.join(".callus").join("rules.json");
    demo.show(
        &[
            "rules",
            "promote",
            &id,
            "--action",
            &ceiling,
            "--message",
            "Bare psql keeps failing here: pass -h/-d or a postgresql:// URL.",
            "--into",
            path_str(&rules_file),
        ],
        None,
    )?;

    guard_stages(&demo, &root)?;
    scope_stage(&demo)?;

    stage("Done.");
    if keep {
        let kept = dir.keep();
        println!("kept the demo home at {}", kept.display());
    }
    Ok(Exit::Ok)
}

/// Stages 4 to 6: the guard refuses the command again, every decision is on the audit
/// chain, prune judges the rules.
fn guard_stages(demo: &Demo, root: &Path) -> Result<()> {
    stage("4. GUARD — the agent tries the failing command again");
    let payload = json!({
        "hook_event_name": "PreToolUse",
        "session_id": "demo",
        "prompt_id": "demo-prompt",
        "cwd": demo.project,
        "tool_name": "Bash",
        "tool_input": {"command": "cd db && psql -c 'select 1'"},
        "tool_use_id": "demo-call-1",
    });
    demo.show(&["guard"], Some(&payload.to_string()))?;
    demo.show(&["guard", "test", "--", "rm", "-rf", "/"], None)?;

    stage("5. AUDIT — every decision is on a hash chain");
    // The head, kept outside the store: what lets verify see a rewrite or a truncation.
    let anchor = root.join("audit-anchor.jsonl");
    demo.show(
        &["guard", "audit", "anchor", "--to", path_str(&anchor)],
        None,
    )?;
    demo.show(&["guard", "audit", "verify"], None)?;
    demo.show(&["guard", "audit", "tail", "-n", "3"], None)?;

    stage("6. PRUNE — which rules still earn their place");
    demo.show(&["guard", "prune", "--days", "30"], None)?;
    Ok(())
}

/// Stage 7: a run declares what it may write, writes outside it, and scope says so.
fn scope_stage(demo: &Demo) -> Result<()> {
    stage("7. SCOPE — did a run write only what it declared?");
    std::fs::write(demo.project.join("scripts/build.py"), "print('build')\n")
        .map_err(|e| Error::io(demo.project.join("scripts/build.py"), e))?;
    demo.show(
        &[
            "scope",
            "declare",
            "--run-id",
            "demo",
            "--root",
            path_str(&demo.project),
            "--create",
            "docs/**/*.md",
            "--forbid",
            "scripts/**",
        ],
        None,
    )?;
    let docs = demo.project.join("docs");
    std::fs::create_dir_all(&docs).map_err(|e| Error::io(&docs, e))?;
    std::fs::write(docs.join("notes.md"), "# notes\n")
        .map_err(|e| Error::io(docs.join("notes.md"), e))?;
    std::fs::write(demo.project.join("scripts/build.py"), "print('changed')\n")
        .map_err(|e| Error::io(demo.project.join("scripts/build.py"), e))?;
    demo.show(&["scope", "verify", "--run-id", "demo"], None)?;
    Ok(())
}

struct Demo {
    exe: std::path::PathBuf,
    home: std::path::PathBuf,
    project: std::path::PathBuf,
}

impl Demo {
    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(&self.exe);
        c.args(args)
            .current_dir(&self.project)
            .env("CALLUS_HOME", &self.home)
            .env("HOME", &self.home)
            .env_remove("CALLUS_RULES")
            .env_remove("CALLUS_DB")
            .env_remove("CALLUS_FAIL")
            .env_remove("CALLUS_DRYRUN");
        c
    }

    /// Run a stage command, echoing it and its output; report its exit code.
    fn show(&self, args: &[&str], stdin: Option<&str>) -> Result<()> {
        println!("$ callus {}", args.join(" "));
        let mut c = self.command(args);
        c.stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let mut child = c.spawn().map_err(|e| Error::io(&self.exe, e))?;
        if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
            use std::io::Write as _;
            let _ = pipe.write_all(text.as_bytes());
        }
        let out = child
            .wait_with_output()
            .map_err(|e| Error::io(&self.exe, e))?;
        print!("{}", String::from_utf8_lossy(&out.stdout));
        let err = String::from_utf8_lossy(&out.stderr);
        for line in err.lines() {
            println!("  (stderr) {line}");
        }
        println!("  → exit {}\n", out.status.code().unwrap_or(-1));
        Ok(())
    }

    fn json(&self, args: &[&str]) -> Result<Value> {
        let out = self
            .command(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| Error::io(&self.exe, e))?;
        serde_json::from_slice(&out.stdout)
            .map_err(|e| Error::json(format!("callus {}", args.join(" ")), e))
    }
}

fn stage(title: &str) {
    println!("\n=== {title} ===");
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap_or_default()
}

/// The trace with each `"ts_hours_ago": N` turned into an ISO timestamp N hours before now.
fn shifted_trace() -> String {
    let now = chrono::Utc::now();
    let mut out = String::new();
    for line in TRACE.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(mut v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let hours = v["ts_hours_ago"].as_i64().unwrap_or(0);
        if let Some(obj) = v.as_object_mut() {
            obj.remove("ts_hours_ago");
            let ts = now - chrono::Duration::hours(hours);
            obj.insert(
                "ts".into(),
                Value::String(ts.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
            );
        }
        out.push_str(&v.to_string());
        out.push('\n');
    }
    out
}
