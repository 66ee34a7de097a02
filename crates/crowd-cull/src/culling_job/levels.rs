//! LOD, tier and update-rate picks with hysteresis: a group's level edges splatted for four instances at a
//! time, and the bulk pick for a cluster whose members all land in one level band.

use glam::Vec4;

use super::chunk::Planes;
use crate::bounds::Aabb;
use crate::group::{GroupDesc, LevelTable, SoaSphere};
use crate::instance::TierState;
use crate::limits::{MAX_LODS, RATE_COUNT, TIER_COUNT};

pub(super) struct Levels {
    pub(super) lod: LevelTable,
    pub(super) tier: LevelTable,
    pub(super) rate: LevelTable,
    pub(super) edges: Edges,
}

/// `2^23`: added to a whole number below it, it leaves that number in the low mantissa bits.
const MAGIC: f32 = 8_388_608.0;

/// A group's LOD, tier and rate boundaries, splatted: the same edges as its [`LevelTable`]s (`t * (1 - h)`
/// and `t * (1 + h)`, computed the same way), for a per-instance path that stays in float lanes.
pub(super) struct Edges {
    lod_lo: [Vec4; MAX_LODS - 1],
    lod_hi: [Vec4; MAX_LODS - 1],
    lods: usize,
    tier_lo: [Vec4; TIER_COUNT - 1],
    tier_hi: [Vec4; TIER_COUNT - 1],
    rate_lo: [Vec4; RATE_COUNT - 1],
    rate_hi: [Vec4; RATE_COUNT - 1],
}

impl Edges {
    pub(super) fn new(desc: &GroupDesc) -> Self {
        let h = desc.hysteresis;
        let lo = |t: f32| Vec4::splat(t * (1.0 - h));
        let hi = |t: f32| Vec4::splat(t * (1.0 + h));
        let mut lod_lo = [Vec4::ZERO; MAX_LODS - 1];
        let mut lod_hi = [Vec4::ZERO; MAX_LODS - 1];
        for (i, &t) in desc.lod_thresholds.iter().take(MAX_LODS - 1).enumerate() {
            lod_lo[i] = lo(t);
            lod_hi[i] = hi(t);
        }
        Self {
            lod_lo,
            lod_hi,
            lods: desc.lod_thresholds.len().min(MAX_LODS - 1),
            tier_lo: desc.tier_thresholds.map(lo),
            tier_hi: desc.tier_thresholds.map(hi),
            rate_lo: desc.rate_thresholds.map(lo),
            rate_hi: desc.rate_thresholds.map(hi),
        }
    }

    /// The new levels of four instances with screen sizes `s` whose previous LOD, tier and rate levels are
    /// `prev`: `prev.clamp(L, H)` per table, with `L` and `H` of [`LevelTable::bounds4`] (`max` then `min`, the
    /// closed form of hysteresis). Returns, per lane, the visible instance's new [`TierState`] as a little-endian
    /// `[lod, tier, rate, flags]` word, and the bucket `lod * TIER_COUNT + tier`.
    ///
    /// Levels are counted, clamped and packed in float lanes, all whole numbers far below `2^23`: adding
    /// [`MAGIC`] leaves each in the low mantissa bits, which are read as integers with no float-to-integer
    /// conversion (Rust's saturating `as` costs compares per value).
    #[inline(always)]
    pub(super) fn levels4(&self, s: Vec4, prev: [Vec4; 3]) -> ([u32; 4], [u32; 4]) {
        #[inline(always)]
        fn clamp(s: Vec4, lo: &[Vec4], hi: &[Vec4], prev: Vec4) -> Vec4 {
            let mut l = Vec4::ZERO;
            let mut h = Vec4::ZERO;
            for (lo, hi) in lo.iter().zip(hi) {
                l += Vec4::select(s.cmplt(*lo), Vec4::ONE, Vec4::ZERO);
                h += Vec4::select(s.cmplt(*hi), Vec4::ONE, Vec4::ZERO);
            }
            prev.max(l).min(h)
        }
        let lod = clamp(s, &self.lod_lo[..self.lods], &self.lod_hi[..self.lods], prev[0]);
        let tier = clamp(s, &self.tier_lo, &self.tier_hi, prev[1]);
        let rate = clamp(s, &self.rate_lo, &self.rate_hi, prev[2]);
        let magic = Vec4::splat(MAGIC);
        let word = lod + tier * 256.0 + rate * 65_536.0 + magic;
        // The flags ride above the bucket: `VISIBLE`, and `INTERPOLATE` when the rate is above 1.
        let visible = f32::from(TierState::VISIBLE);
        let flags = Vec4::select(
            rate.cmpgt(Vec4::ZERO),
            Vec4::splat(visible + f32::from(TierState::INTERPOLATE)),
            Vec4::splat(visible),
        );
        let bucket = lod * TIER_COUNT as f32 + tier + flags * 256.0 + magic;
        let (word, bucket) = (word.to_array(), bucket.to_array());
        let mut states = [0; 4];
        let mut buckets = [0; 4];
        for l in 0..4 {
            let (w, b) = (word[l].to_bits(), bucket[l].to_bits());
            states[l] = (w & 0x00FF_FFFF) | (b & 0xFF00) << 16;
            buckets[l] = b & 0xFF;
        }
        (states, buckets)
    }
}
/// The levels every member of a cluster wholly inside the frustum gets, when they are the same for all of them
/// whatever their previous levels; `None` otherwise (the members then take the per-instance path).
///
/// Each member's screen size `r * proj_scale / depth` lies between the smallest radius over the largest depth
/// of the cluster's box and the largest radius over the smallest depth (the box holds every member's centre).
/// Both ends are widened by far more than the rounding of the per-instance arithmetic. When, for each of the
/// LOD, tier and rate tables, both ends give the same lower and upper level bounds `L == H`, every member's
/// bounds are that level too (the bounds decrease with screen size), so `prev.clamp(L, H)` is that level for
/// every previous level: exactly what the per-instance path computes.
#[inline]
pub(super) fn uniform_levels(
    aabb: &Aabb,
    spheres: &[SoaSphere],
    n: usize,
    planes: &Planes,
    levels: &Levels,
) -> Option<TierState> {
    let dp = planes.depth_plane;
    let normal = dp.truncate();
    let (c, e) = (aabb.center(), aabb.half_extent());
    let mid = normal.dot(c) + dp.w;
    let reach = normal.abs().dot(e);
    let margin = 1e-5 * (normal.abs().dot(c.abs() + e) + dp.w.abs());
    let (near, far) = (mid - reach - margin, mid + reach + margin);
    if near.is_nan() || near <= 0.0 {
        return None;
    }
    let mut r_min = Vec4::INFINITY;
    let mut r_max = Vec4::NEG_INFINITY;
    for (k, sp) in spheres.iter().enumerate() {
        let lanes = (n - 4 * k).min(4);
        // Lanes past the last member hold stale data; lane 0 always holds a member.
        let r = Vec4::select(LANE.cmplt(Vec4::splat(lanes as f32)), sp.r, Vec4::splat(sp.r.x));
        r_min = r_min.min(r);
        r_max = r_max.max(r);
    }
    let s_lo = r_min.min_element() * planes.proj_scale.x / far * (1.0 - 1e-5);
    let s_hi = r_max.max_element() * planes.proj_scale.x / near * (1.0 + 1e-5);
    let s = Vec4::new(s_lo, s_hi, s_lo, s_hi);
    let lod = levels.lod.uniform4(s)?;
    let tier = levels.tier.uniform4(s)?;
    let rate = levels.rate.uniform4(s)?;
    Some(TierState {
        lod,
        tier,
        rate_log2: rate,
        flags: TierState::VISIBLE | if rate > 0 { TierState::INTERPOLATE } else { 0 },
    })
}

/// Lane indices.
const LANE: Vec4 = Vec4::new(0.0, 1.0, 2.0, 3.0);
