//! The GPU-layout uniform structs of `shaders/crowd_skin.wgsl`: the frame uniform ([`FrameUniform`]), the per-draw
//! uniform ([`DrawUniform`]) and its stride, and the GPU-driven draws' clock ([`GpuFrameUniform`]).

use bytemuck::{Pod, Zeroable};

use crate::debug_view::DebugView;
use crate::lighting::Lighting;

/// `FrameUniform` of `crowd_skin.wgsl`, 144 bytes (a test checks the layout with naga). Public only for that
/// layout test: not part of the API.
#[doc(hidden)]
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

/// `DrawUniform` of `crowd_skin.wgsl`, 48 bytes, stored at a [`DRAW_UNIFORM_STRIDE`] stride. Public only for the
/// layout test: not part of the API.
#[doc(hidden)]
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
pub(crate) struct GpuFrameUniform {
    /// The animation clock of the frame, in seconds.
    pub now: f32,
    /// The pose pool's time.
    pub pool_time: f32,
    /// Padding.
    pub pad: [u32; 2],
}

/// The distance between two draws' uniforms: 256 bytes, the largest `min_uniform_buffer_offset_alignment` wgpu
/// allows, so that every device takes the dynamic offsets. Public only for the layout test: not part of the API.
#[doc(hidden)]
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
