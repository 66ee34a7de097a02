//! `CullCamera`: the six frustum planes, the view-depth plane and the projection scale that culling and
//! screen-size LOD need.

use glam::{Mat4, Vec3, Vec4};

use crate::error::{Error, Result};

/// What culling needs of a camera.
///
/// Validity rules ([`CullCamera::validate`]): every value is finite; every plane's normal (`xyz`) has unit
/// length (within 1e-3); `proj_scale > 0`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CullCamera {
    /// The frustum planes `(n, d)`, normals pointing inwards: a point `p` is inside when `n·p + d >= 0` for
    /// all six. Order: left, right, bottom, top, near, far (any order works).
    pub planes: [Vec4; 6],
    /// `(forward, -forward·eye)`: `dot(depth_plane.xyz, p) + depth_plane.w` is `p`'s view depth.
    pub depth_plane: Vec4,
    /// `1 / tan(fov_y / 2)`: a sphere of radius `r` at depth `z` has screen size `r * proj_scale / z`,
    /// its projected diameter as a fraction of the viewport height.
    pub proj_scale: f32,
}

impl CullCamera {
    /// Extracts the planes of a view-projection matrix with wgpu's clip-space depth range `[0, 1]`
    /// (as made by `Mat4::perspective_rh`, or reversed as engines such as Bevy make them), normalised. `forward` is
    /// normalised here.
    ///
    /// An infinite projection (`Mat4::perspective_infinite_reverse_rh`) has no far plane: its depth row gives a
    /// plane without a normal, which is replaced by the other depth plane, so that the frustum is the four sides and
    /// the near plane.
    pub fn from_view_proj(view_proj: Mat4, eye: Vec3, forward: Vec3, proj_scale: f32) -> Self {
        let (r0, r1, r2, r3) = (view_proj.row(0), view_proj.row(1), view_proj.row(2), view_proj.row(3));
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
        let f = forward.normalize_or_zero();
        Self {
            planes,
            depth_plane: f.extend(-f.dot(eye)),
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
        if !d.is_finite() || (d.truncate().length() - 1.0).abs() > 1e-3 {
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

    /// The screen size of a sphere (see the type's docs); infinite when the centre is at or behind the eye.
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
