//! One candidate per lesson: proposals whose rules, replayed as the guard would enforce
//! them, fire on the same failures are one lesson, not two.
//!
//! Two proposals overlap when the failures both rules fire on are at least half of the
//! failures of the one that fires on fewer (and at least one). Of overlapping proposals the
//! one worth more as enforced is kept (its failures weighted by its failure rate; ties:
//! fewer successes fired on, then the earlier proposal). The other is absorbed when at least
//! half of its own failures are the kept one's too (its clusters become the kept one's
//! evidence, so its failures still count and its samples still show); else it is a broader
//! rule firing on the kept one's lesson and on causes it does not separate: a lesson, not a
//! candidate.
//!
//! Guarantees: the result never holds two proposals sharing half of either's matched
//! failures; a proposal that fires on no failure is never absorbed and absorbs nothing (it
//! is dropped later as unmatched); absorption is decided on matched failures only, never on
//! clusters or patterns, so two different spellings of one rule merge and two rules of one
//! program that fire on disjoint failures stay apart.

/// What one proposal's rule fired on in the replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fired {
    /// The failing calls it fired on, as sorted indices into the scan.
    pub failures: Vec<usize>,
    /// How many successful calls it fired on.
    pub successes: u64,
}

impl Fired {
    /// Split `calls` (indices into the scan, any order) by `failed`.
    pub(crate) fn of(calls: &[usize], failed: impl Fn(usize) -> bool) -> Self {
        let mut failures: Vec<usize> = calls.iter().copied().filter(|&i| failed(i)).collect();
        failures.sort_unstable();
        failures.dedup();
        let successes = (calls.len() - failures.len()) as u64;
        Fired {
            failures,
            successes,
        }
    }
}

/// How many indices two sorted lists share.
fn shared(a: &[usize], b: &[usize]) -> usize {
    let (mut left, mut right) = (a.iter().peekable(), b.iter().peekable());
    let mut count = 0;
    while let (Some(x), Some(y)) = (left.peek(), right.peek()) {
        match x.cmp(y) {
            std::cmp::Ordering::Less => {
                left.next();
            }
            std::cmp::Ordering::Greater => {
                right.next();
            }
            std::cmp::Ordering::Equal => {
                count += 1;
                left.next();
                right.next();
            }
        }
    }
    count
}

/// Do two proposals say the same lesson: do they share at least one failure, and at least
/// half of the smaller one's?
pub(crate) fn overlaps(a: &Fired, b: &Fired) -> bool {
    let n = shared(&a.failures, &b.failures);
    let smaller = a.failures.len().min(b.failures.len());
    n >= 1 && 2 * n >= smaller
}

impl Fired {
    /// How much enforcing the rule is worth: the failures it fires on, weighted by the share
    /// of failures among everything it fires on (`f² / (f + s)`). A rule that fires on a few
    /// failures and nothing else outranks a tool-wide one that fires on those failures among
    /// many successes; of two spellings of one rule, the one firing on more failures wins.
    /// Compared exactly as the fraction `(f², f + s)`.
    fn worth(&self) -> (u128, u128) {
        let f = self.failures.len() as u128;
        (f * f, f + u128::from(self.successes))
    }
}

/// Is `a` worth strictly more than `b` (fractions compared by cross-multiplying)?
fn worth_more(a: &Fired, b: &Fired) -> bool {
    let ((an, ad), (bn, bd)) = (a.worth(), b.worth());
    an * bd.max(1) > bn * ad.max(1)
}

/// Why a broader proposal is a lesson (see [`Fate::Broader`]).
pub(crate) const BROADER_LESSON: &str = "its rule would fire on another candidate's failures (at least half of them) and mostly on failures of other causes its pattern does not separate: a lesson, not a rule";

/// What becomes of one proposal beside the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fate {
    /// It stays a candidate.
    Kept,
    /// It says the same lesson as this kept one (at least half of its own failures are that
    /// one's too): folded into it as evidence.
    Absorbed(usize),
    /// It fires on at least half of this kept one's failures, but most of its own are
    /// others: a broader rule that would fire on another candidate's lesson and on causes
    /// its pattern does not separate. Not a candidate (a lesson), and not that one's evidence.
    Broader(usize),
}

/// The fate of each proposal. Proposals are tried strongest first (worth more, then fewer
/// successes, then earlier; see [`Fired::worth`]), each against the kept ones before it.
pub(crate) fn absorbers(fired: &[Fired]) -> Vec<Fate> {
    let mut order: Vec<usize> = (0..fired.len()).collect();
    order.sort_by(|&i, &j| {
        if worth_more(&fired[i], &fired[j]) {
            std::cmp::Ordering::Less
        } else if worth_more(&fired[j], &fired[i]) {
            std::cmp::Ordering::Greater
        } else {
            (fired[i].successes, i).cmp(&(fired[j].successes, j))
        }
    });
    let mut out = vec![Fate::Kept; fired.len()];
    let mut kept: Vec<usize> = Vec::new();
    for i in order {
        match kept.iter().find(|&&k| overlaps(&fired[k], &fired[i])) {
            Some(&k)
                if 2 * shared(&fired[k].failures, &fired[i].failures)
                    >= fired[i].failures.len() =>
            {
                out[i] = Fate::Absorbed(k);
            }
            Some(&k) => out[i] = Fate::Broader(k),
            None => kept.push(i),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(failures: &[usize], successes: u64) -> Fired {
        Fired {
            failures: failures.to_vec(),
            successes,
        }
    }

    #[test]
    fn fired_splits_and_sorts_the_calls() {
        let got = Fired::of(&[9, 2, 5, 2, 7], |i| i != 5);
        assert_eq!(got, f(&[2, 7, 9], 2));
        assert_eq!(Fired::of(&[], |_| true), f(&[], 0));
    }

    #[test]
    fn shared_counts_common_indices() {
        assert_eq!(shared(&[1, 3, 5, 7], &[2, 3, 4, 7, 9]), 2);
        assert_eq!(shared(&[1, 2], &[3, 4]), 0);
        assert_eq!(shared(&[], &[1]), 0);
        assert_eq!(shared(&[4], &[1, 2, 3, 4]), 1);
    }

    #[test]
    fn half_of_the_smaller_one_is_the_edge() {
        // 2 of the smaller one's 4: half, the same lesson.
        assert!(overlaps(
            &f(&[1, 2, 3, 4], 0),
            &f(&[3, 4, 10, 11, 12, 13], 0)
        ));
        // 1 of 3: under half.
        assert!(!overlaps(&f(&[1, 2, 3], 0), &f(&[3, 10, 11, 12], 0)));
        // 1 of 4: not half.
        assert!(!overlaps(&f(&[1, 2, 3, 4], 0), &f(&[4, 10, 11, 12, 13], 0)));
        // 2 of 5 (smaller has 5): under half.
        assert!(!overlaps(
            &f(&[1, 2, 3, 4, 5], 0),
            &f(&[4, 5, 6, 7, 8, 9], 0)
        ));
        // 3 of 5: over half.
        assert!(overlaps(
            &f(&[1, 2, 3, 4, 5], 0),
            &f(&[3, 4, 5, 6, 7, 8], 0)
        ));
        // Symmetric.
        assert!(overlaps(
            &f(&[3, 4, 10, 11, 12, 13], 0),
            &f(&[1, 2, 3, 4], 0)
        ));
        // A proposal that fired on no failure overlaps nothing.
        assert!(!overlaps(&f(&[], 0), &f(&[1], 0)));
        assert!(!overlaps(&f(&[], 0), &f(&[], 0)));
    }

    #[test]
    fn the_one_firing_on_more_failures_absorbs() {
        // 3 failures among 4 calls (worth 2.25) beats 2 among 2 (worth 2).
        let got = absorbers(&[f(&[1, 2], 0), f(&[1, 2, 3], 1), f(&[7, 8], 0)]);
        assert_eq!(got, vec![Fate::Absorbed(1), Fate::Kept, Fate::Kept]);
    }

    #[test]
    fn a_precise_rule_outranks_a_broad_one_it_overlaps() {
        // 4 failures and nothing else (worth 4) beats 13 failures among 77 calls (worth 2.2);
        // 9 of the broad one's 13 are others: it is broader, not the same lesson.
        let broad = f(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13], 64);
        let got = absorbers(&[broad.clone(), f(&[1, 2, 3, 4], 0)]);
        assert_eq!(got, vec![Fate::Broader(1), Fate::Kept]);
        // Worth exactly equal (16/4 = 4 = 64/16): fewer successes wins.
        let got = absorbers(&[f(&[1, 2, 3, 4, 5, 6, 7, 8], 8), f(&[1, 2, 3, 4], 0)]);
        assert_eq!(got, vec![Fate::Absorbed(1), Fate::Kept]);
        // One more failure than a tie tips it.
        let got = absorbers(&[f(&[1, 2, 3, 4, 5, 6, 7, 8, 9], 8), f(&[1, 2, 3, 4], 0)]);
        assert_eq!(got, vec![Fate::Kept, Fate::Absorbed(0)]);
    }

    #[test]
    fn a_broader_rule_over_a_kept_ones_failures_is_not_its_evidence() {
        // The kept one's 4 failures are all in the broad one's 10, which are mostly others.
        let got = absorbers(&[f(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 30), f(&[1, 2, 3, 4], 0)]);
        assert_eq!(got, vec![Fate::Broader(1), Fate::Kept]);
        // Exactly half of its own failures shared: the same lesson.
        let got = absorbers(&[f(&[1, 2, 3, 4, 5, 6, 7, 8], 30), f(&[1, 2, 3, 4], 0)]);
        assert_eq!(got, vec![Fate::Absorbed(1), Fate::Kept]);
    }

    #[test]
    fn ties_go_to_fewer_successes_then_the_earlier() {
        let got = absorbers(&[f(&[1, 2], 5), f(&[1, 2], 1)]);
        assert_eq!(got, vec![Fate::Absorbed(1), Fate::Kept]);
        let got = absorbers(&[f(&[1, 2], 1), f(&[1, 2], 1)]);
        assert_eq!(got, vec![Fate::Kept, Fate::Absorbed(0)]);
    }

    #[test]
    fn each_joins_a_kept_one_never_an_absorbed_one() {
        // 0 absorbs 1; 2 overlaps only 1 (absorbed), so it stays.
        let got = absorbers(&[
            f(&[1, 2, 3, 4, 5, 6], 0),
            f(&[5, 6, 7, 8], 0),
            f(&[7, 8, 9], 0),
        ]);
        assert_eq!(got, vec![Fate::Kept, Fate::Absorbed(0), Fate::Kept]);
    }

    #[test]
    fn disjoint_proposals_all_stay() {
        let got = absorbers(&[f(&[1], 0), f(&[2], 0), f(&[], 3)]);
        assert_eq!(got, vec![Fate::Kept, Fate::Kept, Fate::Kept]);
    }
}
