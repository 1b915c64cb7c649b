//! A run's declaration: what it may create, modify and delete, what it must never touch,
//! which project checks guard it, and where its root is (README.md#scope).
//!
//! Parsing is total and strict: every field is type-checked, unknown keys are refused (a
//! misspelt `forbidd` must not silently declare nothing), and a declaration that names no
//! path at all is refused — it never degrades to a permissive empty declaration. Every
//! error names the field at fault and maps to exit 3. The root is stored absolute and
//! canonical, so a later `verify` from any directory scans the same tree.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::glob::Glob;
use crate::{Error, Result};

/// Directories (and files) skipped by the fingerprint unless the declaration says otherwise:
/// only git's internals, so writes under `.claude/` or `.github/` are seen.
pub(crate) const DEFAULT_SKIP: &[&str] = &["**/.git"];
/// How long one check may run before it is killed and counted as failed.
pub(crate) const DEFAULT_CHECK_TIMEOUT_SECS: u64 = 120;
/// Longest check name kept (a nameless JSON check is named after its command).
const NAME_MAX_CHARS: usize = 80;
/// Longest run id; run ids name a directory.
const RUN_ID_MAX: usize = 120;
/// Keys a declaration object may carry (`declared_at` is written by callus itself).
const KEYS: &[&str] = &[
    "run_id",
    "intent",
    "root",
    "declared_at",
    "create",
    "modify",
    "delete",
    "forbid",
    "skip",
    "checks",
    "fail_direction",
    "strict_unfulfilled",
];

/// What a tooling failure (a scan or check that could not run) turns into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FailDirection {
    /// A warning: the run is not blamed for the tool's failure (default).
    Open,
    /// A denial: nothing unverified passes.
    Closed,
}

impl FailDirection {
    /// `open` or `closed`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            FailDirection::Open => "open",
            FailDirection::Closed => "closed",
        }
    }
}

/// The kind of a change to one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Kind {
    /// The path did not exist at declare time.
    Create,
    /// The path existed and its content changed.
    Modify,
    /// The path existed and is gone.
    Delete,
}

impl Kind {
    /// `create`, `modify` or `delete`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Kind::Create => "create",
            Kind::Modify => "modify",
            Kind::Delete => "delete",
        }
    }

    /// `created`, `modified` or `deleted` (for reports).
    pub(crate) fn past(self) -> &'static str {
        match self {
            Kind::Create => "created",
            Kind::Modify => "modified",
            Kind::Delete => "deleted",
        }
    }
}

/// One project check run at declare and at verify.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Check {
    /// Unique within the declaration; findings are compared per name.
    pub(crate) name: String,
    /// A shell command, run by `sh -c` in the root.
    pub(crate) command: String,
    /// Seconds before the command is killed.
    pub(crate) timeout_secs: u64,
}

/// Where the root of a parsed declaration comes from.
#[derive(Debug, Clone, Copy)]
pub(crate) enum RootFrom<'a> {
    /// A declaration callus stored itself: `root` is absolute and used verbatim.
    Stored,
    /// A user's declaration: the `--root` flag, else the JSON `root`, else the current
    /// directory; relative paths resolve against the current directory, then canonicalised.
    User(Option<&'a Path>),
}

/// A run's declaration.
#[derive(Debug, Clone)]
pub(crate) struct Declaration {
    /// The run id (validated: it names the state directory).
    pub(crate) run_id: String,
    /// Free text saying what the run is for.
    pub(crate) intent: String,
    /// The absolute, canonical project root.
    pub(crate) root: PathBuf,
    /// When the declaration was made (RFC 3339, UTC).
    pub(crate) declared_at: String,
    /// Paths the run may create.
    pub(crate) create: Vec<Glob>,
    /// Paths the run may modify (or create).
    pub(crate) modify: Vec<Glob>,
    /// Paths the run may delete.
    pub(crate) delete: Vec<Glob>,
    /// Paths the run must never touch; wins over everything else.
    pub(crate) forbid: Vec<Glob>,
    /// Paths the fingerprint does not look at.
    pub(crate) skip: Vec<Glob>,
    /// Project checks whose new findings fail the run.
    pub(crate) checks: Vec<Check>,
    /// What a tooling failure turns into.
    pub(crate) fail_direction: FailDirection,
    /// Whether a literal pattern that was never written is reported.
    pub(crate) strict_unfulfilled: bool,
}

/// Whether a change is permitted, and the pattern (or `undeclared`) that decided it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Permit {
    /// True when the change is inside the declaration.
    pub(crate) ok: bool,
    /// `forbid:<p>`, `create:<p>`, `modify:<p>`, `delete:<p>` or `undeclared`.
    pub(crate) why: String,
}

/// What `callus scope declare` was given: the run, its root, its globs and checks as flags,
/// or a declaration file (`-` for stdin) that must then hold them all.
#[derive(Debug, Clone, Default)]
pub(crate) struct DeclareRequest {
    /// The run's id.
    pub run_id: String,
    /// The tree the run works in (`--root`; default: the repository around the cwd).
    pub root: Option<std::path::PathBuf>,
    /// Globs the run may create.
    pub create: Vec<String>,
    /// Globs the run may modify.
    pub modify: Vec<String>,
    /// Globs the run may delete.
    pub delete: Vec<String>,
    /// Globs the run must never touch.
    pub forbid: Vec<String>,
    /// Project checks, `NAME=COMMAND`.
    pub check: Vec<String>,
    /// A declaration file instead of the flags (`--from FILE`, `-` for stdin).
    pub from: Option<std::path::PathBuf>,
}

impl Declaration {
    /// Build a declaration from the `declare` request (flags, or `--from FILE`).
    pub(crate) fn from_request(args: &DeclareRequest) -> Result<Declaration> {
        if let Some(file) = &args.from {
            let flags = [
                (!args.create.is_empty(), "--create"),
                (!args.modify.is_empty(), "--modify"),
                (!args.delete.is_empty(), "--delete"),
                (!args.forbid.is_empty(), "--forbid"),
                (!args.check.is_empty(), "--check"),
            ];
            if let Some((_, flag)) = flags.iter().find(|(set, _)| *set) {
                return Err(Error::Invalid(format!(
                    "--from cannot be combined with {flag}: put everything in the declaration file"
                )));
            }
            let (text, origin) = if file.as_os_str() == "-" {
                let bytes =
                    crate::host::wire::read_stdin().map_err(|e| Error::Invalid(e.to_string()))?;
                (
                    String::from_utf8_lossy(&bytes).into_owned(),
                    "stdin".to_string(),
                )
            } else {
                let text = std::fs::read_to_string(file).map_err(|e| Error::io(file, e))?;
                (text, file.display().to_string())
            };
            let value: Value =
                serde_json::from_str(&text).map_err(|e| Error::json(origin.clone(), e))?;
            return Declaration::from_value(
                &value,
                &origin,
                Some(&args.run_id),
                RootFrom::User(args.root.as_deref()),
            );
        }
        let mut checks = Vec::new();
        for spec in &args.check {
            checks.push(parse_check_flag(spec)?);
        }
        let origin = "declaration";
        let decl = Declaration {
            run_id: valid_run_id(&args.run_id, origin)?,
            intent: String::new(),
            root: resolve_root(args.root.as_deref(), None, origin)?,
            declared_at: now(),
            create: globs(&args.create, origin, "create")?,
            modify: globs(&args.modify, origin, "modify")?,
            delete: globs(&args.delete, origin, "delete")?,
            forbid: globs(&args.forbid, origin, "forbid")?,
            skip: globs(DEFAULT_SKIP, origin, "skip")?,
            checks,
            fail_direction: FailDirection::Open,
            strict_unfulfilled: false,
        };
        decl.validated(origin)
    }

    /// Parse a declaration object. `run_id` fills (and must agree with) the object's own.
    // a validator: one declaration field after another, each error naming its field
    #[allow(clippy::too_many_lines)]
    pub(crate) fn from_value(
        value: &Value,
        origin: &str,
        run_id: Option<&str>,
        root_from: RootFrom<'_>,
    ) -> Result<Declaration> {
        let Value::Object(obj) = value else {
            return Err(Error::Invalid(format!(
                "{origin}: declaration must be a JSON object, got {}",
                type_name(value)
            )));
        };
        if let Some(key) = obj.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(field_err(
                origin,
                key,
                &format!("unknown key (expected one of: {})", KEYS.join(", ")),
            ));
        }
        let id = match (obj.get("run_id"), run_id) {
            (None | Some(Value::Null), Some(flag)) => flag.to_string(),
            (Some(Value::String(s)), flag) => {
                if let Some(flag) = flag.filter(|f| *f != s.trim()) {
                    return Err(field_err(
                        origin,
                        "run_id",
                        &format!("'{s}' disagrees with --run-id '{flag}'"),
                    ));
                }
                s.trim().to_string()
            }
            _ => {
                return Err(field_err(origin, "run_id", "must be a non-empty string"));
            }
        };
        let text = |key: &str| -> Result<String> {
            match obj.get(key) {
                None | Some(Value::Null) => Ok(String::new()),
                Some(Value::String(s)) => Ok(s.clone()),
                Some(_) => Err(field_err(origin, key, "must be a string")),
            }
        };
        let fail_direction = match text("fail_direction")?.as_str() {
            "" | "open" => FailDirection::Open,
            "closed" => FailDirection::Closed,
            other => {
                return Err(field_err(
                    origin,
                    "fail_direction",
                    &format!("must be one of open, closed, got '{other}'"),
                ));
            }
        };
        let strict_unfulfilled = match obj.get("strict_unfulfilled") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                return Err(field_err(
                    origin,
                    "strict_unfulfilled",
                    "must be true or false",
                ));
            }
        };
        let root_text = text("root")?;
        let root = match root_from {
            RootFrom::Stored => {
                let p = PathBuf::from(&root_text);
                if !p.is_absolute() {
                    return Err(field_err(origin, "root", "stored root must be absolute"));
                }
                p
            }
            RootFrom::User(flag) => {
                let json_root = (!root_text.is_empty()).then(|| PathBuf::from(&root_text));
                resolve_root(flag, json_root.as_deref(), origin)?
            }
        };
        // A user's declaration is dated now; a stored one keeps its date.
        let declared_at = match (root_from, obj.get("declared_at")) {
            (RootFrom::Stored, Some(Value::String(s))) => s.clone(),
            _ => now(),
        };
        let skip = match obj.get("skip") {
            None => globs(DEFAULT_SKIP, origin, "skip")?,
            Some(v) => globs(&pattern_list(v, origin, "skip")?, origin, "skip")?,
        };
        let bucket = |key: &str| -> Result<Vec<Glob>> {
            match obj.get(key) {
                None => Ok(Vec::new()),
                Some(v) => globs(&pattern_list(v, origin, key)?, origin, key),
            }
        };
        let decl = Declaration {
            run_id: valid_run_id(&id, origin)?,
            intent: text("intent")?,
            root,
            declared_at,
            create: bucket("create")?,
            modify: bucket("modify")?,
            delete: bucket("delete")?,
            forbid: bucket("forbid")?,
            skip,
            checks: parse_checks(obj.get("checks"), origin)?,
            fail_direction,
            strict_unfulfilled,
        };
        decl.validated(origin)
    }

    /// Refuse a declaration that names no path and check names that would collide.
    fn validated(self, origin: &str) -> Result<Declaration> {
        if !self.declares_anything() && self.forbid.is_empty() {
            return Err(Error::Invalid(format!(
                "{origin}: declaration names no paths: give --create, --modify, --delete or \
                 --forbid (to assert the run writes nothing, --forbid '**')"
            )));
        }
        for (i, check) in self.checks.iter().enumerate() {
            if self.checks[..i].iter().any(|c| c.name == check.name) {
                return Err(field_err(
                    origin,
                    &format!("checks[{i}].name"),
                    &format!("'{}' is used twice; check names must be unique", check.name),
                ));
            }
        }
        Ok(self)
    }

    /// True when any create, modify or delete pattern is declared.
    pub(crate) fn declares_anything(&self) -> bool {
        !(self.create.is_empty() && self.modify.is_empty() && self.delete.is_empty())
    }

    /// May `rel` (root-relative, `/`-separated) change in the way `kind` says?
    ///
    /// Forbid always wins; `modify` also covers creating; `create` does not cover modifying
    /// an existing file; only `delete` covers deleting.
    pub(crate) fn permits(&self, rel: &str, kind: Kind) -> Permit {
        fn first_match<'g>(globs: &'g [Glob], rel: &str) -> Option<&'g str> {
            globs.iter().find(|g| g.matches(rel)).map(Glob::as_str)
        }
        let hit = |globs| first_match(globs, rel);
        if let Some(p) = hit(&self.forbid) {
            return Permit {
                ok: false,
                why: format!("forbid:{p}"),
            };
        }
        let found = match kind {
            Kind::Create => hit(&self.create)
                .map(|p| format!("create:{p}"))
                .or_else(|| hit(&self.modify).map(|p| format!("modify:{p}"))),
            Kind::Modify => hit(&self.modify).map(|p| format!("modify:{p}")),
            Kind::Delete => hit(&self.delete).map(|p| format!("delete:{p}")),
        };
        match found {
            Some(why) => Permit { ok: true, why },
            None => Permit {
                ok: false,
                why: "undeclared".to_string(),
            },
        }
    }

    /// The declared write set in one line: `create: a, b; modify: c` or `(nothing)`.
    pub(crate) fn summary(&self) -> String {
        let parts: Vec<String> = [
            ("create", &self.create),
            ("modify", &self.modify),
            ("delete", &self.delete),
            ("forbid", &self.forbid),
        ]
        .iter()
        .filter(|(_, g)| !g.is_empty())
        .map(|(k, g)| format!("{k}: {}", join(g)))
        .collect();
        if parts.is_empty() {
            "(nothing)".to_string()
        } else {
            parts.join("; ")
        }
    }

    /// The declaration as stored (`declaration.json`) and shown.
    pub(crate) fn to_json(&self) -> Value {
        let list = |g: &[Glob]| Value::from(g.iter().map(Glob::as_str).collect::<Vec<_>>());
        json!({
            "run_id": self.run_id,
            "intent": self.intent,
            "root": self.root.to_string_lossy(),
            "declared_at": self.declared_at,
            "create": list(&self.create),
            "modify": list(&self.modify),
            "delete": list(&self.delete),
            "forbid": list(&self.forbid),
            "skip": list(&self.skip),
            "checks": self.checks.iter().map(|c| json!({
                "name": c.name,
                "command": c.command,
                "timeout_secs": c.timeout_secs,
            })).collect::<Vec<_>>(),
            "fail_direction": self.fail_direction.as_str(),
            "strict_unfulfilled": self.strict_unfulfilled,
        })
    }
}

/// Validate a run id: it names a directory, so it is refused rather than mangled (two ids
/// mangled to one name would share state).
pub(crate) fn valid_run_id(id: &str, origin: &str) -> Result<String> {
    let id = id.trim();
    let bad = |why: &str| Err(field_err(origin, "run_id", why));
    if id.is_empty() {
        return bad("must be a non-empty string");
    }
    if id.len() > RUN_ID_MAX {
        return bad(&format!("is longer than {RUN_ID_MAX} characters"));
    }
    if id.starts_with('.') {
        return bad(&format!("'{id}' must not start with '.'"));
    }
    if let Some(c) = id
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return bad(&format!(
            "'{id}' contains '{c}'; use letters, digits, '.', '_' and '-'"
        ));
    }
    Ok(id.to_string())
}

/// Parse one `--check NAME=CMD`. The name is required: a bare command containing `=`
/// (`ruff check --select=E`) would otherwise be split in the wrong place.
fn parse_check_flag(spec: &str) -> Result<Check> {
    let refuse = || {
        Error::Invalid(format!(
            "--check '{spec}': expected NAME=CMD with a name of letters, digits, '.', '_' or '-' \
             (e.g. --check 'lint=ruff check .')"
        ))
    };
    let (name, command) = spec.split_once('=').ok_or_else(refuse)?;
    let name = name.trim();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        || command.trim().is_empty()
    {
        return Err(refuse());
    }
    Ok(Check {
        name: name.to_string(),
        command: command.trim().to_string(),
        timeout_secs: DEFAULT_CHECK_TIMEOUT_SECS,
    })
}

/// Parse the JSON `checks` list.
fn parse_checks(value: Option<&Value>, origin: &str) -> Result<Vec<Check>> {
    let items = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => return Err(field_err(origin, "checks", "must be a list of objects")),
    };
    let mut checks = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = |k: &str| format!("checks[{i}].{k}");
        let Value::Object(obj) = item else {
            return Err(field_err(
                origin,
                &format!("checks[{i}]"),
                "must be an object",
            ));
        };
        if let Some(k) = obj
            .keys()
            .find(|k| !matches!(k.as_str(), "name" | "command" | "timeout_secs"))
        {
            return Err(field_err(
                origin,
                &at(k),
                "unknown key (expected name, command, timeout_secs)",
            ));
        }
        let command = match obj.get("command") {
            Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
            _ => {
                return Err(field_err(
                    origin,
                    &at("command"),
                    "must be a non-empty string",
                ));
            }
        };
        let name = match obj.get("name") {
            None | Some(Value::Null) => command.chars().take(NAME_MAX_CHARS).collect(),
            Some(Value::String(s)) if !s.trim().is_empty() => {
                s.trim().chars().take(NAME_MAX_CHARS).collect()
            }
            Some(_) => return Err(field_err(origin, &at("name"), "must be a non-empty string")),
        };
        let timeout_secs = match obj.get("timeout_secs") {
            None | Some(Value::Null) => DEFAULT_CHECK_TIMEOUT_SECS,
            Some(v) => v.as_u64().filter(|n| *n > 0).ok_or_else(|| {
                field_err(origin, &at("timeout_secs"), "must be a positive integer")
            })?,
        };
        checks.push(Check {
            name,
            command,
            timeout_secs,
        });
    }
    Ok(checks)
}

/// A pattern field: a string or a list of strings; `null` is empty; blanks are dropped.
fn pattern_list(value: &Value, origin: &str, key: &str) -> Result<Vec<String>> {
    let bad = || field_err(origin, key, "must be a string or a list of strings");
    let raw: Vec<&str> = match value {
        Value::Null => Vec::new(),
        Value::String(s) => vec![s.as_str()],
        Value::Array(items) => items
            .iter()
            .map(|v| v.as_str().ok_or_else(bad))
            .collect::<Result<_>>()?,
        _ => return Err(bad()),
    };
    Ok(raw
        .into_iter()
        .filter(|s| !s.trim().is_empty())
        .map(str::to_string)
        .collect())
}

fn globs(patterns: &[impl AsRef<str>], origin: &str, key: &str) -> Result<Vec<Glob>> {
    patterns
        .iter()
        .map(|p| Glob::new(p.as_ref()).map_err(|e| field_err(origin, key, &e)))
        .collect()
}

/// The root: the flag, else the declaration's, else `.`; absolute, canonical, a directory.
fn resolve_root(flag: Option<&Path>, declared: Option<&Path>, origin: &str) -> Result<PathBuf> {
    let given = flag.or(declared).unwrap_or(Path::new("."));
    let canonical = std::fs::canonicalize(given).map_err(|e| {
        field_err(
            origin,
            "root",
            &format!("'{}' cannot be resolved: {e}", given.display()),
        )
    })?;
    if !canonical.is_dir() {
        return Err(field_err(
            origin,
            "root",
            &format!("'{}' is not a directory", canonical.display()),
        ));
    }
    Ok(canonical)
}

fn field_err(origin: &str, field: &str, msg: &str) -> Error {
    Error::Invalid(format!("{origin}: field '{field}': {msg}"))
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn join(globs: &[Glob]) -> String {
    globs
        .iter()
        .map(Glob::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Map;

    fn obj(v: &Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    fn parse(v: &Value) -> Result<Declaration> {
        let tmp = std::env::temp_dir();
        Declaration::from_value(v, "test", None, RootFrom::User(Some(&tmp)))
    }

    fn decl(v: &Value) -> Declaration {
        let mut base = obj(&json!({"run_id": "r1"}));
        base.extend(obj(v));
        parse(&Value::Object(base)).unwrap()
    }

    fn err(v: &Value) -> String {
        parse(&v.clone()).unwrap_err().to_string()
    }

    #[test]
    fn forbid_beats_allow() {
        let d = decl(&json!({"modify": ["**"], "forbid": ["**/*.env"]}));
        let p = d.permits("config/prod.env", Kind::Modify);
        assert!(!p.ok);
        assert_eq!(p.why, "forbid:**/*.env");
        assert!(d.permits("src/a.rs", Kind::Modify).ok);
    }

    #[test]
    fn modify_subsumes_create_but_not_the_reverse() {
        let d = decl(&json!({"modify": ["src/**"], "create": ["docs/*.md"]}));
        assert_eq!(d.permits("src/new.rs", Kind::Create).why, "modify:src/**");
        assert_eq!(d.permits("docs/a.md", Kind::Create).why, "create:docs/*.md");
        assert!(!d.permits("docs/a.md", Kind::Modify).ok);
    }

    #[test]
    fn delete_is_separate() {
        let d = decl(&json!({"modify": ["src/**"], "delete": ["tmp/*"]}));
        assert!(!d.permits("src/a.rs", Kind::Delete).ok);
        assert!(d.permits("tmp/x", Kind::Delete).ok);
        assert!(!d.permits("tmp/x", Kind::Modify).ok);
        assert_eq!(d.permits("other", Kind::Create).why, "undeclared");
    }

    #[test]
    fn bad_fields_are_named() {
        assert!(
            err(&json!({"run_id": "r", "create": ["a"], "fail_direction": "sideways"}))
                .contains("field 'fail_direction'")
        );
        assert!(err(&json!({"create": ["a"]})).contains("field 'run_id'"));
        assert!(err(&json!({"run_id": "  ", "create": ["a"]})).contains("field 'run_id'"));
        assert!(err(&json!({"run_id": "r", "create": 7})).contains("field 'create'"));
        assert!(err(&json!({"run_id": "r", "create": ["a", 3]})).contains("field 'create'"));
        assert!(
            err(&json!({"run_id": "r", "create": ["a"], "checks": [{"name": "x"}]}))
                .contains("checks[0].command")
        );
        assert!(
            err(&json!({"run_id": "r", "create": ["a"], "checks": {"x": 1}}))
                .contains("field 'checks'")
        );
        assert!(err(&json!({"run_id": "r", "forbidd": ["a"]})).contains("field 'forbidd'"));
        assert!(err(&json!({"run_id": "r", "create": ["/abs"]})).contains("absolute"));
        assert!(err(&json!([1])).contains("must be a JSON object, got a list"));
    }

    #[test]
    fn parse_failure_never_degrades_to_empty() {
        assert!(err(&json!({"run_id": "r"})).contains("names no paths"));
        assert!(err(&json!({"run_id": "r", "create": ["", "  "]})).contains("names no paths"));
        // A forbid-only declaration is a real declaration.
        assert!(decl(&json!({"forbid": ["**"]})).forbid.len() == 1);
    }

    #[test]
    fn run_ids_are_validated_not_mangled() {
        assert!(valid_run_id("job-42.a_b", "t").is_ok());
        assert!(valid_run_id("..", "t").is_err());
        assert!(
            valid_run_id("a/b", "t")
                .unwrap_err()
                .to_string()
                .contains("'/'")
        );
        assert!(valid_run_id(&"x".repeat(121), "t").is_err());
    }

    #[test]
    fn check_flags_need_a_name() {
        let c = parse_check_flag("lint=ruff check --select=E").unwrap();
        assert_eq!(
            (c.name.as_str(), c.command.as_str()),
            ("lint", "ruff check --select=E")
        );
        assert!(parse_check_flag("ruff check --select=E").is_err());
        assert!(parse_check_flag("make lint").is_err());
        assert!(parse_check_flag("lint=").is_err());
        let c = parse_check_flag("env=FOO=1 make").unwrap();
        assert_eq!(c.command, "FOO=1 make");
    }

    #[test]
    fn check_names_default_and_must_be_unique() {
        let d = decl(&json!({"create": ["a"], "checks": [{"command": "make lint"}]}));
        assert_eq!(d.checks[0].name, "make lint");
        assert_eq!(d.checks[0].timeout_secs, DEFAULT_CHECK_TIMEOUT_SECS);
        let e = err(&json!({"run_id": "r", "create": ["a"],
            "checks": [{"name": "x", "command": "a"}, {"name": "x", "command": "b"}]}));
        assert!(e.contains("checks[1].name"));
    }

    #[test]
    fn round_trips_through_storage() {
        let d = decl(&json!({"create": "a.md", "skip": [], "intent": "docs",
            "fail_direction": "closed", "checks": [{"name": "t", "command": "true"}]}));
        let back = Declaration::from_value(&d.to_json(), "stored", None, RootFrom::Stored).unwrap();
        assert_eq!(back.to_json(), d.to_json());
        assert!(back.skip.is_empty());
        assert_eq!(back.fail_direction, FailDirection::Closed);
    }
}
