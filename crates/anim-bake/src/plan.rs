//! The plan (a dry run): each clip's frame rate and each part's format, the cheapest that keep the measured vertex
//! error within the budget, with the sizes and whether they fit the device.
//!
//! The search over one clip's interval counts lives in [`count_search`], the state every part's search shares (the
//! pruned palette comparison, probes and verification) in [`search`], and the BAT, VAT and socket searches in
//! [`parts`]; this file holds the plan's types, the entry point, the device limits and the choice among formats.

mod count_search;
mod parts;
mod search;

use anim_pose::Model;

use self::search::Search;
use crate::bake::{loops, seam_distance, socket_joints};
use crate::measure::ErrorAt;
use crate::source::Source;
use crate::{BakeOptions, BatFormat, Error, Progress, ResolvedBudget, Result, Stage, VatFormat, VatLayout};

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
    /// The budget: the distance in model units every part of every clip is held to, the model's extent and the
    /// option it was resolved from.
    pub budget: ResolvedBudget,
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
    /// The largest distance between a vertex exactly skinned at time 0 and at the duration, in model units.
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
    /// The largest vertex error at these frames, in model units, always finite: for the chosen format, measured on
    /// every skinned vertex at every check time (with where it occurs); for the others, the search's upper bound
    /// over every check time (virtual vertices, and the skinned vertices of the joints whose bound passed the
    /// budget; for a VAT format, that of the f32 playback plus the format's position quantization bound on the
    /// clip's box), with no time or vertex.
    pub predicted: ErrorAt,
    /// The chosen VAT format's measured largest normal angle in radians (as `distance`); `None` elsewhere.
    pub predicted_normal: Option<ErrorAt>,
    /// The jump at the loop seam, in model units (0 for a clip that does not loop).
    pub seam_jump: f32,
    /// True when the error, the normal angle and the seam jump are within their budgets.
    pub meets_budget: bool,
    /// True when the search stopped because more frames would no longer be cheaper than a format already found.
    pub capped: bool,
    /// Why the candidate misses the budget, when it does and the search was not `capped`.
    pub miss: Option<Miss>,
}

/// Why a clip misses the budget in a format. Where no rate helps, the candidate has the most frames the rate
/// allows, where the error is least (or the count the search tried, where a cheaper format already meets the budget
/// on the clip).
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Miss {
    /// No rate helps: the format's rounding at the stored frames already exceeds the budget (an f16 palette on a
    /// model whose translations are large next to the budget, for example).
    Rounding,
    /// No rate helps: the VAT format's position quantization bound on the clip's box, `bound` model units, is at
    /// least the budget.
    Quantization {
        /// The bound, in model units.
        bound: f32,
    },
    /// No rate helps: the stored frames jump at the loop seam by more than the budget.
    Seam,
    /// The most frames the rate options allow (`max_hz`, or the fixed rate) still miss the budget.
    Rate,
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
/// The budget is resolved first, once, to a distance in model units (`Plan::budget`): a relative or pixel budget
/// scales with the model's extent, the longest side of its rest pose's box (see [`crate::Budget`]).
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
/// When the stored frames or the seam alone miss the budget (or, for a VAT format, its quantization bound alone
/// does), no rate helps: the candidate takes the most frames the rate allows, where its error is least (or keeps the
/// count it tried where a cheaper format already meets the budget on the clip), with its upper bound over every
/// check time and the reason ([`Miss`]). Otherwise the search predicts the count from the error's quadratic fall
/// with the interval, gallops from there and bisects to a count that meets the budget with its neighbour below
/// missing it; then it tries the counts whose frames land on the clip's key grid below it (a clip keyed at 30 Hz
/// may meet the budget at 60 Hz and miss it at 59 Hz). The error falls with the frame count almost everywhere but not strictly, so this is the smallest found,
/// not a proven minimum. Formats are searched finest first, each later one starting from the previous one's counts
/// and stopping where it would no longer be cheaper on the clip (`ClipCandidate::capped`).
///
/// The chosen format of each part is then measured on every skinned vertex (and, for a VAT, every normal) at every
/// check time; a clip that misses the budget there gets more frames, a sixteenth at a time, until it meets it or
/// reaches the rate limit. When no format of a part meets the budget, the part takes the one whose worst clip
/// misses it least, comparing the same upper bounds.
///
/// Every error the plan lists is finite: a format that cannot be used at all (a non-uniform scale for `QtF16`,
/// palette values past the f16 range) is listed with `FormatPlan::unusable` and no clips.
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
    let budget = options.budget.resolve(source.rest_extent()?)?;
    let clips = source
        .clips
        .iter()
        .enumerate()
        .map(|(c, clip)| {
            Ok(PlannedClip {
                name: clip.name.clone(),
                duration: clip.duration,
                looping: loops(source, c, options, budget.distance)?,
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
    let search = Search::new(source, options, budget.distance, &looping)?;
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
        budget,
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
