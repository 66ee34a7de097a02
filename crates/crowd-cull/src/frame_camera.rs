//! [`FrameCamera`]: the one camera of a frame, what the renderer draws with and what culling derives its
//! [`CullCamera`] from.

use glam::{Mat4, Vec3};

use crate::camera::CullCamera;
use crate::error::{Error, Result};

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

    /// An orthographic camera at `eye` looking at `target` (a shadow map's sun camera): a box `height` high and
    /// `height * aspect` wide around the view axis, from `near` to `far` along it (either may be negative: the
    /// box may reach behind the eye). Right-handed, with wgpu's depth range `[0, 1]`, as
    /// [`FrameCamera::perspective`].
    ///
    /// Its culling camera ([`FrameCamera::cull_camera`]) has the depth plane
    /// [`CullCamera::ORTHOGRAPHIC_DEPTH`] and `proj_scale = 2 / height`: a sphere's screen size is its diameter
    /// over `height`, however far it is.
    ///
    /// # Errors
    ///
    /// [`Error::Camera`] naming the argument: `eye`, `target` or `up` not finite, `target == eye`, `up` parallel to
    /// the view direction, `height` or `aspect` not finite and positive, `near` or `far` not finite or
    /// `near >= far`, or a projection that overflows (a height so small that `2 / height` is infinite).
    pub fn orthographic(
        eye: Vec3,
        target: Vec3,
        up: Vec3,
        height: f32,
        aspect: f32,
        near: f32,
        far: f32,
    ) -> Result<Self> {
        let bad = |what| Err(Error::Camera { what, index: 0 });
        for (what, v) in [("eye", eye), ("target", target), ("up", up)] {
            if !v.is_finite() {
                return bad(what);
            }
        }
        let dir = target - eye;
        let l2 = dir.length_squared();
        if !(l2 > 0.0 && l2.is_finite()) {
            return bad("view direction (target - eye)");
        }
        if dir.normalize().cross(up.normalize_or_zero()).length_squared() < 1e-12 {
            return bad("up (zero or parallel to the view direction)");
        }
        if !(height.is_finite() && height > 0.0) {
            return bad("view height (finite, > 0)");
        }
        if !(aspect.is_finite() && aspect > 0.0) {
            return bad("aspect (finite, > 0)");
        }
        if !(near.is_finite() && far.is_finite() && near < far) {
            return bad("depth range (finite, near < far)");
        }
        let (half_h, half_w) = (height * 0.5, height * aspect * 0.5);
        let camera = Self {
            view: glam::camera::rh::view::look_at_mat4(eye, target, up),
            // wgpu's clip space is D3D's: depth in [0, 1], y up.
            proj: glam::camera::rh::proj::directx::orthographic(-half_w, half_w, -half_h, half_h, near, far),
            eye,
        };
        if !camera.is_finite() || camera.proj.y_axis.y == 0.0 || camera.proj.x_axis.x == 0.0 {
            return bad("projection (overflows)");
        }
        Ok(camera)
    }

    /// `proj * view`.
    pub fn view_proj(&self) -> Mat4 {
        self.proj * self.view
    }

    /// True when every matrix element and the eye are finite.
    pub fn is_finite(&self) -> bool {
        self.view.is_finite() && self.proj.is_finite() && self.eye.is_finite()
    }

    /// The culling camera: the frustum of `view_proj`, depth along the view direction (or depth 1 for an
    /// orthographic projection, see [`CullCamera::from_view_proj`]), and the projection's vertical scale for
    /// screen sizes.
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
    fn an_orthographic_camera_culls_its_box_and_sizes_by_height() {
        // A sun camera high above a crowd, looking down at an angle, 40 high and 60 wide, reaching 20 behind its eye.
        let (eye, target) = (Vec3::new(30.0, 80.0, 20.0), Vec3::new(0.0, 0.0, -10.0));
        let frame = FrameCamera::orthographic(eye, target, Vec3::Y, 40.0, 1.5, -20.0, 300.0).expect("valid");
        assert!((frame.proj.y_axis.y - 0.05).abs() < 1e-8, "2 / height");
        let cam = frame.cull_camera();
        assert_eq!(cam.validate(), Ok(()));
        assert_eq!(cam.depth_plane, CullCamera::ORTHOGRAPHIC_DEPTH);
        assert_eq!(cam.proj_scale, frame.proj.y_axis.y);
        // The box from its geometry: a point is inside when its view coordinates are within the box.
        let f = (target - eye).normalize();
        let right = f.cross(Vec3::Y).normalize();
        let up = right.cross(f);
        let inside = |p: Vec3| cam.planes.iter().all(|pl| pl.truncate().dot(p) + pl.w >= 0.0);
        for (x, y, d, want) in [
            (0.0, 0.0, 100.0, true),
            (29.9, 19.9, 299.0, true),
            (-29.9, -19.9, -19.9, true),
            (30.1, 0.0, 100.0, false),
            (-30.1, 0.0, 100.0, false),
            (0.0, 20.1, 100.0, false),
            (0.0, -20.1, 100.0, false),
            (0.0, 0.0, 300.1, false),
            (0.0, 0.0, -20.1, false),
        ] {
            let p = eye + right * x + up * y + f * d;
            assert_eq!(inside(p), want, "view ({x}, {y}) at depth {d}");
        }
        // Screen size is the diameter over the height, near or far.
        for d in [-10.0, 1.0, 50.0, 290.0] {
            let size = cam.screen_size(eye + f * d, 2.0);
            assert!((size - 4.0 / 40.0).abs() < 1e-7, "{size} at depth {d}");
        }
    }

    #[test]
    fn bad_orthographic_cameras_are_errors_naming_the_argument() {
        let ok = (Vec3::new(0.0, 50.0, 0.0), Vec3::ZERO, Vec3::Z, 10.0, 1.0, 0.0, 100.0);
        let (eye, target, up, height, aspect, near, far) = ok;
        assert!(FrameCamera::orthographic(eye, target, up, height, aspect, near, far).is_ok());
        type Args = (Vec3, Vec3, Vec3, f32, f32, f32, f32);
        let rows: [(Args, &str); 14] = [
            ((Vec3::NAN, target, up, height, aspect, near, far), "eye"),
            ((eye, Vec3::INFINITY, up, height, aspect, near, far), "target"),
            ((eye, target, Vec3::splat(f32::NAN), height, aspect, near, far), "up"),
            (
                (eye, eye, up, height, aspect, near, far),
                "view direction (target - eye)",
            ),
            (
                (eye, Vec3::splat(f32::MAX), up, height, aspect, near, far),
                "view direction (target - eye)",
            ),
            (
                (eye, target, Vec3::Y, height, aspect, near, far),
                "up (zero or parallel to the view direction)",
            ),
            (
                (eye, target, Vec3::ZERO, height, aspect, near, far),
                "up (zero or parallel to the view direction)",
            ),
            ((eye, target, up, 0.0, aspect, near, far), "view height (finite, > 0)"),
            ((eye, target, up, -1.0, aspect, near, far), "view height (finite, > 0)"),
            (
                (eye, target, up, f32::INFINITY, aspect, near, far),
                "view height (finite, > 0)",
            ),
            ((eye, target, up, height, 0.0, near, far), "aspect (finite, > 0)"),
            (
                (eye, target, up, height, aspect, far, near),
                "depth range (finite, near < far)",
            ),
            (
                (eye, target, up, height, aspect, near, f32::NAN),
                "depth range (finite, near < far)",
            ),
            ((eye, target, up, 1e-39, aspect, near, far), "projection (overflows)"),
        ];
        for ((eye, target, up, height, aspect, near, far), what) in rows {
            assert_eq!(
                FrameCamera::orthographic(eye, target, up, height, aspect, near, far),
                Err(Error::Camera { what, index: 0 }),
                "{what}"
            );
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
