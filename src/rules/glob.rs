//! `fnmatch`-style tool-name globs (`*`, `?`, `[seq]`, `[!seq]`), case-sensitive, as
//! callusguard's `tool` key uses them, plus brace alternation (`{Edit,Write}`: either
//! name). `*` matches any run of characters, `_` and `/` included. A malformed class (`[`
//! without `]`) matches a literal `[`. A brace group holds one or more non-empty
//! alternatives and no other group: a nested, empty or unclosed group, or a stray `}`, is
//! refused when a rule is read ([`check`]); a glob that skipped that check matches such
//! braces literally.

/// Does `name` match the glob `pattern`?
#[must_use]
pub(crate) fn matches(pattern: &str, name: &str) -> bool {
    if pattern == "*" {
        return true;
    }
    if !pattern
        .bytes()
        .any(|b| matches!(b, b'*' | b'?' | b'[' | b'{'))
    {
        // A plain name (`Bash`): every rule's tool is checked on every hook call.
        return pattern == name;
    }
    let n: Vec<char> = name.chars().collect();
    // Only a pattern with a brace is expanded (the guard matches every rule's glob on
    // every call: a wildcard glob pays for no expansion).
    if pattern.contains('{')
        && let Ok(all) = alternatives(pattern)
    {
        return all
            .iter()
            .any(|a| match_from(&a.chars().collect::<Vec<_>>(), &n));
    }
    match_from(&pattern.chars().collect::<Vec<_>>(), &n)
}

/// Is `pattern`'s brace alternation well formed? `Err` says what is wrong.
pub(crate) fn check(pattern: &str) -> Result<(), &'static str> {
    alternatives(pattern).map(drop)
}

/// The name a glob's first alternative reads as, its wildcards as `x` (what a rule's
/// example is run as).
#[must_use]
pub(crate) fn example_name(pattern: &str) -> String {
    let first = alternatives(pattern)
        .ok()
        .and_then(|all| all.into_iter().next())
        .unwrap_or_else(|| pattern.to_string());
    first
        .chars()
        .map(|c| if c == '*' || c == '?' { 'x' } else { c })
        .collect()
}

/// The brace-free globs `pattern` stands for (`a{b,c}` → `ab`, `ac`).
fn alternatives(pattern: &str) -> Result<Vec<String>, &'static str> {
    let mut out = vec![String::new()];
    let mut rest = pattern;
    while let Some(open) = rest.find(['{', '}']) {
        if rest[open..].starts_with('}') {
            return Err("a '}' closes no '{'");
        }
        let close = rest[open + 1..]
            .find(['{', '}'])
            .map(|i| open + 1 + i)
            .ok_or("a '{' is never closed")?;
        if rest[close..].starts_with('{') {
            return Err("brace groups cannot be nested");
        }
        let group: Vec<&str> = rest[open + 1..close].split(',').collect();
        if group.iter().any(|a| a.is_empty()) {
            return Err("a brace group's alternatives must not be empty");
        }
        let head = &rest[..open];
        out = out
            .iter()
            .flat_map(|o| group.iter().map(move |a| format!("{o}{head}{a}")))
            .collect();
        rest = &rest[close + 1..];
    }
    for o in &mut out {
        o.push_str(rest);
    }
    Ok(out)
}

fn match_from(p: &[char], n: &[char]) -> bool {
    // Iterative wildcard matching with single-star backtracking (linear in practice).
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() {
            match p[pi] {
                '*' => {
                    star = Some((pi, ni));
                    pi += 1;
                    continue;
                }
                '?' => {
                    pi += 1;
                    ni += 1;
                    continue;
                }
                '[' => {
                    if let Some((ok, next)) = class(&p[pi..], n[ni]) {
                        if ok {
                            pi += next;
                            ni += 1;
                            continue;
                        }
                    } else if n[ni] == '[' {
                        pi += 1;
                        ni += 1;
                        continue;
                    }
                }
                c if c == n[ni] => {
                    pi += 1;
                    ni += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sp, sn)) => {
                pi = sp + 1;
                ni = sn + 1;
                star = Some((sp, sn + 1));
            }
            None => return false,
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// Match `c` against the class starting at `p[0] == '['`; returns (matched, class length),
/// or `None` when the class is unterminated.
fn class(p: &[char], c: char) -> Option<(bool, usize)> {
    let mut i = 1;
    let negate = p.get(i) == Some(&'!');
    if negate {
        i += 1;
    }
    let start = i;
    let mut hit = false;
    while i < p.len() {
        if p[i] == ']' && i > start {
            return Some((hit != negate, i + 1));
        }
        if i + 2 < p.len() && p[i + 1] == '-' && p[i + 2] != ']' {
            if p[i] <= c && c <= p[i + 2] {
                hit = true;
            }
            i += 3;
        } else {
            if p[i] == c {
                hit = true;
            }
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn fnmatch_cases() {
        assert!(matches("*", "anything"));
        assert!(matches("Bash", "Bash"));
        assert!(!matches("Bash", "bash"));
        assert!(!matches("Bash", "Bas"));
        assert!(!matches("Bash", "Bashful"));
        assert!(matches("mcp__Acme__*", "mcp__Acme__query"));
        assert!(!matches("mcp__Acme__*", "mcp__Other__query"));
        assert!(matches("Edit|Write", "Edit|Write"));
        assert!(matches("?dit", "Edit"));
        assert!(matches("[EW]*", "Write"));
        assert!(!matches("[!EW]*", "Write"));
        assert!(matches("a*b*c", "axxbyyc"));
        assert!(!matches("a*b*c", "axxbyy"));
        assert!(matches("[a-c]x", "bx"));
        assert!(matches("[x", "[x"));
    }

    #[test]
    fn brace_alternation() {
        use super::{check, example_name};
        assert!(matches("{Edit,Write}", "Edit"));
        assert!(matches("{Edit,Write}", "Write"));
        assert!(!matches("{Edit,Write}", "Read"));
        assert!(!matches("{Edit,Write}", "EditWrite"));
        assert!(!matches("{Edit,Write}", "{Edit,Write}"));
        assert!(!matches("{Edit,Write}", "Edit,Write"));
        assert!(matches("{Edit}", "Edit"));
        assert!(matches("Multi{Edit,Write}", "MultiWrite"));
        assert!(!matches("Multi{Edit,Write}", "Write"));
        assert!(matches("{a,b}x{c,d}", "bxc"));
        assert!(!matches("{a,b}x{c,d}", "bxe"));
        assert!(matches("{mcp__A__*,Bash}", "mcp__A__q"));
        assert!(matches("{E?it,[W]rite}", "Edit"));
        // Malformed braces are refused by `check`; unchecked, they match literally.
        assert_eq!(check("{Edit,Write}"), Ok(()));
        assert_eq!(check("Bash"), Ok(()));
        assert_eq!(
            check("{}"),
            Err("a brace group's alternatives must not be empty")
        );
        assert_eq!(
            check("{a,}"),
            Err("a brace group's alternatives must not be empty")
        );
        assert_eq!(
            check("{,a}"),
            Err("a brace group's alternatives must not be empty")
        );
        assert_eq!(check("{a,{b,c}}"), Err("brace groups cannot be nested"));
        assert_eq!(check("{a,b"), Err("a '{' is never closed"));
        assert_eq!(check("a}"), Err("a '}' closes no '{'"));
        assert_eq!(check("{a}b}"), Err("a '}' closes no '{'"));
        assert!(matches("{a,b", "{a,b"));
        assert!(!matches("{a,b", "a"));
        assert!(matches("{}", "{}"));
        assert!(matches("a}", "a}"));
        assert_eq!(example_name("{Edit,Write}"), "Edit");
        assert_eq!(example_name("mcp__A__*"), "mcp__A__x");
        assert_eq!(example_name("{?x,b}"), "xx");
        assert_eq!(example_name("{a,"), "{a,");
    }
}
