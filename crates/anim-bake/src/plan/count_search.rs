//! The search over one clip's interval counts in one format: predict from the error's quadratic fall, gallop,
//! bisect, and the counts whose frames land on the clip's key grid.

use std::collections::BTreeMap;

use super::Miss;
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
    /// Why no rate helps, for a `Hopeless` verdict.
    pub(super) why: Option<Miss>,
    /// An upper bound of the largest vertex error over every check time (exact where vertices were skinned).
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
///
/// A `Hopeless` candidate ends the search: no count meets the threshold, and `hi` has the least error, so the
/// search returns `hi`'s outcome; where `hi` is a cap (a cheaper format already meets the budget, so this one is
/// not chosen), it keeps the hopeless count and saves the probe.
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
        return give_up(guess, first, capped_hi, || Ok((hi, probe(hi, &mut memo)?)));
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
                return give_up(q, o, capped_hi, || Ok((hi, probe(hi, &mut memo)?)));
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

/// The search's answer once count `n` is hopeless (`o`): `n` where the search's top is a cap, else the top count
/// and its outcome from `probe_top`, with the reason no rate helps.
fn give_up(n: u32, o: Outcome, capped: bool, probe_top: impl FnOnce() -> Result<(u32, Outcome)>) -> Result<Found> {
    if capped {
        return Ok(Found {
            intervals: n,
            outcome: o,
            capped: false,
        });
    }
    let (top, last) = probe_top()?;
    Ok(Found {
        intervals: top,
        // Rounding varies a little with the count: the top count's stored frames may just meet the threshold.
        outcome: match last.verdict {
            Verdict::Meets => last,
            _ => Outcome {
                why: last.why.or(o.why),
                ..last
            },
        },
        capped: false,
    })
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
