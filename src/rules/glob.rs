//! `fnmatch`-style tool-name globs (`*`, `?`, `[seq]`, `[!seq]`), case-sensitive, as
//! callusguard's `tool` key uses them. `*` matches any run of characters, `_` and `/`
//! included. A malformed class (`[` without `]`) matches a literal `[`.

/// Does `name` match the glob `pattern`?
#[must_use]
pub(crate) fn matches(pattern: &str, name: &str) -> bool {
    if pattern == "*" {
        return true;
    }
    if !pattern.bytes().any(|b| matches!(b, b'*' | b'?' | b'[')) {
        // A plain name (`Bash`): every rule's tool is checked on every hook call.
        return pattern == name;
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    match_from(&p, &n)
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
}
