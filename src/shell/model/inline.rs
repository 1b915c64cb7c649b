//! Inline interpreter code (`python -c`, `perl -e`, `node -e`, `ruby -e`, `php -r`): its
//! string literals are read as what the code touches. A literal handed to a shell-running
//! call (`os.system`, `subprocess`, `exec`, `child_process`, backticks) is analysed as a
//! shell command; a literal given to a recursive delete (`shutil.rmtree`, `fs.rmSync`,
//! `FileUtils.rm_rf`, `remove_dir_all`) is a recursive delete; a control-plane literal in
//! code that writes, removes or renames is a control-plane write.

use super::effect::Effect;
use super::effect::EffectKind;
use super::paths::Class;
use super::walk::Walk;

/// The quoted string literals of some code (between `'…'` or `"…"`), short ones only.
fn literals(code: &str) -> impl Iterator<Item = &str> {
    code.split(['\'', '"'])
        .skip(1)
        .step_by(2)
        .filter(|l| !l.is_empty() && l.len() <= 4096)
}

fn mentions(lower: &str, words: &[&str]) -> bool {
    words.iter().any(|w| lower.contains(w))
}

impl Walk<'_> {
    /// The effects of inline code `code` run by interpreter `p`.
    pub(super) fn inline_code(&self, p: &str, code: &str, fx: &mut Vec<Effect>) {
        let lower = code.to_ascii_lowercase();
        if mentions(
            &lower,
            &[
                "system",
                "exec",
                "popen",
                "subprocess",
                "spawn",
                "child_process",
                "passthru",
                "`",
            ],
        ) {
            for lit in literals(code).filter(|l| l.contains(' ')) {
                for e in (self.analyse)(lit, self.ctx) {
                    if !fx.iter().any(|x| x.line == e.line) {
                        fx.push(e);
                    }
                }
            }
        }
        // `recursive` alone is no delete (`mkdirSync(p, {recursive: true})`,
        // `glob(…, recursive=True)`): only next to a removal call (`fs.rm(p, {recursive})`).
        let recursive_rm =
            lower.contains("recursive") && mentions(&lower, &[".rm(", ".rmdir(", "rmdir("]);
        if recursive_rm
            || mentions(
                &lower,
                &[
                    "rmtree",
                    "rmsync",
                    "rm_rf",
                    "rm_r",
                    "remove_dir_all",
                    "rimraf",
                    "rmdirsync",
                ],
            )
        {
            for lit in literals(code).filter(|l| !l.contains(' ')) {
                self.delete(lit, true, p, fx);
            }
        }
        let writes = mentions(
            &lower,
            &[
                "'w'",
                "\"w\"",
                "'a'",
                "\"a\"",
                "'wb'",
                "write",
                "unlink",
                "remove",
                "rmtree",
                "rename",
                "truncate",
                "writefile",
                "rmsync",
                "rm_rf",
                "delete",
            ],
        );
        if writes {
            for lit in literals(code) {
                let (class, path) = self.class(lit);
                if class == Class::ControlPlane {
                    fx.push(Effect::on_path(
                        EffectKind::Writes,
                        &format!("{p} code writes {path}"),
                        &[("via", p)],
                        class,
                        &path,
                    ));
                }
            }
        }
    }
}
