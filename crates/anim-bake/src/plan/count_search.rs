//! The search over one clip's interval counts in one format: predict from the error's quadratic fall, gallop,
//! bisect, and the counts whose frames land on the clip's key grid.

use std::collections::BTreeMap;

use crate::Result;

/// Whether a candidate meets the budget; `Hopeless` when the stored frames or the loop seam alone miss it, which no
/// rate helps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    Meets,
    Misses,
    Hopeless,
}

/// One probed candidate.
#[derive(Clone, Copy, Debug)]
pub(super) struct Outcome {
    pub(super) verdict: Verdict,
    /// An upper bound of the largest vertex error (exact where vertices were skinned).
    pub(super) bound: f32,
    /// An upper bound of the seam jump.
    pub(super) seam_jump: f32,
}

/// The result of one search: the intervals, their outcome, and whether the cap stopped it.
pub(super) struct Found {
    pub(super) intervals: u32,
    pub(super) outcome: Outcome,
    pub(super) capped: bool,
}

/// The smallest interval count in `lo..=hi` that `measure` finds within `threshold`, starting from `guess` (see
/// [`plan`](super::plan)). `capped_hi` tells whether `hi` is a cap below the rate limit.
pub(super) fn search(
    lo: u32,
    hi: u32,
    guess: u32,
    threshold: f32,
    capped_hi: bool,
    mut measure: impl FnMut(u32) -> Result<Outcome>,
) -> Result<Found> {
    let mut memo: BTreeMap<u32, Outcome> = BTreeMap::new();
    let mut probe = |n: u32, memo: &mut BTreeMap<u32, Outcome>| -> Result<Outcome> {
        if let Some(o) = memo.get(&n) {
            return Ok(*o);
        }
        let o = measure(n)?;
        memo.insert(n, o);
        Ok(o)
    };
    let meets = |o: Outcome| o.verdict == Verdict::Meets;
    if hi < lo {
        let o = probe(lo, &mut memo)?;
        return Ok(Found {
            intervals: lo,
            outcome: o,
            capped: true,
        });
    }
    let guess = guess.clamp(lo, hi);
    let first = probe(guess, &mut memo)?;
    if first.verdict == Verdict::Hopeless {
        return Ok(Found {
            intervals: guess,
            outcome: first,
            capped: false,
        });
    }
    // Interpolation error falls with the square of the interval: predict the count that meets 90% of the budget.
    let mut n = {
        let ratio = f64::from(first.bound) / (0.9 * f64::from(threshold));
        let predicted = (f64::from(guess) * ratio.max(0.0).sqrt()).ceil();
        if predicted.is_finite() {
            predicted.clamp(f64::from(lo), f64::from(hi)) as u32
        } else {
            hi
        }
    };
    // Gallop: down while meeting, up while missing.
    if meets(probe(n, &mut memo)?) {
        let mut step = 1u32;
        while n > lo {
            let q = n.saturating_sub(step).max(lo);
            if !meets(probe(q, &mut memo)?) {
                break;
            }
            n = q;
            step = step.saturating_mul(2);
        }
    } else {
        let mut step = 1u32;
        loop {
            if n >= hi {
                let o = probe(hi, &mut memo)?;
                return Ok(Found {
                    intervals: hi,
                    outcome: o,
                    capped: capped_hi,
                });
            }
            // Never past a count already known to meet (the first guess may have).
            let known = memo.iter().find(|(_, o)| meets(**o)).map_or(hi, |(k, _)| *k);
            let q = n.saturating_add(step).min(hi).min(known);
            let o = probe(q, &mut memo)?;
            if meets(o) {
                break;
            }
            if o.verdict == Verdict::Hopeless {
                return Ok(Found {
                    intervals: q,
                    outcome: o,
                    capped: false,
                });
            }
            n = q;
            step = step.saturating_mul(2);
        }
    }
    // Bisect between the largest miss below the smallest meet and that meet.
    loop {
        let Some(pass) = memo.iter().find(|(_, o)| meets(**o)).map(|(n, _)| *n) else {
            return Ok(Found {
                intervals: hi,
                outcome: memo[&hi],
                capped: capped_hi,
            });
        };
        let fail = memo.range(..pass).rev().find(|(_, o)| !meets(**o)).map(|(n, _)| *n);
        let fail = fail.unwrap_or(lo.saturating_sub(1));
        if pass - fail <= 1 || pass == lo {
            return Ok(Found {
                intervals: pass,
                outcome: memo[&pass],
                capped: false,
            });
        }
        let mid = fail + (pass - fail) / 2;
        probe(mid, &mut memo)?;
    }
}

/// The interval counts of a clip whose frames land on its key times, when its keys lie on a uniform grid of `k`
/// intervals: the divisors of `k` and its multiples up to `hi`, ascending.
pub(super) fn aligned_counts(keys: &[f32], duration: f32, hi: u32) -> Vec<u32> {
    if keys.len() < 2 || duration <= 0.0 {
        return Vec::new();
    }
    let gap = keys.windows(2).map(|w| w[1] - w[0]).fold(f32::INFINITY, f32::min);
    let k = (duration / gap).round();
    if !(k.is_finite() && k >= 1.0 && k <= hi as f32) {
        return Vec::new();
    }
    let on_grid = keys.iter().all(|&t| {
        let x = t / duration * k;
        (x - x.round()).abs() < 1e-3
    });
    if !on_grid {
        return Vec::new();
    }
    let k = k as u32;
    let mut counts: Vec<u32> = (1..=k).filter(|&d| k.is_multiple_of(d)).collect();
    counts.extend((2..).map(|m| k * m).take_while(|&n| n <= hi));
    counts
}
