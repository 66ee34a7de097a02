//! Figures of `cargo xtask bench` for `skin_pack::FlattenJob`, each next to a plain copy of the same number of
//! output bytes measured in the same run, on a two-thread rayon pool.
//!
//! - `skin_pack.flatten_f32_vs_memcpy` and `skin_pack.flatten_f32_gbps`: 10,000 instances × 64 joints of f32 3×4
//!   (30.7 MB) in the classic per-instance design: each instance reads one of 128 shared poses (4 clips × 32 pooled
//!   slots) and folds its world transform into every entry. The ratio is the copy's time over the job's, so above
//!   1 the job writes its bytes faster than `memcpy` moves the same bytes. Each ratio is the median over runs of
//!   the ratio within a run, the job and the copy measured in alternation (`median_paired`).
//! - `skin_pack.flatten_f32_unique_vs_memcpy`: the same, but every instance has its own model-space pose (41 MB of
//!   poses read from memory), the worst case of the unique tier; reported.
//! - `skin_pack.mat3x4_f16_vs_memcpy` and `skin_pack.qt_f16_vs_memcpy`: the shared-pose run in the f16 formats,
//!   against a copy of their own (smaller) output.
//!   The crowd stands on the ground: each instance is turned about +Y only. Targets: 0.8 for Mat3x4F16, 0.7 for
//!   QtF16.
//! - `skin_pack.qt_f16_tilted_vs_memcpy`: the QtF16 run with every instance also tilted 0.1 rad about x (a fish
//!   school, a crowd on a slope), so that no special case for upright instances could help; reported.
//! - `skin_pack.{mat3x4,qt}_f16_cached_stores_vs_memcpy`: the same runs with ordinary stores instead of streaming
//!   ones; reported, so that each run shows which kind is faster. Neither wins every run on the development VMs;
//!   the headline uses streaming stores, the kind recommended for upload buffers.
//! - `skin_pack.flatten_pooled_us`: the pooled palettes of the default character, 4 clips × 32 slots, no instance
//!   transforms.
//! - `skin_pack.{flatten_f32,mat3x4_f16,qt_f16}_unaligned_vs_memcpy`: the streaming crowd runs with the output 16
//!   bytes past a cache line; reported.
//!
//! The crowd runs write into a buffer that starts on a cache line, as a mapped staging buffer does (Vulkan's
//! `minMemoryMapAlignment` is at least 64 bytes), and the copy writes into one too. Until stop 13 they wrote into a
//! `Vec`, which for these sizes the allocator places 16 bytes past a page: no upload buffer starts there, and the
//! kernels then write the lines at palette boundaries in two parts.

use anim_pose::{NO_PARENT, PoolClip, PosePool, PosePoolOptions, RuntimeClip, RuntimeClipOptions, Skeleton, Transform};
use glam::{Affine3A, Mat4, Quat, Vec3};
use rayon::prelude::*;
use skin_pack::{FlattenCache, FlattenJob, Mat3x4F16, PaletteBinding, PaletteEntry, PaletteFormat, QtF16};

use crate::harness::{Effort, Figure, Paired, median_paired, median_seconds_per_iteration};

/// Instances in the crowd runs.
const INSTANCES: usize = 10_000;
/// Joints per skeleton in the crowd runs.
const JOINTS: usize = 64;
/// Shared poses in the crowd runs: 4 clips × 32 slots.
const SHARED_POSES: usize = 128;

/// A 64-joint skeleton with binary-tree parents and non-trivial inverse bind matrices.
fn skeleton_64() -> Result<Skeleton, anim_pose::Error> {
    let parents = (0..JOINTS)
        .map(|j| if j == 0 { NO_PARENT } else { (j as u16 - 1) / 2 })
        .collect();
    let mut s = Skeleton::from_parents("bench_64", parents, vec![Transform::IDENTITY; JOINTS])?;
    s.inverse_bind_matrices = (0..JOINTS)
        .map(|j| Mat4::from_translation(Vec3::new(0.0, -0.03 * j as f32, 0.01 * j as f32)))
        .collect();
    Ok(s)
}

/// `count` model-space poses of `JOINTS` joints each.
fn poses(count: usize) -> Vec<Affine3A> {
    (0..count * JOINTS)
        .map(|i| {
            let a = i as f32 * 0.37;
            Affine3A::from_rotation_translation(
                Quat::from_euler(glam::EulerRot::XYZ, a.sin(), a.cos(), 0.3 * a.sin()),
                Vec3::new(0.1 * a.cos(), 0.03 * (i % JOINTS) as f32, 0.1 * a.sin()),
            )
        })
        .collect()
}

/// The median seconds of one two-thread flatten into `out` (first touched before timing).
fn flatten_seconds<F: PaletteFormat>(
    effort: Effort,
    threads: &rayon::ThreadPool,
    job: &mut FlattenJob<'_, F>,
) -> Result<f64, skin_pack::Error> {
    threads.install(|| {
        job.run()?;
        Ok(median_seconds_per_iteration(effort, || {
            job.run().expect("validated above");
            std::hint::black_box(&job.output);
        }))
    })
}

/// One cache line, the unit of [`Lines`].
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(64))]
struct Line([u8; 64]);

/// A zeroed buffer of whole cache lines, so that its bytes start on a 64-byte boundary, as a mapped staging buffer's
/// do (Vulkan's `minMemoryMapAlignment` is at least 64). A `Vec<F>` of the outputs' size comes from the allocator's
/// `mmap` path, 16 bytes past a page, which no upload buffer is.
struct Lines(Vec<Line>);

impl Lines {
    /// Room for `bytes` bytes after `offset` bytes.
    fn new(offset: usize, bytes: usize) -> Self {
        Self(vec![Line([0; 64]); (offset + bytes).div_ceil(64)])
    }

    /// `len` values of `T` from `offset` bytes past the first line.
    fn slice<T: bytemuck::Pod>(&mut self, offset: usize, len: usize) -> &mut [T] {
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut self.0);
        bytemuck::cast_slice_mut(&mut bytes[offset..offset + len * size_of::<T>()])
    }
}

/// One crowd run in format `F`, measured in alternation with a two-thread copy of the same number of output bytes
/// ([`median_paired`]): `a` is the job's seconds, `b` the copy's, and `ratio` the copy's over the job's. The output
/// and the copy's destination start `offset` bytes past a cache line (0 for a mapped staging buffer).
#[allow(
    clippy::too_many_arguments,
    reason = "one bench helper, called with the crowd's parts"
)]
fn crowd_run<F: PaletteFormat>(
    effort: Effort,
    threads: &rayon::ThreadPool,
    binding: &PaletteBinding,
    poses: &[Affine3A],
    pose_of: &[u32],
    transforms: &[Affine3A],
    streaming: bool,
    offset: usize,
) -> Result<Paired, Box<dyn std::error::Error>> {
    let pose_count = poses.len() / JOINTS;
    let mut cache = FlattenCache::new(binding, pose_count);
    let bytes = INSTANCES * JOINTS * size_of::<F>();
    let mut out_lines = Lines::new(offset, bytes);
    let out: &mut [F] = out_lines.slice(offset, INSTANCES * JOINTS);
    let src = vec![1u8; bytes];
    let mut dst_lines = Lines::new(offset, bytes);
    let dst: &mut [u8] = dst_lines.slice(offset, bytes);
    let half = bytes.div_ceil(2);
    let mut job = FlattenJob {
        binding,
        poses,
        pose_of,
        transforms,
        cache: &mut cache,
        output: out,
        streaming,
    };
    let paired = threads.install(|| -> Result<Paired, skin_pack::Error> {
        // First touches the output and validates, so that the timed runs can unwrap.
        job.run()?;
        Ok(median_paired(
            effort,
            || {
                job.run().expect("validated above");
                std::hint::black_box(&job.output);
            },
            || {
                dst.par_chunks_mut(half)
                    .zip(src.par_chunks(half))
                    .for_each(|(d, s)| d.copy_from_slice(s));
                std::hint::black_box(&*dst);
            },
        ))
    })?;
    Ok(paired)
}

/// Appends this part's figures to `figures`.
pub fn run(quick: bool, figures: &mut Vec<Figure>) -> Result<(), Box<dyn std::error::Error>> {
    let threads = rayon::ThreadPoolBuilder::new().num_threads(2).build()?;
    let effort = Effort::new(quick, 8);
    let skeleton = skeleton_64()?;
    let binding = PaletteBinding::new(&skeleton)?;
    let shared = poses(SHARED_POSES);
    let pose_of: Vec<u32> = (0..INSTANCES).map(|i| (i * 37 % SHARED_POSES) as u32).collect();
    let transforms: Vec<Affine3A> = (0..INSTANCES)
        .map(|i| {
            Affine3A::from_rotation_translation(
                Quat::from_rotation_y(i as f32),
                Vec3::new((i % 100) as f32 * 2.0, 0.0, (i / 100) as f32 * 2.0),
            )
        })
        .collect();

    let mut push = |name: &str, value: f64, target: &'static str, met: bool| {
        figures.push(Figure {
            name: name.into(),
            value,
            target,
            met,
        })
    };
    let run =
        |streaming| crowd_run::<PaletteEntry>(effort, &threads, &binding, &shared, &pose_of, &transforms, streaming, 0);
    let streamed = run(true)?;
    let cached = run(false)?;
    let bytes = (INSTANCES * JOINTS * size_of::<PaletteEntry>()) as f64;
    // The headline uses streaming stores, the mode recommended for upload buffers; both are reported.
    let ratio = streamed.ratio;
    push("skin_pack.flatten_f32_vs_memcpy", ratio, ">= 1.2", ratio >= 1.2);
    push("skin_pack.flatten_f32_gbps", bytes / streamed.a / 1e9, "report", true);
    push(
        "skin_pack.flatten_f32_cached_stores_vs_memcpy",
        cached.ratio,
        "report",
        true,
    );
    push(
        "skin_pack.memcpy_gbps",
        bytes / streamed.b.min(cached.b) / 1e9,
        "report",
        true,
    );

    let unique = poses(INSTANCES);
    let unique_run = crowd_run::<PaletteEntry>(effort, &threads, &binding, &unique, &[], &transforms, true, 0)?;
    drop(unique);
    push(
        "skin_pack.flatten_f32_unique_vs_memcpy",
        unique_run.ratio,
        "report",
        true,
    );

    // The f16 runs use streaming stores too (the SIMD kernels stream when the output is aligned).
    let mut f16_run = |name: &str, run: Paired, target: f64| {
        push(
            &format!("skin_pack.{name}_vs_memcpy"),
            run.ratio,
            if target == 0.8 { ">= 0.8" } else { ">= 0.7" },
            run.ratio >= target,
        );
        let ns = run.a * 1e9 / (INSTANCES * JOINTS) as f64;
        push(&format!("skin_pack.{name}_ns_per_joint"), ns, "report", true);
    };
    let mat = crowd_run::<Mat3x4F16>(effort, &threads, &binding, &shared, &pose_of, &transforms, true, 0)?;
    f16_run("mat3x4_f16", mat, 0.8);
    let qt = crowd_run::<QtF16>(effort, &threads, &binding, &shared, &pose_of, &transforms, true, 0)?;
    f16_run("qt_f16", qt, 0.7);
    // The same run with every instance also tilted 0.1 rad about x.
    let tilted: Vec<Affine3A> = transforms.iter().map(|t| *t * Affine3A::from_rotation_x(0.1)).collect();
    let qt_tilted = crowd_run::<QtF16>(effort, &threads, &binding, &shared, &pose_of, &tilted, true, 0)?;
    push("skin_pack.qt_f16_tilted_vs_memcpy", qt_tilted.ratio, "report", true);
    // The same runs with ordinary stores, reported beside them.
    let mut cached_run = |name: &str, run: Paired| {
        push(
            &format!("skin_pack.{name}_cached_stores_vs_memcpy"),
            run.ratio,
            "report",
            true,
        );
    };
    let mat = crowd_run::<Mat3x4F16>(effort, &threads, &binding, &shared, &pose_of, &transforms, false, 0)?;
    cached_run("mat3x4_f16", mat);
    let qt = crowd_run::<QtF16>(effort, &threads, &binding, &shared, &pose_of, &transforms, false, 0)?;
    cached_run("qt_f16", qt);
    // The streaming runs again from 16 bytes past a cache line (where a `Vec` from the allocator's `mmap` path
    // starts), reported: the kernels then write lines in parts at palette boundaries.
    let unaligned = crowd_run::<PaletteEntry>(effort, &threads, &binding, &shared, &pose_of, &transforms, true, 16)?;
    push(
        "skin_pack.flatten_f32_unaligned_vs_memcpy",
        unaligned.ratio,
        "report",
        true,
    );
    let mat = crowd_run::<Mat3x4F16>(effort, &threads, &binding, &shared, &pose_of, &transforms, true, 16)?;
    push("skin_pack.mat3x4_f16_unaligned_vs_memcpy", mat.ratio, "report", true);
    let qt = crowd_run::<QtF16>(effort, &threads, &binding, &shared, &pose_of, &transforms, true, 16)?;
    push("skin_pack.qt_f16_unaligned_vs_memcpy", qt.ratio, "report", true);

    // The pooled palettes of the default character: 4 clips × 32 slots, straight from the pose pool.
    let model = anim_pose::import_file(crate::default_character())?;
    let skeleton = &model.skeletons[0];
    let clips: Vec<RuntimeClip> = model
        .clips_for(0)
        .map(|c| RuntimeClip::build(c, skeleton, &RuntimeClipOptions::default()))
        .collect::<Result<_, _>>()?;
    let pool_clips: Vec<PoolClip> = clips.iter().map(|clip| PoolClip { clip, slots: 32 }).collect();
    let mut pool = PosePool::new(skeleton, &pool_clips, &PosePoolOptions::default())?;
    threads.install(|| pool.update(0.25))?;
    let binding = PaletteBinding::new(skeleton)?;
    // Crossfade buckets are flattened only when active; the figure covers the clip slots.
    let slots = pool.clip_slot_count();
    let mut out = vec![PaletteEntry::IDENTITY; slots * binding.skin_joint_count()];
    let mut cache = FlattenCache::default();
    let seconds = flatten_seconds(
        Effort::new(quick, 200),
        &threads,
        &mut FlattenJob {
            binding: &binding,
            poses: &pool.palettes()[..slots * skeleton.joint_count()],
            pose_of: &[],
            transforms: &[],
            cache: &mut cache,
            output: &mut out,
            streaming: false,
        },
    )?;
    let us = seconds * 1e6;
    push("skin_pack.flatten_pooled_us", us, "<= 50", us <= 50.0);
    Ok(())
}
