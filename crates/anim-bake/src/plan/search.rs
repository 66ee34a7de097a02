//! [`Search`], what every part's search shares: the options, each clip's looping, the virtual vertices and the
//! vertices each skin joint moves; the palette comparison pruned by joint bounds, the probe of one candidate, the
//! search of every clip in one format, and the full measurement's verification.

use anim_pose::VirtualVertices;
use glam::{Affine3A, Vec3};
use rayon::prelude::*;
use skin_pack::skin_positions_reference;

use super::count_search::{Found, Outcome, Verdict, aligned_counts, search};
use super::{ClipCandidate, FormatPlan, Miss, format_plan};
use crate::bake::fixed_intervals;
use crate::measure::{ErrorAt, Measured, check_times, largest_distance};
use crate::source::{PoseScratch, Source};
use crate::{BakeOptions, BatFormat, CLIP_LOOPING, ClipRecord, Error, RateChoice, Result, affine_from_rows};

/// The rate every search starts from, in Hz, before it predicts a better one.
const FIRST_GUESS_HZ: f32 = 30.0;

/// Per-thread scratch of the pruned comparison.
struct Scratch {
    pose: PoseScratch,
    played: Vec<Affine3A>,
    stamp: Vec<u32>,
    epoch: u32,
    hot: Vec<u32>,
    positions: Vec<Vec3>,
    joints: Vec<[u16; 4]>,
    weights: Vec<[f32; 4]>,
    out_a: Vec<Vec3>,
    out_b: Vec<Vec3>,
}

/// A pruned comparison: an upper bound of the largest vertex distance, and whether every vertex is within the
/// threshold.
#[derive(Clone, Copy, Debug)]
struct Compared {
    bound: f32,
    meets: bool,
}

impl Compared {
    const NONE: Self = Self {
        bound: 0.0,
        meets: true,
    };

    fn and(self, o: Self) -> Self {
        Self {
            bound: self.bound.max(o.bound),
            meets: self.meets && o.meets,
        }
    }
}

/// What every part's search shares.
pub(super) struct Search<'a> {
    pub(super) source: &'a Source<'a>,
    pub(super) options: &'a BakeOptions,
    /// The resolved budget, in model units.
    pub(super) budget: f32,
    pub(super) looping: &'a [bool],
    /// The virtual vertices of every skin joint (bind-space boxes of the vertices it moves).
    pub(super) virtual_vertices: VirtualVertices,
    /// Per skin joint, the vertices it moves.
    pub(super) joint_vertices: Vec<Vec<u32>>,
}

impl<'a> Search<'a> {
    pub(super) fn new(
        source: &'a Source<'a>,
        options: &'a BakeOptions,
        budget: f32,
        looping: &'a [bool],
    ) -> Result<Self> {
        let mut joint_vertices = vec![Vec::new(); source.skeleton.skin_joint_count()];
        for (v, (joints, weights)) in source.joints.iter().zip(&source.weights).enumerate() {
            for (&j, &w) in joints.iter().zip(weights) {
                let list: &mut Vec<u32> = &mut joint_vertices[usize::from(j)];
                if w != 0.0 && list.last() != Some(&(v as u32)) {
                    list.push(v as u32);
                }
            }
        }
        Ok(Self {
            source,
            options,
            budget,
            looping,
            virtual_vertices: VirtualVertices::from_meshes(source.skeleton, &source.meshes)?,
            joint_vertices,
        })
    }

    fn scratch(&self) -> Scratch {
        Scratch {
            pose: self.source.pose_scratch(),
            played: vec![Affine3A::IDENTITY; self.source.skeleton.skin_joint_count()],
            stamp: vec![0; self.source.vertex_count()],
            epoch: 0,
            hot: Vec::new(),
            positions: Vec::new(),
            joints: Vec::new(),
            weights: Vec::new(),
            out_a: Vec::new(),
            out_b: Vec::new(),
        }
    }

    /// Compares two palettes: per joint on its virtual vertices, and on the skinned vertices of the joints whose
    /// bound passes `threshold` (the other vertices move no more than their joints' bounds).
    ///
    /// # Errors
    ///
    /// [`Error::NotFinite`] naming a skinned vertex whose distance is not finite (a palette that overflows).
    fn compare(&self, a: &[Affine3A], b: &[Affine3A], threshold: f32, s: &mut Scratch) -> Result<Compared> {
        s.epoch = s.epoch.wrapping_add(1);
        if s.epoch == 0 {
            s.stamp.fill(0);
            s.epoch = 1;
        }
        s.hot.clear();
        let mut cold = 0.0f32;
        for (k, (pa, pb)) in a.iter().zip(b).enumerate() {
            let d = self.virtual_vertices.joint_distance(k, pa, pb);
            if d > threshold {
                for &v in &self.joint_vertices[k] {
                    let stamp = &mut s.stamp[v as usize];
                    if *stamp != s.epoch {
                        *stamp = s.epoch;
                        s.hot.push(v);
                    }
                }
            } else {
                cold = cold.max(d);
            }
        }
        if s.hot.is_empty() {
            return Ok(Compared {
                bound: cold,
                meets: true,
            });
        }
        let src = self.source;
        s.positions.clear();
        s.joints.clear();
        s.weights.clear();
        for &v in &s.hot {
            s.positions.push(src.positions[v as usize]);
            s.joints.push(src.joints[v as usize]);
            s.weights.push(src.weights[v as usize]);
        }
        s.out_a.resize(s.hot.len(), Vec3::ZERO);
        s.out_b.resize(s.hot.len(), Vec3::ZERO);
        skin_positions_reference(a, &s.positions, &s.joints, &s.weights, &mut s.out_a)?;
        skin_positions_reference(b, &s.positions, &s.joints, &s.weights, &mut s.out_b)?;
        let hot = largest_distance(&s.out_a, &s.out_b)
            .map_err(|e| match e {
                Error::NotFinite { what, index } => Error::NotFinite {
                    what,
                    index: s.hot[index] as usize,
                },
                e => e,
            })?
            .0;
        Ok(Compared {
            bound: cold.max(hot),
            meets: hot <= threshold,
        })
    }

    /// The record of clip `c` with `n` intervals, first frame 0.
    pub(super) fn record(&self, c: usize, n: u32) -> ClipRecord {
        let duration = self.source.clips[c].duration;
        ClipRecord {
            first_frame: 0,
            frame_count: n + 1,
            rate_hz: if duration > 0.0 {
                (f64::from(n) / f64::from(duration)) as f32
            } else {
                0.0
            },
            duration,
            flags: if self.looping[c] { CLIP_LOOPING } else { 0 },
            first_segment: 0,
            segment_count: 1,
            reserved: 0,
        }
    }

    /// The interval range of clip `c` and the first guess: a fixed rate gives one count.
    pub(super) fn range(&self, c: usize) -> (u32, u32, u32) {
        let d = self.source.clips[c].duration;
        if d <= 0.0 {
            return (1, 1, 1);
        }
        match self.options.rate {
            RateChoice::Fixed(hz) => {
                let n = fixed_intervals(d, hz);
                (n, n, n)
            }
            RateChoice::Budget { min_hz, max_hz } => {
                let lo = fixed_intervals(d, min_hz);
                let hi = fixed_intervals(d, max_hz).max(lo);
                (lo, hi, fixed_intervals(d, FIRST_GUESS_HZ).clamp(lo, hi))
            }
        }
    }

    /// The key times of clip `c` inside the clip, ascending and distinct.
    fn keys(&self, c: usize) -> Vec<f32> {
        let clip = self.source.clips[c];
        let mut keys: Vec<f32> = clip
            .channels
            .iter()
            .flat_map(|ch| ch.times.iter().copied())
            .filter(|t| (0.0..=clip.duration).contains(t))
            .collect();
        keys.sort_by(f32::total_cmp);
        keys.dedup_by(|a, b| (*a - *b).abs() < 1e-5);
        keys
    }

    /// Searches every clip in one format: `probe(c, n)` measures a candidate, `thresholds[c]` is what it is held
    /// to; `previous` holds the last format's counts (the guesses) and bytes (the caps); `frame_bytes` is the bytes
    /// of one frame.
    pub(super) fn format<F: Copy>(
        &self,
        format: F,
        frame_bytes: u64,
        thresholds: &[f32],
        previous: Option<&[ClipCandidate]>,
        mut probe: impl FnMut(usize, u32) -> Result<Outcome>,
    ) -> Result<FormatPlan<F>> {
        let mut clips = Vec::with_capacity(self.source.clips.len());
        for (c, &threshold) in thresholds.iter().enumerate() {
            let (lo, hi, mut guess) = self.range(c);
            let mut cap = hi;
            if let Some(prev) = previous.map(|p| p[c]) {
                guess = prev.intervals;
                if prev.meets_budget {
                    // More frames than this would cost more than the format already found.
                    let frames = prev.bytes / frame_bytes.max(1);
                    cap = cap.min(u32::try_from(frames).unwrap_or(u32::MAX).saturating_sub(1));
                }
            }
            let mut found = search(lo, cap, guess, threshold, cap < hi, |n| probe(c, n))?;
            if found.outcome.verdict == Verdict::Meets {
                // Frames on the key grid can meet the budget below a count that misses it.
                for a in aligned_counts(&self.keys(c), self.source.clips[c].duration, hi) {
                    if a < lo || a >= found.intervals {
                        continue;
                    }
                    let o = probe(c, a)?;
                    if o.verdict == Verdict::Meets {
                        found = Found {
                            intervals: a,
                            outcome: o,
                            capped: false,
                        };
                        break;
                    }
                }
            }
            clips.push(self.candidate(c, found.intervals, frame_bytes, &found.outcome, found.capped));
        }
        Ok(format_plan(format, clips))
    }

    /// A clip candidate from a search outcome.
    fn candidate(&self, c: usize, n: u32, frame_bytes: u64, o: &Outcome, capped: bool) -> ClipCandidate {
        ClipCandidate {
            intervals: n,
            rate_hz: self.record(c, n).rate_hz,
            bytes: (u64::from(n) + 1).saturating_mul(frame_bytes),
            predicted: ErrorAt {
                distance: o.bound,
                ..ErrorAt::default()
            },
            predicted_normal: None,
            seam_jump: o.seam_jump,
            meets_budget: o.verdict == Verdict::Meets,
            capped,
            miss: match o.verdict {
                Verdict::Meets => None,
                _ if capped => None,
                _ => Some(o.why.unwrap_or(Miss::Rate)),
            },
        }
    }

    /// The decoded palettes of clip `c`'s `n + 1` frames in `format`.
    pub(super) fn frames(&self, c: usize, n: u32, format: BatFormat) -> Result<Vec<Vec<Affine3A>>> {
        let record = self.record(c, n);
        let source = self.source;
        (0..record.frame_count)
            .into_par_iter()
            .map_init(
                || (source.pose_scratch(), Vec::new()),
                |(pose, words), k| -> Result<Vec<Affine3A>> {
                    source.pose(c, record.frame_time(k), pose)?;
                    pose.palette
                        .iter()
                        .enumerate()
                        .map(|(j, m)| {
                            crate::bake::check_bat_entry(format, m, j)?;
                            words.clear();
                            format.encode_into(m, words);
                            Ok(affine_from_rows(&format.decode_rows(words)))
                        })
                        .collect()
                },
            )
            .collect()
    }

    /// Playback of `frames` against the exact clip at `times`, pruned at `threshold`.
    fn pruned(
        &self,
        c: usize,
        record: &ClipRecord,
        frames: &[Vec<Affine3A>],
        times: &[f32],
        threshold: f32,
    ) -> Result<Compared> {
        let source = self.source;
        times
            .par_iter()
            .map_init(
                || self.scratch(),
                |s, &t| -> Result<Compared> {
                    source.pose(c, record.local_time(t), &mut s.pose)?;
                    let pair = record.frame_at(t);
                    let (a, b) = (&frames[pair.frame as usize], &frames[pair.frame as usize + 1]);
                    let mut played = std::mem::take(&mut s.played);
                    for (p, (a, b)) in played.iter_mut().zip(a.iter().zip(b)) {
                        *p = lerp_affine(a, b, pair.fraction);
                    }
                    let exact = std::mem::take(&mut s.pose.palette);
                    let r = self.compare(&played, &exact, threshold, s);
                    s.played = played;
                    s.pose.palette = exact;
                    r
                },
            )
            .try_reduce(|| Compared::NONE, |a, b| Ok(a.and(b)))
    }

    /// Probes clip `c` at `n` intervals in `format` against `threshold` (positive): the stored frames (rounding
    /// alone), the loop seam, then every other check time. The bound covers every check time, also when the stored
    /// frames or the seam already miss the threshold (`Verdict::Hopeless`: no rate helps), so that it is an upper
    /// bound of the candidate's error whatever the verdict.
    pub(super) fn probe(&self, c: usize, n: u32, format: BatFormat, threshold: f32) -> Result<Outcome> {
        debug_assert!(threshold > 0.0, "a probe's threshold is positive");
        let record = self.record(c, n);
        let frames = self.frames(c, n, format)?;
        let frame_times: Vec<f32> = (0..=n).map(|k| record.frame_time(k)).collect();
        let at_frames = self.pruned(c, &record, &frames, &frame_times, threshold)?;
        let seam = if record.is_looping() {
            let mut s = self.scratch();
            self.compare(&frames[n as usize], &frames[0], threshold, &mut s)?
        } else {
            Compared::NONE
        };
        let others: Vec<f32> = check_times(self.source, c, &record)
            .into_iter()
            .filter(|t| frame_times.binary_search_by(|f| f.total_cmp(t)).is_err())
            .collect();
        let between = self.pruned(c, &record, &frames, &others, threshold)?;
        let (verdict, why) = if !at_frames.meets {
            (Verdict::Hopeless, Some(Miss::Rounding))
        } else if !seam.meets {
            (Verdict::Hopeless, Some(Miss::Seam))
        } else if between.meets {
            (Verdict::Meets, None)
        } else {
            (Verdict::Misses, None)
        };
        Ok(Outcome {
            verdict,
            why,
            bound: at_frames.bound.max(between.bound),
            seam_jump: seam.bound,
        })
    }

    /// Raises a chosen candidate's intervals until its full measurement meets the budget (or the rate limit),
    /// and records that measurement.
    pub(super) fn verify(
        &self,
        c: usize,
        cand: &mut ClipCandidate,
        frame_bytes: u64,
        normals: bool,
        mut measure: impl FnMut(u32) -> Result<(Measured, f32)>,
    ) -> Result<()> {
        let (_, hi, _) = self.range(c);
        let budget = self.budget;
        let mut n = cand.intervals;
        loop {
            let (m, seam_jump) = measure(n)?;
            let meets = m.position.distance <= budget
                && m.normal.distance <= self.options.normal_budget_rad
                && seam_jump <= budget;
            if meets || n >= hi || !cand.meets_budget {
                *cand = ClipCandidate {
                    intervals: n,
                    rate_hz: self.record(c, n).rate_hz,
                    bytes: (u64::from(n) + 1).saturating_mul(frame_bytes),
                    predicted: m.position,
                    predicted_normal: normals.then_some(m.normal),
                    seam_jump,
                    meets_budget: meets,
                    capped: cand.capped,
                    miss: if meets { None } else { cand.miss.or(Some(Miss::Rate)) },
                };
                return Ok(());
            }
            n = n.saturating_add((n / 16).max(1)).min(hi);
        }
    }
}

/// `mix` of two matrices element by element, as the shader mixes rows.
pub(super) fn lerp_affine(a: &Affine3A, b: &Affine3A, f: f32) -> Affine3A {
    let (ca, cb) = (a.to_cols_array(), b.to_cols_array());
    Affine3A::from_cols_array(&std::array::from_fn(|i| ca[i] * (1.0 - f) + cb[i] * f))
}
