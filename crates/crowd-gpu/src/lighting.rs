//! [`Lighting`]: the scene's directional sun and hemisphere light, in linear RGB.

/// The scene's light: a directional sun and a hemisphere term, in linear RGB.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lighting {
    /// The direction towards the sun (normalised by the renderer).
    pub sun_direction: [f32; 3],
    /// The sun's colour times intensity.
    pub sun_color: [f32; 3],
    /// The light from the sky (normals up).
    pub sky_color: [f32; 3],
    /// The light from the ground (normals down).
    pub ground_color: [f32; 3],
}

impl Default for Lighting {
    /// A late-afternoon sun from the front left, a blue sky and a warm ground bounce.
    fn default() -> Self {
        Self {
            sun_direction: [-0.45, 0.75, 0.5],
            sun_color: [1.05, 0.95, 0.82],
            sky_color: [0.36, 0.42, 0.52],
            ground_color: [0.2, 0.17, 0.13],
        }
    }
}
