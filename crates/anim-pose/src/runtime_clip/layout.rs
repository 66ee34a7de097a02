//! The choice of a runtime clip's frame times: frame-time tables from the clip's keys and uniform grids are
//! resampled and measured, and the smallest that meets the budget is kept; when none does, the most faithful one,
//! with a warning.

use super::resample::{self, Measured, PoseCheck, Resampled, Seam, Source};
use super::timeline::{FrameTimes, Timeline, frame_count};
use super::{FrameSpacing, Limits, RATE_LADDER, RuntimeClipOptions};
use crate::{Clip, ImportWarning, Skeleton};

/// The subdivisions of the key intervals tried for a key-time table, in order.
const SUBDIVISIONS: [usize; 8] = [1, 2, 3, 4, 6, 8, 12, 16];

/// One layout of frame times, resampled and measured.
pub(super) struct Trial {
    /// The frame times.
    pub(super) timeline: Timeline,
    /// How they were made.
    pub(super) spacing: FrameSpacing,
    /// The uniform rate, or the mean rate of a table.
    pub(super) rate_hz: f32,
    /// The tracks at the frames.
    pub(super) resampled: Resampled,
    /// The error against the exact evaluation.
    pub(super) measured: Measured,
}

impl Trial {
    /// How far over its budget the worst property is: the largest ratio of error to limit, infinite for NaN.
    fn excess(&self, budget: &Limits) -> f32 {
        let e = &self.measured.error;
        [
            e.translation / budget.translation,
            e.rotation / budget.rotation,
            e.scale / budget.scale,
            e.model / budget.model,
        ]
        .into_iter()
        .fold(0.0, |worst, r| if r.is_nan() { f32::INFINITY } else { worst.max(r) })
    }
}

/// What the search needs: the clip, its exact source, and the build's settings.
pub(super) struct Search<'s, 'a> {
    /// The clip.
    pub(super) clip: &'a Clip,
    /// Its skeleton.
    pub(super) skeleton: &'a Skeleton,
    /// The build options.
    pub(super) options: &'s RuntimeClipOptions,
    /// The exact source pose.
    pub(super) source: &'s Source<'a>,
    /// How the end poses compare.
    pub(super) seam: &'s Seam,
    /// True when the clip loops.
    pub(super) looping: bool,
    /// The error limits.
    pub(super) budget: &'s Limits,
    /// The model-space measurement.
    pub(super) poses: &'s PoseCheck<'a>,
    /// The merged key times of every channel (see [`Search::key_times`]).
    pub(super) keys: &'s [f32],
}

impl Search<'_, '_> {
    /// The key times of every channel of `clip`, with 0 and the duration; times closer than a thousandth of the
    /// smallest uniform interval (`1 / max_rate_hz`) are one, the earliest.
    pub(super) fn key_times(clip: &Clip, options: &RuntimeClipOptions) -> Vec<f32> {
        let tolerance = 1e-3 / options.max_rate_hz;
        FrameTimes::key_union(
            clip.duration,
            clip.channels.iter().map(|c| c.times.as_slice()),
            tolerance,
        )
    }

    /// Resamples and measures `timeline`.
    fn trial(&self, timeline: Timeline, spacing: FrameSpacing, rate_hz: f32) -> Trial {
        let resampled = resample::resample(self.source, &timeline, self.budget, &self.poses.model);
        let measured = resample::measure(self.source, &timeline, &resampled, self.seam, self.poses, self.budget);
        Trial {
            timeline,
            spacing,
            rate_hz,
            resampled,
            measured,
        }
    }

    /// The layout to keep, and a warning when it misses the budget. See [`crate::RuntimeClip`] for the order in
    /// which layouts are tried.
    /// `None` only when no layout was tried, which the rate ladder rules out.
    pub(super) fn choose(&self) -> Option<(Trial, Option<ImportWarning>)> {
        let duration = self.clip.duration;
        let limit = frame_count(duration, self.options.max_rate_hz);
        let mut choice = Choice::default();
        if duration > 0.0 {
            self.key_tables(limit, &mut choice);
        }
        let steps = self.source.step_changes();
        for rate in candidate_rates(self.options) {
            let n = frame_count(duration, rate);
            let (timeline, spacing) = match FrameTimes::uniform_with(duration, n, &steps) {
                None => (Timeline::uniform(duration, n, self.looping), FrameSpacing::Uniform),
                Some(times) => (
                    Timeline::table(times, self.looping),
                    FrameSpacing::UniformWithStepKeys { step_keys: steps.len() },
                ),
            };
            // Uniform frames are tried only while they are no more frames than the table that met the budget.
            if choice
                .met
                .as_ref()
                .is_some_and(|m| timeline.frame_count() > m.timeline.frame_count())
            {
                break;
            }
            if choice.offer(self.trial(timeline, spacing, rate), self.budget) || duration == 0.0 {
                break;
            }
        }
        if let Some(met) = choice.met {
            return Some((met, None));
        }
        let closest = choice.closest?;
        let warning = ImportWarning {
            object: format!("clip '{}'", self.clip.name),
            message: format!(
                "no frame layout of at most {limit} frames (the uniform grid at max_rate_hz) meets the error budget; \
                 kept the closest, {} with {} frames: {}",
                closest.spacing,
                closest.timeline.frame_count(),
                closest.measured.describe_worst(self.skeleton, self.budget)
            ),
        };
        Some((closest, Some(warning)))
    }

    /// Tries the key-time table and its refinements ([`Search::refine`]), then its subdivisions while they are fewer
    /// frames than a layout that met the budget, up to the first that meets it or `limit` frames.
    fn key_tables(&self, limit: usize, choice: &mut Choice) {
        let duration = self.clip.duration;
        let channels = &self.clip.channels;
        let keys = self.keys;
        let shared = channels.windows(2).all(|w| w[0].times == w[1].times);
        for subdivisions in SUBDIVISIONS {
            let frames = (keys.len() - 1) * subdivisions + 1;
            if frames > limit || choice.met.as_ref().is_some_and(|m| m.timeline.frame_count() <= frames) {
                break;
            }
            let timeline = Timeline::table(FrameTimes::subdivided(keys, subdivisions), self.looping);
            let rate_hz = (timeline.frame_count() - 1) as f32 / duration;
            let spacing = FrameSpacing::KeyTimes {
                shared,
                subdivisions,
                refined: 0,
            };
            let trial = self.trial(timeline, spacing, rate_hz);
            if subdivisions == 1 {
                self.refine(trial, shared, limit, choice);
            } else if choice.offer(trial, self.budget) {
                break;
            }
        }
    }

    /// Offers `trial`, the key times alone, then, while the last offered misses the budget, the same frames with
    /// the midpoint of every frame interval where it missed added, for at most [`REFINEMENTS`] rounds and `limit`
    /// frames.
    fn refine(&self, mut trial: Trial, shared: bool, limit: usize, choice: &mut Choice) {
        let base = trial.timeline.frame_count();
        for _ in 0..REFINEMENTS {
            let missed: Vec<usize> = (trial.measured.intervals.iter().enumerate())
                .filter(|&(_, r)| *r > 1.0)
                .map(|(i, _)| i)
                .collect();
            let times: Vec<f32> = (0..trial.timeline.frame_count())
                .map(|i| trial.timeline.frame_time(i))
                .collect();
            if choice.offer(trial, self.budget) || missed.is_empty() {
                return;
            }
            let times = FrameTimes::split(&times, &missed);
            if times.len() > limit {
                return;
            }
            let timeline = Timeline::table(times, self.looping);
            let rate_hz = (timeline.frame_count() - 1) as f32 / self.clip.duration;
            let spacing = FrameSpacing::KeyTimes {
                shared,
                subdivisions: 1,
                refined: timeline.frame_count() - base,
            };
            trial = self.trial(timeline, spacing, rate_hz);
        }
        choice.offer(trial, self.budget);
    }
}

/// The most rounds of [`Search::refine`]: each halves the frame intervals that miss the budget, which divides a
/// normalized lerp's error by about eight and a linear resampling's by four.
const REFINEMENTS: usize = 6;

/// The layouts kept so far: the smallest that met the budget, and the closest to it.
#[derive(Default)]
struct Choice {
    /// The layout with the fewest frames that meets the budget (a later one wins a tie).
    met: Option<Trial>,
    /// The layout with the smallest excess over the budget (an earlier one wins a tie).
    closest: Option<Trial>,
}

impl Choice {
    /// Keeps `trial` if it is better than what is kept; returns true when it meets the budget.
    fn offer(&mut self, trial: Trial, budget: &Limits) -> bool {
        if budget.admit(&trial.measured.error) {
            if self
                .met
                .as_ref()
                .is_none_or(|m| trial.timeline.frame_count() <= m.timeline.frame_count())
            {
                self.met = Some(trial);
            }
            return true;
        }
        if self
            .closest
            .as_ref()
            .is_none_or(|c| trial.excess(budget) < c.excess(budget))
        {
            self.closest = Some(trial);
        }
        false
    }
}

/// The rates to try, ascending: `min_rate_hz`, the ladder's rungs between the two limits, and `max_rate_hz`.
pub(super) fn candidate_rates(options: &RuntimeClipOptions) -> impl Iterator<Item = f32> {
    let (lo, hi) = (options.min_rate_hz, options.max_rate_hz);
    let ladder = RATE_LADDER.into_iter().filter(move |&r| r > lo && r < hi);
    std::iter::once(lo).chain(ladder).chain((hi > lo).then_some(hi))
}
