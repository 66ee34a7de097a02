//! What an instance is: its handle, its description (transform, animation state, custom data, flags) and the
//! per-instance LOD and tier state that culling writes.

use glam::{Quat, Vec3, Vec4};

/// A stable, generational reference to one instance of an [`InstanceStore`](crate::InstanceStore).
///
/// A handle stays valid while its instance lives, whatever happens to other instances (removals swap
/// instances around in storage; the handle follows). After removal the handle is stale for ever: its slot in
/// the handle table is reused with a new generation, and the old handle then gives
/// [`Error::StaleHandle`](crate::Error::StaleHandle), never the new instance's data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Handle {
    /// The slot in the store's handle table.
    pub index: u32,
    /// The slot's generation when the handle was made. Live generations are odd; zero is never live.
    pub generation: u32,
}

/// The id of a draw group: one (mesh, material) pair with its own instances and clusters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct GroupId(pub u32);

/// An instance's animation state. Clips are indices into its draw group's clip bounds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AnimState {
    /// The clip playing.
    pub clip: u32,
    /// When the clip started, in the animation system's time (seconds). Any finite value.
    pub start_time: f32,
    /// Playback speed, 1 = normal. Any finite value (negative plays backwards).
    pub speed: f32,
    /// The clip being crossfaded to, if any. Culling covers both clips' bounds while it is set.
    pub fade_target: Option<u32>,
    /// The weight of `fade_target`, in `[0, 1]`.
    pub fade_weight: f32,
}

impl AnimState {
    /// Clip `clip` from time zero at normal speed, with no crossfade.
    pub const fn clip(clip: u32) -> Self {
        Self {
            clip,
            start_time: 0.0,
            speed: 1.0,
            fade_target: None,
            fade_weight: 0.0,
        }
    }
}

/// Everything the caller sets about an instance.
///
/// Validity rules, checked by every store operation before anything changes: every float is finite;
/// `rotation` has a length within 1e-3 of 1 (it is stored renormalised); `scale > 0`; `anim.clip` and
/// `anim.fade_target` are known to the group; `anim.fade_weight` is in `[0, 1]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InstanceDesc {
    /// World position of the instance's origin.
    pub position: Vec3,
    /// World rotation.
    pub rotation: Quat,
    /// Uniform scale.
    pub scale: f32,
    /// Animation state.
    pub anim: AnimState,
    /// Tint or custom data, passed through to the GPU record untouched.
    pub custom: Vec4,
    /// Caller-defined flags, passed through untouched.
    pub flags: u32,
}

impl InstanceDesc {
    /// An instance at `position`, unrotated, unit scale, playing `clip`, white tint, no flags.
    pub fn at(position: Vec3, clip: u32) -> Self {
        Self {
            position,
            rotation: Quat::IDENTITY,
            scale: 1.0,
            anim: AnimState::clip(clip),
            custom: Vec4::ONE,
            flags: 0,
        }
    }
}

/// A representation tier: how an instance's pose reaches the GPU (see the pipeline design).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Tier {
    /// Its own sampled, blended pose.
    Unique = 0,
    /// A shared pose-pool slot pair.
    Pooled = 1,
    /// Baked bone animation played back on the GPU.
    Baked = 2,
    /// Vertex animation texture.
    Vat = 3,
}

impl Tier {
    /// Every tier, finest first.
    pub const ALL: [Tier; 4] = [Tier::Unique, Tier::Pooled, Tier::Baked, Tier::Vat];

    /// The tier with index `i` (0 to 3); larger values clamp to [`Tier::Vat`].
    pub const fn from_index(i: u8) -> Self {
        match i {
            0 => Tier::Unique,
            1 => Tier::Pooled,
            2 => Tier::Baked,
            _ => Tier::Vat,
        }
    }
}

/// The per-instance result of tiering, kept from frame to frame for hysteresis. 4 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct TierState {
    /// The LOD level, 0 = finest.
    pub lod: u8,
    /// The representation tier, as a [`Tier`] index.
    pub tier: u8,
    /// The animation update-rate divisor's log2: the instance is updated every `1 << rate_log2` frames.
    pub rate_log2: u8,
    /// [`TierState::VISIBLE`] and [`TierState::INTERPOLATE`].
    pub flags: u8,
}

const _: () = assert!(std::mem::size_of::<TierState>() == 4);

impl TierState {
    /// Set when the last culling run found the instance visible.
    pub const VISIBLE: u8 = 1;
    /// Set when the instance is updated at a divisor above 1: the animation system should interpolate
    /// between its last two poses so that distant crowds do not stutter.
    pub const INTERPOLATE: u8 = 2;
    /// The state given to a newly added instance, and to an instance culled this frame: not visible, slowest
    /// update rate (divisor 8) with interpolation. A new instance starts at LOD 0 and the unique tier;
    /// its first visible frame picks its levels with hysteresis from there.
    pub const HIDDEN: Self = Self {
        lod: 0,
        tier: 0,
        rate_log2: 3,
        flags: Self::INTERPOLATE,
    };

    /// The representation tier.
    pub const fn tier(self) -> Tier {
        Tier::from_index(self.tier)
    }

    /// The animation update-rate divisor: 1, 2, 4 or 8.
    pub const fn rate_divisor(self) -> u32 {
        1 << self.rate_log2
    }

    /// True when the last culling run found the instance visible.
    pub const fn is_visible(self) -> bool {
        self.flags & Self::VISIBLE != 0
    }

    /// True when the instance should be interpolated (its rate divisor is above 1).
    pub const fn interpolate(self) -> bool {
        self.flags & Self::INTERPOLATE != 0
    }
}

/// A copy of one instance's data, as returned by [`InstanceStore::get`](crate::InstanceStore::get).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Instance {
    /// Its draw group.
    pub group: GroupId,
    /// Its index in the group's storage: the number visible lists hold. It changes when instances are
    /// removed or reassigned; the handle does not.
    pub slot: u32,
    /// What the caller set (the rotation renormalised).
    pub desc: InstanceDesc,
    /// LOD and tier from the last culling run.
    pub state: TierState,
}
