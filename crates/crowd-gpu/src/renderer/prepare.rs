//! [`CrowdRenderer::prepare`]: checks a packet against the meshes, the limits and (GPU-driven) the resident state the
//! renderer holds, then records its uploads and draws' plan into the engine's encoder; and [`PrepareStats`], what it
//! set up. Every check runs before anything grows or is staged, so a failed `prepare` changes nothing.

use crowd_cull::Tier;
use crowd_frame::{Packet, RecordKind};
use skin_pack::PaletteFormat;

use super::{CrowdRenderer, PlannedDraw};
use crate::uniforms::{DRAW_UNIFORM_STRIDE, DrawUniform};
use crate::upload::Uploads;
use crate::{Error, Result};

/// What one [`CrowdRenderer::prepare`] set up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PrepareStats {
    /// Draw calls of the packet's records (per view; the GPU-driven indirect draws come on top).
    pub draws: u32,
    /// Record chunks the instances span.
    pub chunks: u32,
    /// Instances drawn from records (each counted once, not once per mesh).
    pub instances: u32,
    /// Triangles of the record draws, over every mesh and instance.
    pub triangles: u64,
    /// Bytes staged for the device: the packet's dirty ranges, its resident changes, the clips, clock and uniforms.
    pub uploaded_bytes: u64,
}

/// The buffer sizes a checked packet needs.
struct Needs {
    records: u64,
    pool: u64,
    unique: u64,
    uniforms: u64,
}

impl<F: PaletteFormat + 'static> CrowdRenderer<F> {
    /// Checks `packet`, then records what changed into `encoder`: its dirty ranges, its draw uniforms and, on the
    /// GPU-driven path, its resident changes (and their scatter pass), the pool's clips and the clock. Plans one
    /// draw per mesh and record chunk of every non-empty packet draw. O(draws + changes) checks; the records need
    /// none (a [`Packet`] is checked where it is built). After warm-up (buffers and plan at their largest) it
    /// allocates nothing itself; wgpu allocates a fixed number of times per copy and for the staging belt's re-map.
    ///
    /// The GPU work runs where the engine submits `encoder`: a view prepared and drawn in an earlier encoder still
    /// draws what was prepared before it, whatever `prepare` is called in between.
    ///
    /// # Errors
    ///
    /// - [`Error::MeshJoint`] when a mesh reads a joint at or past the packet's `skin_joint_count`;
    ///   [`Error::MissingLod`] when a draw names a LOD a mesh lacks;
    /// - [`Error::Limit`] when a palette buffer is past `max_storage_buffer_binding_size` (palettes are bound whole),
    ///   a buffer the frame needs (records, palettes, draw uniforms) would be past `max_buffer_size`, or a record
    ///   chunk starts past what a `u32` dynamic offset reaches;
    /// - GPU-driven: [`Error::OutOfStep`] when the packet's resident changes do not build on the state the renderer
    ///   holds (ask the crowd for a full resend), [`Error::Bake`] for clips a bake cannot play or a packet without a
    ///   pose pool and no bone-animation bake, [`Error::ResidentChange`] for malformed changes, [`Error::Limit`] for
    ///   resident buffers past the limits.
    ///
    /// Nothing changes and nothing is recorded on error: the views keep drawing the last prepared packet.
    pub fn prepare(
        &mut self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        packet: &Packet<F>,
    ) -> Result<PrepareStats> {
        let needs = self.check(packet)?;
        let resident = self.check_resident(packet)?;

        // Everything is checked: grow, stage and record.
        let max = self.limits.buffer;
        self.records.reserve(device, needs.records, max);
        self.pool.reserve(device, needs.pool, max);
        self.unique.reserve(device, needs.unique, max);
        self.draw_uniforms.reserve(device, needs.uniforms, max);
        let mut uploads = std::mem::replace(&mut self.uploads, Uploads::new(0));
        let mut staging = uploads.begin(device, encoder);
        let dirty = packet.dirty();
        self.records
            .stage_ranges(&mut staging, bytemuck::cast_slice(packet.records()), &dirty.records);
        self.pool.stage_ranges(
            &mut staging,
            bytemuck::cast_slice(packet.pool_palettes()),
            &dirty.pool_palettes,
        );
        self.unique.stage_ranges(
            &mut staging,
            bytemuck::cast_slice(packet.unique_palettes()),
            &dirty.unique_palettes,
        );
        let (chunks, instances, triangles) = self.plan(packet);
        staging.push(&self.draw_uniforms.buffer, 0, &self.draw_bytes);
        let scatter = self.stage_resident(device, &mut staging, packet, resident);
        let uploaded = staging.finish();
        self.uploads = uploads;
        if scatter && let Some(g) = self.gpu_driven.as_mut() {
            g.resident.record_scatter(device, encoder);
        }
        self.joints = packet.skin_joint_count() as u32;
        self.stats = PrepareStats {
            draws: self.plan.len() as u32,
            chunks,
            instances,
            triangles,
            uploaded_bytes: uploaded,
        };
        Ok(self.stats)
    }

    /// Every check of [`CrowdRenderer::prepare`] but the resident part's, in O(draws); returns the sizes the packet
    /// needs.
    fn check(&self, packet: &Packet<F>) -> Result<Needs> {
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
        let per_chunk = u64::from(self.records_per_chunk());
        // Draw calls: one per mesh and chunk a non-empty packet draw touches (the plan makes exactly these).
        let mut calls = 0u64;
        let mut last_chunk = 0u64;
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
            calls += last / per_chunk - u64::from(draw.first_instance) / per_chunk + 1;
            last_chunk = last_chunk.max(last / per_chunk);
        }
        let window = self.limits.record_window();
        if last_chunk.saturating_mul(window) > u64::from(u32::MAX) {
            return Err(Error::Limit {
                buffer: "records",
                bytes: size_of_val(packet.records()) as u64,
                limit: "max_storage_buffer_binding_size windows at u32 dynamic offsets",
                max: u64::from(u32::MAX) + window,
            });
        }
        let needs = Needs {
            records: size_of_val(packet.records()) as u64,
            pool: size_of_val(packet.pool_palettes()) as u64,
            unique: size_of_val(packet.unique_palettes()) as u64,
            uniforms: calls
                .saturating_mul(self.meshes.len() as u64)
                .saturating_mul(DRAW_UNIFORM_STRIDE),
        };
        let palette_window = self.limits.palette_window();
        for (buffer, bytes) in [("pooled palettes", needs.pool), ("unique palettes", needs.unique)] {
            if bytes > palette_window {
                return Err(Error::Limit {
                    buffer,
                    bytes,
                    limit: "max_storage_buffer_binding_size (palettes are bound whole)",
                    max: self.limits.binding,
                });
            }
        }
        let max = self.limits.buffer;
        for (buffer, grow, bytes) in [
            ("records", &self.records, needs.records),
            ("pooled palettes", &self.pool, needs.pool),
            ("unique palettes", &self.unique, needs.unique),
            ("draw uniforms", &self.draw_uniforms, needs.uniforms),
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
        Ok(needs)
    }

    /// Plans the packet's record draws (every mesh for every non-empty packet draw, split at chunk boundaries) and
    /// their uniforms; returns the chunks used, the instances and the triangles.
    fn plan(&mut self, packet: &Packet<F>) -> (u32, u32, u64) {
        let per_chunk = self.records_per_chunk();
        self.plan.clear();
        self.draw_bytes.clear();
        let mut chunks_used = 0u32;
        let mut triangles = 0u64;
        let mut instances = 0u32;
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
        (chunks_used, instances, triangles)
    }
}

fn tier_code(tier: Tier) -> u32 {
    tier as u32
}
