//! Shell builtins the splitter or the model reads: `cd`/`pushd` (the walk's working
//! directory), `echo`/`printf` (printers: their literal output can feed a shell or `xargs`
//! later in the pipeline), `source`/`.` (the model reads them as running code), and the
//! builtins that only forward a command, `command` (not `-v`/`-V`), `exec` and `builtin`
//! (transparent). None is ever a candidate's program; the plain builtins and reserved
//! words are the table's [`Row::BUILTIN`] and [`Row::KEYWORD`] rows.

use super::row::{Role, Row, Shape, first_operand};
use crate::shell::model::effect::Effect;
use crate::shell::model::walk::{Call, Walk};
use crate::shell::options::{Grammar, PLAIN};
use crate::shell::syntax::quote::unescape_print;
use crate::shell::syntax::sink::Kind;

/// Options stop at the first operand; none takes a value.
const FORWARD: Grammar = Grammar {
    stop_at_operand: true,
    ..PLAIN
};
/// `exec [-cl] [-a NAME] CMD`.
const EXEC_OPTIONS: Grammar = Grammar {
    short_value: "a",
    ..FORWARD
};

pub(super) const CD: Row = Row {
    effects: Some(cd),
    ..Row::BUILTIN
};
pub(super) const PUSHD: Row = CD;
pub(super) const SOURCE: Row = Row::BUILTIN;
pub(super) const ECHO: Row = Row {
    role: Role::Printer,
    unwrap: Some(|argv, _, _, _| Kind::Prints(Some(echo_text(argv)))),
    effects: Some(prints),
    ..Row::BUILTIN
};
pub(super) const PRINTF: Row = Row {
    role: Role::Printer,
    unwrap: Some(|argv, _, _, _| Kind::Prints(printf_text(argv))),
    effects: Some(prints),
    ..Row::BUILTIN
};
pub(super) const EXEC: Row = Row {
    options: &EXEC_OPTIONS,
    role: Role::Transparent(|argv| {
        let i = first_operand(argv, &EXEC_OPTIONS);
        (i < argv.len()).then_some(i)
    }),
    shape: Shape::Never,
    ..Row::PLAIN
};
pub(super) const BUILTIN: Row = Row {
    options: &FORWARD,
    role: Role::Transparent(|argv| {
        let i = first_operand(argv, &FORWARD);
        (i < argv.len()).then_some(i)
    }),
    shape: Shape::Never,
    ..Row::PLAIN
};
/// `command CMD` runs `CMD`; `command -v`/`-V CMD` only says what `CMD` is.
pub(super) const COMMAND: Row = Row {
    options: &FORWARD,
    role: Role::Transparent(|argv| {
        let o = crate::shell::options::parse(argv.get(1..).unwrap_or_default(), &FORWARD);
        let i = 1 + o.rest;
        (i < argv.len() && !o.short.iter().any(|c| matches!(c, 'v' | 'V'))).then_some(i)
    }),
    shape: Shape::Never,
    ..Row::PLAIN
};

/// `cd DIR`, `pushd DIR`: where the rest of the command runs.
fn cd(w: &mut Walk<'_>, c: &Call<'_>, _: &mut Vec<Effect>) {
    w.cd(c.args.iter().find(|a| !a.starts_with('-')));
}

/// What `echo`/`printf` print flows on to the next stage (`xargs`, a SQL client).
fn prints(w: &mut Walk<'_>, c: &Call<'_>, _: &mut Vec<Effect>) {
    w.pipes[c.depth].literal = Some(printed_words(c.program, c.args));
}

/// The words `echo`/`printf` print, for the next stage (`xargs`, a SQL client): options
/// dropped, `\n`, `\t`, `\0` escapes and printf's `%s`-style directives as blanks.
fn printed_words(p: &str, args: &[String]) -> Vec<String> {
    let mut words = Vec::new();
    for a in args.iter().filter(|a| !a.starts_with('-')) {
        let mut text = a
            .replace("\\n", " ")
            .replace("\\t", " ")
            .replace("\\0", " ");
        if p == "printf" {
            for d in ["%s", "%b", "%q", "%d"] {
                text = text.replace(d, " ");
            }
        }
        words.extend(text.split_whitespace().map(String::from));
    }
    words
}

/// What `echo [-neE]… ARGS` prints.
fn echo_text(argv: &[String]) -> String {
    let mut esc = false;
    let mut i = 1;
    while let Some(flags) = argv.get(i).and_then(|a| a.strip_prefix('-')) {
        if flags.is_empty() || !flags.chars().all(|c| matches!(c, 'n' | 'e' | 'E')) {
            break;
        }
        esc |= flags.contains('e');
        i += 1;
    }
    let text = argv[i.min(argv.len())..].join(" ");
    if esc { unescape_print(&text) } else { text }
}

/// What `printf FORMAT ARGS` prints, with `%s`/`%b` filled in order (other conversions kept).
fn printf_text(argv: &[String]) -> Option<String> {
    let i = if argv.get(1).is_some_and(|a| a == "--") {
        2
    } else {
        1
    };
    let fmt = argv.get(i)?;
    if fmt == "-v" {
        return None;
    }
    let mut values = argv[i + 1..].iter();
    let mut out = String::with_capacity(fmt.len());
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('%', Some('s' | 'b')) => {
                chars.next();
                out.push_str(values.next().map_or("", String::as_str));
            }
            ('%', Some('%')) => {
                chars.next();
                out.push('%');
            }
            _ => out.push(c),
        }
    }
    Some(unescape_print(&out))
}

#[cfg(test)]
mod tests {
    use crate::shell::programs::texts;

    #[test]
    fn forwarding_builtins_unwrap_unless_they_only_ask() {
        assert_eq!(texts("command rm -rf /"), ["rm -rf /"]);
        assert_eq!(texts("command -v rm"), ["command -v rm"]);
        assert_eq!(texts("command -pV rm"), ["command -pV rm"]);
        assert_eq!(texts("exec -a name rm x"), ["rm x"]);
        assert_eq!(texts("builtin cd /"), ["cd /"]);
        assert_eq!(texts("exec"), ["exec"]);
    }

    #[test]
    fn printers_feed_a_shell_later_in_the_pipeline() {
        assert_eq!(
            texts("echo 'rm -rf /' | sh"),
            ["echo 'rm -rf /'", "sh", "rm -rf /"]
        );
        assert_eq!(
            texts("printf '%s' 'rm x' | bash"),
            ["printf %s 'rm x'", "bash", "rm x"]
        );
        assert_eq!(texts("echo -e 'rm\\tx' | sh")[2], "rm x");
    }
}
