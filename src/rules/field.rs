//! Field extraction: the text a rule's patterns run on, taken from a call's `tool_input` by a
//! dotted path (docs/rule-format.md#a-rule).
//!
//! Objects are walked by key, arrays by an all-digit index; anything else, or `null`, yields
//! `""`. A string leaf is returned as-is; any other leaf is serialised the way Python's
//! `json.dumps(value, sort_keys=True)` does (`", "`/`": "` separators, keys sorted, non-ASCII
//! escaped), so rules written against callusguard see the same text.

use std::borrow::Cow;
use std::fmt::Write as _;

use serde_json::Value;

/// The text at `path` in `input` (see the module docs).
#[must_use]
pub(crate) fn get<'a>(input: &'a Value, path: &str) -> Cow<'a, str> {
    let mut cur = input;
    for part in path.split('.') {
        cur = match cur {
            Value::Object(map) => match map.get(part) {
                Some(v) => v,
                None => return Cow::Borrowed(""),
            },
            Value::Array(items) if !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) => {
                match part.parse::<usize>().ok().and_then(|i| items.get(i)) {
                    Some(v) => v,
                    None => return Cow::Borrowed(""),
                }
            }
            _ => return Cow::Borrowed(""),
        };
    }
    match cur {
        Value::String(s) => Cow::Borrowed(s),
        Value::Null => Cow::Borrowed(""),
        other => Cow::Owned(python_dumps(other)),
    }
}

/// `json.dumps(value, sort_keys=True)` with Python's default separators and ASCII escaping.
#[must_use]
pub(crate) fn python_dumps(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
}

fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            if let Some(f) = n.as_f64().filter(|_| n.is_f64()) {
                out.push_str(&python_float(f));
            } else {
                let _ = write!(out, "{n}");
            }
        }
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_string(out, key);
                out.push_str(": ");
                write_value(out, &map[key.as_str()]);
            }
            out.push('}');
        }
    }
}

fn python_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if f.fract() == 0.0 && f.abs() < 1e16 {
        return format!("{f:.1}");
    }
    format!("{f}")
}

/// A JSON string literal escaped the way Python's `ensure_ascii=True` does.
pub(crate) fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dotted_paths_walk_objects_and_arrays() {
        let input =
            json!({"args": {"repository": "acme/prod"}, "params": [{"name": "a"}, {"name": "b"}]});
        assert_eq!(get(&input, "args.repository"), "acme/prod");
        assert_eq!(get(&input, "params.1.name"), "b");
        assert_eq!(get(&input, "params.7.name"), "");
        assert_eq!(get(&input, "missing.path"), "");
        assert_eq!(get(&json!("not an object"), "command"), "");
    }

    #[test]
    fn non_string_leaves_serialise_like_python() {
        let input =
            json!({"a": [1, {"c": true, "b": null}], "n": 0, "t": true, "f": 1.5, "u": "é"});
        assert_eq!(get(&input, "a"), r#"[1, {"b": null, "c": true}]"#);
        assert_eq!(get(&input, "n"), "0");
        assert_eq!(get(&input, "t"), "true");
        assert_eq!(get(&input, "f"), "1.5");
        assert_eq!(python_dumps(&json!(["é"])), r#"["\u00e9"]"#);
    }
}
