//! The GPU's work, counted in units that do not depend on the device: pipeline-statistics queries around the
//! engine's render passes and the crowd's cull passes ([`WorkQueries`]), and what a view's indirect draws asked for,
//! per LOD and tier ([`DrawTally`]).
//!
//! Timings on one GPU say little about another (a datacenter GPU has almost no raster hardware; lavapipe is a CPU),
//! but the number of vertex-shader runs, primitives and fragment-shader runs a frame costs is the same on every
//! device that draws the same image, within the rasteriser's own rules: a vertex cache that reuses more or less,
//! 2 × 2 fragment quads, and the clipper's splitting of primitives that cross the near plane.

use crowd_cull::limits::{MAX_LODS, TIER_COUNT};

use crate::gpu_cull::DrawSlot;
use crate::headless::map_for_reading;
use crate::{Error, Result};

/// The render statistics a [`WorkQueries`] counts, in the order the device writes them.
pub const RENDER_STATISTICS: wgpu::PipelineStatisticsTypes = wgpu::PipelineStatisticsTypes::VERTEX_SHADER_INVOCATIONS
    .union(wgpu::PipelineStatisticsTypes::CLIPPER_INVOCATIONS)
    .union(wgpu::PipelineStatisticsTypes::CLIPPER_PRIMITIVES_OUT)
    .union(wgpu::PipelineStatisticsTypes::FRAGMENT_SHADER_INVOCATIONS);

/// Words (`u64`) one render query resolves to.
const RENDER_WORDS: u64 = 4;

/// What the device ran for one render pass, or for one cull.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuWork {
    /// Vertex-shader invocations (a device's post-transform cache may run a shared vertex once or several times).
    pub vertex_invocations: u64,
    /// Primitives the vertex stage sent to the clipper: the triangles the draws asked for.
    pub clipper_invocations: u64,
    /// Primitives the clipper passed on to the rasteriser (those in the view; a triangle split at the near plane
    /// may count more than once).
    pub primitives: u64,
    /// Fragment-shader invocations, helper invocations of partly covered 2 × 2 quads included on most devices.
    pub fragment_invocations: u64,
    /// Compute-shader invocations (the cull's).
    pub compute_invocations: u64,
}

impl std::ops::Add for GpuWork {
    type Output = Self;

    /// The sum of two counts, field by field (saturating).
    fn add(self, other: Self) -> Self {
        Self {
            vertex_invocations: self.vertex_invocations.saturating_add(other.vertex_invocations),
            clipper_invocations: self.clipper_invocations.saturating_add(other.clipper_invocations),
            primitives: self.primitives.saturating_add(other.primitives),
            fragment_invocations: self.fragment_invocations.saturating_add(other.fragment_invocations),
            compute_invocations: self.compute_invocations.saturating_add(other.compute_invocations),
        }
    }
}

/// One pipeline-statistics query of a [`WorkQueries`], for a pass the crate begins itself (a view's cull,
/// `CullQueries::statistics`).
#[derive(Clone, Copy, Debug)]
pub struct StatisticsQuery<'a> {
    /// The query set (of type `PipelineStatistics`).
    pub query_set: &'a wgpu::QuerySet,
    /// The query's index in it.
    pub index: u32,
}

/// Pipeline-statistics queries for `render` render passes and `cull` cull passes per submission, with their resolve
/// and readback buffers.
///
/// A frame brackets each render pass it wants counted with [`WorkQueries::begin_render`] and
/// [`WorkQueries::end_render`], gives [`WorkQueries::cull`] to the views it wants counted
/// (`ViewDesc::cull_queries`), calls [`WorkQueries::resolve`] on its encoder after the last of them, submits, and then
/// reads the counts with [`WorkQueries::read`]. A query the submission did not write reads as zero.
#[derive(Debug)]
pub struct WorkQueries {
    render: wgpu::QuerySet,
    cull: wgpu::QuerySet,
    render_count: u32,
    cull_count: u32,
    resolve: wgpu::Buffer,
    readback: wgpu::Buffer,
}

/// What one submission's queries counted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkCounts {
    /// Per render query: vertex and fragment invocations and primitives (`compute_invocations` is zero).
    pub render: Vec<GpuWork>,
    /// Per cull query: compute invocations (the rest is zero).
    pub cull: Vec<GpuWork>,
}

impl WorkCounts {
    /// Every query's counts added together.
    pub fn total(&self) -> GpuWork {
        self.render
            .iter()
            .chain(&self.cull)
            .fold(GpuWork::default(), |a, &b| a + b)
    }
}

impl WorkQueries {
    /// Queries for `render` render passes and `cull` cull passes (each at least 1, at most 4,096, wgpu's limit on
    /// a query set).
    ///
    /// # Errors
    ///
    /// [`Error::MissingFeature`] when the device was made without `PIPELINE_STATISTICS_QUERY`;
    /// [`Error::QueryCount`] for a count of 0 or past 4,096.
    pub fn new(device: &wgpu::Device, render: u32, cull: u32) -> Result<Self> {
        if !device.features().contains(wgpu::Features::PIPELINE_STATISTICS_QUERY) {
            return Err(Error::MissingFeature {
                feature: "PIPELINE_STATISTICS_QUERY",
                for_what: "counting the GPU's work",
            });
        }
        for (what, count) in [("render", render), ("cull", cull)] {
            if !(1..=wgpu::QUERY_SET_MAX_QUERIES).contains(&count) {
                return Err(Error::QueryCount {
                    what,
                    count,
                    max: wgpu::QUERY_SET_MAX_QUERIES,
                });
            }
        }
        let render_set = device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("crowd work: render"),
            ty: wgpu::QueryType::PipelineStatistics(RENDER_STATISTICS),
            count: render,
        });
        let cull_set = device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("crowd work: cull"),
            ty: wgpu::QueryType::PipelineStatistics(wgpu::PipelineStatisticsTypes::COMPUTE_SHADER_INVOCATIONS),
            count: cull,
        });
        // Within 4,096 queries of 4 words each: at most 129 KiB, far from any limit.
        let bytes = cull_offset(render) + u64::from(cull) * 8;
        let resolve = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("crowd work: resolve"),
            size: bytes,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let readback = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("crowd work: readback"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        Ok(Self {
            render: render_set,
            cull: cull_set,
            render_count: render,
            cull_count: cull,
            resolve,
            readback,
        })
    }

    /// Starts render query `index` in `pass`; end it with [`WorkQueries::end_render`] in the same pass. Queries do
    /// not nest, and each index is written once per submission (wgpu's validation reports a second write).
    ///
    /// # Panics
    ///
    /// Never; an index past the set is wgpu's validation error on the pass.
    pub fn begin_render(&self, pass: &mut wgpu::RenderPass<'_>, index: u32) {
        pass.begin_pipeline_statistics_query(&self.render, index);
    }

    /// Ends the render query begun in `pass`.
    pub fn end_render(&self, pass: &mut wgpu::RenderPass<'_>) {
        pass.end_pipeline_statistics_query();
    }

    /// Cull query `index`, for a view's `CullQueries::statistics`.
    pub fn cull(&self, index: u32) -> StatisticsQuery<'_> {
        StatisticsQuery {
            query_set: &self.cull,
            index,
        }
    }

    /// Records the resolve of every query and the copy to the readback buffer into `encoder`, after the passes
    /// that wrote them.
    pub fn resolve(&self, encoder: &mut wgpu::CommandEncoder) {
        encoder.resolve_query_set(&self.render, 0..self.render_count, &self.resolve, 0);
        encoder.resolve_query_set(
            &self.cull,
            0..self.cull_count,
            &self.resolve,
            cull_offset(self.render_count),
        );
        encoder.copy_buffer_to_buffer(&self.resolve, 0, &self.readback, 0, self.resolve.size());
    }

    /// The counts, after the submission with [`WorkQueries::resolve`] (this waits for the device).
    ///
    /// # Errors
    ///
    /// [`Error::Poll`], [`Error::Map`] or [`Error::MapRange`] when the readback fails.
    pub fn read(&self, device: &wgpu::Device) -> Result<WorkCounts> {
        map_for_reading(device, &self.readback, "the work counts")?;
        let words: Vec<u64> = {
            let range = self.readback.get_mapped_range(..).map_err(|source| Error::MapRange {
                what: "the work counts",
                source,
            })?;
            bytemuck::pod_collect_to_vec(&range)
        };
        self.readback.unmap();
        let render = &words[..self.render_count as usize * RENDER_WORDS as usize];
        let cull = &words[(cull_offset(self.render_count) / 8) as usize..];
        Ok(WorkCounts {
            render: render
                .chunks_exact(RENDER_WORDS as usize)
                .map(|w| GpuWork {
                    vertex_invocations: w[0],
                    clipper_invocations: w[1],
                    primitives: w[2],
                    fragment_invocations: w[3],
                    compute_invocations: 0,
                })
                .collect(),
            cull: cull
                .iter()
                .map(|&n| GpuWork {
                    compute_invocations: n,
                    ..GpuWork::default()
                })
                .collect(),
        })
    }
}

/// Where the cull queries resolve: after `render` render queries, aligned as resolves must be.
fn cull_offset(render: u32) -> u64 {
    (u64::from(render) * RENDER_WORDS * 8).next_multiple_of(wgpu::QUERY_RESOLVE_BUFFER_ALIGNMENT)
}

/// What one view's indirect draws asked for, per LOD and tier: instances and triangles (indices / 3 × instances).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DrawTally {
    /// Instances drawn, `[lod][tier]` (tiers: unique, pooled, baked, VAT), summed over meshes.
    pub instances: [[u64; TIER_COUNT]; MAX_LODS],
    /// Triangles drawn, `[lod][tier]`.
    pub triangles: [[u64; TIER_COUNT]; MAX_LODS],
}

impl DrawTally {
    /// The tally of `draws` (a view's draw slots, `CullView::draw_slots`) from their indirect arguments `args` (five
    /// words a draw, as read back from `CullView::args_buffer`).
    ///
    /// # Errors
    ///
    /// [`Error::ReadbackRange`] when `args` holds fewer than five words per draw.
    pub fn from_args(draws: &[DrawSlot], args: &[u32]) -> Result<Self> {
        if args.len() / 5 < draws.len() {
            return Err(Error::ReadbackRange {
                bytes: draws.len() as u64 * 20,
                size: args.len() as u64 * 4,
            });
        }
        let mut t = Self::default();
        for (slot, a) in draws.iter().zip(args.chunks_exact(5)) {
            let (lod, tier) = (slot.bucket as usize / TIER_COUNT, slot.bucket as usize % TIER_COUNT);
            let Some(row) = t.instances.get_mut(lod) else {
                continue;
            };
            // A mesh's instances are counted once per mesh; the instance count is per (mesh, bucket).
            row[tier] = row[tier].max(u64::from(a[1]));
            t.triangles[lod][tier] += u64::from(a[0] / 3) * u64::from(a[1]);
        }
        Ok(t)
    }

    /// Every triangle drawn.
    pub fn total_triangles(&self) -> u64 {
        self.triangles.iter().flatten().sum()
    }

    /// Instances per LOD, every tier.
    pub fn instances_per_lod(&self) -> [u64; MAX_LODS] {
        self.instances.map(|row| row.iter().sum())
    }

    /// Triangles per LOD, every tier.
    pub fn triangles_per_lod(&self) -> [u64; MAX_LODS] {
        self.triangles.map(|row| row.iter().sum())
    }
}
