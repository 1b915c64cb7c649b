//! `callus guard audit verify --db postgres://… [--origin O]`: each origin's audit chain,
//! walked where the team keeps it.
//!
//! One read-only `psql` run copies the chains (every origin's, or one) verbatim — `seq`,
//! `prev` and `hash` as pushed, nothing renumbered — into a private temporary directory, plus
//! the anchors pushes recorded (`callus.anchors`, schema 2). Each origin's chain goes into a
//! scratch store of its own and is checked by the same code as the local chain
//! (`crate::store::audit::verify`: every record's hash recomputed, every link followed from
//! `GENESIS`), then against its push anchors (`crate::store::anchor::check`): a record
//! rewritten in the team store with every hash recomputed, or a tail cut off there, no longer
//! carries the head a push vouched for. Exit 0 when every chain is intact, 1 naming each
//! origin's first bad record (or an `--origin` the team store holds nothing of).

use std::collections::BTreeMap;
use std::io::BufRead as _;

use serde::Serialize;
use serde_json::Value;

use super::copy_text;
use super::schema::{AUDIT, literal, version_check};
use super::target::team_url;
use crate::store::anchor::Anchor;
use crate::{Error, Exit, Result};

/// One origin's verdict.
#[derive(Debug, Clone, Serialize)]
struct Verdict {
    origin: String,
    status: &'static str,
    records: i64,
    head: Option<String>,
    anchors: usize,
    problem: Option<String>,
}

/// `guard audit verify --db URL [--origin O] [--json]`.
// one team chain verification read top to bottom, each origin's outcome beside its case
#[allow(clippy::too_many_lines)]
pub(crate) fn run(db: &str, origin: Option<&str>, json: bool) -> Result<Exit> {
    let url = team_url(db, "guard audit verify")?;
    let origin = origin
        .map(|o| super::origin::resolve(Some(o)))
        .transpose()?;
    let dir = tempfile::Builder::new()
        .prefix("callus-verify-")
        .tempdir()
        .map_err(|e| Error::io(std::env::temp_dir(), e))?;
    let file = dir.path().join("audit.copy");
    if file.to_string_lossy().contains(['\'', '\n', '\r']) {
        return Err(Error::Invalid(format!(
            "the temporary directory {} has a quote or newline in its name; set TMPDIR",
            dir.path().display()
        )));
    }
    let only = origin.as_deref().map_or_else(
        || "true".to_string(),
        |o| format!("origin = {}", literal(o)),
    );
    let script = format!(
        "SET client_min_messages = warning;\nSET standard_conforming_strings = on;\n\
         BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY;\n\
         SELECT to_regclass('callus.audit') IS NOT NULL AS present, \
         to_regclass('callus.anchors') IS NOT NULL AS anchored \\gset\n\
         \\if :present\n{check}\n\
         \\copy (SELECT origin, {cols} FROM callus.audit WHERE {only} ORDER BY origin, seq) TO '{f}'\n\
         \\if :anchored\n\
         SELECT json_build_object('origin', origin, 'seq', seq, 'hash', hash, 'at', pushed_ms)::text \
         FROM callus.anchors WHERE {only} ORDER BY origin, seq;\n\
         \\endif\n\\endif\nCOMMIT;\n",
        check = version_check(),
        cols = AUDIT.column_list(),
        f = file.display(),
    );
    let out = super::psql::run(&url, "verify", |w| {
        w.write_all(script.as_bytes())
            .map_err(|e| Error::io("psql (stdin)", e))
    })?;
    let source = format!("the team store's push anchors ({})", url.shown());
    let mut anchors: BTreeMap<String, Vec<Anchor>> = BTreeMap::new();
    for line in out.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if let (Some(o), Some(seq), Some(hash)) =
            (v["origin"].as_str(), v["seq"].as_i64(), v["hash"].as_str())
        {
            anchors.entry(o.to_string()).or_default().push(Anchor {
                seq,
                hash: hash.to_string(),
                source: source.clone(),
            });
        }
    }
    let chains = read_chains(&file)?;
    let mut names: Vec<String> = chains.keys().chain(anchors.keys()).cloned().collect();
    names.sort();
    names.dedup();
    let scratch = dir.path().join("chain.db");
    let mut verdicts = Vec::new();
    for name in &names {
        let rows = chains.get(name).map_or(&[][..], Vec::as_slice);
        let theirs = anchors.get(name).map_or(&[][..], Vec::as_slice);
        verdicts.push(check_one(&scratch, name, rows, theirs)?);
    }
    if let Some(o) = &origin
        && verdicts.is_empty()
    {
        verdicts.push(Verdict {
            origin: o.clone(),
            status: "missing",
            records: 0,
            head: None,
            anchors: 0,
            problem: Some(format!(
                "the team store holds no audit record of origin {o}"
            )),
        });
    }
    let ok = verdicts.iter().all(|v| v.problem.is_none());
    if json {
        crate::output::print_json(&serde_json::json!({
            "db": url.shown(),
            "ok": ok,
            "origins": verdicts,
        }));
    } else {
        if verdicts.is_empty() {
            println!("no audit chain in the team store {}", url.shown());
        }
        for v in &verdicts {
            match &v.problem {
                None => println!(
                    "INTACT — {}: {} record(s), head {}, {} push anchor(s) hold",
                    v.origin,
                    v.records,
                    v.head.as_deref().unwrap_or("-"),
                    v.anchors
                ),
                Some(p) => println!("TAMPERED — {}: {p}", v.origin),
            }
        }
    }
    Ok(if ok { Exit::Ok } else { Exit::Problem })
}

/// The COPY file's rows, grouped by origin (the origin column dropped).
fn read_chains(file: &std::path::Path) -> Result<BTreeMap<String, Vec<Vec<Option<String>>>>> {
    let mut chains: BTreeMap<String, Vec<Vec<Option<String>>>> = BTreeMap::new();
    let Ok(f) = std::fs::File::open(file) else {
        return Ok(chains); // no schema: psql wrote no file
    };
    for (i, line) in std::io::BufReader::new(f).split(b'\n').enumerate() {
        let line = line.map_err(|e| Error::io(file, e))?;
        let mut fields = copy_text::decode_row(&line)
            .map_err(|m| Error::Invalid(format!("team audit, row {}: {m}", i + 1)))?;
        if fields.len() != AUDIT.columns.len() + 1 {
            return Err(Error::Invalid(format!(
                "team audit, row {}: {} fields, expected {}",
                i + 1,
                fields.len(),
                AUDIT.columns.len() + 1
            )));
        }
        let origin = fields.remove(0).unwrap_or_default();
        chains.entry(origin).or_default().push(fields);
    }
    Ok(chains)
}

/// Verify one origin's chain in a scratch store, then against its push anchors.
fn check_one(
    scratch: &std::path::Path,
    origin: &str,
    rows: &[Vec<Option<String>>],
    anchors: &[Anchor],
) -> Result<Verdict> {
    let _ = std::fs::remove_file(scratch);
    let mut conn = crate::store::open(scratch)?;
    let tx = conn
        .transaction()
        .map_err(|e| Error::sql("begin chain copy", e))?;
    {
        let marks = vec!["?"; AUDIT.columns.len()].join(", ");
        let mut insert = tx
            .prepare(&format!(
                "INSERT INTO audit ({}) VALUES ({marks})",
                AUDIT.column_list()
            ))
            .map_err(|e| Error::sql("prepare chain copy", e))?;
        for row in rows {
            insert
                .execute(rusqlite::params_from_iter(row.iter()))
                .map_err(|e| Error::sql("copy chain", e))?;
        }
    }
    tx.commit()
        .map_err(|e| Error::sql("commit chain copy", e))?;
    let walk = crate::store::audit::verify(&conn, None)?;
    let problem = match walk.broken {
        Some((seq, why)) => Some(format!("the chain breaks at record {seq}: {why}")),
        None => crate::store::anchor::check(&conn, Vec::new(), anchors, Vec::new())?
            .broken
            .map(|(_, p)| p),
    };
    drop(conn);
    let _ = std::fs::remove_file(scratch);
    Ok(Verdict {
        origin: origin.to_string(),
        status: if problem.is_some() {
            "broken"
        } else {
            "intact"
        },
        records: walk.records,
        head: walk.head,
        anchors: anchors.len(),
        problem,
    })
}
