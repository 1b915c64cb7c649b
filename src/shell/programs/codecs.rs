//! Decoders: programs whose output, in a pipeline, is text the command did not contain
//! (`base64 -d`, `xxd -r`, `zcat`, `gzip -d`), so the model treats it as fetched code
//! when a later stage runs it (`echo … | base64 -d | sh`). Each row's
//! [`Network::decodes`] says which calls decode; `openssl`'s is in `net.rs`.

use super::row::{Network, Row};

/// Does an argument start with `flag` (`-d`, `-dc`, `--decode` for `--d`)?
pub(super) fn has(args: &[String], flag: &str) -> bool {
    args.iter().any(|a| a.starts_with(flag))
}

/// `base64`, `base32`, `basenc`: with `-d`/`--decode` (`-D` on macOS).
pub(super) const BASE_N: Row = Row {
    network: &Network {
        decodes: Some(|args| has(args, "-d") || has(args, "--d") || has(args, "-D")),
        ..Network::NONE
    },
    ..Row::PLAIN
};

/// `xxd -r`: a hex dump back to bytes.
pub(super) const XXD: Row = Row {
    network: &Network {
        decodes: Some(|args| has(args, "-r")),
        ..Network::NONE
    },
    ..Row::PLAIN
};

/// `uudecode`, `zcat`, `gunzip`, `bzcat`, `xzcat`, `rev`: every call decodes.
pub(super) const DECODER: Row = Row {
    network: &Network {
        decodes: Some(|_| true),
        ..Network::NONE
    },
    ..Row::PLAIN
};

/// `gzip`, `bzip2`, `xz`: with `-d` (or `-dc`).
pub(super) const COMPRESSOR: Row = Row {
    network: &Network {
        decodes: Some(|args| has(args, "-d")),
        ..Network::NONE
    },
    ..Row::PLAIN
};

#[cfg(test)]
mod tests {
    use crate::shell::programs::network;

    fn decodes(line: &str) -> bool {
        let argv: Vec<String> = line.split_whitespace().map(String::from).collect();
        network(&argv[0]).decodes.is_some_and(|d| d(&argv[1..]))
    }

    #[test]
    fn decoders_decode_only_when_told_to() {
        for yes in [
            "base64 -d",
            "base64 --decode",
            "base64 -D",
            "base32 -di",
            "basenc --base64 -d",
            "xxd -r -p",
            "zcat x.gz",
            "rev",
            "uudecode",
            "gzip -dc x.gz",
            "bzip2 -d",
            "xz -d",
            "openssl base64 -d",
            "openssl enc -base64",
            "openssl base64",
        ] {
            assert!(decodes(yes), "{yes}");
        }
        for no in [
            "base64 x",
            "xxd x",
            "gzip x",
            "xz -k x",
            "openssl enc -e",
            "openssl s_client",
            "cat x",
            "curl x",
        ] {
            assert!(!decodes(no), "{no}");
        }
    }
}
