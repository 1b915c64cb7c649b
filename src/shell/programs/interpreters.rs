//! Interpreters that are not shells: `python`, `perl`, `ruby`, `node` (and `nodejs`, `bun`,
//! `deno`), `php`, `lua`, `R`, `osascript`, PowerShell. Each row says how the program takes
//! inline code ([`Code::flags`]); the model's code pass (`model/segment.rs`) reads that code
//! for remote shells and control-plane writes, and treats the program as reading a script
//! from stdin when it has no code, module or script operand. A name with a version suffix
//! (`python3.11`, `lua5.4`) is its family's ([`super::interpreter`]).

use super::row::{Code, Row, Shape};

/// `-c CODE` (Python, `PyPy`, `osascript`).
const DASH_C: Code = Code {
    flags: &["-c"],
    powershell: false,
};

/// Python: `-c CODE`; `python x.py` is shaped with its script, like a subcommand.
pub(super) const PYTHON: Row = Row {
    shape: Shape::Subcommand,
    code: Some(&DASH_C),
    ..Row::PLAIN
};

/// `pypy`, `osascript`: `-c CODE`.
pub(super) const DASH_C_RUNNER: Row = Row {
    code: Some(&DASH_C),
    ..Row::PLAIN
};

pub(super) const PERL: Row = Row {
    code: Some(&Code {
        flags: &["-e", "-E"],
        powershell: false,
    }),
    ..Row::PLAIN
};

/// Ruby, Node (and its look-alikes) and Lua: `-e`, `--eval`, `-p`, `--print`.
pub(super) const EVAL_PRINT: Row = Row {
    code: Some(&Code {
        flags: &["-e", "--eval", "-p", "--print"],
        powershell: false,
    }),
    ..Row::PLAIN
};

pub(super) const PHP: Row = Row {
    code: Some(&Code {
        flags: &["-r"],
        powershell: false,
    }),
    ..Row::PLAIN
};

/// `R`, `Rscript`: `-e EXPR`.
pub(super) const R: Row = Row {
    code: Some(&Code {
        flags: &["-e"],
        powershell: false,
    }),
    ..Row::PLAIN
};

/// `pwsh`, `powershell` (and their `.exe`): `-Command CODE` in its spellings, `-Command -`
/// from stdin, `-EncodedCommand BASE64`.
pub(super) const POWERSHELL: Row = Row {
    code: Some(&Code {
        flags: &["-c", "-Command", "-command", "-C"],
        powershell: true,
    }),
    ..Row::PLAIN
};

/// PowerShell's `-EncodedCommand` in any spelling it accepts (`-e`, `-ec`, `-enc`, …):
/// base64 decoded and run.
pub(crate) fn is_encoded_command(arg: &str) -> bool {
    let a = arg.to_ascii_lowercase();
    a == "-e" || a == "-ec" || (a.len() >= 3 && "-encodedcommand".starts_with(a.as_str()))
}

#[cfg(test)]
mod tests {
    use super::super::{find, interpreter};
    use super::is_encoded_command;

    #[test]
    fn a_version_suffix_names_the_family() {
        let flags = |p: &str| interpreter(p).map(|c| c.flags);
        assert_eq!(flags("python3.11"), Some(&["-c"][..]));
        assert_eq!(flags("python3"), Some(&["-c"][..]));
        assert_eq!(flags("perl5.30"), Some(&["-e", "-E"][..]));
        assert_eq!(flags("lua5.4"), flags("lua"));
        assert_eq!(flags("node18"), flags("ruby"));
        assert_eq!(flags("php8"), Some(&["-r"][..]));
        assert_eq!(flags("Rscript"), Some(&["-e"][..]));
        assert!(interpreter("pwsh.exe").is_some_and(|c| c.powershell));
        assert!(interpreter("powershell").is_some_and(|c| c.powershell));
        assert!(!interpreter("python").is_some_and(|c| c.powershell));
        for p in ["bash", "sh", "git", "3", "", "pythonx", "xpython", "."] {
            assert!(interpreter(p).is_none(), "{p}");
        }
        // Only Python takes its script into the shape.
        assert!(find("python").is_some_and(|r| r.shape == super::Shape::Subcommand));
        assert!(find("perl").is_some_and(|r| r.shape == super::Shape::Name));
    }

    #[test]
    fn every_spelling_of_encoded_command() {
        for a in [
            "-e",
            "-E",
            "-ec",
            "-en",
            "-enc",
            "-Enc",
            "-encodedcommand",
            "-EncodedCommand",
        ] {
            assert!(is_encoded_command(a), "{a}");
        }
        for a in ["-c", "-x", "-encodedcommandx", "-Command", "e", "-"] {
            assert!(!is_encoded_command(a), "{a}");
        }
    }
}
