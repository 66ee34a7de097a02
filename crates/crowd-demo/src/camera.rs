//! The orbit camera and the fly camera, as a [`FrameCamera`] for the crowd.

use crowd_frame::FrameCamera;
use glam::{Vec2, Vec3};

/// How the camera moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// About a target: drag to turn, scroll to zoom, WASD to move the target.
    Orbit,
    /// From an eye: drag to look, WASD to move, Q and E down and up.
    Fly,
}

/// A camera with both modes; switching keeps the eye where it is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// The current mode.
    pub mode: Mode,
    /// The orbit's target.
    pub target: Vec3,
    /// Radians about +Y; 0 looks along -Z.
    pub yaw: f32,
    /// Radians above the horizon, looking down when positive.
    pub pitch: f32,
    /// The orbit's distance from the target.
    pub distance: f32,
    /// The vertical field of view, in radians.
    pub fov_y: f32,
    /// The scale of the scene: the near plane is a hundredth of it, and moving is in its units.
    pub scale: f32,
    /// Where the far plane goes.
    pub far: f32,
}

impl Camera {
    /// Where the eye is.
    pub fn eye(&self) -> Vec3 {
        self.target - self.forward() * self.distance
    }

    /// The unit view direction.
    pub fn forward(&self) -> Vec3 {
        let (sy, cy) = self.yaw.sin_cos();
        let (sp, cp) = self.pitch.sin_cos();
        Vec3::new(-sy * cp, -sp, -cy * cp)
    }

    /// The crowd's camera for a viewport of `aspect` (width over height).
    pub fn frame_camera(&self, aspect: f32) -> FrameCamera {
        let eye = self.eye();
        FrameCamera::perspective(
            eye,
            eye + self.forward(),
            Vec3::Y,
            self.fov_y,
            aspect.max(1e-3),
            self.scale * 0.01,
            self.far,
        )
    }

    /// Turns by a mouse drag of `delta` pixels: about the target in orbit mode, about the eye in fly mode.
    pub fn drag(&mut self, delta: Vec2) {
        let eye = self.eye();
        self.yaw -= delta.x * 0.005;
        self.pitch = (self.pitch + delta.y * 0.005).clamp(-1.5, 1.5);
        if self.mode == Mode::Fly {
            self.target = eye + self.forward() * self.distance;
        }
    }

    /// Zooms by `lines` scroll lines (orbit), or moves along the view (fly).
    pub fn scroll(&mut self, lines: f32) {
        match self.mode {
            Mode::Orbit => {
                self.distance = (self.distance * 0.9f32.powf(lines)).clamp(self.scale * 0.05, self.far * 0.5)
            }
            Mode::Fly => self.target += self.forward() * lines * self.scale,
        }
    }

    /// Moves by `axes` (x right, y up, z forward) for `dt` seconds: the target in orbit mode (on the ground plane),
    /// eye and target together in fly mode.
    pub fn move_by(&mut self, axes: Vec3, dt: f32) {
        let speed = self.scale.max(self.distance * 0.5) * dt;
        let forward = self.forward();
        let flat = Vec3::new(forward.x, 0.0, forward.z).normalize_or(Vec3::NEG_Z);
        let right = flat.cross(Vec3::Y);
        let step = match self.mode {
            Mode::Orbit => right * axes.x + flat * axes.z + Vec3::Y * axes.y,
            Mode::Fly => right * axes.x + forward * axes.z + Vec3::Y * axes.y,
        };
        self.target += step * speed;
    }

    /// Switches between orbit and fly.
    pub fn toggle_mode(&mut self) {
        self.mode = match self.mode {
            Mode::Orbit => Mode::Fly,
            Mode::Fly => Mode::Orbit,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn camera() -> Camera {
        Camera {
            mode: Mode::Orbit,
            target: Vec3::new(1.0, 0.0, 2.0),
            yaw: 0.3,
            pitch: 0.4,
            distance: 10.0,
            fov_y: 1.0,
            scale: 1.0,
            far: 100.0,
        }
    }

    #[test]
    fn orbiting_keeps_the_target_and_flying_keeps_the_eye() {
        let mut c = camera();
        c.drag(Vec2::new(40.0, -30.0));
        assert!((c.eye() - c.target).length() - 10.0 < 1e-4);
        assert_eq!(c.target, camera().target);
        let mut f = camera();
        f.toggle_mode();
        let eye = f.eye();
        f.drag(Vec2::new(40.0, -30.0));
        assert!((f.eye() - eye).length() < 1e-4, "{} {}", f.eye(), eye);
        // The target is centred on screen.
        let clip = c.frame_camera(1.5).view_proj().project_point3(c.target);
        assert!(clip.x.abs() < 1e-4 && clip.y.abs() < 1e-4, "{clip}");
    }
}
