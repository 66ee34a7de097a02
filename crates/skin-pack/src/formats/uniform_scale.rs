//! Whether a skeleton may use [`QtF16`]: uniform scale everywhere, checked once per skeleton.

use anim_pose::{Clip, Property, Skeleton, Transform};
use glam::{Affine3A, Vec3};

use super::qt_f16::ppm;
use crate::{Error, QtF16, Result};

/// The default relative tolerance for a non-uniform scale under [`QtF16`]: `2⁻¹¹` (about 488 ppm).
///
/// It is the relative rounding error of f16 itself, so a scale that passes deviates from uniform by no more than
/// one f16 rounding of its value; the residual `ρ` it leaves is part of the `QtF16` error bound either way.
pub const QT_F16_SCALE_TOLERANCE: f32 = 1.0 / 2048.0;

/// Which f16 palette format a skeleton uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum F16Kind {
    /// [`crate::Mat3x4F16`]: any affine matrix, 24 B per joint.
    Mat3x4F16,
    /// [`QtF16`]: uniform scale only, 16 B per joint.
    QtF16,
}

/// [`F16Kind::QtF16`] when [`check_uniform_scale`] passes, otherwise the documented fallback
/// [`F16Kind::Mat3x4F16`].
pub fn choose_f16_format<'c>(
    skeleton: &Skeleton,
    clips: impl IntoIterator<Item = &'c Clip>,
    tolerance: f32,
) -> F16Kind {
    match check_uniform_scale(skeleton, clips, tolerance) {
        Ok(()) => F16Kind::QtF16,
        Err(_) => F16Kind::Mat3x4F16,
    }
}

/// Checks that every skinning matrix of `skeleton` animated by `clips` has a uniform scale, so that [`QtF16`] may
/// hold its palettes.
///
/// Products of similarity transforms (rotation, uniform scale, translation) are similarities, so it checks each
/// factor of `root_transform · model[j] · inverse_bind[k]`: the root transform, every joint's rest scale, every scale
/// key of every clip (cubic-spline tangents included, since interpolating uniform values with uniform tangents stays
/// uniform) and every inverse bind matrix. A scale vector `(x, y, z)` deviates by `(max − min) / max(|x|, |y|, |z|)`;
/// a matrix by [`QtF16::scale_deviation`]. Deviations along a chain of `n` factors can add up to about `n` times the
/// tolerance; [`crate::F16Format::check`] measures a palette entry directly.
///
/// # Errors
///
/// [`Error::NonUniformScale`] naming the first factor above `tolerance`: `"skeleton root transform"` (index 0),
/// `"rest pose of joint"` (index = joint), `"inverse bind matrix"` (index = skin joint) or `"clip"` (index = the
/// clip's position in `clips`, `joint` = the channel's joint).
pub fn check_uniform_scale<'c>(
    skeleton: &Skeleton,
    clips: impl IntoIterator<Item = &'c Clip>,
    tolerance: f32,
) -> Result<()> {
    let fail = |what: &'static str, index: usize, joint: usize, deviation: f32| {
        if deviation <= tolerance {
            Ok(())
        } else {
            Err(Error::NonUniformScale {
                what,
                index,
                joint,
                deviation_ppm: ppm(deviation),
                tolerance_ppm: ppm(tolerance),
            })
        }
    };
    let root = Affine3A::from_mat4(skeleton.root_transform);
    fail("skeleton root transform", 0, 0, QtF16::scale_deviation(&root))?;
    for (j, Transform { scale, .. }) in skeleton.rest_pose.iter().enumerate() {
        fail("rest pose of joint", j, j, vector_deviation(*scale))?;
    }
    for (k, ibm) in skeleton.inverse_bind_matrices.iter().enumerate() {
        let joint = skeleton.skin_joints.get(k).map_or(usize::MAX, |&j| usize::from(j));
        fail(
            "inverse bind matrix",
            k,
            joint,
            QtF16::scale_deviation(&Affine3A::from_mat4(*ibm)),
        )?;
    }
    for (c, clip) in clips.into_iter().enumerate() {
        for channel in clip.channels.iter().filter(|ch| ch.property == Property::Scale) {
            for v in &channel.values {
                fail("clip", c, usize::from(channel.joint), vector_deviation(v.truncate()))?;
            }
        }
    }
    Ok(())
}

/// `(max − min) / max(|x|, |y|, |z|)`, zero for the zero vector, NaN for a non-finite one.
fn vector_deviation(v: Vec3) -> f32 {
    let spread = v.max_element() - v.min_element();
    let size = v.abs().max_element();
    if !v.is_finite() {
        f32::NAN
    } else if size == 0.0 {
        0.0
    } else {
        spread / size
    }
}
