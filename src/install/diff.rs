//! A small unified line diff for `install --dry-run` / `uninstall --dry-run`.
//!
//! Longest-common-subsequence over lines (settings files are small: the table is capped, and a
//! larger pair falls back to "replace everything"), printed as `---`/`+++` headers and `@@`
//! hunks with three lines of context, like `diff -u`.

use std::fmt::Write as _;

/// Lines of context around each change.
const CONTEXT: usize = 3;

/// Largest `old × new` line product diffed exactly.
const MAX_CELLS: usize = 4_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Same(usize, usize),
    Del(usize),
    Add(usize),
}

/// A unified diff from `old` to `new`, labelled with `label`; empty when they are equal.
#[must_use]
pub(crate) fn unified(label: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let ops = script(&a, &b);
    let mut out = String::new();
    let old_label = if old.is_empty() { "/dev/null" } else { label };
    let _ = writeln!(out, "--- {old_label}");
    let _ = writeln!(out, "+++ {label}");
    // Group changes into hunks with context.
    let changes: Vec<usize> = ops
        .iter()
        .enumerate()
        .filter(|(_, op)| !matches!(op, Op::Same(..)))
        .map(|(i, _)| i)
        .collect();
    let mut i = 0;
    while i < changes.len() {
        let start = changes[i].saturating_sub(CONTEXT);
        let mut end = changes[i];
        while i < changes.len() && changes[i] <= end + 2 * CONTEXT + 1 {
            end = changes[i];
            i += 1;
        }
        let end = (end + CONTEXT + 1).min(ops.len());
        let hunk = &ops[start..end];
        let (a0, b0) = origin(&ops[..start]);
        let a_len = hunk.iter().filter(|o| !matches!(o, Op::Add(_))).count();
        let b_len = hunk.iter().filter(|o| !matches!(o, Op::Del(_))).count();
        let _ = writeln!(
            out,
            "@@ -{},{a_len} +{},{b_len} @@",
            if a_len == 0 { a0 } else { a0 + 1 },
            if b_len == 0 { b0 } else { b0 + 1 }
        );
        for op in hunk {
            let _ = match *op {
                Op::Same(x, _) => writeln!(out, " {}", a[x]),
                Op::Del(x) => writeln!(out, "-{}", a[x]),
                Op::Add(y) => writeln!(out, "+{}", b[y]),
            };
        }
    }
    if !old.is_empty() && !old.ends_with('\n') || !new.is_empty() && !new.ends_with('\n') {
        out.push_str("\\ (no newline at end of one side)\n");
    }
    out
}

/// Lines of `a` and `b` consumed before the ops.
fn origin(ops: &[Op]) -> (usize, usize) {
    ops.iter().fold((0, 0), |(x, y), op| match op {
        Op::Same(..) => (x + 1, y + 1),
        Op::Del(_) => (x + 1, y),
        Op::Add(_) => (x, y + 1),
    })
}

fn script(a: &[&str], b: &[&str]) -> Vec<Op> {
    // Common prefix and suffix first: the usual edit touches a few lines in the middle.
    let pre = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suf = a[pre..]
        .iter()
        .rev()
        .zip(b[pre..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (am, bm) = (&a[pre..a.len() - suf], &b[pre..b.len() - suf]);
    let mut ops: Vec<Op> = (0..pre).map(|i| Op::Same(i, i)).collect();
    if am.len().saturating_mul(bm.len()) > MAX_CELLS {
        ops.extend((0..am.len()).map(|i| Op::Del(pre + i)));
        ops.extend((0..bm.len()).map(|j| Op::Add(pre + j)));
    } else {
        ops.extend(lcs(am, bm).into_iter().map(|op| match op {
            Op::Same(x, y) => Op::Same(pre + x, pre + y),
            Op::Del(x) => Op::Del(pre + x),
            Op::Add(y) => Op::Add(pre + y),
        }));
    }
    let (ea, eb) = (a.len() - suf, b.len() - suf);
    ops.extend((0..suf).map(|k| Op::Same(ea + k, eb + k)));
    ops
}

// Textbook LCS: the single-letter names are the ones every description of it uses.
#[allow(clippy::many_single_char_names)]
fn lcs(a: &[&str], b: &[&str]) -> Vec<Op> {
    let (n, m) = (a.len(), b.len());
    // table[i][j] = LCS length of a[i..] and b[j..]
    let mut table = vec![0u32; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            table[at(i, j)] = if a[i] == b[j] {
                table[at(i + 1, j + 1)] + 1
            } else {
                table[at(i + 1, j)].max(table[at(i, j + 1)])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut ops = Vec::with_capacity(n + m);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            ops.push(Op::Same(i, j));
            i += 1;
            j += 1;
        } else if i < n && (j == m || table[at(i + 1, j)] >= table[at(i, j + 1)]) {
            ops.push(Op::Del(i));
            i += 1;
        } else {
            ops.push(Op::Add(j));
            j += 1;
        }
    }
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_texts_have_no_diff() {
        assert_eq!(unified("f", "a\nb\n", "a\nb\n"), "");
    }

    #[test]
    fn one_insertion_with_context() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n";
        let new = "1\n2\n3\n4\nX\n5\n6\n7\n8\n";
        assert_eq!(
            unified("f", old, new),
            "--- f\n+++ f\n@@ -2,6 +2,7 @@\n 2\n 3\n 4\n+X\n 5\n 6\n 7\n"
        );
    }

    #[test]
    fn far_apart_changes_make_two_hunks_and_new_files_come_from_dev_null() {
        let old: String = (1..=20).map(|i| i.to_string() + "\n").collect();
        let new = old.replace("2\n", "two\n").replace("19\n", "nineteen\n");
        let d = unified("f", &old, &new);
        assert_eq!(d.matches("@@ ").count(), 2, "{d}");
        assert!(d.contains("-2\n+two\n"), "{d}");
        let d = unified("f", "", "{\n}\n");
        assert!(
            d.starts_with("--- /dev/null\n+++ f\n@@ -0,0 +1,2 @@\n+{\n+}\n"),
            "{d}"
        );
    }
}
