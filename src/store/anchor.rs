//! Audit anchors: the chain's head, kept outside the store, so a rewrite with recomputed
//! hashes, a truncated tail or an emptied table is found (issue 15 item 5).
//!
//! A chain that verifies on its own only proves it is consistent: whoever can write the
//! store can rewrite every record and recompute every hash. `callus guard audit anchor --to
//! FILE` appends the current head (`seq`, `hash`, the store's path, the time) as one JSON line
//! to FILE, a place the user names outside `$CALLUS_HOME` (refused inside it: an anchor
//! beside the store is rewritten with it), and remembers FILE in `$CALLUS_HOME/anchors` so
//! a plain `verify` checks it. Verification against anchors: every anchor of this store must
//! name a record that still exists with that hash; a missing record is a truncation (an
//! emptied chain included), a different hash a rewrite. Records after the newest anchor are
//! reported as not yet covered: nothing can vouch for what was appended after it. The team
//! store keeps each origin's pushed chain, so `verify --anchor postgres://…` uses every
//! `(seq, hash)` it holds for this origin as an anchor (`crate::sync::anchors`).
//!
//! What this does not stop: someone who can write both the store and every anchor file.
//! Keep the anchor where the agent's user cannot write (another account, a read-only
//! mount, a commit pushed elsewhere), or at least where a rewrite would be noticed.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension};
use serde::Serialize;
use serde_json::{Value, json};

use crate::config::Home;
use crate::{Error, Result};

/// The file under `$CALLUS_HOME` that lists the anchor files written.
pub(crate) const REMEMBERED: &str = "anchors";

/// One anchor read back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Anchor {
    /// The anchored record.
    pub seq: i64,
    /// Its hash (`GENESIS` for an empty chain).
    pub hash: String,
    /// Where it came from: the anchor file, or the team store (its URL without password).
    pub source: String,
}

/// How the chain stands against its anchors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Standing {
    /// The anchor files (and team stores) consulted.
    pub sources: Vec<String>,
    /// The newest anchor of this store, if any.
    pub latest: Option<Anchor>,
    /// The first anchor the chain contradicts, and how.
    pub broken: Option<(i64, String)>,
    /// Records after the newest anchor.
    pub since_anchor: i64,
    /// Anchor files that could not be read (named with the reason).
    pub unreadable: Vec<String>,
}

/// Where an anchor is kept: a file outside `$CALLUS_HOME`, or git notes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Place {
    /// An anchor file (JSON lines, appended to).
    File(PathBuf),
    /// The notes ref `notes_ref` of the repository whose common git directory is `git_dir`.
    GitNotes {
        /// The repository's common git directory, absolute.
        git_dir: PathBuf,
        /// The full notes ref (`refs/notes/…`).
        notes_ref: String,
    },
}

impl Place {
    /// The place a `--to`/`--anchor` argument names: `git:[REF]` (the repository of `cwd`),
    /// else a file.
    pub(crate) fn parse(arg: &str, cwd: &Path) -> Result<Place> {
        match arg.strip_prefix("git:") {
            Some(name) => Ok(Place::GitNotes {
                notes_ref: super::anchor_git::full_ref(name)?,
                git_dir: super::anchor_git::git_dir_of(cwd)?,
            }),
            None => Ok(Place::File(PathBuf::from(arg))),
        }
    }

    /// How the place is named in messages and in `anchor_sources`.
    #[must_use]
    pub(crate) fn shown(&self) -> String {
        match self {
            Place::File(p) => p.display().to_string(),
            Place::GitNotes { git_dir, notes_ref } => {
                format!("git notes {notes_ref} of {}", git_dir.display())
            }
        }
    }

    /// The line that remembers it in `$CALLUS_HOME/anchors`: a file's absolute path, or
    /// `git:REF GITDIR` (a ref holds no space, a remembered file path starts with `/`).
    fn remembered_line(&self) -> String {
        match self {
            Place::File(p) => p.display().to_string(),
            Place::GitNotes { git_dir, notes_ref } => {
                format!("git:{notes_ref} {}", git_dir.display())
            }
        }
    }

    fn from_remembered_line(line: &str) -> Place {
        match line
            .strip_prefix("git:")
            .and_then(|rest| rest.split_once(' '))
        {
            Some((notes_ref, dir)) => Place::GitNotes {
                git_dir: PathBuf::from(dir),
                notes_ref: notes_ref.to_string(),
            },
            None => Place::File(PathBuf::from(line)),
        }
    }
}

/// The store's path as anchors name it.
fn store_name(db: &Path) -> String {
    std::fs::canonicalize(db)
        .unwrap_or_else(|_| db.to_path_buf())
        .display()
        .to_string()
}

/// The anchor line for head `head` (`SEQ:HASH`; `None`: the empty chain) of store `db`, as an
/// anchor file and a git note hold it; the team store's code may keep the same line.
pub(crate) fn line(db: &Path, head: Option<&str>) -> Result<(i64, String, String)> {
    let (seq, hash) = match head {
        Some(h) => super::audit::parse_anchor(h)?,
        None => (0, super::audit::GENESIS.to_string()),
    };
    let line = json!({
        "callus_audit_anchor": 1,
        "ts": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        "store": store_name(db),
        "seq": seq,
        "hash": hash,
    });
    Ok((seq, hash, line.to_string()))
}

/// Append the head of the (verified) chain to `to`, and remember `to`. `cwd` is the
/// directory whose repository a git place writes to.
pub(crate) fn write(
    home: &Home,
    db: &Path,
    head: Option<&str>,
    to: &Place,
    cwd: &Path,
) -> Result<Anchor> {
    let home_dir = std::fs::canonicalize(&home.dir).unwrap_or_else(|_| home.dir.clone());
    let outside = |p: &Path, what: &str| {
        if p.starts_with(&home_dir) {
            return Err(Error::Invalid(format!(
                "--to {what}: inside CALLUS_HOME ({}), where it would be rewritten along \
                 with the store; name a place outside it",
                home_dir.display()
            )));
        }
        Ok(())
    };
    let (seq, hash, text) = line(db, head)?;
    let place = match to {
        Place::File(to) => {
            let parent = to
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            let parent = std::fs::canonicalize(parent).map_err(|e| Error::io(parent, e))?;
            let file = parent.join(to.file_name().ok_or_else(|| {
                Error::Invalid(format!("--to {}: not a file name", to.display()))
            })?);
            outside(&file, &file.display().to_string())?;
            append_line(&file, &text)?;
            Place::File(file)
        }
        Place::GitNotes { git_dir, notes_ref } => {
            outside(git_dir, &format!("git:{notes_ref}"))?;
            super::anchor_git::append(cwd, notes_ref, &text)?;
            to.clone()
        }
    };
    remember(home, &place)?;
    Ok(Anchor {
        seq,
        hash,
        source: place.shown(),
    })
}

fn append_line(path: &Path, line: &str) -> Result<()> {
    // Never block on a FIFO put where the anchor file was.
    let mut f = crate::untrusted::open_append(path).map_err(|e| Error::io(path, e))?;
    writeln!(f, "{line}")
        .and_then(|()| f.sync_all())
        .map_err(|e| Error::io(path, e))
}

fn remember(home: &Home, place: &Place) -> Result<()> {
    let list = home.dir.join(REMEMBERED);
    if remembered(home).iter().any(|k| k == place) {
        return Ok(());
    }
    append_line(&list, &place.remembered_line())
}

/// The places `anchor` has written for this home.
#[must_use]
pub(crate) fn remembered(home: &Home) -> Vec<Place> {
    // A file the agent can replace: a FIFO there must not hang `verify`.
    crate::untrusted::read(&home.dir.join(REMEMBERED), Some(&home.dir), 1 << 20)
        .ok()
        .flatten()
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(Place::from_remembered_line)
        .collect()
}

/// Most bytes read from one anchor file.
const ANCHOR_FILE_CAP: u64 = 64 << 20;

/// The anchors of store `db` in `places`, and the places that could not be read (named, with
/// the reason).
#[must_use]
pub(crate) fn from_places(db: &Path, places: &[Place]) -> (Vec<Anchor>, Vec<String>) {
    let name = store_name(db);
    let mut anchors = Vec::new();
    let mut unreadable = Vec::new();
    for place in places {
        let text = match place {
            // Outside the tree callus owns, but anything running as the user can put a FIFO
            // or a device there: read it as an untrusted file (no hang, a size cap).
            Place::File(file) => match crate::untrusted::read(file, None, ANCHOR_FILE_CAP) {
                Ok(Some(text)) => Ok(text),
                Ok(None) => Err("no such file".to_string()),
                Err(e) => Err(e.to_string()),
            },
            Place::GitNotes { git_dir, notes_ref } => {
                super::anchor_git::read_all(git_dir, notes_ref)
            }
        };
        match text {
            Ok(text) => {
                let mut found = parse(&text, &name, &place.shown());
                found.sort_by(|a, b| (a.seq, &a.hash).cmp(&(b.seq, &b.hash)));
                found.dedup();
                anchors.extend(found);
            }
            Err(why) => unreadable.push(format!("{}: {why}", place.shown())),
        }
    }
    (anchors, unreadable)
}

/// How the chain of `conn` (store `db`) stands against every place `anchor` remembered for
/// `home`: what `doctor` reports, and what a plain `verify` checks.
pub(crate) fn standing(home: &Home, db: &Path, conn: &Connection) -> Result<Standing> {
    let places = remembered(home);
    let (anchors, unreadable) = from_places(db, &places);
    check(
        conn,
        places.iter().map(Place::shown).collect(),
        &anchors,
        unreadable,
    )
}

/// Check the chain in `conn` (already verified on its own) against `anchors`.
pub(crate) fn check(
    conn: &Connection,
    sources: Vec<String>,
    anchors: &[Anchor],
    unreadable: Vec<String>,
) -> Result<Standing> {
    let last_seq: i64 = conn
        .query_row("SELECT COALESCE(MAX(seq), 0) FROM audit", [], |r| r.get(0))
        .map_err(|e| Error::sql("read audit head", e))?;
    let mut broken = None;
    for a in anchors {
        if a.seq == 0 {
            continue; // an anchored empty chain vouches for nothing
        }
        let hash: Option<String> = conn
            .query_row("SELECT hash FROM audit WHERE seq = ?1", [a.seq], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| Error::sql("read audit record", e))?;
        let problem = match hash {
            None if last_seq == 0 => Some(format!(
                "the chain is empty, but {} anchors record {}",
                a.source, a.seq
            )),
            None => Some(format!(
                "record {} anchored in {} is gone (the chain ends at {last_seq}): truncated",
                a.seq, a.source
            )),
            Some(h) if h != a.hash => Some(format!(
                "record {} does not carry the hash anchored in {}: rewritten",
                a.seq, a.source
            )),
            Some(_) => None,
        };
        if let Some(p) = problem {
            broken = Some((a.seq, p));
            break;
        }
    }
    let latest = anchors.iter().max_by_key(|a| a.seq).cloned();
    let since_anchor = latest
        .as_ref()
        .map_or(last_seq, |a| (last_seq - a.seq).max(0));
    Ok(Standing {
        sources,
        latest,
        broken,
        since_anchor,
        unreadable,
    })
}

/// The anchors of store `name` in an anchor file's (or note's) text; other lines are ignored.
fn parse(text: &str, name: &str, source: &str) -> Vec<Anchor> {
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["callus_audit_anchor"] == 1 && v["store"].as_str() == Some(name))
        .filter_map(|v| {
            Some(Anchor {
                seq: v["seq"].as_i64()?,
                hash: v["hash"].as_str()?.to_string(),
                source: source.to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_round_trip_through_the_remembered_list() {
        let file = Place::File(PathBuf::from("/var/anchors/a.jsonl"));
        let git = Place::GitNotes {
            git_dir: PathBuf::from("/srv/repo/.git"),
            notes_ref: "refs/notes/callus-audit".into(),
        };
        for place in [&file, &git] {
            assert_eq!(
                &Place::from_remembered_line(&place.remembered_line()),
                place
            );
        }
        assert_eq!(file.shown(), "/var/anchors/a.jsonl");
        assert_eq!(
            git.shown(),
            "git notes refs/notes/callus-audit of /srv/repo/.git"
        );
        assert_eq!(
            git.remembered_line(),
            "git:refs/notes/callus-audit /srv/repo/.git"
        );
    }

    #[test]
    fn an_anchor_line_names_its_store_and_only_its_store_is_read_back() {
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join("callus.db");
        std::fs::write(&db, b"").unwrap();
        let hash = "ab".repeat(32);
        let (seq, h, text) = line(&db, Some(&format!("7:{hash}"))).unwrap();
        assert_eq!((seq, h.as_str()), (7, hash.as_str()));
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["store"], store_name(&db));
        assert_eq!(
            (v["seq"].clone(), v["callus_audit_anchor"].clone()),
            (json!(7), json!(1))
        );
        let (seq, h, _) = line(&db, None).unwrap();
        assert_eq!((seq, h.as_str()), (0, super::super::audit::GENESIS));
        let other = text.replace(&store_name(&db), "/elsewhere/callus.db");
        let read = parse(
            &format!("{text}\nnot json\n{other}\n"),
            &store_name(&db),
            "f",
        );
        assert_eq!(
            read,
            vec![Anchor {
                seq: 7,
                hash,
                source: "f".into()
            }]
        );
    }

    /// A store whose chain has records `1..=n`, record `i` hashed `h{i}` (`check` reads only
    /// the seqs and hashes; the chain itself is verified before it is called).
    fn chain(n: i64) -> Connection {
        let conn = crate::store::open_in_memory().unwrap();
        for i in 1..=n {
            conn.execute(
                "INSERT INTO audit (seq, ts_ms, record, prev, hash) VALUES (?1, 0, '{}', '', ?2)",
                rusqlite::params![i, format!("h{i}")],
            )
            .unwrap();
        }
        conn
    }

    fn anchor(seq: i64, hash: &str) -> Anchor {
        Anchor {
            seq,
            hash: hash.into(),
            source: "a.jsonl".into(),
        }
    }

    fn standing_of(conn: &Connection, anchors: &[Anchor]) -> Standing {
        check(conn, vec!["a.jsonl".into()], anchors, vec!["b: why".into()]).unwrap()
    }

    #[test]
    fn a_chain_that_carries_its_anchors_is_covered_up_to_the_newest() {
        let conn = chain(5);
        let s = standing_of(&conn, &[]);
        assert_eq!((s.latest, s.broken, s.since_anchor), (None, None, 5));
        assert_eq!(
            (s.sources, s.unreadable),
            (vec!["a.jsonl".into()], vec!["b: why".into()])
        );
        let s = standing_of(&conn, &[anchor(3, "h3"), anchor(1, "h1")]);
        assert_eq!(s.broken, None);
        assert_eq!(s.latest, Some(anchor(3, "h3")));
        assert_eq!(s.since_anchor, 2);
        let s = standing_of(&conn, &[anchor(5, "h5")]);
        assert_eq!((s.broken, s.since_anchor), (None, 0));
    }

    #[test]
    fn a_rewritten_or_truncated_chain_breaks_at_the_first_contradicted_anchor() {
        let conn = chain(3);
        let s = standing_of(&conn, &[anchor(1, "h1"), anchor(2, "x"), anchor(3, "y")]);
        let (seq, why) = s.broken.unwrap();
        assert_eq!(seq, 2);
        assert_eq!(
            why,
            "record 2 does not carry the hash anchored in a.jsonl: rewritten"
        );
        let s = standing_of(&conn, &[anchor(1, "h1"), anchor(7, "h7")]);
        assert_eq!(
            s.broken,
            Some((
                7,
                "record 7 anchored in a.jsonl is gone (the chain ends at 3): truncated".into()
            ))
        );
        // An anchor ahead of the chain leaves nothing uncovered, never a negative count.
        assert_eq!(s.since_anchor, 0);
        assert_eq!(s.latest.map(|a| a.seq), Some(7));
    }

    #[test]
    fn an_emptied_chain_is_broken_but_an_anchored_empty_chain_vouches_for_nothing() {
        let empty = chain(0);
        let s = standing_of(&empty, &[anchor(0, "GENESIS"), anchor(4, "h4")]);
        assert_eq!(
            s.broken,
            Some((4, "the chain is empty, but a.jsonl anchors record 4".into()))
        );
        let s = standing_of(&empty, &[anchor(0, "anything")]);
        assert_eq!((s.broken, s.since_anchor), (None, 0));
        // seq 0 is skipped before the lookup, whatever hash it carries.
        let s = standing_of(&chain(2), &[anchor(0, "anything")]);
        assert_eq!((s.broken, s.since_anchor), (None, 2));
    }

    fn home_in(dir: &Path) -> Home {
        let home = Home {
            dir: dir.join("home"),
        };
        std::fs::create_dir_all(&home.dir).unwrap();
        home
    }

    #[test]
    fn anchors_are_written_outside_the_home_remembered_once_and_read_back() {
        let tmp = tempfile::tempdir().unwrap();
        let tmp_dir = std::fs::canonicalize(tmp.path()).unwrap();
        let home = home_in(&tmp_dir);
        let db = home.dir.join("callus.db");
        std::fs::write(&db, b"").unwrap();
        let to = Place::File(tmp_dir.join("anchors.jsonl"));
        let a = write(
            &home,
            &db,
            Some(&format!("2:{}", "c".repeat(64))),
            &to,
            &tmp_dir,
        )
        .unwrap();
        assert_eq!((a.seq, a.source.as_str()), (2, to.shown().as_str()));
        write(
            &home,
            &db,
            Some(&format!("3:{}", "d".repeat(64))),
            &to,
            &tmp_dir,
        )
        .unwrap();
        assert_eq!(remembered(&home), vec![to.clone()]);
        let (anchors, unreadable) = from_places(&db, std::slice::from_ref(&to));
        assert!(unreadable.is_empty());
        assert_eq!(
            anchors.iter().map(|a| a.seq).collect::<Vec<_>>(),
            vec![2, 3]
        );
        // Inside the home, it would be rewritten along with the store.
        let inside = Place::File(home.dir.join("anchor.jsonl"));
        let err = write(&home, &db, None, &inside, &tmp_dir).unwrap_err();
        assert!(err.to_string().contains("inside CALLUS_HOME"), "{err}");
        assert!(!home.dir.join("anchor.jsonl").exists());
        assert_eq!(remembered(&home), vec![to]);
    }

    #[test]
    fn anchors_read_back_sorted_and_once_and_unreadable_places_are_named() {
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join("callus.db");
        std::fs::write(&db, b"").unwrap();
        let line_at = |seq: i64| {
            line(&db, Some(&format!("{seq}:{}", "e".repeat(64))))
                .unwrap()
                .2
        };
        let file = tmp.path().join("a.jsonl");
        std::fs::write(
            &file,
            format!("{}\n{}\n{}\n", line_at(5), line_at(2), line_at(5)),
        )
        .unwrap();
        let gone = tmp.path().join("gone.jsonl");
        let (anchors, unreadable) =
            from_places(&db, &[Place::File(gone.clone()), Place::File(file.clone())]);
        assert_eq!(
            anchors.iter().map(|a| a.seq).collect::<Vec<_>>(),
            vec![2, 5]
        );
        assert_eq!(anchors[0].source, file.display().to_string());
        assert_eq!(
            unreadable,
            vec![format!("{}: no such file", gone.display())]
        );
        // Another store's anchors are not this one's.
        let other = tmp.path().join("other.db");
        std::fs::write(&other, b"").unwrap();
        assert!(from_places(&other, &[Place::File(file)]).0.is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn a_store_is_named_by_its_canonical_path() {
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join("callus.db");
        std::fs::write(&db, b"").unwrap();
        let link = tmp.path().join("link.db");
        std::os::unix::fs::symlink(&db, &link).unwrap();
        let canonical = std::fs::canonicalize(&db).unwrap().display().to_string();
        assert_eq!(store_name(&link), canonical);
        assert_eq!(store_name(&db), canonical);
        // A store not (yet) there is named as given.
        let gone = tmp.path().join("gone.db");
        assert_eq!(store_name(&gone), gone.display().to_string());
    }

    #[test]
    fn the_remembered_list_skips_blank_lines_and_a_missing_list_is_empty() {
        let tmp = tempfile::tempdir().unwrap();
        let home = home_in(tmp.path());
        assert!(remembered(&home).is_empty());
        std::fs::write(
            home.dir.join(REMEMBERED),
            "  /a/b.jsonl  \n\n   \ngit:refs/notes/x /r/.git\n",
        )
        .unwrap();
        assert_eq!(
            remembered(&home),
            vec![
                Place::File("/a/b.jsonl".into()),
                Place::GitNotes {
                    git_dir: "/r/.git".into(),
                    notes_ref: "refs/notes/x".into()
                }
            ]
        );
    }

    #[test]
    fn standing_checks_the_chain_against_every_remembered_place() {
        let tmp = tempfile::tempdir().unwrap();
        let tmp_dir = std::fs::canonicalize(tmp.path()).unwrap();
        let home = home_in(&tmp_dir);
        let db = home.dir.join("callus.db");
        std::fs::write(&db, b"").unwrap();
        let conn = chain(3);
        let to = Place::File(tmp_dir.join("anchors.jsonl"));
        write(&home, &db, Some("2:h2"), &to, &tmp_dir).unwrap();
        let s = standing(&home, &db, &conn).unwrap();
        assert_eq!(s.sources, vec![to.shown()]);
        assert_eq!(s.latest.map(|a| (a.seq, a.hash)), Some((2, "h2".into())));
        assert_eq!((s.broken, s.since_anchor), (None, 1));
    }
}
