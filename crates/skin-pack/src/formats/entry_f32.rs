//! [`PaletteEntry`] as a [`PaletteFormat`]: the f32 3×4 rows, stored as they are (no origin, no rounding).

use glam::{Affine3A, Vec3A, Vec4};

use super::row_fold::RowFold;
use super::sealed::Format;
use crate::flatten::{CachedPose, poison};
use crate::kernels::Tier;
use crate::{PaletteEntry, PaletteFormat};

impl PaletteFormat for PaletteEntry {
    const NAME: &'static str = "f32 3x4";

    #[inline]
    fn encode(m: &Affine3A, _origin: Vec3A) -> Self {
        let (c, t) = (m.matrix3, m.translation);
        Self {
            rows: [
                [c.x_axis.x, c.y_axis.x, c.z_axis.x, t.x],
                [c.x_axis.y, c.y_axis.y, c.z_axis.y, t.y],
                [c.x_axis.z, c.y_axis.z, c.z_axis.z, t.z],
            ],
        }
    }
}

impl Format for PaletteEntry {
    #[inline(always)]
    fn encode_rows(_: Tier, out: &mut [Self], _origin: Vec3A, mut row: impl FnMut(usize) -> [Vec4; 3]) -> Vec4 {
        let mut acc = Vec4::ZERO;
        for (k, o) in out.iter_mut().enumerate() {
            let r = row(k);
            acc += poison(r[0]) + poison(r[1]) + poison(r[2]);
            o.rows = r.map(|v| v.to_array());
        }
        acc
    }

    /// The instance transform itself.
    type Fold = Affine3A;

    #[inline(always)]
    fn folds(t: [&Affine3A; 4]) -> [Affine3A; 4] {
        t.map(|t| *t)
    }

    /// With `t`, the SIMD tier's kernel when no product can overflow ([`super::row_fold::f32_fold_in_range`],
    /// which also excludes non-finite transforms), the portable twin ([`RowFold::apply_fused`], the same bits)
    /// otherwise; without, the cached rows as they are (they are finite: the job checked them).
    #[inline(always)]
    fn encode_cached(tier: Tier, pose: CachedPose<'_>, t: Option<&Affine3A>, out: &mut [Self], stream: bool) -> Vec4 {
        let rows = &pose.rows[..out.len()];
        let Some(t) = t else {
            return Self::encode_rows(tier, out, Vec3A::ZERO, |k| rows[k]);
        };
        #[cfg(all(target_arch = "x86_64", not(feature = "portable")))]
        if let Tier::Avx2(token) = tier
            && super::row_fold::f32_fold_in_range(t, pose.max_abs)
        {
            let e = super::row_fold::linear_rows(&t.matrix3);
            crate::kernels::avx2::entry(token, &e, t.translation.into(), rows, out, stream);
            return Vec4::ZERO;
        }
        let _ = stream;
        let fold = RowFold::new(t);
        Self::encode_rows(tier, out, Vec3A::ZERO, |k| fold.apply_fused(&rows[k]))
    }
}
