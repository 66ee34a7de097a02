//! `CullCamera`: the six frustum planes, the view-depth plane and the projection scale that culling and
//! screen-size LOD need.

use glam::{Mat4, Vec3, Vec4};

use crate::error::{Error, Result};

/// What culling needs of a camera.
///
/// Validity rules ([`CullCamera::validate`]): every value is finite; every frustum plane's normal (`xyz`) has
/// unit length (within 1e-3); the depth plane's normal has unit length (within 1e-3), or the depth plane is
/// exactly [`CullCamera::ORTHOGRAPHIC_DEPTH`] `(0, 0, 0, 1)`; `proj_scale > 0`.
///
/// Every culling path (the SIMD kernel, the plain twins, [`InstanceStore::pick_nearest`] and the GPU's twin)
/// computes a sphere's depth as `dot(depth_plane.xyz, centre) + depth_plane.w` and its screen size as
/// `radius * proj_scale / depth`. An orthographic camera's depth plane `(0, 0, 0, 1)` makes that depth 1
/// everywhere, so the same arithmetic gives its screen size `radius * proj_scale`, independent of distance.
///
/// [`InstanceStore::pick_nearest`]: crate::InstanceStore::pick_nearest
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CullCamera {
    /// The frustum planes `(n, d)`, normals pointing inwards: a point `p` is inside when `n·p + d >= 0` for
    /// all six. Order: left, right, bottom, top, near, far (any order works).
    pub planes: [Vec4; 6],
    /// `dot(depth_plane.xyz, p) + depth_plane.w` is the depth that divides `p`'s screen size.
    ///
    /// For a perspective camera it is `(forward, -forward·eye)`, a unit normal: that dot product is `p`'s view
    /// depth. For an orthographic camera it is [`CullCamera::ORTHOGRAPHIC_DEPTH`] `(0, 0, 0, 1)`: the depth is 1
    /// everywhere, since an orthographic projection does not shrink with distance.
    pub depth_plane: Vec4,
    /// The projection's vertical scale (the view-to-clip matrix's `y_axis.y`), so that a sphere of radius `r` at
    /// depth `z` has screen size `r * proj_scale / z`, its projected diameter as a fraction of the viewport
    /// height: `1 / tan(fov_y / 2)` for a perspective camera, `2 / view_height` for an orthographic one (whose
    /// depth is 1).
    pub proj_scale: f32,
}

impl CullCamera {
    /// The depth plane of an orthographic camera: a zero normal and `w = 1`, so that every point's depth is 1 and
    /// its screen size `radius * proj_scale` (see the type's docs).
    pub const ORTHOGRAPHIC_DEPTH: Vec4 = Vec4::W;

    /// Extracts the planes of a view-projection matrix with wgpu's clip-space depth range `[0, 1]`
    /// (as made by `Mat4::perspective_rh`, or reversed as engines such as Bevy make them), normalised. `forward` is
    /// normalised here.
    ///
    /// An infinite projection (`Mat4::perspective_infinite_reverse_rh`) has no far plane: its depth row gives a
    /// plane without a normal, which is replaced by the other depth plane, so that the frustum is the four sides and
    /// the near plane.
    ///
    /// An orthographic matrix (its w row is `(0, 0, 0, w)` with `w > 0`, up to rounding: the normal is below 1e-6
    /// of the x and y rows' normals) gets the depth plane [`CullCamera::ORTHOGRAPHIC_DEPTH`], and `eye` and
    /// `forward` are not used; pass the projection's `y_axis.y` as `proj_scale` (`2 / view_height`).
    pub fn from_view_proj(view_proj: Mat4, eye: Vec3, forward: Vec3, proj_scale: f32) -> Self {
        let (r0, r1, r2, r3) = (view_proj.row(0), view_proj.row(1), view_proj.row(2), view_proj.row(3));
        // A perspective w row carries the view direction (a normal about as long as the x and y rows'); an
        // orthographic one is the view matrix's affine row `(0, 0, 0, 1)`, scaled at most.
        let orthographic =
            r3.w > 0.0 && r3.truncate().length() <= 1e-6 * (r0.truncate().length() + r1.truncate().length());
        let raw = [r3 + r0, r3 - r0, r3 + r1, r3 - r1, r2, r3 - r2];
        let mut planes = raw.map(|p| {
            let l = p.truncate().length();
            if l > 0.0 { p / l } else { p }
        });
        let degenerate = |p: Vec4| p.truncate().length_squared() < 1e-12;
        if degenerate(planes[4]) {
            planes[4] = planes[5];
        } else if degenerate(planes[5]) {
            planes[5] = planes[4];
        }
        let depth_plane = if orthographic {
            Self::ORTHOGRAPHIC_DEPTH
        } else {
            let f = forward.normalize_or_zero();
            f.extend(-f.dot(eye))
        };
        Self {
            planes,
            depth_plane,
            proj_scale,
        }
    }

    /// Checks the rules of the type's docs, in O(1).
    pub fn validate(&self) -> Result<()> {
        for (i, p) in self.planes.iter().enumerate() {
            if !p.is_finite() || (p.truncate().length() - 1.0).abs() > 1e-3 {
                return Err(Error::Camera {
                    what: "frustum plane",
                    index: i,
                });
            }
        }
        let d = self.depth_plane;
        let unit = (d.truncate().length() - 1.0).abs() <= 1e-3;
        if !d.is_finite() || !(unit || d == Self::ORTHOGRAPHIC_DEPTH) {
            return Err(Error::Camera {
                what: "depth plane",
                index: 0,
            });
        }
        if !self.proj_scale.is_finite() || self.proj_scale <= 0.0 {
            return Err(Error::Camera {
                what: "projection scale",
                index: 0,
            });
        }
        Ok(())
    }

    /// The screen size of a sphere, `radius * proj_scale / depth` (see the type's docs): its projected diameter
    /// as a fraction of the viewport height. Infinite when the centre is at or behind the eye of a perspective
    /// camera; `radius * proj_scale` for an orthographic camera (depth 1), wherever the sphere is.
    pub fn screen_size(&self, centre: Vec3, radius: f32) -> f32 {
        let z = self.depth_plane.truncate().dot(centre) + self.depth_plane.w;
        if z <= 0.0 {
            f32::INFINITY
        } else {
            radius * self.proj_scale / z
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FrameCamera;

    #[test]
    fn planes_contain_the_view_and_exclude_what_is_behind() {
        let cam = FrameCamera::perspective(Vec3::ZERO, Vec3::NEG_Z, Vec3::Y, 1.0, 1.5, 0.1, 100.0).cull_camera();
        assert_eq!(cam.validate(), Ok(()));
        let inside = |p: Vec3| cam.planes.iter().all(|pl| pl.truncate().dot(p) + pl.w >= 0.0);
        assert!(inside(Vec3::new(0.0, 0.0, -10.0)));
        assert!(!inside(Vec3::new(0.0, 0.0, 10.0)), "behind the eye");
        assert!(!inside(Vec3::new(0.0, 0.0, -200.0)), "past the far plane");
        assert!(!inside(Vec3::new(0.0, 30.0, -10.0)), "above the top plane");
        assert!(!inside(Vec3::new(0.0, 0.0, -0.05)), "before the near plane");
        assert!((cam.screen_size(Vec3::new(0.0, 0.0, -10.0), 1.0) - 1.0 / (10.0 * 0.5f32.tan())).abs() < 1e-5);
        // The edge of the view: 10 units ahead, the top plane is at 10 * tan(0.5) up.
        let top = 10.0 * 0.5f32.tan();
        assert!(inside(Vec3::new(0.0, top - 0.01, -10.0)) && !inside(Vec3::new(0.0, top + 0.01, -10.0)));
        let side = top * 1.5;
        assert!(inside(Vec3::new(side - 0.01, 0.0, -10.0)) && !inside(Vec3::new(side + 0.01, 0.0, -10.0)));
    }

    #[test]
    fn planes_of_a_matrix_bound_its_clip_volume() {
        // The identity maps clip space to itself: the volume is x, y in [-1, 1] and z in [0, 1].
        let cam = CullCamera::from_view_proj(Mat4::IDENTITY, Vec3::ZERO, Vec3::Z, 1.0);
        assert_eq!(cam.validate(), Ok(()));
        let inside = |p: Vec3| cam.planes.iter().all(|pl| pl.truncate().dot(p) + pl.w >= 0.0);
        assert!(inside(Vec3::new(0.9, -0.9, 0.5)));
        assert!(!inside(Vec3::new(1.1, 0.0, 0.5)) && !inside(Vec3::new(0.0, -1.1, 0.5)));
        assert!(!inside(Vec3::new(0.0, 0.0, -0.1)) && !inside(Vec3::new(0.0, 0.0, 1.1)));
    }

    #[test]
    fn an_infinite_reversed_projection_keeps_its_near_plane_and_culls_nothing_far() {
        // Bevy's cameras: reversed depth (1 at the near plane, 0 at infinity) and no far plane.
        let proj = glam::camera::rh::proj::directx::perspective_infinite_reverse(1.0, 1.5, 0.1);
        let cam = CullCamera::from_view_proj(proj, Vec3::ZERO, Vec3::NEG_Z, proj.y_axis.y);
        assert_eq!(cam.validate(), Ok(()));
        let inside = |p: Vec3| cam.planes.iter().all(|pl| pl.truncate().dot(p) + pl.w >= -1e-4);
        assert!(inside(Vec3::new(0.0, 0.0, -10.0)));
        assert!(inside(Vec3::new(0.0, 0.0, -1.0e6)), "no far plane");
        assert!(!inside(Vec3::new(0.0, 0.0, -0.05)), "before the near plane");
        assert!(!inside(Vec3::new(0.0, 0.0, 10.0)), "behind the eye");
        let top = 10.0 * 0.5f32.tan();
        assert!(inside(Vec3::new(0.0, top - 0.01, -10.0)) && !inside(Vec3::new(0.0, top + 0.01, -10.0)));
        // The same sides as the finite camera's.
        let finite = FrameCamera::perspective(Vec3::ZERO, Vec3::NEG_Z, Vec3::Y, 1.0, 1.5, 0.1, 100.0).cull_camera();
        for i in 0..4 {
            assert!(
                (cam.planes[i] - finite.planes[i]).abs().max_element() < 1e-4,
                "plane {i}"
            );
        }
    }

    #[test]
    fn an_orthographic_matrix_gets_depth_one_and_sizes_independent_of_distance() {
        // A sun camera 40 units above the origin looking down, 20 high and 30 wide, reaching 10 behind its eye.
        let view = glam::camera::rh::view::look_at_mat4(Vec3::new(0.0, 40.0, 0.0), Vec3::ZERO, Vec3::NEG_Z);
        let proj = glam::camera::rh::proj::directx::orthographic(-15.0, 15.0, -10.0, 10.0, -10.0, 100.0);
        let cam = CullCamera::from_view_proj(proj * view, Vec3::new(0.0, 40.0, 0.0), Vec3::NEG_Y, proj.y_axis.y);
        assert_eq!(cam.validate(), Ok(()));
        assert_eq!(cam.depth_plane, CullCamera::ORTHOGRAPHIC_DEPTH);
        assert!((cam.proj_scale - 0.1).abs() < 1e-7, "2 / height");
        let inside = |p: Vec3| cam.planes.iter().all(|pl| pl.truncate().dot(p) + pl.w >= 0.0);
        // The box: x in [-15, 15], z in [-10, 10] (up is -z), y from 50 (10 behind the eye) down to -60.
        assert!(inside(Vec3::new(14.9, 0.0, 9.9)) && inside(Vec3::new(-14.9, -59.0, -9.9)));
        assert!(
            inside(Vec3::new(0.0, 49.0, 0.0)),
            "behind the eye, inside the depth range"
        );
        assert!(!inside(Vec3::new(15.1, 0.0, 0.0)) && !inside(Vec3::new(-15.1, 0.0, 0.0)));
        assert!(!inside(Vec3::new(0.0, 0.0, 10.1)) && !inside(Vec3::new(0.0, 0.0, -10.1)));
        assert!(!inside(Vec3::new(0.0, 50.1, 0.0)) && !inside(Vec3::new(0.0, -60.1, 0.0)));
        // A sphere of radius 1 is a tenth of the view's height wherever it is, even behind the eye.
        for y in [45.0, 39.0, 0.0, -59.0] {
            assert_eq!(cam.screen_size(Vec3::new(3.0, y, -2.0), 1.0), 0.1, "at y = {y}");
        }
    }

    #[test]
    fn a_perspective_camera_far_from_the_origin_is_not_orthographic() {
        // Its w row is (forward, -forward·eye) with |forward·eye| = 1e7: tiny relative to w, not to the other rows.
        let eye = Vec3::new(0.0, 0.0, 1.0e7);
        let cam = FrameCamera::perspective(eye, eye + Vec3::NEG_Z, Vec3::Y, 1.0, 1.5, 0.1, 100.0).cull_camera();
        assert_eq!(cam.validate(), Ok(()));
        assert!(
            (cam.depth_plane.truncate() - Vec3::NEG_Z).length() < 1e-6,
            "{}",
            cam.depth_plane
        );
    }

    #[test]
    fn only_the_orthographic_depth_plane_may_lack_a_normal() {
        let ok = FrameCamera::perspective(Vec3::ZERO, Vec3::NEG_Z, Vec3::Y, 1.0, 1.5, 0.1, 100.0).cull_camera();
        let with = |depth_plane| CullCamera { depth_plane, ..ok };
        assert_eq!(with(CullCamera::ORTHOGRAPHIC_DEPTH).validate(), Ok(()));
        assert_eq!(with(Vec4::new(-0.0, 0.0, -0.0, 1.0)).validate(), Ok(()), "signed zeros");
        let depth_plane = Err(Error::Camera {
            what: "depth plane",
            index: 0,
        });
        for bad in [
            Vec4::ZERO,
            Vec4::new(0.0, 0.0, 0.0, 2.0),
            Vec4::new(0.0, 0.0, 0.0, -1.0),
            Vec4::new(0.0, 0.0, 0.0, 1.0 + 1e-6),
            Vec4::new(0.5, 0.0, 0.0, 1.0),
            Vec4::new(0.0, 0.0, 0.0, f32::NAN),
        ] {
            assert_eq!(with(bad).validate(), depth_plane, "{bad}");
        }
    }

    #[test]
    fn bad_cameras_are_rejected() {
        let ok = FrameCamera::perspective(Vec3::ZERO, Vec3::NEG_Z, Vec3::Y, 1.0, 1.5, 0.1, 100.0).cull_camera();
        let mut nan_plane = ok;
        nan_plane.planes[3].y = f32::NAN;
        assert_eq!(
            nan_plane.validate(),
            Err(Error::Camera {
                what: "frustum plane",
                index: 3
            })
        );
        let mut zero_plane = ok;
        zero_plane.planes[0] = Vec4::ZERO;
        assert!(zero_plane.validate().is_err());
        let mut depth = ok;
        depth.depth_plane.w = f32::INFINITY;
        assert!(depth.validate().is_err());
        let mut scale = ok;
        scale.proj_scale = 0.0;
        assert!(scale.validate().is_err());
    }
}
