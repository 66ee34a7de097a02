//! [`FrameCamera`]: the one camera of a frame, what the renderer draws with and what culling derives its
//! [`CullCamera`] from.

use glam::{Mat4, Vec3};

use crate::camera::CullCamera;

/// The camera of a frame: what culling used and what the renderer draws with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameCamera {
    /// World to view.
    pub view: Mat4,
    /// View to clip, with wgpu's depth range `[0, 1]` and y up.
    pub proj: Mat4,
    /// The eye position, in world space.
    pub eye: Vec3,
}

impl FrameCamera {
    /// A perspective camera at `eye` looking at `target`, `fov_y` radians high, `aspect` = width / height, with
    /// depth range `near..far`.
    pub fn perspective(eye: Vec3, target: Vec3, up: Vec3, fov_y: f32, aspect: f32, near: f32, far: f32) -> Self {
        Self {
            view: glam::camera::rh::view::look_at_mat4(eye, target, up),
            // wgpu's clip space is D3D's: depth in [0, 1], y up.
            proj: glam::camera::rh::proj::directx::perspective(fov_y, aspect, near, far),
            eye,
        }
    }

    /// `proj * view`.
    pub fn view_proj(&self) -> Mat4 {
        self.proj * self.view
    }

    /// True when every matrix element and the eye are finite.
    pub fn is_finite(&self) -> bool {
        self.view.is_finite() && self.proj.is_finite() && self.eye.is_finite()
    }

    /// The culling camera: the frustum of `view_proj`, depth along the view direction, and the projection's
    /// vertical scale for screen sizes.
    pub fn cull_camera(&self) -> CullCamera {
        // The view matrix's third row is the negated view direction in a right-handed view space.
        let forward = -self.view.row(2).truncate();
        CullCamera::from_view_proj(self.view_proj(), self.eye, forward, self.proj.y_axis.y.abs())
    }
}

impl Default for FrameCamera {
    fn default() -> Self {
        Self {
            view: Mat4::IDENTITY,
            proj: Mat4::IDENTITY,
            eye: Vec3::ZERO,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec4;

    /// The frustum of a look-at perspective camera built from its geometry, independently of the matrices.
    fn geometric_frustum(
        eye: Vec3,
        target: Vec3,
        up: Vec3,
        fov_y: f32,
        aspect: f32,
        near: f32,
        far: f32,
    ) -> CullCamera {
        let f = (target - eye).normalize_or_zero();
        let right = f.cross(up).normalize_or_zero();
        let up = right.cross(f);
        let tan_y = (fov_y * 0.5).tan();
        let tan_x = tan_y * aspect;
        let side = |n: Vec3| {
            let n = n.normalize_or_zero();
            n.extend(-n.dot(eye))
        };
        CullCamera {
            planes: [
                side(right + f * tan_x),
                side(-right + f * tan_x),
                side(up + f * tan_y),
                side(-up + f * tan_y),
                f.extend(-f.dot(eye + f * near)),
                (-f).extend(f.dot(eye + f * far)),
            ],
            depth_plane: f.extend(-f.dot(eye)),
            proj_scale: 1.0 / tan_y,
        }
    }

    #[test]
    fn the_culling_camera_is_the_frustum_of_the_drawing_camera() {
        let (eye, target) = (Vec3::new(3.0, 1.7, 2.0), Vec3::new(-4.0, 0.5, -20.0));
        let frame = FrameCamera::perspective(eye, target, Vec3::Y, 0.9, 1.6, 0.1, 300.0).cull_camera();
        let direct = geometric_frustum(eye, target, Vec3::Y, 0.9, 1.6, 0.1, 300.0);
        assert!((frame.proj_scale - direct.proj_scale).abs() < 1e-5);
        assert!(frame.depth_plane.abs_diff_eq(direct.depth_plane, 1e-5));
        // The same set of planes (the two constructions may order them differently). A plane extracted from the
        // matrix loses relative precision in its distance (the far plane's, 297, by about 1e-4).
        let same = |p: Vec4, q: Vec4| {
            p.truncate().abs_diff_eq(q.truncate(), 1e-4) && (p.w - q.w).abs() <= 5e-4 * p.w.abs().max(1.0)
        };
        for p in direct.planes {
            assert!(
                frame.planes.iter().any(|&q| same(p, q)),
                "plane {p} of the direct camera is missing from {:?}",
                frame.planes
            );
        }
    }
}
