//! Property tests (issue 4, "Done when"): the splitter never panics and keeps its output
//! invariants on arbitrary strings and on strings built from a shell-ish alphabet; splitting
//! is stable under added spaces around operators; every segment's argv, re-quoted with
//! [`quote`], re-splits to exactly one top-level segment with the identical argv.

use proptest::prelude::*;

use super::syntax::quote::{quote, render_text};
use super::*;

/// Pieces that stress the lexer and parser: quotes, operators, parens, expansions,
/// keywords, wrappers, heredoc markers.
const ALPHABET: &[&str] = &[
    "'",
    "\"",
    "\\",
    "$",
    "`",
    "(",
    ")",
    "{",
    "}",
    "[[",
    "]]",
    ";",
    ";;",
    "&",
    "&&",
    "|",
    "||",
    "|&",
    "<",
    ">",
    ">>",
    "2>&1",
    "<<",
    "<<-",
    "<<<",
    "EOF",
    "'EOF'",
    "\n",
    " ",
    "  ",
    "\t",
    "\r",
    "#",
    "=",
    "a",
    "b",
    "rm",
    "-rf",
    "/",
    "*",
    "~",
    "é",
    "if",
    "then",
    "else",
    "fi",
    "while",
    "until",
    "do",
    "done",
    "for",
    "in",
    "case",
    "esac",
    "!",
    "function",
    "time",
    "$(",
    "${",
    "$((",
    "))",
    "$'",
    "\\x41",
    "<(",
    ">(",
    "IFS",
    "$IFS",
    "${IFS}",
    "bash -c ",
    "sh ",
    "sudo ",
    "env -S ",
    "env ",
    "xargs ",
    "find . -exec ",
    "\\;",
    "eval ",
    "FOO=1 ",
    "nohup ",
    "timeout 5 ",
    "echo ",
    "cat ",
    "x=(",
    "{a,b}",
];

fn shellish() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(ALPHABET), 0..40).prop_map(|parts| parts.concat())
}

/// Output invariants that hold for every input.
fn check_invariants(input: &str) -> Result<(), TestCaseError> {
    let s = split(input);
    prop_assert_eq!(s.complete, s.problem.is_none());
    for g in &s.segments {
        prop_assert!(g.depth <= MAX_DEPTH);
        prop_assert_eq!(&g.text, &render_text(&g.argv));
        prop_assert!(
            !g.raw.starts_with(char::is_whitespace) && !g.raw.ends_with(char::is_whitespace)
        );
    }
    Ok(())
}

/// `quote(argv)` of every non-empty segment re-splits to one depth-0 segment, same argv.
fn check_requote(input: &str) -> Result<(), TestCaseError> {
    let s = split(input);
    for g in s.segments.iter().filter(|g| !g.argv.is_empty()) {
        let q = quote(&g.argv);
        let back = split(&q);
        let top: Vec<&Vec<String>> = back
            .segments
            .iter()
            .filter(|b| b.depth == 0)
            .map(|b| &b.argv)
            .collect();
        prop_assert_eq!(
            top,
            vec![&g.argv],
            "input {:?} segment {:?} quoted {:?}",
            input,
            g.argv,
            q
        );
        if s.complete {
            prop_assert!(back.complete, "{:?} → {:?}: {:?}", input, q, back.problem);
        }
    }
    Ok(())
}

/// What must not change when spaces are added around operators: all but `raw`.
fn summary(s: &Split) -> (bool, Vec<Segment>) {
    let segs = s
        .segments
        .iter()
        .map(|g| Segment {
            raw: String::new(),
            ..g.clone()
        })
        .collect();
    (s.complete, segs)
}

/// A generated command, rendered tight (`a&&b`, `(a)`) or with extra blanks around every
/// operator, paren and word boundary outside quotes.
#[derive(Debug, Clone)]
enum Node {
    Simple {
        words: Vec<String>,
        redirect: Option<(&'static str, String)>,
    },
    Subshell(Vec<(Node, &'static str)>),
    Group(Vec<(Node, &'static str)>),
    While(Vec<(Node, &'static str)>, Vec<(Node, &'static str)>),
}

fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "x[a-z0-9_.-]{0,5}",
        1 => "'[ a-z;&|()<>$]{0,6}'",
        1 => "\"[ a-z;&|()<>]{0,6}\"",
        1 => "\\$\\(x[a-z]{0,3}( x[a-z]{0,3})?\\)",
        1 => Just("'xa&&xb'".to_owned()),
    ]
}

fn simple() -> impl Strategy<Value = Node> {
    let prefix = prop::sample::select(vec![
        "",
        "sudo",
        "FOO=bar",
        "env A=1",
        "nohup",
        "timeout 5",
        "bash -c",
    ]);
    let redirect = prop::option::of((prop::sample::select(vec![">", ">>", "<"]), "x[a-z]{0,3}"));
    (prefix, prop::collection::vec(word(), 1..4), redirect).prop_map(|(p, rest, redirect)| {
        let mut words: Vec<String> = p
            .split(' ')
            .filter(|w| !w.is_empty())
            .map(str::to_owned)
            .collect();
        words.extend(rest);
        Node::Simple { words, redirect }
    })
}

fn list(node: impl Strategy<Value = Node>) -> impl Strategy<Value = Vec<(Node, &'static str)>> {
    let op = prop::sample::select(vec!["&&", "||", ";", "|", "|&", "&", "\n"]);
    prop::collection::vec((node, op), 1..4)
}

fn node() -> impl Strategy<Value = Node> {
    simple().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            list(inner.clone()).prop_map(Node::Subshell),
            list(inner.clone()).prop_map(Node::Group),
            (list(inner.clone()), list(inner)).prop_map(|(c, b)| Node::While(c, b)),
        ]
    })
}

fn render_list(items: &[(Node, &str)], sp: &str, out: &mut String) {
    for (i, (n, op)) in items.iter().enumerate() {
        render(n, sp, out);
        if i + 1 < items.len() {
            out.push_str(sp);
            out.push_str(op);
            out.push_str(sp);
        }
    }
}

/// Renders a body that must end in a separator before `}`/`do`/`done`.
fn render_body(items: &[(Node, &str)], sp: &str, out: &mut String) {
    render_list(items, sp, out);
    out.push_str(sp);
    out.push(';');
    out.push_str(sp);
}

fn render(n: &Node, sp: &str, out: &mut String) {
    let blank = if sp.is_empty() { " " } else { sp };
    match n {
        Node::Simple { words, redirect } => {
            out.push_str(&words.join(blank));
            if let Some((op, target)) = redirect {
                out.push_str(sp);
                out.push_str(op);
                out.push_str(sp);
                out.push_str(target);
            }
        }
        Node::Subshell(items) => {
            out.push('(');
            out.push_str(blank); // `((` would be arithmetic
            render_list(items, sp, out);
            out.push_str(sp);
            out.push(')');
        }
        Node::Group(items) => {
            out.push('{');
            out.push_str(blank);
            render_body(items, sp, out);
            out.push('}');
        }
        Node::While(cond, body) => {
            out.push_str("while");
            out.push_str(blank);
            render_body(cond, sp, out);
            out.push_str("do");
            out.push_str(blank);
            render_body(body, sp, out);
            out.push_str("done");
        }
    }
}

fn rendered(items: &[(Node, &str)], sp: &str) -> String {
    let mut out = String::from(sp);
    render_list(items, sp, &mut out);
    out.push_str(sp);
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn never_panics_on_arbitrary_strings(s in any::<String>()) {
        check_invariants(&s)?;
        check_requote(&s)?;
    }

    #[test]
    fn never_panics_on_shellish_strings(s in shellish()) {
        check_invariants(&s)?;
        check_requote(&s)?;
    }

    #[test]
    fn stable_under_added_spaces(items in list(node()), sp in prop::sample::select(vec![" ", "  ", " \t ", "\t"])) {
        let tight = split(&rendered(&items, ""));
        let loose = split(&rendered(&items, sp));
        prop_assert_eq!(summary(&tight), summary(&loose), "{:?} vs {:?}", rendered(&items, ""), rendered(&items, sp));
        check_requote(&rendered(&items, ""))?;
    }

    #[test]
    fn quote_round_trips_any_arguments(args in prop::collection::vec(any::<String>(), 0..5)) {
        let mut argv = vec!["echo".to_owned()];
        argv.extend(args);
        let back = split(&quote(&argv));
        prop_assert!(back.complete);
        prop_assert_eq!(back.segments.len(), 1);
        prop_assert_eq!(&back.segments[0].argv, &argv);
    }
}
