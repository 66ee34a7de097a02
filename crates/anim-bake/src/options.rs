//! What to bake, and the limits a bake must fit.

use anim_pose::Looping;

use crate::{BatFormat, Budget, DEFAULT_MAX_TEXTURE_WIDTH, Error, Result, VatFormat};

/// The fewest time segments a bake cuts each clip's bounds into: a policy of the baker (the file format and
/// `Bake::validate` accept any count from 1), so that a culler's segment boxes are tighter than the clip's box.
pub const MIN_SEGMENTS: u32 = 8;

/// The device limits a bake is checked against: the wgpu `Limits` fields that bound its buffers and textures, with
/// wgpu's default values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceLimits {
    /// The largest width and height of a 2D texture (wgpu default 8192).
    pub max_texture_dimension_2d: u32,
    /// The most layers of a 2D array texture (wgpu default 256).
    pub max_texture_array_layers: u32,
    /// The largest storage buffer binding, in bytes (wgpu default 128 MiB).
    pub max_storage_buffer_binding_size: u64,
    /// The largest buffer, in bytes (wgpu default 256 MiB).
    pub max_buffer_size: u64,
}

impl Default for DeviceLimits {
    fn default() -> Self {
        Self {
            max_texture_dimension_2d: 8192,
            max_texture_array_layers: 256,
            max_storage_buffer_binding_size: 134_217_728,
            max_buffer_size: 268_435_456,
        }
    }
}

/// How each clip's frame rate is chosen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RateChoice {
    /// The fewest uniform frames, between `min_hz` and `max_hz`, whose measured vertex error is within the budget.
    Budget {
        /// The lowest rate considered, in Hz (a clip always gets at least one interval).
        min_hz: f32,
        /// The highest rate considered, in Hz; when even this misses the budget, the bake keeps it and its report
        /// says so.
        max_hz: f32,
    },
    /// A fixed rate in Hz: each clip gets `⌈duration · rate⌉` intervals (at least one).
    Fixed(f32),
}

/// The parts a bake holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parts {
    /// The bone-animation bake (palettes per frame).
    pub bat: bool,
    /// The vertex-animation bake (vertices per frame).
    pub vat: bool,
}

/// What [`crate::plan`] and [`crate::bake`] do.
#[derive(Clone, Debug, PartialEq)]
pub struct BakeOptions {
    /// The skeleton (glTF skin) of the model to bake; its clips and the meshes its bindings draw are baked.
    pub skeleton: usize,
    /// The largest vertex error against the exact clip: an absolute distance in model units, a fraction of the
    /// model's extent, or pixels on screen (see [`Budget`]). Default
    /// `Budget::Relative(`[`DEFAULT_RELATIVE_BUDGET`](crate::DEFAULT_RELATIVE_BUDGET)`)`, 1/1800 of the model's
    /// extent: 1 mm on a character 1.8 m tall, and the same share of any model in any units.
    pub budget: Budget,
    /// The largest angle between a VAT normal and the exactly skinned one, in radians. Default 0.035 (2°): an
    /// 8-bit octahedral code turns a normal by at most 0.0167 rad, which leaves the rest for interpolation.
    pub normal_budget_rad: f32,
    /// The parts to bake. Default both.
    pub parts: Parts,
    /// The BAT entry format, or `None` to choose the cheapest within the budget.
    pub bat_format: Option<BatFormat>,
    /// The VAT format, or `None` to choose the cheapest within the budget.
    pub vat_format: Option<VatFormat>,
    /// The joints whose transforms are baked as sockets, by name. Default none.
    pub sockets: Vec<String>,
    /// How far from a socket's joint an attachment reaches, in model units: the socket's frame rate keeps points at
    /// this distance within the budget. Default 0.5 (metres, for a model in metres; it does not follow the model's
    /// extent).
    pub socket_reach_m: f32,
    /// How each clip's frame rate is chosen. Default `Budget { min_hz: 1, max_hz: 120 }`.
    pub rate: RateChoice,
    /// Whether clips loop. Default `Looping::Auto`: a clip loops when its vertices at 0 and at the duration are
    /// within the budget of each other.
    pub looping: Looping,
    /// Time segments per clip for the segment bounds, at least [`MIN_SEGMENTS`]. Default 8.
    pub segments: u32,
    /// The widest VAT texture row; rows wrap before it. Default 8192.
    pub vat_max_width: u32,
    /// The device limits the plan checks.
    pub limits: DeviceLimits,
}

impl Default for BakeOptions {
    fn default() -> Self {
        Self {
            skeleton: 0,
            budget: Budget::default(),
            normal_budget_rad: 0.035,
            parts: Parts { bat: true, vat: true },
            bat_format: None,
            vat_format: None,
            sockets: Vec::new(),
            socket_reach_m: 0.5,
            rate: RateChoice::Budget {
                min_hz: 1.0,
                max_hz: 120.0,
            },
            looping: Looping::Auto,
            segments: MIN_SEGMENTS,
            vat_max_width: DEFAULT_MAX_TEXTURE_WIDTH,
            limits: DeviceLimits::default(),
        }
    }
}

impl BakeOptions {
    /// Checks every option's range.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidOption`] naming the first option out of range (for the budget, its field: see
    /// [`Budget::validate`]).
    pub fn validate(&self) -> Result<()> {
        self.budget.validate()?;
        positive("normal_budget_rad", self.normal_budget_rad)?;
        positive("socket_reach_m", self.socket_reach_m)?;
        match self.rate {
            RateChoice::Budget { min_hz, max_hz } => {
                positive("rate min_hz", min_hz)?;
                positive("rate max_hz", max_hz)?;
                if min_hz > max_hz {
                    return Err(Error::InvalidOption {
                        what: "rate min_hz",
                        value: f64::from(min_hz),
                        rule: "must not exceed max_hz",
                    });
                }
            }
            RateChoice::Fixed(hz) => positive("fixed rate", hz)?,
        }
        if self.segments < MIN_SEGMENTS {
            return Err(Error::InvalidOption {
                what: "segments",
                value: f64::from(self.segments),
                rule: "must be at least 8",
            });
        }
        if self.vat_max_width == 0 {
            return Err(Error::InvalidOption {
                what: "vat_max_width",
                value: 0.0,
                rule: "must be at least 1",
            });
        }
        if !self.parts.bat && !self.parts.vat && self.sockets.is_empty() {
            return Err(Error::InvalidOption {
                what: "parts",
                value: 0.0,
                rule: "a bake needs a BAT, a VAT or sockets",
            });
        }
        Ok(())
    }
}

/// What a running bake reports to its progress callback.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// What is running.
    pub stage: Stage,
    /// Steps done.
    pub done: u64,
    /// Steps in all (the same for every call of one stage).
    pub total: u64,
}

/// The stages of a bake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stage {
    /// Choosing each clip's rate and each part's format (one step per clip and part).
    Planning,
    /// Encoding frames (one step per clip and part).
    Encoding,
    /// Measuring the encoded bake against the exact clips (one step per clip and part).
    Measuring,
}

/// `Ok` when `v` is finite and positive, else [`Error::InvalidOption`] naming `what`.
pub(crate) fn positive(what: &'static str, v: f32) -> Result<()> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(Error::InvalidOption {
            what,
            value: f64::from(v),
            rule: "must be finite and positive",
        })
    }
}
