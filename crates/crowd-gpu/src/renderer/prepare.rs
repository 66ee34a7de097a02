//! [`CrowdRenderer::prepare`]: checks a packet against the meshes and limits, uploads its dirty ranges and plans
//! its draws (one per mesh and record chunk), writing the draw and frame uniforms; and [`PrepareStats`], what it
//! set up.

use crowd_cull::Tier;
use crowd_frame::{Packet, RecordKind};
use skin_pack::PaletteFormat;

use super::bind_groups::{draw_group, frame_group};
use super::{CrowdRenderer, PlannedDraw};
use crate::uniforms::{DRAW_UNIFORM_STRIDE, DrawUniform, FrameUniform};
use crate::{Error, Result};

/// What one [`CrowdRenderer::prepare`] set up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PrepareStats {
    /// Draw calls `render` records.
    pub draws: u32,
    /// Record chunks the instances span.
    pub chunks: u32,
    /// Instances drawn (each counted once, not once per mesh).
    pub instances: u32,
    /// Triangles drawn, over every mesh and instance.
    pub triangles: u64,
    /// Bytes written to the device: the packet's dirty ranges, the draw and frame uniforms.
    pub uploaded_bytes: u64,
}

impl<F: PaletteFormat + 'static> CrowdRenderer<F> {
    /// Uploads what changed in `packet` and plans its draws: every mesh for every non-empty packet draw, split at
    /// chunk boundaries. O(draws) checks; the records need none (a [`Packet`] is checked where it is built).
    /// After warm-up (the buffers and the plan at their largest) it allocates nothing itself; wgpu's
    /// `write_buffer` may, a fixed number of times per dirty range.
    ///
    /// # Errors
    ///
    /// [`Error::MeshJoint`] when a mesh
    /// reads a joint at or past the packet's `skin_joint_count`; [`Error::MissingLod`] when a draw names a LOD a
    /// mesh lacks; [`Error::Limit`] when a palette buffer is past `max_storage_buffer_binding_size` (palettes are
    /// bound whole) or any buffer the frame needs (records, palettes, draw uniforms) would be past
    /// `max_buffer_size`. Nothing is uploaded then, and `render` draws nothing until a `prepare` succeeds.
    pub fn prepare(&mut self, device: &wgpu::Device, queue: &wgpu::Queue, packet: &Packet<F>) -> Result<PrepareStats> {
        self.plan.clear();
        self.stats = PrepareStats::default();
        let joints = packet.skin_joint_count();
        for mesh in &self.meshes {
            if mesh.max_joint as usize >= joints {
                return Err(Error::MeshJoint {
                    mesh: mesh.name.clone(),
                    joint: mesh.max_joint,
                    palette_entries: joints,
                });
            }
        }
        let per_chunk = self.records_per_chunk();
        // Draw calls: one per mesh and chunk a non-empty packet draw touches (the plan below makes exactly these).
        let mut calls = 0u64;
        for draw in packet.draws() {
            if draw.instance_count == 0 {
                continue;
            }
            for mesh in &self.meshes {
                if mesh.lods.get(usize::from(draw.lod)).is_none() {
                    return Err(Error::MissingLod {
                        mesh: mesh.name.clone(),
                        lod: draw.lod,
                        levels: mesh.lods.len(),
                        instances: draw.instance_count,
                    });
                }
            }
            let last = u64::from(draw.first_instance) + u64::from(draw.instance_count) - 1;
            calls += last / u64::from(per_chunk) - u64::from(draw.first_instance / per_chunk) + 1;
        }
        let calls = calls.saturating_mul(self.meshes.len() as u64);
        let pool_bytes = size_of_val(packet.pool_palettes()) as u64;
        let unique_bytes = size_of_val(packet.unique_palettes()) as u64;
        let record_bytes = size_of_val(packet.records()) as u64;
        let uniform_bytes = calls.saturating_mul(DRAW_UNIFORM_STRIDE);
        for (buffer, bytes) in [("pooled palettes", pool_bytes), ("unique palettes", unique_bytes)] {
            if bytes > self.palette_window {
                return Err(Error::Limit {
                    buffer,
                    bytes,
                    limit: "max_storage_buffer_binding_size (palettes are bound whole)",
                    max: self.binding_limit,
                });
            }
        }
        // Every buffer that may grow is checked before anything is uploaded: a failed prepare changes nothing.
        let max = self.max_buffer;
        for (buffer, grow, bytes) in [
            ("records", &self.records, record_bytes),
            ("pooled palettes", &self.pool, pool_bytes),
            ("unique palettes", &self.unique, unique_bytes),
            ("draw uniforms", &self.draw_uniforms, uniform_bytes),
        ] {
            let size = grow.size_for(bytes, max);
            if bytes > grow.size() && size > max {
                return Err(Error::Limit {
                    buffer,
                    bytes: size,
                    limit: "max_buffer_size",
                    max,
                });
            }
        }

        let mut rebind = self.records.reserve(device, record_bytes, max);
        rebind |= self.pool.reserve(device, pool_bytes, max);
        rebind |= self.unique.reserve(device, unique_bytes, max);
        let resident_bytes = self.prepare_resident(device, queue, packet)?;
        if rebind {
            self.buffers_generation += 1;
            self.frame_group = frame_group(
                device,
                &self.frame_layout,
                &self.frame_uniform,
                &self.records,
                &self.pool,
                &self.unique,
                self.palette_window,
            );
        }
        let dirty = packet.dirty();
        let mut uploaded = resident_bytes
            + self
                .records
                .write_ranges(queue, bytemuck::cast_slice(packet.records()), &dirty.records);
        uploaded += self.pool.write_ranges(
            queue,
            bytemuck::cast_slice(packet.pool_palettes()),
            &dirty.pool_palettes,
        );
        uploaded += self.unique.write_ranges(
            queue,
            bytemuck::cast_slice(packet.unique_palettes()),
            &dirty.unique_palettes,
        );

        let mut chunks_used = 0u32;
        let mut triangles = 0u64;
        let mut instances = 0u32;
        self.draw_bytes.clear();
        for draw in packet.draws() {
            instances += draw.instance_count;
            let mut first = draw.first_instance;
            let end = draw.first_instance + draw.instance_count;
            while first < end {
                let chunk = first / per_chunk;
                let piece_end = end.min((chunk + 1) * per_chunk);
                chunks_used = chunks_used.max(chunk + 1);
                for (m, mesh) in self.meshes.iter().enumerate() {
                    let lod = mesh.lods[usize::from(draw.lod)];
                    let uniform = DrawUniform {
                        record_base: chunk * per_chunk,
                        pooled: u32::from(draw.kind == RecordKind::Pooled),
                        lod: u32::from(draw.lod),
                        tier: tier_code(draw.tier),
                        base_color: mesh.base_color,
                        uv_f16: u32::from(mesh.uv_f16),
                        mesh: m as u32,
                        pad: [0; 2],
                    };
                    let at = self.draw_bytes.len();
                    self.draw_bytes.resize(at + DRAW_UNIFORM_STRIDE as usize, 0);
                    self.draw_bytes[at..at + size_of::<DrawUniform>()].copy_from_slice(bytemuck::bytes_of(&uniform));
                    self.plan.push(PlannedDraw {
                        mesh: m as u32,
                        chunk,
                        first_index: lod.first_index,
                        index_count: lod.index_count,
                        first_instance: first,
                        instance_count: piece_end - first,
                    });
                    triangles += u64::from(lod.index_count / 3) * u64::from(piece_end - first);
                }
                first = piece_end;
            }
        }
        debug_assert_eq!(self.plan.len() as u64, calls, "the plan makes the draws counted above");
        if self
            .draw_uniforms
            .reserve(device, self.draw_bytes.len() as u64, self.max_buffer)
        {
            self.draw_group = draw_group(device, &self.draw_layout, &self.draw_uniforms);
        }
        if !self.draw_bytes.is_empty() {
            queue.write_buffer(&self.draw_uniforms.buffer, 0, &self.draw_bytes);
        }
        self.joints = joints as u32;
        let frame = FrameUniform::new(packet.camera().view_proj(), &self.lighting, joints as u32, self.view);
        queue.write_buffer(&self.frame_uniform, 0, bytemuck::bytes_of(&frame));
        uploaded += self.draw_bytes.len() as u64 + size_of::<FrameUniform>() as u64;
        self.stats = PrepareStats {
            draws: self.plan.len() as u32,
            chunks: chunks_used,
            instances,
            triangles,
            uploaded_bytes: uploaded,
        };
        Ok(self.stats)
    }
}

fn tier_code(tier: Tier) -> u32 {
    tier as u32
}
