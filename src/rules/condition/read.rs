//! Reading a rule's `when` object into a [`When`]: every condition key known
//! ([`WHEN_KEYS`]), every value of the shape its condition needs, and a wrong one named by
//! its key (`when.host`) with what it must be.
//!
//! Guarantees: an unknown key, an unknown host or OS, an empty list and a path where a
//! program name belongs are errors, never a condition that silently never holds.

use serde_json::{Map, Value};

use super::{HOSTS, OSES, Sandbox, WHEN_KEYS, When};

/// Read `when` as written; `Err((key, message))` names the condition key that is wrong
/// (`when` itself when it is not an object).
pub(crate) fn parse(value: &Value) -> std::result::Result<When, (String, String)> {
    let Value::Object(obj) = value else {
        return Err(("when".into(), "must be an object of conditions".into()));
    };
    parse_object(obj)
}

fn parse_object(obj: &Map<String, Value>) -> std::result::Result<When, (String, String)> {
    let mut w = When::default();
    for (key, v) in obj {
        let err = |msg: String| (format!("when.{key}"), msg);
        match key.as_str() {
            "host" => w.host = Some(names(v, Some(HOSTS)).map_err(err)?),
            "os" => w.os = Some(names(v, Some(OSES)).map_err(err)?),
            "shell" => w.shell = Some(names(v, None).map_err(err)?),
            "originator" => w.originator = Some(names(v, None).map_err(err)?),
            "cwd_under" => w.cwd_under = Some(strings(v).map_err(err)?),
            "sandbox" => {
                w.sandbox = Some(match v {
                    Value::Bool(b) => Sandbox::Any(*b),
                    _ => Sandbox::OneOf(names(v, None).map_err(|_| {
                        err("must be true, false or a non-empty array of sandbox names".into())
                    })?),
                });
            }
            "timeout_ms_at_most" => match v.as_u64() {
                Some(ms) if ms > 0 => w.timeout_ms_at_most = Some(ms),
                _ => return Err(err("must be a whole number of milliseconds above 0".into())),
            },
            "program_absent" => match v.as_str().map(str::trim) {
                Some(p) if !p.is_empty() && !p.contains(['/', '\\']) => {
                    w.program_absent = Some(p.to_string());
                }
                _ => return Err(err("must be a program name (no path)".into())),
            },
            "path_missing" => w.path_missing = Some(field_of(v, false).map_err(err)?.0),
            "path_is_directory" => {
                w.path_is_directory = Some(field_of(v, false).map_err(err)?.0);
            }
            "file_larger_than" => {
                let (f, n) = field_of(v, true).map_err(err)?;
                w.file_larger_than = Some((f, n.unwrap_or_default()));
            }
            "not_read_in_session" => w.not_read_in_session = Some(field_name(v).map_err(err)?),
            "changed_since_read" => w.changed_since_read = Some(field_name(v).map_err(err)?),
            _ => {
                return Err(err(format!("unknown condition ({})", WHEN_KEYS.join(", "))));
            }
        }
    }
    Ok(w)
}

/// The name of a `tool_input` field, as the session-state conditions take it.
fn field_name(v: &Value) -> std::result::Result<String, String> {
    match v.as_str().map(str::trim) {
        Some(f) if !f.is_empty() => Ok(f.to_string()),
        _ => Err("must be the name of a tool_input field (\"file_path\")".into()),
    }
}

/// A non-empty array of non-empty strings.
fn strings(v: &Value) -> std::result::Result<Vec<String>, String> {
    let list = v
        .as_array()
        .filter(|a| !a.is_empty())
        .ok_or("must be a non-empty array of strings")?;
    list.iter()
        .map(|s| {
            s.as_str()
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .ok_or_else(|| "must be a non-empty array of strings".to_string())
        })
        .collect()
}

/// [`strings`], lowercased, each one of `known` when given.
fn names(v: &Value, known: Option<&[&str]>) -> std::result::Result<Vec<String>, String> {
    let list: Vec<String> = strings(v)?
        .into_iter()
        .map(|s| s.to_ascii_lowercase())
        .collect();
    if let Some(known) = known
        && let Some(bad) = list.iter().find(|s| !known.contains(&s.as_str()))
    {
        return Err(format!("unknown value '{bad}' ({})", known.join(", ")));
    }
    Ok(list)
}

/// `{"field": F}` (and `"bytes": N` when `bytes`).
fn field_of(v: &Value, bytes: bool) -> std::result::Result<(String, Option<u64>), String> {
    let shape = if bytes {
        "must be {\"field\": \"file_path\", \"bytes\": N}"
    } else {
        "must be {\"field\": \"file_path\"}"
    };
    let obj = v.as_object().ok_or(shape)?;
    let allowed: &[&str] = if bytes {
        &["field", "bytes"]
    } else {
        &["field"]
    };
    if obj.keys().any(|k| !allowed.contains(&k.as_str())) {
        return Err(shape.to_string());
    }
    let field = obj
        .get("field")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .ok_or(shape)?
        .to_string();
    if !bytes {
        return Ok((field, None));
    }
    let n = obj.get("bytes").and_then(Value::as_u64).ok_or(shape)?;
    Ok((field, Some(n)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parse_refuses_what_it_cannot_mean() {
        let err = |v: Value| parse(&v).unwrap_err();
        assert_eq!(err(json!([])).0, "when");
        let (k, m) = err(json!({"colour": 1}));
        assert_eq!(k, "when.colour");
        assert!(m.starts_with("unknown condition (host, os,"), "{m}");
        let (k, m) = err(json!({"host": ["claude"]}));
        assert_eq!(k, "when.host");
        assert!(
            m.starts_with("unknown value 'claude' (claude-code, codex"),
            "{m}"
        );
        assert_eq!(err(json!({"os": ["beos"]})).0, "when.os");
        for bad in [
            json!({"shell": []}),
            json!({"shell": "bash"}),
            json!({"shell": [""]}),
        ] {
            assert_eq!(err(bad).1, "must be a non-empty array of strings");
        }
        assert!(
            err(json!({"sandbox": "yes"}))
                .1
                .starts_with("must be true, false")
        );
        assert!(
            err(json!({"program_absent": "/usr/bin/x"}))
                .1
                .contains("no path")
        );
        assert!(err(json!({"program_absent": ""})).1.contains("no path"));
        assert!(
            err(json!({"path_missing": "file_path"}))
                .1
                .starts_with("must be {")
        );
        assert!(
            err(json!({"path_missing": {"field": ""}}))
                .1
                .starts_with("must be {")
        );
        assert!(
            err(json!({"path_missing": {"field": "f", "bytes": 1}}))
                .1
                .starts_with("must be {")
        );
        assert!(
            err(json!({"file_larger_than": {"field": "f"}}))
                .1
                .contains("\"bytes\": N")
        );
        assert!(
            err(json!({"file_larger_than": {"field": "f", "bytes": -1}}))
                .1
                .contains("\"bytes\": N")
        );
        assert!(err(json!({"not_read_in_session": ""})).1.contains("field"));
        for bad in [
            json!(0),
            json!(-1),
            json!(1.5),
            json!("2000"),
            json!({"max": 2000}),
        ] {
            let (k, m) = err(json!({"timeout_ms_at_most": bad}));
            assert_eq!(k, "when.timeout_ms_at_most");
            assert!(m.contains("milliseconds"), "{m}");
        }
        let w = parse(&json!({"timeout_ms_at_most": 1})).unwrap();
        assert_eq!(w.timeout_ms_at_most, Some(1));
        assert!(err(json!({"changed_since_read": " "})).1.contains("field"));
        let w = parse(
            &json!({"file_larger_than": {"field": "file_path", "bytes": 7},
            "sandbox": ["Read-Only"], "shell": ["PWSH"]}),
        )
        .unwrap();
        assert_eq!(w.file_larger_than, Some(("file_path".into(), 7)));
        assert_eq!(w.sandbox, Some(Sandbox::OneOf(vec!["read-only".into()])));
        assert_eq!(w.shell, Some(vec!["pwsh".into()]));
    }
}
