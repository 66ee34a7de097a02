//! What a run measured: frame times and their percentiles, CPU milliseconds per stage on each thread, and what the
//! last frames drew; printed as a table and written as JSON (`--bench`).

use std::path::Path;

use anyhow::{Context, Result};
use crowd_cull::limits::{MAX_LODS, TIER_COUNT};
use crowd_frame::{FrameStats, Packet};
use crowd_gpu::{CULL_BUCKETS, DrawTally, GpuWork, PrepareStats, RenderPath};
use serde::Serialize;

use crate::sim::SimReport;
use crate::stage::Stage;

/// Per rendered frame, the render thread's milliseconds.
#[derive(Clone, Debug, Default)]
pub struct RenderTimes {
    /// From one drawn frame to the next (the frame time a viewer sees).
    pub frame_ms: Vec<f32>,
    /// Waiting for the simulation's packet.
    pub wait_ms: Vec<f32>,
    /// `prepare` and `prepare_view` (uploads and the cull pass's encoding).
    pub prepare_ms: Vec<f32>,
    /// Recording and submitting the render pass.
    pub record_ms: Vec<f32>,
    /// Acquiring, presenting or reading back (the GPU's work shows up here).
    pub present_ms: Vec<f32>,
}

impl RenderTimes {
    /// Forgets the oldest half when a long run has kept many frames.
    pub fn trim(&mut self) {
        const KEPT: usize = 1 << 16;
        if self.frame_ms.len() >= KEPT {
            for v in [
                &mut self.frame_ms,
                &mut self.wait_ms,
                &mut self.prepare_ms,
                &mut self.record_ms,
                &mut self.present_ms,
            ] {
                let n = v.len().min(KEPT / 2);
                v.drain(..n);
            }
        }
    }
}

/// What one frame drew, per LOD and tier; on the GPU-driven path read back from the view's counters and indirect
/// arguments, and what the GPU ran for the main view's crowd, where the device counts it.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Drawn {
    /// Instances per LOD.
    pub per_lod: [u32; MAX_LODS],
    /// Instances per tier: unique, pooled, baked, VAT.
    pub per_tier: [u32; 4],
    /// Instances drawn.
    pub visible: u32,
    /// Draw calls (indirect draws included).
    pub draws: u32,
    /// Triangles the draws asked for.
    pub triangles: u64,
    /// Bytes uploaded by `prepare`.
    pub uploaded_bytes: u64,
    /// The main view's crowd draws and cull, counted by pipeline-statistics queries (`None` where the device has
    /// none).
    #[serde(serialize_with = "serialize_work")]
    pub work: Option<GpuWork>,
}

impl Drawn {
    /// What `packet` drew through `stage`'s renderer and main view, after `prepare` returned `prepared`.
    ///
    /// # Errors
    ///
    /// crowd-gpu's errors reading the counters and queries back.
    pub fn of(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        stage: &Stage,
        packet: &Packet,
        prepared: &PrepareStats,
    ) -> Result<Self> {
        let mut d = Self {
            draws: prepared.draws,
            triangles: prepared.triangles,
            uploaded_bytes: prepared.uploaded_bytes,
            ..Self::default()
        };
        for draw in packet.draws() {
            d.per_lod[usize::from(draw.lod).min(MAX_LODS - 1)] += draw.instance_count;
            d.per_tier[draw.tier as usize] += draw.instance_count;
            d.visible += draw.instance_count;
        }
        if let (RenderPath::GpuDriven, Some(cull)) = (stage.renderer().path(), stage.view().cull()) {
            let counts = read_buffer(device, queue, cull.counts_buffer(), (CULL_BUCKETS * 4) as u64)?;
            for (b, &n) in counts.iter().enumerate() {
                d.per_lod[b / TIER_COUNT] += n;
                d.per_tier[b % TIER_COUNT] += n;
                d.visible += n;
            }
            let args = read_buffer(device, queue, cull.args_buffer(), u64::from(cull.draw_count()) * 20)?;
            d.triangles += DrawTally::from_args(cull.draw_slots(), &args)?.total_triangles();
            d.draws += cull.draw_count();
        }
        if let Some(work) = stage.work() {
            d.work = Some(work.read(device)?.total());
        }
        Ok(d)
    }
}

/// `GpuWork` as its five counts, or `null`.
fn serialize_work<S: serde::Serializer>(work: &Option<GpuWork>, s: S) -> std::result::Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Work {
        vertex_invocations: u64,
        clipper_invocations: u64,
        primitives: u64,
        fragment_invocations: u64,
        cull_invocations: u64,
    }
    work.map(|w| Work {
        vertex_invocations: w.vertex_invocations,
        clipper_invocations: w.clipper_invocations,
        primitives: w.primitives,
        fragment_invocations: w.fragment_invocations,
        cull_invocations: w.compute_invocations,
    })
    .serialize(s)
}

impl Drawn {
    /// One line: visible per LOD (up to the last one drawn, at least three) and tier, draws, triangles, bytes
    /// uploaded, and the GPU's counted work.
    pub fn summary(&self) -> String {
        let lods = self.per_lod.iter().rposition(|&n| n > 0).map_or(3, |l| (l + 1).max(3));
        let names: Vec<String> = (0..lods).map(|l| l.to_string()).collect();
        let counts: Vec<String> = self.per_lod[..lods].iter().map(u32::to_string).collect();
        let mut line = format!(
            "{} visible (LOD {}: {}; unique {}, pooled {}, baked {}, VAT {}), {} draws, {:.2} M triangles, {} KiB \
             uploaded",
            self.visible,
            names.join("/"),
            counts.join("/"),
            self.per_tier[0],
            self.per_tier[1],
            self.per_tier[2],
            self.per_tier[3],
            self.draws,
            self.triangles as f64 / 1e6,
            self.uploaded_bytes / 1024
        );
        if let Some(w) = self.work {
            line.push_str(&format!(
                " | GPU work: {:.2} M primitives, {:.2} M vertex and {:.2} M fragment invocations, {:.2} M cull \
                 invocations",
                w.primitives as f64 / 1e6,
                w.vertex_invocations as f64 / 1e6,
                w.fragment_invocations as f64 / 1e6,
                w.compute_invocations as f64 / 1e6
            ));
        }
        line
    }
}

/// The first `bytes` of `buffer` (`COPY_SRC`) as little-endian words, after everything submitted so far.
fn read_buffer(device: &wgpu::Device, queue: &wgpu::Queue, buffer: &wgpu::Buffer, bytes: u64) -> Result<Vec<u32>> {
    if bytes == 0 {
        return Ok(Vec::new());
    }
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("crowd-demo stats readback"),
        size: bytes,
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
    encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, bytes);
    queue.submit([encoder.finish()]);
    let (sender, receiver) = std::sync::mpsc::channel();
    staging.map_async(wgpu::MapMode::Read, .., move |r| drop(sender.send(r)));
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| anyhow::anyhow!("waiting for the stats readback: {e}"))?;
    receiver.recv().context("the stats readback was never mapped")??;
    let words = {
        let view = staging.get_mapped_range(..).context("reading the stats readback")?;
        view.chunks_exact(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect()
    };
    staging.unmap();
    Ok(words)
}

/// The `p`-th percentile (0 to 100) of `values`, by nearest rank; 0 for none.
pub fn percentile(values: &[f32], p: f32) -> f32 {
    if values.is_empty() {
        return 0.0;
    }
    let mut v = values.to_vec();
    v.sort_by(f32::total_cmp);
    let rank = ((p / 100.0) * v.len() as f32).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

/// The frame times to take percentiles of: without the first tenth when there are more than 10 (those pay for
/// shader compilation and first uploads).
pub fn settled(frame_ms: &[f32]) -> &[f32] {
    if frame_ms.len() > 10 {
        &frame_ms[frame_ms.len() / 10..]
    } else {
        frame_ms
    }
}

/// The mean of `values`; 0 for none.
pub fn mean(values: &[f32]) -> f32 {
    if values.is_empty() {
        0.0
    } else {
        values.iter().sum::<f32>() / values.len() as f32
    }
}

/// The whole run's figures, as `--bench` writes them.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The scene's name or file.
    pub scene: String,
    /// The model file.
    pub model: String,
    /// The adapter and its type.
    pub adapter: String,
    /// `GPU-driven` or `CPU-culled`.
    pub path: String,
    /// Window or headless, and the size in pixels.
    pub target: String,
    /// MSAA samples.
    pub msaa: u32,
    /// Characters at the end.
    pub instances: usize,
    /// Frames drawn.
    pub frames: usize,
    /// Frame time percentiles, in milliseconds.
    pub frame_ms_p50: f32,
    /// 99th percentile.
    pub frame_ms_p99: f32,
    /// Frames per second from the median frame time.
    pub fps_p50: f32,
    /// The simulation thread's mean milliseconds per step, by stage.
    pub sim_ms: SimStages,
    /// The render thread's mean milliseconds per drawn frame, by stage.
    pub render_ms: RenderStages,
    /// What the last drawn frame drew.
    pub last_frame: Drawn,
}

/// The simulation thread's stages (crowd-frame's `StageTimes`, and the game's own logic).
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct SimStages {
    /// The scene's behaviour: clip changes and moves.
    pub game: f32,
    /// `CrowdFrame::step` in all, waiting for a free packet included.
    pub step: f32,
    /// Of which: applying changes.
    pub changes: f32,
    /// Culling.
    pub cull: f32,
    /// The pose pool.
    pub pool: f32,
    /// Unique poses.
    pub unique: f32,
    /// Waiting for a free packet.
    pub wait: f32,
    /// Flattening palettes.
    pub flatten: f32,
    /// Packing records.
    pub pack: f32,
}

/// The render thread's stages.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct RenderStages {
    /// Waiting for the packet.
    pub wait: f32,
    /// `prepare` and `prepare_view`.
    pub prepare: f32,
    /// Recording and submitting.
    pub record: f32,
    /// Acquiring and presenting, or reading back.
    pub present: f32,
}

impl SimStages {
    /// The means of `report` and of the packets' stage times summed in `stages` over `packets` packets.
    pub fn of(report: &SimReport, stages: &FrameStats, packets: u64) -> Self {
        let n = packets.max(1) as f32;
        let t = stages.stages;
        Self {
            game: mean(&report.game_ms),
            step: mean(&report.step_ms),
            changes: t.changes_ms / n,
            cull: t.cull_ms / n,
            pool: t.pool_ms / n,
            unique: t.unique_ms / n,
            wait: t.wait_ms / n,
            flatten: t.flatten_ms / n,
            pack: t.pack_ms / n,
        }
    }
}

/// Adds `packet`'s stage times into `sum`.
pub fn add_stages(sum: &mut FrameStats, packet: &FrameStats) {
    let (s, p) = (&mut sum.stages, packet.stages);
    s.changes_ms += p.changes_ms;
    s.cull_ms += p.cull_ms;
    s.pool_ms += p.pool_ms;
    s.unique_ms += p.unique_ms;
    s.wait_ms += p.wait_ms;
    s.flatten_ms += p.flatten_ms;
    s.pack_ms += p.pack_ms;
}

impl Report {
    /// Prints the report as a table.
    pub fn print(&self) {
        println!(
            "{} on {} ({}), {}, {}x MSAA: {} characters, {} frames",
            self.scene, self.adapter, self.path, self.target, self.msaa, self.instances, self.frames
        );
        println!(
            "  frame time  p50 {:.2} ms  p99 {:.2} ms  ({:.1} fps at p50)",
            self.frame_ms_p50, self.frame_ms_p99, self.fps_p50
        );
        let s = self.sim_ms;
        println!(
            "  simulation thread, ms per step: game {:.3}, step {:.3} (changes {:.3}, cull {:.3}, pool {:.3}, unique \
             {:.3}, flatten {:.3}, pack {:.3}, waiting for a packet {:.3})",
            s.game, s.step, s.changes, s.cull, s.pool, s.unique, s.flatten, s.pack, s.wait
        );
        let r = self.render_ms;
        println!(
            "  render thread, ms per frame: waiting for a packet {:.3}, prepare {:.3}, record {:.3}, present or \
             read back {:.3}",
            r.wait, r.prepare, r.record, r.present
        );
        println!("  last frame: {}", self.last_frame.summary());
    }

    /// Writes the report as JSON to `path`.
    ///
    /// # Errors
    ///
    /// When the file cannot be written.
    pub fn write_json(&self, path: &Path) -> Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let text = serde_json::to_string_pretty(self)?;
        std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
        println!("  figures written to {}", path.display());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_by_nearest_rank() {
        let v: Vec<f32> = (1..=100).rev().map(|i| i as f32).collect();
        assert_eq!(percentile(&v, 50.0), 50.0);
        assert_eq!(percentile(&v, 99.0), 99.0);
        assert_eq!(percentile(&v, 100.0), 100.0);
        assert_eq!(percentile(&[3.0], 99.0), 3.0);
        assert_eq!(percentile(&[], 50.0), 0.0);
    }
}
