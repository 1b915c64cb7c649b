//! The option engine: every program's options are read by [`parse`] and a per-program
//! [`Grammar`]. It knows short clusters (`-rf`), short options that take a value (`-C dir`,
//! `-Cdir`), short options that take an optional glued value (`xargs -i{}`, ending the
//! cluster), long options with `=` or a following value, unambiguous abbreviations of known
//! long options (`--rec` → `--recursive`, as getopt and git accept), `--` ending options, and
//! options that stop at the first operand (a wrapper's command, git's subcommand) or at an
//! option whose value replaces the rest (`env -S STRING`). Unknown long options are kept as
//! written and take no value; an ambiguous prefix takes the shortest option it abbreviates.
//!
//! Names no program: the grammars live with their programs' rows (`shell::programs`).
//!
//! # Readers that stay outside the engine
//! A few argument readers are not grammars, on purpose; each reads something the engine's
//! model of options (a cluster of flags, then operands) would misread:
//! - `kill` (`programs/machine.rs`): its first dash word is a signal (`-9`, `-KILL`, `-s
//!   SIG`) and a later `-1` is a pid (every process), not an option; the engine would read
//!   `-1` as a flag and `-KILL` as a cluster.
//! - interpreters' code flags (`model/segment.rs`, [`crate::shell::programs::Code::flags`]):
//!   matched as whole words, because PowerShell spells its long options with one dash and
//!   in any case (`-Command`, `-command`, `-c`), and the pass needs only the code and the
//!   operands, with every other option left alone whatever value it takes.
//! - the network pass's skipped options (`model/flows.rs`,
//!   [`crate::shell::programs::Network::skips`]): the search for a secret sent reads every
//!   word, option values and operands alike (`-d @.env`, `--data=…`, `host:~/.ssh/id_rsa`);
//!   only a key, a certificate or a config file given to a listed option is not data, so a
//!   list of those options is the whole grammar it needs.

/// How one program reads its options.
#[derive(Debug)]
pub(crate) struct Grammar {
    /// Short options that take a value (the rest of the cluster, or the next word).
    pub short_value: &'static str,
    /// Short options that take an optional value, glued only (the rest of the cluster).
    pub short_optional: &'static str,
    /// Known long options, without `--`, with whether each takes a value.
    pub long: &'static [(&'static str, bool)],
    /// Options stop at the first operand (git's global options, `xargs`, `sudo`).
    pub stop_at_operand: bool,
    /// Options whose value ends the options (`-S`, `--split-string` of `env`): parsing stops
    /// right after that value.
    pub last: &'static [&'static str],
}

/// A program's arguments after parsing.
#[derive(Debug, Default)]
pub(crate) struct Opts {
    /// Short flags seen, in order (clusters expanded).
    pub short: Vec<char>,
    /// Long options seen, resolved to their full name when the abbreviation is unambiguous.
    pub long: Vec<String>,
    /// Option values: `("-C", "dir")`, `("--output", "f")`.
    pub values: Vec<(String, String)>,
    /// Operands, in order.
    pub operands: Vec<String>,
    /// Index in the parsed slice where parsing stopped (with `stop_at_operand`).
    pub rest: usize,
}

impl Opts {
    /// A short flag or its long spelling is present.
    pub(crate) fn flag(&self, short: char, long: &str) -> bool {
        (short != '\0' && self.short.contains(&short)) || self.long.iter().any(|l| l == long)
    }

    /// A long option is present.
    pub(crate) fn has_long(&self, long: &str) -> bool {
        self.long.iter().any(|l| l == long)
    }

    /// The first value given to any of `keys` (`-c`, `--command`), in the order written.
    pub(crate) fn first_of(&self, keys: &[&str]) -> Option<&str> {
        self.values
            .iter()
            .find(|(k, _)| keys.contains(&k.as_str()))
            .map(|(_, v)| v.as_str())
    }

    /// The values given to an option (`-C` or `--output`).
    pub(crate) fn values_of<'s>(&'s self, key: &'s str) -> impl Iterator<Item = &'s str> + 's {
        self.values
            .iter()
            .filter(move |(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// Resolve a long option name (without `--`) against the grammar: an exact name, else the
/// only known name it abbreviates, else itself.
fn resolve(g: &Grammar, name: &str) -> (String, Option<bool>) {
    if let Some((n, v)) = g.long.iter().find(|(n, _)| *n == name) {
        return ((*n).to_string(), Some(*v));
    }
    // An ambiguous prefix resolves to the shortest candidate (`--forc` → `--force`, not
    // `--force-with-lease`): the reading that fails closed.
    g.long
        .iter()
        .filter(|(n, _)| !name.is_empty() && n.starts_with(name))
        .min_by_key(|(n, _)| n.len())
        .map_or_else(
            || (name.to_string(), None),
            |(n, v)| ((*n).to_string(), Some(*v)),
        )
}

/// Parse `args` (the words after the program name) by `g`.
pub(crate) fn parse(args: &[String], g: &Grammar) -> Opts {
    let mut o = Opts::default();
    let mut i = 0;
    let mut ended = false;
    while i < args.len() {
        let a = args[i].as_str();
        i += 1;
        if ended || a == "-" || !a.starts_with('-') {
            if g.stop_at_operand && !ended {
                o.rest = i - 1;
                return o;
            }
            o.operands.push(a.to_string());
            continue;
        }
        if a == "--" {
            if g.stop_at_operand {
                o.rest = i;
                return o;
            }
            ended = true;
            continue;
        }
        let last = match a.strip_prefix("--") {
            Some(long) => long_option(long, args, &mut i, g, &mut o),
            None => short_cluster(&a[1..], args, &mut i, g, &mut o),
        };
        if last {
            o.rest = i;
            return o;
        }
    }
    o.rest = args.len();
    o
}

/// One `--name[=value]` (`name` without the dashes), taking its value from `args[*i]` when
/// the grammar says it has one; whether it ends the options (see [`Grammar::last`]).
fn long_option(long: &str, args: &[String], i: &mut usize, g: &Grammar, o: &mut Opts) -> bool {
    let (name, inline) = match long.split_once('=') {
        Some((name, value)) => (name, Some(value)),
        None => (long, None),
    };
    let (full, takes) = resolve(g, name);
    let key = format!("--{full}");
    let value = match inline {
        Some(v) => Some(v.to_string()),
        None if takes == Some(true) => args.get(*i).inspect(|_| *i += 1).cloned(),
        None => None,
    };
    o.long.push(full);
    let last = value.is_some() && g.last.contains(&key.as_str());
    if let Some(v) = value {
        o.values.push((key, v));
    }
    last
}

/// One short cluster (`rf` of `-rf`, `Cdir` of `-Cdir`), taking a value from the rest of the
/// cluster or from `args[*i]`; whether it ends the options (see [`Grammar::last`]).
fn short_cluster(cluster: &str, args: &[String], i: &mut usize, g: &Grammar, o: &mut Opts) -> bool {
    for (j, c) in cluster.char_indices() {
        o.short.push(c);
        let rest = &cluster[j + c.len_utf8()..];
        if g.short_optional.contains(c) {
            if !rest.is_empty() {
                o.values.push((format!("-{c}"), rest.to_string()));
            }
            return false;
        }
        if g.short_value.contains(c) {
            let value = if rest.is_empty() {
                args.get(*i).inspect(|_| *i += 1).cloned()
            } else {
                Some(rest.to_string())
            };
            let Some(v) = value else { return false };
            let key = format!("-{c}");
            let last = g.last.contains(&key.as_str());
            o.values.push((key, v));
            return last;
        }
    }
    false
}

/// A grammar that knows no options: clusters and `--` only. Every grammar starts from it
/// (`..PLAIN`) and spells only what it changes.
pub(crate) const PLAIN: Grammar = Grammar {
    short_value: "",
    short_optional: "",
    long: &[],
    stop_at_operand: false,
    last: &[],
};

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    const RM: Grammar = Grammar {
        short_value: "",
        short_optional: "",
        long: &[("recursive", false), ("force", false), ("dir", false)],
        stop_at_operand: false,
        last: &[],
    };

    #[test]
    fn clusters_abbreviations_and_double_dash() {
        let o = parse(&words("-rf --rec -- -x /"), &RM);
        assert_eq!(o.short, ['r', 'f']);
        assert_eq!(o.long, ["recursive"]);
        assert_eq!(o.operands, ["-x", "/"]);
        // An unknown option stays as written; an ambiguous prefix takes the shortest.
        let g = Grammar {
            short_value: "C",
            short_optional: "",
            long: &[("mirror", false), ("mirrors", false), ("output", true)],
            stop_at_operand: false,
            last: &[],
        };
        let o = parse(&words("--mirr --out f -Cdir -C x y --zz"), &g);
        assert_eq!(o.long, ["mirror", "output", "zz"]);
        assert_eq!(o.values_of("--output").collect::<Vec<_>>(), ["f"]);
        assert_eq!(o.values_of("-C").collect::<Vec<_>>(), ["dir", "x"]);
        assert_eq!(o.operands, ["y"]);
        assert_eq!(o.first_of(&["--output", "-C"]), Some("f"));
        assert_eq!(o.first_of(&["-C"]), Some("dir"));
        assert_eq!(o.first_of(&["-x"]), None);
    }

    #[test]
    fn stop_at_operand_reports_where() {
        let g = Grammar {
            short_value: "Cc",
            short_optional: "",
            long: &[("no-pager", false), ("git-dir", true)],
            stop_at_operand: true,
            last: &[],
        };
        let w = words("-C . --no-p -c a=b --git-dir x push -f");
        let o = parse(&w, &g);
        assert_eq!(&w[o.rest], "push");
        assert!(o.has_long("no-pager"));
    }

    #[test]
    fn optional_values_and_a_value_that_ends_the_options() {
        let xargs = Grammar {
            short_value: "n",
            short_optional: "i",
            long: &[],
            stop_at_operand: true,
            last: &[],
        };
        // An optional value is glued only: `-i` leaves the next word an operand.
        let w = words("-i{} -n1 -i rm {}");
        let o = parse(&w, &xargs);
        assert_eq!(o.values_of("-i").collect::<Vec<_>>(), ["{}"]);
        assert_eq!(o.values_of("-n").collect::<Vec<_>>(), ["1"]);
        assert_eq!(&w[o.rest], "rm");
        let env = Grammar {
            short_value: "uS",
            short_optional: "",
            long: &[("split-string", true), ("unset", true)],
            stop_at_operand: true,
            last: &["-S", "--split-string"],
        };
        for (cmd, value, next) in [
            ("-u X -S a -i b", "a", "-i"),
            ("-iSa -u b", "a", "-u"),
            ("--split=a -u b", "a", "-u"),
        ] {
            let w = words(cmd);
            let o = parse(&w, &env);
            assert_eq!(
                o.values.last().map(|(_, v)| v.as_str()),
                Some(value),
                "{cmd}"
            );
            assert_eq!(&w[o.rest], next, "{cmd}");
        }
        // `-u` is not a `last` option; a `last` option without its value ends nothing.
        let w = words("-u X b");
        assert_eq!(&w[parse(&w, &env).rest], "b");
        let w = words("-S");
        assert_eq!(parse(&w, &env).rest, 1);
    }
}
