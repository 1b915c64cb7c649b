//! The `rules` subcommands: `list` (every active rule with its layer, action, tier and last
//! firing), `show` (one ruleset: the built-in starter set, a layer, or a file) and `promote`
//! (see [`crate::rules::promote`]).
//!
//! stdout carries the result (a table for people, JSON with `--json`); nothing here writes
//! except `promote`.

use std::collections::HashMap;
use std::path::PathBuf;

use rusqlite::Connection;
use serde_json::{Value, json};

use crate::cli::{ActionArg, RulesCommand};
use crate::config::Home;
use crate::output::{print_json, table};
use crate::rules::Action;
use crate::rules::layers::{LayerPaths, STARTER_JSON};
use crate::rules::promote::Promotion;
use crate::rules::{RuleSet, parse_document};
use crate::{Error, Exit, Result};

/// Dispatch `callus rules …`.
pub(super) fn run(home: &Home, cmd: &RulesCommand) -> Result<Exit> {
    match cmd {
        RulesCommand::List { json } => list(home, *json),
        RulesCommand::Show { which, json } => show(home, which, *json),
        RulesCommand::Promote(args) => crate::rules::promote::run(
            home,
            &Promotion {
                id: args.id.clone(),
                action: action(args.action),
                message: args.message.clone(),
                pattern: args.pattern.clone(),
                unless: args.unless.clone(),
                into: args.into.clone(),
            },
        ),
    }
}

fn action(a: ActionArg) -> Action {
    match a {
        ActionArg::Monitor => Action::Monitor,
        ActionArg::Nudge => Action::Nudge,
        ActionArg::Deny => Action::Deny,
        ActionArg::Block => Action::Block,
    }
}

/// `callus rules list [--json]`.
fn list(home: &Home, as_json: bool) -> Result<Exit> {
    let cwd = std::env::current_dir().ok();
    let rules = RuleSet::load(&LayerPaths::resolve(home, cwd.as_deref()))?;
    let last = match crate::store::open_existing(&home.db_path())? {
        Some(conn) => last_firings(&conn)?,
        None => HashMap::new(),
    };
    let rows: Vec<Value> = rules
        .rules()
        .map(|(layer, rule)| {
            json!({
                "id": rule.id,
                "layer": layer.kind.as_str(),
                "file": layer.name(),
                "action": layer.effective_action(rule).as_str(),
                "declared_action": rule.action.as_str(),
                "tier": rule.tier(),
                "pinned": rule.pinned,
                "promoted": rule.promoted().map(|d| d.to_string()),
                "last_fired": last.get(&rule.id),
            })
        })
        .collect();
    if as_json {
        print_json(&Value::Array(rows));
        return Ok(Exit::Ok);
    }
    let mut t = table(&["id", "layer", "action", "tier", "pinned", "last fired"]);
    for r in &rows {
        let s = |k: &str| r[k].as_str().unwrap_or("-").to_string();
        let action = if r["action"] == r["declared_action"] {
            s("action")
        } else {
            format!("{} (as written: {})", s("action"), s("declared_action"))
        };
        t.add_row(vec![
            s("id"),
            s("layer"),
            action,
            s("tier"),
            if r["pinned"] == true { "pinned" } else { "" }.to_string(),
            s("last_fired"),
        ]);
    }
    println!("{t}");
    Ok(Exit::Ok)
}

/// The latest firing of each rule id in the audit chain (RFC 3339).
fn last_firings(conn: &Connection) -> Result<HashMap<String, String>> {
    Ok(crate::store::audit_query::last_firings(conn)?
        .into_iter()
        .filter_map(|(id, ms)| {
            chrono::DateTime::from_timestamp_millis(ms)
                .map(|t| (id, t.format("%Y-%m-%d %H:%M").to_string()))
        })
        .collect())
}

/// `callus rules show starter|user|project|candidates|PATH [--json]`.
fn show(home: &Home, which: &str, as_json: bool) -> Result<Exit> {
    let cwd = std::env::current_dir().ok();
    let paths = LayerPaths::resolve(home, cwd.as_deref());
    let (name, text) = match which {
        "starter" => ("starter".to_string(), STARTER_JSON.to_string()),
        other => {
            let path: PathBuf = match other {
                "user" => paths.user,
                "candidates" => paths.candidates,
                "project" => paths.project.ok_or_else(|| {
                    Error::Invalid("not inside a git repository: there is no project layer".into())
                })?,
                path => PathBuf::from(path),
            };
            let text = crate::untrusted::read(&path, None, crate::rules::layers::LAYER_CAP)?
                .ok_or_else(|| Error::io(&path, std::io::ErrorKind::NotFound.into()))?;
            (path.display().to_string(), text)
        }
    };
    let doc = parse_document(&name, &text)?;
    if as_json {
        let value: Value = serde_json::from_str(&text).map_err(|e| Error::json(&name, e))?;
        print_json(&value);
        return Ok(Exit::Ok);
    }
    crate::output::print_text(&format!("{name}: {} rule(s)\n", doc.rules.len()));
    // Fitted to the terminal like every table (`output::table`); plain in a pipe.
    let mut t = table(&["id", "tool", "action", "match", "patterns", "message"]);
    for r in &doc.rules {
        let mut patterns: Vec<String> = r.any.iter().map(|p| p.source().to_string()).collect();
        patterns.extend(r.unless.iter().map(|p| format!("unless {}", p.source())));
        if patterns.is_empty() {
            patterns.push("(tool-wide)".into());
        }
        let mut action = r.action.to_string();
        if r.pinned {
            action.push_str(", pinned");
        }
        t.add_row(vec![
            r.id.clone(),
            r.tool.clone(),
            action,
            format!("{:?}", r.match_mode).to_lowercase(),
            patterns.join("\n"),
            r.message.clone().unwrap_or_default(),
        ]);
    }
    println!("{t}");
    Ok(Exit::Ok)
}
