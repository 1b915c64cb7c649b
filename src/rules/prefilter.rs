//! The literal prefilter: for a pattern in Python `re` syntax, a set of lowercase ASCII
//! strings one of which every match must contain, found by a small parse of the pattern
//! without compiling it. A call whose text contains none of them cannot match, so the pattern
//! is neither compiled nor run (the hook's main saving: most rules do not apply to most calls).
//!
//! Soundness is the only contract: when the scan meets syntax it does not fully understand
//! (verbose mode, conditionals, an unknown escape, unbalanced parentheses) it gives up and the
//! pattern is always evaluated. Within a concatenation the strongest requirement is kept (a
//! run of literal characters, or a group whose every alternative has one); an alternation
//! requires one of its branches' requirements; anything optional, repeated from zero, or
//! inside a lookaround requires nothing.

/// Shortest literal worth filtering on; sets with a shorter member are dropped.
const MIN_LEN: usize = 2;

/// Most members a set may have: an alternation of more branches requires nothing (checking
/// a call against thousands of literals would cost more than running the pattern, and the
/// union would grow quadratically in a hostile rule file).
const MAX_MEMBERS: usize = 64;

/// Deepest group nesting scanned; deeper gives up (the scan recurses per group, and a rule
/// file must not be able to exhaust the stack).
const MAX_DEPTH: usize = 64;

/// The literal requirement of each `any` pattern of a rule, in order.
pub(crate) type Required = Vec<Option<Vec<String>>>;

/// The literal requirement of `src`, if the scan finds one: every match contains at least one
/// of the returned lowercase strings.
#[must_use]
pub(crate) fn required_literals(src: &str) -> Option<Vec<String>> {
    let mut p = Scan {
        bytes: src.as_bytes(),
        i: 0,
        depth: 0,
    };
    let req = p.alternation().ok()?;
    if p.i != p.bytes.len() {
        return None;
    }
    let mut set = req?;
    for s in &mut set {
        if s.trim().len() != s.len() {
            *s = s.trim().to_string();
        }
    }
    set.iter().all(|s| s.len() >= MIN_LEN).then_some(set)
}

/// The bytes that stand for themselves in a pattern: ASCII, and not syntax.
const PLAIN: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 128 {
        table[b] = true;
        b += 1;
    }
    let syntax = b"|)([\\.^$*+?{";
    let mut i = 0;
    while i < syntax.len() {
        table[syntax[i] as usize] = false;
        i += 1;
    }
    table
};

/// Gave up: syntax the scan does not understand.
struct Bail;

/// `None`: no requirement. `Some(set)`: at least one member occurs in every match.
type Req = Option<Vec<String>>;

/// The scan works on bytes: a byte of a multi-byte character is never a literal we filter
/// on, and no ASCII byte occurs inside one, so the syntax characters are found exactly.
struct Scan<'a> {
    bytes: &'a [u8],
    i: usize,
    /// How many groups enclose the position.
    depth: usize,
}

/// Is `a` a stronger requirement than `b`? Longer shortest member first, then fewer members.
fn stronger(a: &[String], b: &[String]) -> bool {
    let min = |s: &[String]| s.iter().map(String::len).min().unwrap_or(0);
    strength(min(a), a.len()) > strength(min(b), b.len())
}

/// The order [`stronger`] compares by: shortest member's length, then fewer members.
fn strength(min_len: usize, members: usize) -> (usize, std::cmp::Reverse<usize>) {
    (min_len, std::cmp::Reverse(members))
}

fn keep_best(best: &mut Req, candidate: Req) {
    if let Some(c) = candidate
        && !c.is_empty()
        && best.as_ref().is_none_or(|b| stronger(&c, b))
    {
        *best = Some(c);
    }
}

/// End the current literal run: it becomes the requirement if it is stronger than the best
/// so far ([`keep_best`] on a one-member set, without allocating one to compare). A run that
/// loses keeps its buffer for the next run.
fn flush(run: &mut String, best: &mut Req) {
    if run.is_empty() {
        return;
    }
    let wins = best.as_ref().is_none_or(|b| {
        let min = b.iter().map(String::len).min().unwrap_or(0);
        strength(run.len(), 1) > strength(min, b.len())
    });
    match best {
        // The one-member set it replaces lends its buffer to the next run.
        Some(b) if wins && b.len() == 1 => {
            std::mem::swap(&mut b[0], run);
            run.clear();
        }
        _ if wins => *best = Some(vec![std::mem::take(run)]),
        _ => run.clear(),
    }
}

impl Scan<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.i).copied()
    }

    fn at(&self, s: &str) -> bool {
        self.bytes[self.i..].starts_with(s.as_bytes())
    }

    /// Offset of the next `byte` from the current position.
    fn find(&self, byte: u8) -> Result<usize, Bail> {
        self.bytes[self.i..]
            .iter()
            .position(|&c| c == byte)
            .ok_or(Bail)
    }

    /// How many bytes from the position are plain literal characters none of which a
    /// quantifier follows: ASCII, not syntax, and the last one not followed by `*`, `+`,
    /// `?` or `{` (which may repeat it; `atom_with` decides that one).
    fn plain_run(&self) -> usize {
        let rest = &self.bytes[self.i..];
        let n = rest
            .iter()
            .position(|&b| !PLAIN[usize::from(b)])
            .unwrap_or(rest.len());
        match rest.get(n) {
            Some(b'*' | b'+' | b'?' | b'{') => n.saturating_sub(1),
            _ => n,
        }
    }

    /// `branch ('|' branch)*`, up to a `)` or the end.
    fn alternation(&mut self) -> Result<Req, Bail> {
        let mut union: Vec<String> = Vec::new();
        let mut all = true;
        loop {
            match self.concat()? {
                // The first branch's set is already free of duplicates.
                Some(set) if union.is_empty() => union = set,
                Some(set) => {
                    for s in set {
                        if !union.contains(&s) {
                            union.push(s);
                        }
                    }
                }
                None => all = false,
            }
            if union.len() > MAX_MEMBERS {
                all = false;
                union.clear();
            }
            if self.peek() == Some(b'|') {
                self.i += 1;
            } else {
                break;
            }
        }
        Ok(all.then_some(union))
    }

    /// A sequence of atoms; the strongest requirement among them.
    fn concat(&mut self) -> Result<Req, Bail> {
        let mut best: Req = None;
        let mut run = String::new();
        while let Some(c) = self.peek() {
            match c {
                b'|' | b')' => break,
                b'(' => {
                    flush(&mut run, &mut best);
                    let inner = self.group()?;
                    let optional = self.quantifier()?.is_some_and(|zero| zero);
                    keep_best(&mut best, if optional { None } else { inner });
                }
                b'[' => {
                    self.class()?;
                    self.quantifier()?;
                    flush(&mut run, &mut best);
                }
                b'\\' => {
                    let lit = self.escape()?;
                    self.atom_with(lit, &mut run, &mut best)?;
                }
                b'.' | b'^' | b'$' => {
                    self.i += 1;
                    self.quantifier()?;
                    flush(&mut run, &mut best);
                }
                b'*' | b'+' | b'?' => return Err(Bail), // nothing to repeat
                b'{' if repetition_len(&self.bytes[self.i..]).is_some() => return Err(Bail),
                _ => {
                    let n = self.plain_run();
                    if n > 0 {
                        // Literal characters with no quantifier, taken at once: each is
                        // what `atom_with` does with one of them (most of a pattern).
                        if run.capacity() == 0 {
                            run.reserve((self.bytes.len() - self.i + 1).min(256));
                        }
                        let bytes = &self.bytes[self.i..self.i + n];
                        let start = run.len();
                        // ASCII by construction (`PLAIN`), so this never fails.
                        run.push_str(std::str::from_utf8(bytes).map_err(|_| Bail)?);
                        run[start..].make_ascii_lowercase();
                        self.i += n;
                        continue;
                    }
                    self.i += 1;
                    let lit = c.is_ascii().then(|| char::from(c.to_ascii_lowercase()));
                    self.atom_with(lit, &mut run, &mut best)?;
                }
            }
        }
        flush(&mut run, &mut best);
        Ok(best)
    }

    /// Add one atom (a literal character or not) and its quantifier to the current run.
    fn atom_with(
        &mut self,
        lit: Option<char>,
        run: &mut String,
        best: &mut Req,
    ) -> Result<(), Bail> {
        if lit.is_some() && run.capacity() == 0 {
            // A run never outgrows what is left of the pattern: usually one allocation, not
            // several (capped: a huge pattern must not make every run reserve all of it).
            run.reserve((self.bytes.len() - self.i + 1).min(256));
        }
        match (lit, self.quantifier()?) {
            (Some(ch), None) => run.push(ch),
            // Required at least once, but what follows need not be adjacent.
            (Some(ch), Some(false)) => {
                run.push(ch);
                flush(run, best);
            }
            _ => flush(run, best),
        }
        Ok(())
    }

    /// A quantifier after an atom: `None` if there is none, `Some(true)` if it allows zero
    /// repetitions, `Some(false)` if it requires at least one. Lazy/possessive suffixes are
    /// consumed.
    fn quantifier(&mut self) -> Result<Option<bool>, Bail> {
        let zero = match self.peek() {
            Some(b'*' | b'?') => {
                self.i += 1;
                true
            }
            Some(b'+') => {
                self.i += 1;
                false
            }
            Some(b'{') => match repetition_len(&self.bytes[self.i..]) {
                Some(len) => {
                    let body = &self.bytes[self.i + 1..self.i + len - 1];
                    self.i += len;
                    let min = body.split(|&b| b == b',').next().unwrap_or(b"");
                    min.iter().all(|&b| b == b'0')
                }
                None => return Ok(None),
            },
            _ => return Ok(None),
        };
        if matches!(self.peek(), Some(b'?' | b'+')) {
            self.i += 1;
        }
        if matches!(self.peek(), Some(b'*' | b'+' | b'?')) {
            return Err(Bail); // "multiple repeat"
        }
        Ok(Some(zero))
    }

    /// A group starting at `(`; returns its requirement (none for lookarounds).
    fn group(&mut self) -> Result<Req, Bail> {
        self.i += 1; // (
        let mut counts = true;
        if self.peek() == Some(b'?') {
            if self.at("?:") {
                self.i += 2;
            } else if self.at("?P<") || (self.at("?<") && !self.at("?<=") && !self.at("?<!")) {
                self.i += self.find(b'>')? + 1;
            } else if self.at("?=") || self.at("?!") {
                self.i += 2;
                counts = false;
            } else if self.at("?<=") || self.at("?<!") {
                self.i += 3;
                counts = false;
            } else if self.at("?P=") || self.at("?#") {
                // A named backreference or a comment: nothing literal, skip to `)`.
                self.i += self.find(b')')? + 1;
                return Ok(None);
            } else {
                // Inline flags: `(?i)` (global) or `(?i:...)` / `(?-i:...)` (scoped).
                let mut j = self.i + 1;
                while let Some(&c) = self.bytes.get(j) {
                    if c == b'x' {
                        return Err(Bail); // verbose mode changes what a literal is
                    }
                    if c.is_ascii_alphabetic() || c == b'-' {
                        j += 1;
                    } else {
                        break;
                    }
                }
                match self.bytes.get(j) {
                    Some(b')') => {
                        self.i = j + 1;
                        return Ok(None);
                    }
                    Some(b':') => self.i = j + 1,
                    _ => return Err(Bail), // conditionals and anything else
                }
            }
        }
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Bail);
        }
        let inner = self.alternation()?;
        self.depth -= 1;
        if self.peek() != Some(b')') {
            return Err(Bail);
        }
        self.i += 1;
        Ok(if counts { inner } else { None })
    }

    /// A character class starting at `[` (Python rules: `]` first is literal, `\` escapes).
    fn class(&mut self) -> Result<(), Bail> {
        self.i += 1;
        if self.peek() == Some(b'^') {
            self.i += 1;
        }
        if self.peek() == Some(b']') {
            self.i += 1;
        }
        while let Some(c) = self.peek() {
            self.i += 1;
            match c {
                b']' => return Ok(()),
                b'\\' => self.i += 1,
                _ => {}
            }
        }
        Err(Bail)
    }

    /// An escape starting at `\`: the literal character it stands for, if a plain one.
    fn escape(&mut self) -> Result<Option<char>, Bail> {
        let n = *self.bytes.get(self.i + 1).ok_or(Bail)?;
        self.i += 2;
        match n {
            c if c.is_ascii_punctuation() => Ok(Some(char::from(c))),
            // Classes, anchors and control characters: not a literal we filter on.
            b'd' | b'D' | b'w' | b'W' | b's' | b'S' | b'b' | b'B' | b'A' | b'Z' | b'z' | b'n'
            | b't' | b'r' | b'f' | b'v' | b'a' => Ok(None),
            b'x' => {
                if self.peek() == Some(b'{') {
                    self.i += self.find(b'}')? + 1;
                } else {
                    self.i += 2;
                }
                Ok(None)
            }
            b'u' => {
                self.i += 4;
                Ok(None)
            }
            b'U' => {
                self.i += 8;
                Ok(None)
            }
            b'N' | b'p' | b'P' if self.peek() == Some(b'{') => {
                self.i += self.find(b'}')? + 1;
                Ok(None)
            }
            b'p' | b'P' => {
                self.i += 1;
                Ok(None)
            }
            b'0'..=b'9' => {
                // Backreference or octal escape: skip the remaining digits.
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.i += 1;
                }
                Ok(None)
            }
            _ => Err(Bail),
        }
    }
}

/// Length of the Python repetition `{m}`, `{m,}`, `{,n}` or `{m,n}` at the start of `s`.
fn repetition_len(s: &[u8]) -> Option<usize> {
    let end = s.iter().position(|&c| c == b'}')?;
    let body = &s[1..end];
    let ok = !body.is_empty()
        && body != b","
        && body.split(|&c| c == b',').count() <= 2
        && body.iter().all(|&c| c.is_ascii_digit() || c == b',');
    ok.then_some(end + 1)
}

/// Is `s` (starting at `{`) a Python repetition `{m}`, `{m,}`, `{,n}` or `{m,n}`?
#[must_use]
pub(crate) fn is_repetition(s: &[char]) -> bool {
    let Some(end) = s.iter().position(|&c| c == '}') else {
        return false;
    };
    let body: String = s[1..end].iter().collect();
    let (a, b) = body.split_once(',').unwrap_or((&body, ""));
    let digits = |x: &str| x.chars().all(|c| c.is_ascii_digit());
    !body.is_empty() && digits(a) && digits(b) && body != ","
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(p: &str) -> Option<Vec<String>> {
        required_literals(p)
    }

    fn one(p: &str) -> Option<String> {
        req(p).map(|v| {
            assert_eq!(v.len(), 1, "{p}: {v:?}");
            v[0].clone()
        })
    }

    #[test]
    fn literal_runs_and_quantifiers() {
        assert_eq!(one(r"\bpsql\b").as_deref(), Some("psql"));
        assert_eq!(one(r"^git\s+push\b").as_deref(), Some("push"));
        assert_eq!(one(r"colou?r").as_deref(), Some("colo"));
        assert_eq!(one(r"ab+c").as_deref(), Some("ab"));
        assert_eq!(one(r"x{0,3}yz").as_deref(), Some("yz"));
        assert_eq!(
            one(r"fetch-tool\.py\b(?!.*--entity)").as_deref(),
            Some("fetch-tool.py")
        );
        assert_eq!(one(r"(?i)\bDROP\s+TABLE").as_deref(), Some("table"));
        assert_eq!(one(r"\\copy\b[^;]*\bfrom\b").as_deref(), Some("\\copy"));
    }

    #[test]
    fn runs_of_literals_end_where_a_quantifier_may_apply() {
        assert_eq!(one(r"deploy-10\s+x").as_deref(), Some("deploy-10"));
        assert_eq!(one(r"abcd*").as_deref(), Some("abc"));
        assert_eq!(one(r"abcd+e").as_deref(), Some("abcd"));
        assert_eq!(one(r"abcd?ef").as_deref(), Some("abc"));
        assert_eq!(one(r"abcd{2}").as_deref(), Some("abcd"));
        // `{` that is no repetition is a literal character, and so is `}`.
        assert_eq!(one(r"ab{x}cd").as_deref(), Some("ab{x}cd"));
        assert_eq!(one(r"MIXED Case=1").as_deref(), Some("mixed case=1"));
        assert_eq!(one(r"ab]cd").as_deref(), Some("ab]cd"));
        assert_eq!(one(r"x-é-long").as_deref(), Some("-long"));
        assert_eq!(req(r"ab*"), None);
    }

    #[test]
    fn groups_and_alternations() {
        assert_eq!(
            req(r"(?i)(password|secret|api[_-]?key|token)\s*="),
            Some(vec![
                "password".into(),
                "secret".into(),
                "api".into(),
                "token".into()
            ])
        );
        assert_eq!(one(r"(?i)\b(AKIA[0-9A-Z]{16})\b").as_deref(), Some("akia"));
        assert_eq!(req(r"a|bc"), None); // a one-letter branch is too weak to filter on
        assert_eq!(req(r"foo|bar"), Some(vec!["foo".into(), "bar".into()]));
        assert_eq!(req(r"(foo)?bar").map(|v| v.len()), Some(1));
        assert_eq!(req(r"(?:foo)*"), None);
        assert_eq!(req(r"(?=abc)x"), None);
        assert_eq!(req(r"(?<!abc)xy").as_deref(), Some(&["xy".to_string()][..]));
    }

    #[test]
    fn unknown_syntax_gives_up() {
        assert_eq!(req(r"(?x) a b c"), None);
        assert_eq!(req(r"(?(1)ab|cd)"), None);
        assert_eq!(req(r"(unclosed"), None);
        assert_eq!(req(r"extra)"), None);
        assert_eq!(one(r"\x41bc").as_deref(), Some("bc"));
        assert_eq!(req(r"\qab"), None);
    }

    use proptest::prelude::*;

    /// Small Python-syntax patterns built from pieces the scan treats differently.
    fn pattern() -> impl Strategy<Value = String> {
        let atom = prop::sample::select(vec![
            "ab",
            "psql",
            "Push",
            "x",
            "-f",
            r"\.",
            r"\b",
            r"\s+",
            "[a-z]",
            r"\d",
            ".",
            "^",
            "$",
            "(?:ab|cd)",
            "(ef)?",
            "(?i)",
            "(?!gh)",
            "(?P<n>ij)",
            "k{0,2}",
            "l{2}",
            "m+",
            "n*",
            "(o|p)",
            r"\x41",
            "(?i:QR)",
        ]);
        prop::collection::vec(atom, 1..6).prop_map(|parts| {
            // Global flags are only valid at the start.
            let mut p = parts.concat().replace("(?i)", "");
            if parts[0] == "(?i)" {
                p.insert_str(0, "(?i)");
            }
            p
        })
    }

    proptest! {
        #[test]
        fn a_text_that_matches_always_passes_the_prefilter(
            p in pattern(),
            words in prop::collection::vec(
                prop::sample::select(vec!["ab", "cd", "ef", "psql", "push", "PUSH", "x", "-f", ".", " ", "qr", "A", "ll", "m", "9", "ij-ij", "o"]),
                0..8,
            ),
        ) {
            let hay = words.concat();
            let Ok(re) = fancy_regex::Regex::new(&p) else { return Ok(()) };
            if re.is_match(&hay).unwrap_or(false) {
                let lower = hay.to_ascii_lowercase();
                if let Some(lits) = required_literals(&p) {
                    prop_assert!(
                        lits.iter().any(|l| lower.contains(l.as_str())),
                        "{p:?} matched {hay:?} but requires one of {lits:?}"
                    );
                }
            }
        }
    }
}
