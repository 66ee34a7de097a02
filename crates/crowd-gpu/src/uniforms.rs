//! The uniforms of `shaders/crowd_skin.wgsl` ([`FrameUniform`], [`DrawUniform`]), the lighting and the debug views.

use bytemuck::{Pod, Zeroable};

/// What the fragment shader shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DebugView {
    /// Base colour texture × factor × vertex colour × tint, under the sun and the hemisphere light.
    #[default]
    Shaded,
    /// Each instance in its own flat colour, from its record index ([`instance_id_color`]), unlit.
    InstanceId,
    /// Each LOD in its own colour (green, yellow, red, blue), lit.
    Lod,
    /// Each culling tier in its own colour (unique green, pooled yellow, baked red, VAT blue), lit.
    Tier,
    /// The world normal as colour.
    Normals,
}

impl DebugView {
    pub(crate) fn code(self) -> u32 {
        match self {
            Self::Shaded => 0,
            Self::InstanceId => 1,
            Self::Lod => 2,
            Self::Tier => 3,
            Self::Normals => 4,
        }
    }
}

/// The sRGB bytes that [`DebugView::InstanceId`] writes for record `index`: three bits per channel, each level
/// `l` the byte `round(255 · l / 7)`, red from the lowest bits (so indices below 512 have distinct colours).
pub fn instance_id_color(index: u32) -> [u8; 3] {
    [index & 7, (index >> 3) & 7, (index >> 6) & 7].map(|l| ((255 * l + 3) / 7) as u8)
}

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

/// `FrameUniform` of `crowd_skin.wgsl`, 144 bytes (a test checks the layout with naga).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct FrameUniform {
    /// World to clip, column-major.
    pub view_proj: [[f32; 4]; 4],
    /// Towards the sun, unit (w unused).
    pub sun_direction: [f32; 4],
    /// The sun's colour (w unused).
    pub sun_color: [f32; 4],
    /// The sky's colour (w unused).
    pub sky_color: [f32; 4],
    /// The ground's colour (w unused).
    pub ground_color: [f32; 4],
    /// Entries per palette.
    pub joint_count: u32,
    /// [`DebugView`] as its shader code.
    pub view: u32,
    /// Padding.
    pub pad: [u32; 2],
}

/// `DrawUniform` of `crowd_skin.wgsl`, 48 bytes, stored at a [`DRAW_UNIFORM_STRIDE`] stride.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct DrawUniform {
    /// The first record of the bound chunk.
    pub record_base: u32,
    /// 1 for pooled records, 0 for unique.
    pub pooled: u32,
    /// The LOD.
    pub lod: u32,
    /// The culling tier, 0 to 3.
    pub tier: u32,
    /// The material's base colour factor.
    pub base_color: [f32; 4],
    /// 1 when the mesh's UVs are f16.
    pub uv_f16: u32,
    /// The mesh's index in the renderer (the VAT tier finds the mesh's first baked vertex by it).
    pub mesh: u32,
    /// Padding.
    pub pad: [u32; 2],
}

/// `GpuFrame` of `crowd_skin.wgsl`, 16 bytes: the GPU-driven draws' clock.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct GpuFrameUniform {
    /// The animation clock of the frame, in seconds.
    pub now: f32,
    /// The pose pool's time.
    pub pool_time: f32,
    /// Padding.
    pub pad: [u32; 2],
}

/// The distance between two draws' uniforms: 256 bytes, the largest `min_uniform_buffer_offset_alignment` wgpu
/// allows, so that every device takes the dynamic offsets.
pub const DRAW_UNIFORM_STRIDE: u64 = 256;

impl FrameUniform {
    pub(crate) fn new(view_proj: glam::Mat4, lighting: &Lighting, joint_count: u32, view: DebugView) -> Self {
        let v3 = |v: [f32; 3]| [v[0], v[1], v[2], 0.0];
        let sun = glam::Vec3::from_array(lighting.sun_direction).normalize_or(glam::Vec3::Y);
        Self {
            view_proj: view_proj.to_cols_array_2d(),
            sun_direction: v3(sun.to_array()),
            sun_color: v3(lighting.sun_color),
            sky_color: v3(lighting.sky_color),
            ground_color: v3(lighting.ground_color),
            joint_count,
            view: view.code(),
            pad: [0; 2],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_id_colors_are_distinct_below_512() {
        let colors: std::collections::HashSet<[u8; 3]> = (0..512).map(instance_id_color).collect();
        assert_eq!(colors.len(), 512);
        assert_eq!(instance_id_color(0), [0, 0, 0]);
        assert_eq!(instance_id_color(7), [255, 0, 0]);
        assert_eq!(instance_id_color(1), [36, 0, 0]);
    }
}
