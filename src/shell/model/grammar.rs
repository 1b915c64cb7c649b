//! Option parsing by a per-program grammar: short clusters (`-rf`), short options that take a
//! value (`-C dir`, `-Cdir`), long options with `=` or a following value, unambiguous
//! abbreviations of known long options (`--rec` → `--recursive`, as getopt and git accept),
//! and `--` ending options. Unknown long options are kept as written; an ambiguous prefix
//! takes the shortest option it abbreviates.

/// How one program reads its options.
pub(crate) struct Grammar {
    /// Short options that take a value (the rest of the cluster, or the next word).
    pub short_value: &'static str,
    /// Known long options, without `--`, with whether each takes a value.
    pub long: &'static [(&'static str, bool)],
    /// Options stop at the first operand (git's global options, `xargs`, `sudo`).
    pub stop_at_operand: bool,
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
#[allow(clippy::many_single_char_names)]
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
        if let Some(long) = a.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let (full, takes) = resolve(g, name);
            let key = format!("--{full}");
            if let Some(v) = inline {
                o.values.push((key, v.to_string()));
            } else if takes == Some(true)
                && let Some(v) = args.get(i)
            {
                o.values.push((key, v.clone()));
                i += 1;
            }
            o.long.push(full);
            continue;
        }
        let cluster: Vec<char> = a[1..].chars().collect();
        for (j, c) in cluster.iter().enumerate() {
            o.short.push(*c);
            if g.short_value.contains(*c) {
                let rest: String = cluster[j + 1..].iter().collect();
                if !rest.is_empty() {
                    o.values.push((format!("-{c}"), rest));
                } else if let Some(v) = args.get(i) {
                    o.values.push((format!("-{c}"), v.clone()));
                    i += 1;
                }
                break;
            }
        }
    }
    o.rest = args.len();
    o
}

/// A grammar that knows no options: clusters and `--` only.
pub(crate) const PLAIN: Grammar = Grammar {
    short_value: "",
    long: &[],
    stop_at_operand: false,
};

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    const RM: Grammar = Grammar {
        short_value: "",
        long: &[("recursive", false), ("force", false), ("dir", false)],
        stop_at_operand: false,
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
            long: &[("mirror", false), ("mirrors", false), ("output", true)],
            stop_at_operand: false,
        };
        let o = parse(&words("--mirr --out f -Cdir -C x y --zz"), &g);
        assert_eq!(o.long, ["mirror", "output", "zz"]);
        assert_eq!(o.values_of("--output").collect::<Vec<_>>(), ["f"]);
        assert_eq!(o.values_of("-C").collect::<Vec<_>>(), ["dir", "x"]);
        assert_eq!(o.operands, ["y"]);
    }

    #[test]
    fn stop_at_operand_reports_where() {
        let g = Grammar {
            short_value: "Cc",
            long: &[("no-pager", false), ("git-dir", true)],
            stop_at_operand: true,
        };
        let w = words("-C . --no-p -c a=b --git-dir x push -f");
        let o = parse(&w, &g);
        assert_eq!(&w[o.rest], "push");
        assert!(o.has_long("no-pager"));
    }
}
