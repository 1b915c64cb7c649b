//! The interactive `guard` subcommands: `check`, `test` and `audit`.
//!
//! stdout carries the result (a table or text for people, JSON with `--json`); stderr carries
//! diagnostics. Exit codes follow [`crate::Exit`].

use std::fmt::Write as _;
use std::path::PathBuf;

use serde_json::json;

use crate::cli::{AuditCommand, CheckArgs, TestArgs};
use crate::config::Home;
use crate::guard::{Decision, DecisionKind, Fired, agent_text, decide};
use crate::output::{print_json, print_text};
use crate::rules::LayerKind;
use crate::rules::check::{FileReport, check_layer_text, check_text};
use crate::rules::layers::{LayerPaths, STARTER_JSON, active_layer_files, read_layer_text};
use crate::rules::{MatchMode, RuleSet, Subject};
use crate::shell::model::Effect;
use crate::store::audit;
use crate::{Error, Exit, Result};

/// `callus guard check [FILE…]`.
pub(super) fn check(home: &Home, args: &CheckArgs) -> Exit {
    let targets: Vec<(String, Option<PathBuf>, LayerKind)> = if args.files.is_empty() {
        active_layer_files(home)
    } else {
        args.files
            .iter()
            .map(|p| (p.display().to_string(), Some(p.clone()), LayerKind::Env))
            .collect()
    };
    let user_file = std::fs::canonicalize(home.rules_path()).ok();
    let reports: Vec<FileReport> = targets
        .iter()
        .map(|(name, path, kind)| check_one(name, path.as_deref(), *kind, user_file.as_deref()))
        .collect();
    // The configuration the guard runs under is checked too (strictly: see `config`).
    let config = home.fail_config();
    let problems: Vec<String> = config.problems.iter().map(ToString::to_string).collect();
    let all_ok = reports.iter().all(|r| r.ok) && problems.is_empty();
    if args.json {
        print_json(&json!({
            "ok": all_ok,
            "files": reports,
            "config": {"fail": config.policy.as_str(), "problems": problems},
        }));
    } else {
        print_text(&check_text_report(
            config.policy.as_str(),
            &problems,
            &reports,
            all_ok,
        ));
    }
    if all_ok { Exit::Ok } else { Exit::Problem }
}

/// One layer file checked: the starter when it has no path, else the file read as the hook
/// reads it (a FIFO, a device or a symlink out of its tree is refused here too, never waited
/// on); `user_file` is the user's own rules file, resolved.
fn check_one(
    name: &str,
    path: Option<&std::path::Path>,
    kind: LayerKind,
    user_file: Option<&std::path::Path>,
) -> FileReport {
    let Some(p) = path else {
        return check_text(name, STARTER_JSON);
    };
    match read_layer_text(kind, p)
        .and_then(|t| t.ok_or_else(|| Error::io(p, std::io::ErrorKind::NotFound.into())))
    {
        Ok(text) => {
            let is_user =
                user_file.is_some() && std::fs::canonicalize(p).ok().as_deref() == user_file;
            check_layer_text(name, &text, is_user)
        }
        Err(e) => FileReport {
            name: name.to_string(),
            ok: false,
            rules: 0,
            examples_passed: 0,
            rules_with_examples: 0,
            errors: vec![format!("does not parse — cannot read: {e}")],
            example_failures: Vec::new(),
            warnings: Vec::new(),
        },
    }
}

/// `guard check`'s text for people: a configuration problem (only a problem is shown: a
/// valid configuration is the usual case), then each file, then the verdict.
fn check_text_report(
    policy: &str,
    problems: &[String],
    reports: &[FileReport],
    all_ok: bool,
) -> String {
    let mut out = String::new();
    if !problems.is_empty() {
        let _ = writeln!(out, "✗ config: fail {policy} (invalid configuration)");
        for p in problems {
            let _ = writeln!(out, "    error: {p}");
        }
    }
    for r in reports {
        let _ = write!(
            out,
            "{} {}: {} rules",
            if r.ok { "✓" } else { "✗" },
            r.name,
            r.rules
        );
        if r.rules_with_examples > 0 {
            let _ = write!(
                out,
                ", {} example assertion(s) across {} rule(s)",
                r.examples_passed, r.rules_with_examples
            );
        }
        out.push('\n');
        for e in &r.errors {
            let _ = writeln!(out, "    error: {e}");
        }
        for e in &r.example_failures {
            let _ = writeln!(out, "    example FAIL: {e}");
        }
        for w in &r.warnings {
            let _ = writeln!(out, "    warn: {w}");
        }
    }
    let _ = writeln!(
        out,
        "\n{} — {} file(s)",
        if all_ok { "OK" } else { "FAILED" },
        reports.len()
    );
    out
}

/// `callus guard test [--tool T] [--field F] -- COMMAND`.
pub(super) fn test(home: &Home, args: &TestArgs) -> Result<Exit> {
    let cwd = match &args.cwd {
        Some(c) => Some(c.clone()),
        None => std::env::current_dir().ok(),
    };
    let rules = RuleSet::load(&LayerPaths::resolve(home, cwd.as_deref()))?;
    let value = args.command.join(" ");
    let input = example_input(&args.field, &value);
    let cwd_text = cwd.as_deref().and_then(|c| c.to_str());
    // Read here, at the edge, as the hook reads it.
    let place = crate::host::call::context(cwd_text);
    let subject = Subject::of(crate::host::call::Call::new(&args.tool, &input).at(&place));
    // Conditions are answered as the hook would answer them now, for the host the
    // environment names (no session: what only a session knows is unknown, and fires).
    let host = crate::host::detect(&serde_json::Map::new(), |k| {
        std::env::var_os(k).is_some_and(|v| !v.is_empty())
    });
    let facts = crate::guard::facts::Live::new(
        home,
        host.slug(),
        "",
        cwd_text,
        &crate::guard::facts::process_env,
    );
    let decision = decide(&rules, &subject, &facts);
    // What the call does, as the effect rules see it.
    let effects = &subject.effects().effects;
    if args.json {
        print_json(&test_json(args, &value, &rules, &decision, effects));
        return Ok(Exit::Ok);
    }
    print_text(&test_text(&rules, &decision, effects));
    for e in &decision.errors {
        eprintln!("callus: {e}");
    }
    Ok(Exit::Ok)
}

/// The evidence a derived rule carries (tier, fail rate, attempts, pinned), for the rule
/// that fired as `f`; `None` when no loaded rule is it.
fn evidence(rules: &RuleSet, f: &Fired) -> Option<serde_json::Value> {
    rules
        .rules()
        .find(|(l, r)| r.id == f.id && l.name() == f.layer_file)
        .map(|(_, r)| {
            json!({
                "tier": r.meta.get("tier"),
                "fail_rate": r.meta.get("fail_rate"),
                "attempts": r.meta.get("attempt_count"),
                "pinned": r.pinned,
            })
        })
}

/// `guard test --json`: the decision, each fired rule with its evidence, the effects and
/// what the agent would see.
fn test_json(
    args: &TestArgs,
    value: &str,
    rules: &RuleSet,
    decision: &Decision,
    effects: &[Effect],
) -> serde_json::Value {
    let fired: Vec<_> = decision
        .fired
        .iter()
        .map(|f| {
            let mut v = serde_json::to_value(f).unwrap_or_default();
            v["evidence"] = evidence(rules, f).unwrap_or_default();
            v
        })
        .collect();
    json!({
        "tool": args.tool,
        "field": args.field,
        "value": value,
        "decision": decision.kind,
        "winner": decision.winner,
        "fired": fired,
        "effects": effects
            .iter()
            .map(|e| json!({"kind": e.kind, "line": e.line, "says": e.human}))
            .collect::<Vec<_>>(),
        "agent_text": agent_text(decision),
        "acs": crate::guard::acs::for_decision(decision),
        "errors": decision.errors,
    })
}

/// `guard test`'s text for people: the decision and winner, the effects, each fired rule
/// (what matched, its evidence) and what the agent would see.
fn test_text(rules: &RuleSet, decision: &Decision, effects: &[Effect]) -> String {
    let mut out = format!("decision: {}\n", decision.kind.as_str());
    if let Some(w) = decision.winning() {
        let _ = writeln!(out, "winner:   {} ({}, {})", w.id, w.action, w.layer_file);
    }
    for e in effects {
        let _ = writeln!(out, "effect:   {}", e.human);
        let _ = writeln!(out, "          {}", e.line);
    }
    if decision.fired.is_empty() {
        out.push_str("no rule fired\n");
    }
    for f in &decision.fired {
        fired_text(&mut out, rules, f);
    }
    if let Some(text) = agent_text(decision) {
        let label = match decision.kind {
            DecisionKind::Block => "stderr (exit 2)",
            DecisionKind::Deny => "deny reason",
            _ => "context",
        };
        let _ = writeln!(out, "agent sees ({label}):\n{text}");
    }
    out
}

/// One fired rule in `guard test`'s text: its id, action and layer, the pattern, the
/// segment (`because` for an effect rule: the effect line) and its evidence.
fn fired_text(out: &mut String, rules: &RuleSet, f: &Fired) {
    let _ = writeln!(
        out,
        "fired:    {} [{}] from {}",
        f.id, f.action, f.layer_file
    );
    if let Some(p) = &f.pattern {
        let _ = writeln!(out, "          pattern: {p}");
    }
    if let Some(s) = &f.segment {
        let effect_rule = rules
            .rules()
            .any(|(_, r)| r.id == f.id && r.match_mode == MatchMode::Effect);
        let label = if effect_rule { "because" } else { "segment" };
        let _ = writeln!(out, "          {label}: {s}");
    }
    if let Some(ev) = evidence(rules, f) {
        let show = |v: &serde_json::Value| match v {
            serde_json::Value::Null => "-".to_string(),
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let _ = writeln!(
            out,
            "          evidence: tier {}, fail rate {}, attempts {}{}",
            show(&ev["tier"]),
            show(&ev["fail_rate"]),
            show(&ev["attempts"]),
            if ev["pinned"] == true { ", pinned" } else { "" }
        );
    }
}

fn example_input(field_path: &str, value: &str) -> serde_json::Value {
    let mut v = serde_json::Value::String(value.to_string());
    for part in field_path.rsplit('.') {
        v = json!({ part: v });
    }
    v
}

/// `callus guard audit verify|anchor|tail|export`.
pub(super) fn audit(home: &Home, cmd: &AuditCommand) -> Result<Exit> {
    if let AuditCommand::Verify {
        db: Some(team),
        origin,
        json,
        ..
    } = cmd
    {
        return crate::sync::verify::run(team, origin.as_deref(), *json);
    }
    let db = home.db_path();
    let Some(conn) = crate::store::open_existing(&db)? else {
        return Ok(no_store(cmd, &db));
    };
    match cmd {
        AuditCommand::Verify {
            expect_head,
            anchor,
            origin,
            json,
            ..
        } => verify(
            home,
            &db,
            &conn,
            expect_head.as_deref(),
            (anchor, origin.as_deref()),
            *json,
        ),
        AuditCommand::Anchor { to, json } => anchor(home, &db, &conn, to, *json),
        AuditCommand::Tail { n, json } => tail(&conn, *n, *json),
        AuditCommand::Export { .. } => export(&conn),
    }
}

/// There is no store at `db`: `verify` says so and fails (nothing vouches for a chain that
/// is not there); the others say so on stderr and succeed.
fn no_store(cmd: &AuditCommand, db: &std::path::Path) -> Exit {
    let AuditCommand::Verify { json, .. } = cmd else {
        eprintln!("callus: no store at {}", db.display());
        return Exit::Ok;
    };
    if *json {
        print_json(&json!({"ok": false, "store": db, "reason": "no store"}));
    } else {
        print_text(&format!(
            "no audit chain: there is no store at {}\n",
            db.display()
        ));
    }
    Exit::Problem
}

/// `guard audit anchor --to PLACE`: the head of an intact chain written to a file or git
/// place; a broken chain is not anchored, and a team store is anchored by pushing to it.
fn anchor(
    home: &Home,
    db: &std::path::Path,
    conn: &rusqlite::Connection,
    to: &str,
    json: bool,
) -> Result<Exit> {
    let v = audit::verify(conn, None)?;
    if let Some((seq, why)) = &v.broken {
        print_text(&format!(
            "TAMPERED — chain breaks at record {seq}: {why} ({}); not anchoring it\n",
            db.display()
        ));
        return Ok(Exit::Problem);
    }
    if let crate::sync::target::Target::Postgres(url) = crate::sync::target::Target::parse(to) {
        return Err(Error::Invalid(format!(
            "--to {}: the team store is anchored by `callus sync push --db URL` (every \
             pushed record is an anchor; check with `verify --anchor URL`)",
            url.shown()
        )));
    }
    let cwd = std::env::current_dir().map_err(|e| Error::io(".", e))?;
    let place = crate::store::anchor::Place::parse(to, &cwd)?;
    let a = crate::store::anchor::write(home, db, v.head.as_deref(), &place, &cwd)?;
    if json {
        print_json(&json!({"seq": a.seq, "hash": a.hash, "place": a.source}));
    } else {
        print_text(&format!(
            "anchored record {} ({}) in {}\n",
            a.seq, a.hash, a.source
        ));
    }
    Ok(Exit::Ok)
}

/// `guard audit tail [-n N]`: the last records, as JSON or a table.
fn tail(conn: &rusqlite::Connection, n: usize, json: bool) -> Result<Exit> {
    let records = audit::tail(conn, n)?;
    if json {
        print_json(&serde_json::to_value(&records).unwrap_or_default());
        return Ok(Exit::Ok);
    }
    let mut table = crate::output::table(&["seq", "time", "tool", "decision", "fired", "command"]);
    for s in &records {
        let r = &s.record;
        let fired: Vec<String> = r
            .fired
            .iter()
            .map(|f| format!("{}:{}", f.id, f.action))
            .collect();
        table.add_row(vec![
            s.seq.to_string(),
            r.ts.clone(),
            r.tool.clone(),
            if r.kind == "error" {
                format!("error: {}", r.error.clone().unwrap_or_default())
            } else {
                r.decision.clone()
            },
            fired.join(", "),
            r.command_preview.clone().unwrap_or_default(),
        ]);
    }
    println!("{table}");
    Ok(Exit::Ok)
}

/// `guard audit export`: every record as a JSON line on stdout.
fn export(conn: &rusqlite::Connection) -> Result<Exit> {
    use std::io::Write as _;
    let records = audit::since(conn, 1)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for s in &records {
        let line = serde_json::to_string(s).map_err(|e| Error::json("audit export", e))?;
        if writeln!(out, "{line}").is_err() {
            break; // a closed pipe (e.g. `| head`) is not an error
        }
    }
    Ok(Exit::Ok)
}

/// `guard audit verify`: the chain on its own, then against its anchors.
fn verify(
    home: &Home,
    db: &std::path::Path,
    conn: &rusqlite::Connection,
    expect_head: Option<&str>,
    (anchor_args, origin): (&[String], Option<&str>),
    json: bool,
) -> Result<Exit> {
    let v = audit::verify(conn, expect_head)?;
    let standing = standing(home, db, conn, anchor_args, origin)?;
    let broken = v
        .broken
        .clone()
        .or_else(|| standing.broken.clone())
        .or_else(|| {
            standing
                .unreadable
                .first()
                .map(|why| (0, format!("anchor unreadable: {why}")))
        });
    let status = match (&broken, &standing.latest) {
        (Some(_), _) => "broken",
        (None, None) => "unanchored",
        (None, Some(_)) => "intact",
    };
    if json {
        print_json(&json!({
            "ok": broken.is_none(),
            "status": status,
            "records": v.records,
            "head": v.head,
            "broken_at": broken.as_ref().map(|b| b.0),
            "problem": broken.as_ref().map(|b| &b.1),
            "anchor": standing.latest,
            "since_anchor": standing.since_anchor,
            "anchor_sources": standing.sources,
        }));
    } else {
        print_text(&verify_text(db, &v, &standing, broken.as_ref()));
    }
    Ok(if broken.is_none() {
        Exit::Ok
    } else {
        Exit::Problem
    })
}

/// How the chain stands against its anchors: those `--anchor` names (files, git places,
/// team stores), else the places remembered from earlier `anchor` runs.
fn standing(
    home: &Home,
    db: &std::path::Path,
    conn: &rusqlite::Connection,
    anchor_args: &[String],
    origin: Option<&str>,
) -> Result<crate::store::anchor::Standing> {
    let mut places = Vec::new();
    let mut anchors = Vec::new();
    let mut sources = Vec::new();
    let cwd = std::env::current_dir().map_err(|e| Error::io(".", e))?;
    for a in anchor_args {
        match crate::sync::target::Target::parse(a) {
            crate::sync::target::Target::Postgres(url) => {
                url.refuse_password_on_command_line(a)?;
                anchors.extend(crate::sync::anchors::team_anchors(&url, origin)?);
                sources.push(url.shown());
            }
            crate::sync::target::Target::Sqlite(_) => {
                places.push(crate::store::anchor::Place::parse(a, &cwd)?);
            }
        }
    }
    if anchor_args.is_empty() {
        places = crate::store::anchor::remembered(home);
    }
    let (found, unreadable) = crate::store::anchor::from_places(db, &places);
    anchors.extend(found);
    sources.extend(places.iter().map(crate::store::anchor::Place::shown));
    crate::store::anchor::check(conn, sources, &anchors, unreadable)
}

/// `guard audit verify`'s text for people: tampered, intact and anchored, or unanchored.
fn verify_text(
    db: &std::path::Path,
    v: &audit::Verification,
    standing: &crate::store::anchor::Standing,
    broken: Option<&(i64, String)>,
) -> String {
    if let Some((seq, why)) = broken {
        return format!(
            "TAMPERED — chain breaks at record {seq}: {why} ({})\n",
            db.display()
        );
    }
    if let Some(a) = &standing.latest {
        let since = match standing.since_anchor {
            0 => String::new(),
            n => format!("; {n} record(s) since, not yet anchored"),
        };
        return format!(
            "OK — chain intact, {} record(s), head {}, anchored at record {} in {}{since} ({})\n",
            v.records,
            v.head.as_deref().unwrap_or("-"),
            a.seq,
            a.source,
            db.display()
        );
    }
    let what = match v.records {
        0 => "chain empty".to_string(),
        n => format!(
            "chain consistent, {n} record(s), head {}",
            v.head.as_deref().unwrap_or("-")
        ),
    };
    format!(
        "UNANCHORED — {what} ({}); nothing outside the store vouches for it, so a \
         rewrite, a truncation or an emptied table would look the same: keep the head \
         elsewhere with `callus guard audit anchor --to FILE|git:`\n",
        db.display()
    )
}
