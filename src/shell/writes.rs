//! The files a split command may write: what the `"match": "writes"` rule mode and the
//! model's `writes`/`overwrites` effects read.
//!
//! Guarantees: pure and `std`-only like the rest of `shell`; a write target is reported as
//! written in the command (after quote removal), never resolved against the filesystem;
//! unknown programs contribute only their redirections. The writers are deliberately few and
//! explicit (redirections, and the programs whose row in `shell::programs` has
//! [`crate::shell::programs::Row::writes`]: `tee`, `sed -i`, `cp`/`mv`/`install`/`ln`,
//! `dd of=`, `truncate`, in-place `awk`, scripted editors), so a rule on writes fires on the
//! commands a reviewer would call a write.

use super::{Segment, Split};

/// Every file the command may write, in order, duplicates kept out.
#[must_use]
pub fn write_targets(split: &Split) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for seg in &split.segments {
        for target in segment_writes(seg) {
            if !target.is_empty() && !out.contains(&target) {
                out.push(target);
            }
        }
    }
    out
}

/// The files one simple command may write.
#[must_use]
pub(crate) fn segment_writes(seg: &Segment) -> Vec<String> {
    let mut out: Vec<String> = seg
        .redirects
        .iter()
        .filter(|r| r.writes())
        .map(|r| r.target.clone())
        .collect();
    let Some(program) = seg.program() else {
        return out;
    };
    if let Some(writes) = super::programs::find(program).and_then(|row| row.writes) {
        writes(program, &seg.argv[1..], &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::split;

    fn writes(cmd: &str) -> Vec<String> {
        write_targets(&split(cmd))
    }

    #[test]
    fn write_targets_cover_the_common_writers() {
        assert_eq!(writes("echo x > .env"), [".env"]);
        assert_eq!(
            writes("cat a >> ~/.ssh/authorized_keys 2>/dev/null"),
            ["~/.ssh/authorized_keys", "/dev/null"]
        );
        assert_eq!(writes("printf x | tee -a a.txt b.txt"), ["a.txt", "b.txt"]);
        assert_eq!(writes("sed -i 's/a/b/' .env"), [".env"]);
        assert_eq!(writes("sed -i.bak -e s/a/b/ f1 f2"), ["f1", "f2"]);
        assert_eq!(writes("sed 's/a/b/' .env"), Vec::<String>::new());
        assert_eq!(writes("cp new ~/.kube/config"), ["~/.kube/config"]);
        assert_eq!(writes("mv -f a b c dir/"), ["dir/"]);
        assert_eq!(writes("cp -t dest a b"), ["dest"]);
        assert_eq!(writes("dd if=/dev/zero of=disk.img"), ["disk.img"]);
        assert_eq!(writes("truncate -s 0 log.txt"), ["log.txt"]);
        assert_eq!(writes("sudo tee /etc/hosts < x"), ["/etc/hosts"]);
        assert_eq!(writes("cat .env"), Vec::<String>::new());
        assert_eq!(writes("bash -c 'echo x > .env'"), [".env"]);
    }
}
