//! What a bake measured: each clip's largest vertex error against the exact clip, per part, and where it occurs.

use crate::{BatFormat, ErrorAt, ResolvedBudget, VatFormat};

/// The measured errors of a finished bake, from [`crate::bake`]. Distances are in model units (see [`crate::Budget`]).
#[derive(Clone, Debug, PartialEq)]
pub struct BakeReport {
    /// The budget: its distance in model units, the model's extent and the option it was resolved from.
    pub budget: ResolvedBudget,
    /// The BAT's format, when the bake has a BAT.
    pub bat_format: Option<BatFormat>,
    /// The VAT's format, when the bake has a VAT.
    pub vat_format: Option<VatFormat>,
    /// One report per clip, in clip order.
    pub clips: Vec<ClipReport>,
    /// The bytes of every part's data (entries, texels, transforms), not counting the file's tables.
    pub data_bytes: u64,
}

impl BakeReport {
    /// True when every part of every clip is within the budget.
    pub fn within_budget(&self) -> bool {
        self.clips.iter().all(ClipReport::within_budget)
    }

    /// The largest vertex error over every clip and part, in model units.
    pub fn largest_error(&self) -> f32 {
        self.clips
            .iter()
            .flat_map(|c| [c.bat, c.vat, c.sockets])
            .flatten()
            .map(|p| p.error.distance)
            .fold(0.0, f32::max)
    }

    /// [`BakeReport::largest_error`] in thousandths of a model unit: millimetres for a model in metres.
    pub fn largest_error_mm(&self) -> f32 {
        self.largest_error() * 1e3
    }
}

/// One clip's measured errors.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClipReport {
    /// The clip's name.
    pub name: String,
    /// Whether the clip loops.
    pub looping: bool,
    /// The budget, in model units.
    pub budget: f32,
    /// The BAT's measurement, when the bake has a BAT.
    pub bat: Option<PartReport>,
    /// The VAT's measurement, when the bake has a VAT.
    pub vat: Option<PartReport>,
    /// The sockets' measurement (points at the socket reach), when the bake has sockets; the vertex is the socket.
    pub sockets: Option<PartReport>,
    /// The VAT's largest normal angle in radians (as `distance`), when the bake has a VAT.
    pub vat_normal: Option<ErrorAt>,
}

impl ClipReport {
    /// True when every part is within the budget, its loop seam included.
    pub fn within_budget(&self) -> bool {
        [self.bat, self.vat, self.sockets]
            .iter()
            .flatten()
            .all(|p| p.error.distance <= self.budget && p.seam_jump <= self.budget)
    }
}

/// One part of one clip, measured.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PartReport {
    /// The clip's stored frames in this part.
    pub frames: u32,
    /// The clip's frame rate in this part, in Hz.
    pub rate_hz: f32,
    /// The largest distance between played-back and exactly skinned vertices, and where.
    pub error: ErrorAt,
    /// For a looping clip, the largest distance between a vertex at the last stored frame and at frame 0, in model
    /// units: the jump when playback wraps (0 for a clip that does not loop).
    pub seam_jump: f32,
}
