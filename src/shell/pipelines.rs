//! The pipelines a split command forms, as the stages' texts joined by ` | `: what the
//! `"match": "pipeline"` rule mode reads.
//!
//! Guarantees: pure; stages are joined only at one nesting depth (a substitution inside a
//! stage does not cut the pipeline it sits in), and a wrapper's command is not a stage of
//! its own.

use super::{Origin, Split};

/// Every pipeline of two or more stages, as the stages' texts joined by ` | `. Commands
/// run by a wrapper (`sudo bash`'s inner `bash`) are not separate stages.
#[must_use]
pub fn pipelines(split: &Split) -> Vec<String> {
    let mut out = Vec::new();
    // One open pipeline per nesting depth, so a substitution inside a stage does not cut
    // the pipeline it sits in.
    let mut open: Vec<Option<(String, usize)>> = Vec::new();
    let flush = |slot: &mut Option<(String, usize)>, out: &mut Vec<String>| {
        if let Some((text, _)) = slot.take().filter(|(_, n)| *n > 1) {
            out.push(text);
        }
    };
    for seg in &split.segments {
        if matches!(seg.origin, Origin::Wrapped(_)) {
            continue;
        }
        let d = usize::from(seg.depth);
        if open.len() <= d {
            open.resize(d + 1, None);
        }
        // Anything deeper than this segment belongs to an earlier command: close it.
        for slot in open.iter_mut().skip(d + 1) {
            flush(slot, &mut out);
        }
        match (&mut open[d], seg.piped) {
            (Some((text, stages)), true) => {
                text.push_str(" | ");
                text.push_str(&seg.text);
                *stages += 1;
            }
            (slot, _) => {
                flush(slot, &mut out);
                *slot = Some((seg.text.clone(), 1));
            }
        }
    }
    for slot in &mut open {
        flush(slot, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::split;

    #[test]
    fn pipelines_join_stages_at_one_depth() {
        assert_eq!(pipelines(&split("curl -s x | sh")), ["curl -s x | sh"]);
        assert_eq!(
            pipelines(&split("curl x | sudo bash")),
            ["curl x | sudo bash"]
        );
        assert_eq!(
            pipelines(&split("a | b $(c | d) | e")),
            ["c | d", "a | b '$(c | d)' | e"]
        );
        assert_eq!(pipelines(&split("a; b && c")), Vec::<String>::new());
        assert_eq!(pipelines(&split("bash -c 'curl x | sh'")), ["curl x | sh"]);
        assert_eq!(pipelines(&split("a |\n b")), ["a | b"]);
    }
}
