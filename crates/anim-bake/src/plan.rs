//! The plan (a dry run): each clip's frame rate and each part's format, the cheapest that keep the measured vertex
//! error within the budget, with the sizes and whether they fit the device.

use std::collections::BTreeMap;

use anim_pose::{Aabb, Model, VirtualVertices};
use glam::{Affine3A, Vec3};
use rayon::prelude::*;
use skin_pack::{F16Kind, QT_F16_SCALE_TOLERANCE, choose_f16_format, skin_positions_reference};

use crate::bake::{fixed_intervals, loops, seam_distance, skin_frames, socket_joints};
use crate::bat::affine_from_rows;
use crate::clip_table::CLIP_LOOPING;
use crate::measure::{ErrorAt, FrameVertices, Measured, check_times, largest_distance, playback_error};
use crate::source::{PoseScratch, Source};
use crate::vat::{VatLayout, VatQuant, vat_position_error_bound};
use crate::{BakeOptions, BatFormat, ClipRecord, Error, Progress, RateChoice, Result, Stage, VatFormat};

/// The rate every search starts from, in Hz, before it predicts a better one.
const FIRST_GUESS_HZ: f32 = 30.0;

/// The format of socket transforms: f32 3×4, the only one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SocketFormat {
    /// `skin_pack::PaletteEntry`, 48 B per socket per frame.
    F32,
}

/// A planned bake: what [`crate::bake`] will store, and what it should measure.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The skeleton's name.
    pub skeleton: String,
    /// The budget, in millimetres.
    pub budget_mm: f32,
    /// The vertices measured (and baked in a VAT).
    pub vertex_count: u32,
    /// The skin's joints (palette entries per BAT frame).
    pub skin_joint_count: u32,
    /// The clips, in bake order.
    pub clips: Vec<PlannedClip>,
    /// The bone-animation part.
    pub bat: Option<PartPlan<BatFormat>>,
    /// The vertex-animation part.
    pub vat: Option<PartPlan<VatFormat>>,
    /// The sockets.
    pub sockets: Option<PartPlan<SocketFormat>>,
    /// The VAT's texture layout, when the plan has a VAT that can be laid out.
    pub vat_layout: Option<VatLayout>,
    /// Every device limit the bake is checked against.
    pub limits: Vec<LimitCheck>,
}

/// A clip of a plan.
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedClip {
    /// The clip's name.
    pub name: String,
    /// Its duration in seconds.
    pub duration: f32,
    /// Whether it loops.
    pub looping: bool,
    /// The largest distance between a vertex exactly skinned at time 0 and at the duration, in metres.
    pub seam_distance: f32,
}

/// One part of a plan: every format considered, and the one chosen.
#[derive(Clone, Debug, PartialEq)]
pub struct PartPlan<F> {
    /// The index of the chosen format in `formats`.
    pub chosen: usize,
    /// Every format considered.
    pub formats: Vec<FormatPlan<F>>,
}

impl<F> PartPlan<F> {
    /// The chosen format's plan.
    pub fn chosen(&self) -> &FormatPlan<F> {
        &self.formats[self.chosen]
    }
}

/// One format of one part: each clip's frames and predicted error.
#[derive(Clone, Debug, PartialEq)]
pub struct FormatPlan<F> {
    /// The format.
    pub format: F,
    /// One candidate per clip, in clip order (empty when the format cannot be used).
    pub clips: Vec<ClipCandidate>,
    /// The bytes of the part's data in this format, over all clips.
    pub bytes: u64,
    /// True when every clip meets the budget.
    pub meets_budget: bool,
    /// Why the format cannot be used at all (a non-uniform scale for `QtF16`, a value out of f16 range), if so.
    pub unusable: Option<String>,
}

/// One clip in one format: the fewest frames found within the budget, or the most tried.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClipCandidate {
    /// Uniform intervals; the clip stores one more frame.
    pub intervals: u32,
    /// The frame rate, in Hz.
    pub rate_hz: f32,
    /// The bytes of the clip's frames.
    pub bytes: u64,
    /// The largest vertex error at these frames: for the chosen format, measured on every skinned vertex at every
    /// check time (with where it occurs); for the others, the search's upper bound (virtual vertices, and the
    /// skinned vertices of the joints whose bound passed the budget), with no time or vertex.
    pub predicted: ErrorAt,
    /// The chosen VAT format's measured largest normal angle in radians (as `distance`); `None` elsewhere.
    pub predicted_normal: Option<ErrorAt>,
    /// The jump at the loop seam, in metres (0 for a clip that does not loop).
    pub seam_jump: f32,
    /// True when the error, the normal angle and the seam jump are within their budgets.
    pub meets_budget: bool,
    /// True when the search stopped because more frames would no longer be cheaper than a format already found.
    pub capped: bool,
}

/// A device limit and what the plan needs of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LimitCheck {
    /// What is checked, and against which limit.
    pub what: &'static str,
    /// What the plan needs.
    pub needed: u64,
    /// The limit.
    pub limit: u64,
}

impl LimitCheck {
    /// True when the need is within the limit.
    pub fn fits(&self) -> bool {
        self.needed <= self.limit
    }
}

impl Plan {
    /// The bytes of every chosen part's data (BAT entries, VAT texels with their layout's padding, sockets).
    pub fn total_bytes(&self) -> u64 {
        let vat = match (&self.vat, &self.vat_layout) {
            (Some(v), Some(l)) => vat_bytes(v.chosen().format, l),
            (Some(v), None) => v.chosen().bytes,
            _ => 0,
        };
        self.bat.as_ref().map_or(0, |p| p.chosen().bytes) + vat + self.sockets.as_ref().map_or(0, |p| p.chosen().bytes)
    }

    /// True when every limit check passes.
    pub fn fits(&self) -> bool {
        self.limits.iter().all(LimitCheck::fits)
    }

    /// True when every chosen format meets the budget on every clip.
    pub fn meets_budget(&self) -> bool {
        self.bat.as_ref().is_none_or(|p| p.chosen().meets_budget)
            && self.vat.as_ref().is_none_or(|p| p.chosen().meets_budget)
            && self.sockets.as_ref().is_none_or(|p| p.chosen().meets_budget)
    }
}

/// The texel bytes of a VAT layout in `format`, saturating.
fn vat_bytes(format: VatFormat, l: &VatLayout) -> u64 {
    let texels = u64::from(l.width)
        .saturating_mul(u64::from(l.height))
        .saturating_mul(u64::from(l.layers));
    texels.saturating_mul(format.bytes_per_vertex() as u64)
}

/// Plans a bake of skeleton `options.skeleton` of `model`: for each part, each format it may use and each clip,
/// the fewest uniform frames whose vertex error against the exact clip is within the budget; then the cheapest
/// format over all clips. Nothing is encoded but what the measurements need.
///
/// # The search
///
/// A candidate (a clip, a format, a frame count) is checked at the stored frames, the midpoints between frames,
/// the clip's key times and, for a looping clip, the seam. At each time it compares the played-back palette with
/// the exact one on `anim_pose::VirtualVertices` (per skin joint, the corners of the bind-space box of the vertices
/// it moves), an upper bound of every skinned vertex's distance; only the vertices of joints whose bound passes the
/// budget are skinned (skin-pack's reference skinning) and compared. A VAT candidate is checked as the f32 BAT
/// (skinning is linear in the matrices, so mixing two skinned frames equals skinning the mixed palettes) against the
/// budget less the format's position quantization bound on the clip's box.
///
/// When the stored frames or the seam alone miss the budget, no rate helps and the format is dropped for the clip.
/// Otherwise the search predicts the count from the error's quadratic fall with the interval, gallops from there and
/// bisects to a count that meets the budget with its neighbour below missing it; then it tries the counts whose
/// frames land on the clip's key grid below it (a clip keyed at 30 Hz may meet the budget at 60 Hz and miss it at
/// 59 Hz). The error falls with the frame count almost everywhere but not strictly, so this is the smallest found,
/// not a proven minimum. Formats are searched finest first, each later one starting from the previous one's counts
/// and stopping where it would no longer be cheaper on the clip (`ClipCandidate::capped`).
///
/// The chosen format of each part is then measured on every skinned vertex (and, for a VAT, every normal) at every
/// check time; a clip that misses the budget there gets more frames, a sixteenth at a time, until it meets it or
/// reaches the rate limit.
///
/// # Errors
///
/// As [`crate::bake`].
pub fn plan(model: &Model, options: &BakeOptions, progress: &(dyn Fn(Progress) + Sync)) -> Result<Plan> {
    options.validate()?;
    let source = Source::new(model, options.skeleton)?;
    plan_source(&source, options, progress)
}

/// [`plan`] of a checked source.
pub(crate) fn plan_source(
    source: &Source<'_>,
    options: &BakeOptions,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<Plan> {
    let clips = source
        .clips
        .iter()
        .enumerate()
        .map(|(c, clip)| {
            Ok(PlannedClip {
                name: clip.name.clone(),
                duration: clip.duration,
                looping: loops(source, c, options)?,
                seam_distance: seam_distance(source, c)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let looping: Vec<bool> = clips.iter().map(|c| c.looping).collect();
    let sockets = socket_joints(source, options)?;
    let parts = [options.parts.bat, options.parts.vat, !sockets.is_empty()];
    let total = (source.clips.len() * parts.iter().filter(|&&p| p).count()) as u64;
    let done = std::sync::atomic::AtomicU64::new(0);
    let step = || {
        let d = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        progress(Progress {
            stage: Stage::Planning,
            done: d,
            total,
        });
    };
    let search = Search::new(source, options, &looping)?;
    let bat = if options.parts.bat {
        Some(search.bat(&step)?)
    } else {
        None
    };
    let vat = if options.parts.vat {
        Some(search.vat(&step)?)
    } else {
        None
    };
    let socket_plan = if sockets.is_empty() {
        None
    } else {
        Some(search.sockets(&sockets, &step)?)
    };
    let vertex_count = u32::try_from(source.vertex_count()).map_err(|_| Error::TooLarge { what: "vertices" })?;
    let skin_joint_count =
        u32::try_from(source.skeleton.skin_joint_count()).map_err(|_| Error::TooLarge { what: "skin joints" })?;
    let mut plan = Plan {
        skeleton: source.skeleton.name.clone(),
        budget_mm: options.budget_mm,
        vertex_count,
        skin_joint_count,
        clips,
        bat,
        vat,
        sockets: socket_plan,
        vat_layout: None,
        limits: Vec::new(),
    };
    check_limits(&mut plan, options);
    Ok(plan)
}

/// Fills the plan's VAT layout and limit checks.
fn check_limits(plan: &mut Plan, options: &BakeOptions) {
    let l = options.limits;
    let buffer = |what_binding, what_buffer, bytes: u64, out: &mut Vec<LimitCheck>| {
        out.push(LimitCheck {
            what: what_binding,
            needed: bytes,
            limit: l.max_storage_buffer_binding_size,
        });
        out.push(LimitCheck {
            what: what_buffer,
            needed: bytes,
            limit: l.max_buffer_size,
        });
    };
    if let Some(bat) = &plan.bat {
        buffer(
            "BAT entries (max_storage_buffer_binding_size)",
            "BAT entries (max_buffer_size)",
            bat.chosen().bytes,
            &mut plan.limits,
        );
    }
    if let Some(sockets) = &plan.sockets {
        buffer(
            "socket transforms (max_storage_buffer_binding_size)",
            "socket transforms (max_buffer_size)",
            sockets.chosen().bytes,
            &mut plan.limits,
        );
    }
    if let Some(vat) = &plan.vat {
        let frames: u64 = vat.chosen().clips.iter().map(|c| u64::from(c.intervals) + 1).sum();
        let d = l.max_texture_dimension_2d;
        let rows = u64::from(plan.vertex_count.div_ceil(options.vat_max_width.min(d).max(1)));
        plan.limits.push(LimitCheck {
            what: "rows of one VAT frame (max_texture_dimension_2d)",
            needed: rows,
            limit: u64::from(d),
        });
        if let Ok(frames) = u32::try_from(frames)
            && let Ok(layout) = VatLayout::new(plan.vertex_count, frames, options.vat_max_width.min(d), d)
        {
            plan.limits.push(LimitCheck {
                what: "VAT array layers (max_texture_array_layers)",
                needed: u64::from(layout.layers),
                limit: u64::from(l.max_texture_array_layers),
            });
            plan.vat_layout = Some(layout);
        } else {
            plan.limits.push(LimitCheck {
                what: "VAT frames (u32)",
                needed: frames,
                limit: u64::from(u32::MAX),
            });
        }
    }
}

/// Whether a candidate meets the budget; `Hopeless` when the stored frames or the loop seam alone miss it, which no
/// rate helps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    Meets,
    Misses,
    Hopeless,
}

/// One probed candidate.
#[derive(Clone, Copy, Debug)]
struct Outcome {
    verdict: Verdict,
    /// An upper bound of the largest vertex error (exact where vertices were skinned).
    bound: f32,
    /// An upper bound of the seam jump.
    seam_jump: f32,
}

/// The result of one search: the intervals, their outcome, and whether the cap stopped it.
struct Found {
    intervals: u32,
    outcome: Outcome,
    capped: bool,
}

/// The smallest interval count in `lo..=hi` that `measure` finds within `threshold`, starting from `guess` (see
/// [`plan`]). `capped_hi` tells whether `hi` is a cap below the rate limit.
fn search(
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
fn aligned_counts(keys: &[f32], duration: f32, hi: u32) -> Vec<u32> {
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
struct Search<'a> {
    source: &'a Source<'a>,
    options: &'a BakeOptions,
    looping: &'a [bool],
    /// The virtual vertices of every skin joint (bind-space boxes of the vertices it moves).
    virtual_vertices: VirtualVertices,
    /// Per skin joint, the vertices it moves.
    joint_vertices: Vec<Vec<u32>>,
}

impl<'a> Search<'a> {
    fn new(source: &'a Source<'a>, options: &'a BakeOptions, looping: &'a [bool]) -> Result<Self> {
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
        let hot = largest_distance(&s.out_a, &s.out_b).0;
        let hot = if hot.is_nan() { f32::INFINITY } else { hot };
        Ok(Compared {
            bound: cold.max(hot),
            meets: hot <= threshold,
        })
    }

    /// The record of clip `c` with `n` intervals, first frame 0.
    fn record(&self, c: usize, n: u32) -> ClipRecord {
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
    fn range(&self, c: usize) -> (u32, u32, u32) {
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
    fn format<F: Copy>(
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
        }
    }

    /// The decoded palettes of clip `c`'s `n + 1` frames in `format`.
    fn frames(&self, c: usize, n: u32, format: BatFormat) -> Result<Vec<Vec<Affine3A>>> {
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
                            format.check(m, j)?;
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

    /// Probes clip `c` at `n` intervals in `format` against `threshold`: the stored frames (quantization alone),
    /// the loop seam, then every other check time.
    fn probe(&self, c: usize, n: u32, format: BatFormat, threshold: f32) -> Result<Outcome> {
        let hopeless = |bound: f32, seam_jump: f32| Outcome {
            verdict: Verdict::Hopeless,
            bound,
            seam_jump,
        };
        if threshold <= 0.0 {
            return Ok(hopeless(f32::INFINITY, 0.0));
        }
        let record = self.record(c, n);
        let frames = self.frames(c, n, format)?;
        let frame_times: Vec<f32> = (0..=n).map(|k| record.frame_time(k)).collect();
        let at_frames = self.pruned(c, &record, &frames, &frame_times, threshold)?;
        if !at_frames.meets {
            return Ok(hopeless(at_frames.bound, 0.0));
        }
        let seam = if record.is_looping() {
            let mut s = self.scratch();
            self.compare(&frames[n as usize], &frames[0], threshold, &mut s)?
        } else {
            Compared::NONE
        };
        if !seam.meets {
            return Ok(hopeless(at_frames.bound, seam.bound));
        }
        let others: Vec<f32> = check_times(self.source, c, &record)
            .into_iter()
            .filter(|t| frame_times.binary_search_by(|f| f.total_cmp(t)).is_err())
            .collect();
        let between = self.pruned(c, &record, &frames, &others, threshold)?;
        Ok(Outcome {
            verdict: if between.meets { Verdict::Meets } else { Verdict::Misses },
            bound: at_frames.bound.max(between.bound),
            seam_jump: seam.bound,
        })
    }

    /// Raises a chosen candidate's intervals until its full measurement meets the budget (or the rate limit),
    /// and records that measurement.
    fn verify(
        &self,
        c: usize,
        cand: &mut ClipCandidate,
        frame_bytes: u64,
        normals: bool,
        mut measure: impl FnMut(u32) -> Result<(Measured, f32)>,
    ) -> Result<()> {
        let (_, hi, _) = self.range(c);
        let budget = self.options.budget_m();
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
                };
                return Ok(());
            }
            n = n.saturating_add((n / 16).max(1)).min(hi);
        }
    }

    /// The BAT part: every format the skeleton may use, finest first; then the cheapest that meets the budget, whose
    /// counts get the full skinned measurement.
    fn bat(&self, step: &(dyn Fn() + Sync)) -> Result<PartPlan<BatFormat>> {
        let source = self.source;
        let formats: Vec<BatFormat> = match self.options.bat_format {
            Some(f) => vec![f],
            None => vec![BatFormat::F32, BatFormat::Mat3x4F16, BatFormat::QtF16],
        };
        let uniform = choose_f16_format(source.skeleton, source.clips.iter().copied(), QT_F16_SCALE_TOLERANCE);
        let joints = source.skeleton.skin_joint_count() as u64;
        let thresholds = vec![self.options.budget_m(); source.clips.len()];
        let mut plans: Vec<FormatPlan<BatFormat>> = Vec::new();
        for format in formats {
            if format == BatFormat::QtF16 && uniform != F16Kind::QtF16 {
                plans.push(unusable(format, "the skeleton's scale is not uniform"));
                continue;
            }
            let previous = best_meeting(&plans).map(|p| p.clips.as_slice());
            let frame_bytes = joints * format.entry_size() as u64;
            match self.format(format, frame_bytes, &thresholds, previous, |c, n| {
                self.probe(c, n, format, thresholds[c])
            }) {
                Ok(p) => plans.push(p),
                Err(Error::Skin(e)) => plans.push(unusable(format, &e.to_string())),
                Err(e) => return Err(e),
            }
        }
        let mut part = choose_part(plans);
        let chosen = &mut part.formats[part.chosen];
        if chosen.unusable.is_none() {
            let (format, frame_bytes) = (chosen.format, joints * chosen.format.entry_size() as u64);
            for (c, cand) in chosen.clips.iter_mut().enumerate() {
                self.verify(c, cand, frame_bytes, false, |n| self.measure_bat(c, n, format))?;
                step();
            }
            *chosen = format_plan(chosen.format, std::mem::take(&mut chosen.clips));
        }
        Ok(part)
    }

    /// The full skinned measurement of the BAT of clip `c` at `n` intervals: playback mixes the decoded rows of two
    /// frames, and skinning is linear in the matrices, so it mixes the two frames' skinned vertices (the same up to
    /// f32 rounding).
    fn measure_bat(&self, c: usize, n: u32, format: BatFormat) -> Result<(Measured, f32)> {
        let record = self.record(c, n);
        let source = self.source;
        let frames = self.frames(c, n, format)?;
        let positions: Vec<Vec<Vec3>> = frames
            .par_iter()
            .map_init(
                || source.skinned(),
                |skinned, palette| -> Result<Vec<Vec3>> {
                    source.skin(palette, skinned)?;
                    Ok(skinned.positions.clone())
                },
            )
            .collect::<Result<_>>()?;
        let seam_jump = if record.is_looping() {
            largest_distance(&positions[0], &positions[positions.len() - 1]).0
        } else {
            0.0
        };
        let fv = FrameVertices {
            positions,
            normals: Vec::new(),
        };
        let times = check_times(source, c, &record);
        Ok((playback_error(source, c, &record, &fv, &times)?, seam_jump))
    }

    /// The VAT part: every format, finest first, searched as the f32 BAT with the budget less the format's position
    /// bound on the clip's box; then the cheapest that meets the budget, whose counts get the full measurement.
    fn vat(&self, step: &(dyn Fn() + Sync)) -> Result<PartPlan<VatFormat>> {
        let formats: Vec<VatFormat> = match self.options.vat_format {
            Some(f) => vec![f],
            None => vec![VatFormat::Precise, VatFormat::Standard, VatFormat::Compact],
        };
        let boxes = (0..self.source.clips.len())
            .map(|c| self.clip_box(c))
            .collect::<Result<Vec<_>>>()?;
        let vertices = self.source.vertex_count() as u64;
        let mut plans: Vec<FormatPlan<VatFormat>> = Vec::new();
        for format in formats {
            let previous = best_meeting(&plans).map(|p| p.clips.as_slice());
            let frame_bytes = vertices * format.bytes_per_vertex() as u64;
            let thresholds: Vec<f32> = boxes
                .iter()
                .map(|b| self.options.budget_m() - vat_position_error_bound(format, b.min, b.max))
                .collect();
            let p = self.format(format, frame_bytes, &thresholds, previous, |c, n| {
                self.probe(c, n, BatFormat::F32, thresholds[c])
            })?;
            plans.push(p);
        }
        let mut part = choose_part(plans);
        let chosen = &mut part.formats[part.chosen];
        let (format, frame_bytes) = (chosen.format, vertices * chosen.format.bytes_per_vertex() as u64);
        for (c, cand) in chosen.clips.iter_mut().enumerate() {
            self.verify(c, cand, frame_bytes, true, |n| self.measure_vat(c, n, format))?;
            step();
        }
        *chosen = format_plan(chosen.format, std::mem::take(&mut chosen.clips));
        Ok(part)
    }

    /// The box of clip `c`'s exactly skinned vertices at its frames at the first guess's rate and its key times.
    fn clip_box(&self, c: usize) -> Result<Aabb> {
        let (_, _, guess) = self.range(c);
        let record = self.record(c, guess);
        let times = check_times(self.source, c, &record);
        let source = self.source;
        times
            .par_iter()
            .map_init(
                || (source.pose_scratch(), source.skinned()),
                |(pose, skinned), &t| -> Result<Aabb> {
                    source.pose(c, t, pose)?;
                    source.skin(&pose.palette, skinned)?;
                    Ok(Aabb::from_points(&skinned.positions))
                },
            )
            .try_reduce(|| Aabb::EMPTY, |a, b| Ok(a.union(b)))
    }

    /// The full measurement of the VAT of clip `c` at `n` intervals in `format`: the exactly skinned frames,
    /// quantized in their box, decoded and mixed, positions and normals.
    fn measure_vat(&self, c: usize, n: u32, format: VatFormat) -> Result<(Measured, f32)> {
        let record = self.record(c, n);
        let exact = skin_frames(self.source, c, &record)?;
        let b = crate::bake::frames_box(&exact);
        let quant = VatQuant::new(b.min, b.max, format);
        let [s0, s1] = format.plane_texel_sizes();
        let (mut t0, mut t1) = (vec![0u8; s0], vec![0u8; s1]);
        let mut fv = FrameVertices {
            positions: Vec::with_capacity(exact.len()),
            normals: Vec::with_capacity(exact.len()),
        };
        for frame in &exact {
            let mut ps = Vec::with_capacity(frame.positions.len());
            let mut ns = Vec::with_capacity(frame.positions.len());
            for (p, nrm) in frame.positions.iter().zip(&frame.normals) {
                format.encode(*p, *nrm, &quant, [&mut t0, &mut t1]);
                let (dp, dn) = format.decode(&t0, &t1, &quant);
                ps.push(dp);
                ns.push(dn);
            }
            fv.positions.push(ps);
            fv.normals.push(ns);
        }
        let seam_jump = if record.is_looping() {
            largest_distance(&fv.positions[0], &fv.positions[fv.positions.len() - 1]).0
        } else {
            0.0
        };
        let times = check_times(self.source, c, &record);
        Ok((playback_error(self.source, c, &record, &fv, &times)?, seam_jump))
    }

    /// The sockets: f32 transforms at the fewest frames that keep points at the socket reach within the budget.
    fn sockets(&self, joints: &[u16], step: &(dyn Fn() + Sync)) -> Result<PartPlan<SocketFormat>> {
        let frame_bytes = joints.len() as u64 * 48;
        let cubes = VirtualVertices::cubes(joints.len(), self.options.socket_reach_m);
        let thresholds = vec![self.options.budget_m(); self.source.clips.len()];
        let p = self.format(SocketFormat::F32, frame_bytes, &thresholds, None, |c, n| {
            self.measure_sockets(c, n, joints, &cubes)
        })?;
        (0..self.source.clips.len()).for_each(|_| step());
        Ok(PartPlan {
            chosen: 0,
            formats: vec![p],
        })
    }

    /// Measures socket transforms of clip `c` at `n` intervals on cubes at the socket reach.
    fn measure_sockets(&self, c: usize, n: u32, joints: &[u16], cubes: &VirtualVertices) -> Result<Outcome> {
        let record = self.record(c, n);
        let source = self.source;
        let socket = |model: &[Affine3A], out: &mut Vec<Affine3A>| {
            out.clear();
            out.extend(joints.iter().map(|&j| source.root * model[usize::from(j)]));
        };
        let frames: Vec<Vec<Affine3A>> = (0..record.frame_count)
            .into_par_iter()
            .map_init(
                || source.pose_scratch(),
                |pose, k| -> Result<Vec<Affine3A>> {
                    let model = source.pose(c, record.frame_time(k), pose)?;
                    let mut out = Vec::new();
                    socket(model, &mut out);
                    Ok(out)
                },
            )
            .collect::<Result<_>>()?;
        let times = check_times(source, c, &record);
        let error = times
            .par_iter()
            .map_init(
                || (source.pose_scratch(), Vec::new(), Vec::new()),
                |(pose, exact, played), &t| -> Result<ErrorAt> {
                    let local = record.local_time(t);
                    let model = source.pose(c, local, pose)?;
                    socket(model, exact);
                    let pair = record.frame_at(t);
                    let (a, b) = (&frames[pair.frame as usize], &frames[pair.frame as usize + 1]);
                    played.clear();
                    played.extend(a.iter().zip(b).map(|(a, b)| lerp_affine(a, b, pair.fraction)));
                    let e = cubes.largest_distance(played, exact)?;
                    Ok(ErrorAt {
                        distance: e.distance,
                        time: local,
                        vertex: e.skin_joint as u32,
                    })
                },
            )
            .try_reduce(ErrorAt::default, |a, b| Ok(a.max(b)))?;
        Ok(Outcome {
            verdict: if error.distance <= self.options.budget_m() {
                Verdict::Meets
            } else {
                Verdict::Misses
            },
            bound: error.distance,
            seam_jump: 0.0,
        })
    }
}

/// `mix` of two matrices element by element, as the shader mixes rows.
fn lerp_affine(a: &Affine3A, b: &Affine3A, f: f32) -> Affine3A {
    let (ca, cb) = (a.to_cols_array(), b.to_cols_array());
    Affine3A::from_cols_array(&std::array::from_fn(|i| ca[i] * (1.0 - f) + cb[i] * f))
}

/// A format that cannot be used.
fn unusable<F>(format: F, why: &str) -> FormatPlan<F> {
    FormatPlan {
        format,
        clips: Vec::new(),
        bytes: 0,
        meets_budget: false,
        unusable: Some(why.to_owned()),
    }
}

/// A format plan of candidates.
fn format_plan<F>(format: F, clips: Vec<ClipCandidate>) -> FormatPlan<F> {
    FormatPlan {
        format,
        bytes: clips.iter().map(|c| c.bytes).fold(0, u64::saturating_add),
        meets_budget: clips.iter().all(|c| c.meets_budget),
        clips,
        unusable: None,
    }
}

/// The cheapest usable format that meets the budget so far.
fn best_meeting<F>(plans: &[FormatPlan<F>]) -> Option<&FormatPlan<F>> {
    plans
        .iter()
        .filter(|p| p.unusable.is_none() && p.meets_budget)
        .min_by_key(|p| p.bytes)
}

/// The part's choice: the cheapest format that meets the budget on every clip; when none does, the usable format
/// whose worst clip misses the budget least.
fn choose_part<F>(formats: Vec<FormatPlan<F>>) -> PartPlan<F> {
    let meeting = formats
        .iter()
        .enumerate()
        .filter(|(_, p)| p.unusable.is_none() && p.meets_budget)
        .min_by_key(|(_, p)| p.bytes)
        .map(|(i, _)| i);
    let chosen = meeting.unwrap_or_else(|| {
        formats
            .iter()
            .enumerate()
            .filter(|(_, p)| p.unusable.is_none())
            .min_by(|(_, a), (_, b)| worst(a).total_cmp(&worst(b)))
            .map_or(0, |(i, _)| i)
    });
    PartPlan { chosen, formats }
}

/// The largest predicted error of a format plan.
fn worst<F>(p: &FormatPlan<F>) -> f32 {
    p.clips.iter().map(|c| c.predicted.distance).fold(0.0, f32::max)
}

/// The chosen intervals of a part.
pub(crate) fn chosen_intervals<F>(p: &PartPlan<F>) -> Vec<u32> {
    p.chosen().clips.iter().map(|c| c.intervals).collect()
}
