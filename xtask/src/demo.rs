//! `cargo xtask demo`: the whole CPU pipeline that exists so far, run on the default character.
//!
//! It imports the model, samples every clip at a fixed rate with the exact evaluator, converts each pose to
//! model space, builds the skinning palette, skins every bound mesh on the CPU, and prints what it measured:
//! the skeleton, each clip's channels, sampling cost, root travel, loop seam error and animated bounds. Then it
//! runs a crowd of the model through `crowd-frame` (`crate::crowd_demo`), and renders a crowd of about 1,000 of
//! them headless into PNG frames (`crate::render_demo`).

use std::path::Path;
use std::time::Instant;

use anim_pose::{
    Aabb, Clip, LocalToModelJob, Model, NO_PARENT, PoolClip, PosePool, PosePoolOptions, RuntimeClip,
    RuntimeClipOptions, SamplingJob, SlotRef, SoaTransform, Transform,
};
use anyhow::{Context, Result, bail};
use glam::{Affine3A, Mat4, Vec3};

/// Runs the demo on `path`, sampling at `rate` Hz, and writes the rendered crowd's frames into `out`.
pub fn run(path: &Path, rate: f32, out: &Path, cpu_culled: bool) -> Result<()> {
    if !(rate.is_finite() && rate > 0.0 && rate <= 1000.0) {
        bail!("--rate must be in (0, 1000] Hz, got {rate}");
    }
    let start = Instant::now();
    let model = anim_pose::import_file(path).with_context(|| format!("cannot import {}", path.display()))?;
    let import_ms = start.elapsed().as_secs_f64() * 1e3;
    println!("model: {} (imported in {import_ms:.1} ms)", path.display());
    for w in &model.warnings {
        println!("  warning: {w}");
    }
    if model.skeletons.is_empty() {
        bail!("{} has no skinned skeleton to animate", path.display());
    }
    for (si, sk) in model.skeletons.iter().enumerate() {
        print_skeleton(&model, si);
        let clips: Vec<&Clip> = model.clips_for(si).collect();
        if clips.is_empty() {
            println!("  no clips animate this skeleton");
            continue;
        }
        println!(
            "  {:<10} {:>8} {:>8} {:>6} {:>7} {:>10} {:>10} {:>11} {:>26}",
            "clip",
            "duration",
            "channels",
            "keys",
            "frames",
            "us/sample",
            "root (m)",
            "seam (mm)",
            "animated bounds (m)"
        );
        for &clip in &clips {
            let stats = sample_clip(&model, si, clip, rate)?;
            let size = stats.bounds.size();
            println!(
                "  {:<10} {:>7.3}s {:>8} {:>6} {:>7} {:>10.2} {:>10.3} {:>11.3} {:>8.2} x {:>5.2} x {:>5.2}",
                clip.name,
                clip.duration,
                clip.channels.len(),
                clip.channels.iter().map(|c| c.key_count()).sum::<usize>(),
                stats.frames,
                stats.sample_us,
                stats.root_travel,
                stats.seam_mm,
                size.x,
                size.y,
                size.z
            );
        }
        runtime_section(sk, &clips)?;
    }
    match crate::crowd_demo::run(&model) {
        Ok(()) => {}
        Err(e) => println!("crowd: skipped ({e:#})"),
    }
    match crate::render_demo::run(&model, out, cpu_culled) {
        Ok(()) => {}
        Err(e) => println!("render: skipped ({e:#})"),
    }
    if cfg!(debug_assertions) {
        println!(
            "(timings are from the dev profile: optimized at opt-level 1, with debug assertions; `cargo xtask bench` \
             measures the release build)"
        );
    }
    println!("total {:.1} ms", start.elapsed().as_secs_f64() * 1e3);
    Ok(())
}

fn print_skeleton(model: &Model, si: usize) {
    let sk = &model.skeletons[si];
    let mut depth = vec![0u32; sk.joint_count()];
    let mut children = vec![0u32; sk.joint_count()];
    for (i, &p) in sk.parents.iter().enumerate() {
        if p != NO_PARENT {
            depth[i] = depth[usize::from(p)] + 1;
            children[usize::from(p)] += 1;
        }
    }
    let leaves = children.iter().filter(|&&c| c == 0).count();
    let max_depth = depth.iter().copied().max().unwrap_or(0);
    let bound: Vec<_> = model.bindings.iter().filter(|b| b.skeleton == si).collect();
    let (verts, tris): (usize, usize) = bound
        .iter()
        .flat_map(|b| model.meshes[b.meshes.clone()].iter())
        .fold((0, 0), |(v, t), m| (v + m.vertex_count(), t + m.triangle_count()));
    println!(
        "skeleton '{}': {} joints ({} skinned), depth {}, {} leaf joints; {} binding(s), {} vertices, {} triangles",
        sk.name,
        sk.joint_count(),
        sk.skin_joint_count(),
        max_depth,
        leaves,
        bound.len(),
        verts,
        tris
    );
    let names: Vec<&str> = sk.joint_names.iter().map(String::as_str).collect();
    println!("  joints: {}", names.join(" "));
}

struct ClipStats {
    frames: usize,
    sample_us: f64,
    root_travel: f32,
    seam_mm: f32,
    bounds: Aabb,
}

/// Samples `clip` at `rate` Hz over `[0, duration]`, skinning every mesh bound to skeleton `si` at each frame.
fn sample_clip(model: &Model, si: usize, clip: &Clip, rate: f32) -> Result<ClipStats> {
    let sk = &model.skeletons[si];
    let n = sk.joint_count();
    let mut local = vec![Transform::IDENTITY; n];
    let mut model_space = vec![Mat4::IDENTITY; n];
    let mut palette = vec![Mat4::IDENTITY; sk.skin_joint_count()];
    let frames = ((clip.duration * rate).ceil() as usize).max(1) + 1;
    let meshes: Vec<_> = model
        .bindings
        .iter()
        .filter(|b| b.skeleton == si)
        .flat_map(|b| model.meshes[b.meshes.clone()].iter())
        .collect();
    let mut bounds = Aabb::EMPTY;
    let mut first_root = Vec3::ZERO;
    let mut prev_root = Vec3::ZERO;
    let mut root_travel = 0.0;
    let mut first_joints = Vec::new();
    let mut seam = 0.0f32;
    let mut sample_time = 0.0;
    for f in 0..frames {
        let t = (f as f32 / rate).min(clip.duration);
        let s = Instant::now();
        clip.sample_local_pose(sk, t, &mut local)?;
        sk.local_to_model(&local, &mut model_space)?;
        sample_time += s.elapsed().as_secs_f64();
        sk.palette(&model_space, &mut palette)?;
        let world = sk.root_transform;
        let root = world.transform_point3(model_space[0].w_axis.truncate());
        if f == 0 {
            first_root = root;
            first_joints = model_space.iter().map(|m| m.w_axis.truncate()).collect();
        } else {
            root_travel += root.distance(prev_root);
        }
        prev_root = root;
        if f + 1 == frames {
            seam = model_space
                .iter()
                .zip(&first_joints)
                .map(|(m, p)| m.w_axis.truncate().distance(*p))
                .fold(0.0, f32::max);
        }
        for m in &meshes {
            for ((p, j), w) in m.positions.iter().zip(&m.joints).zip(&m.weights) {
                let mut skinned = Vec3::ZERO;
                for k in 0..4 {
                    if w[k] > 0.0 {
                        skinned += w[k] * palette[usize::from(j[k])].transform_point3(*p);
                    }
                }
                bounds = bounds.including(world.transform_point3(skinned));
            }
        }
    }
    let _ = first_root;
    Ok(ClipStats {
        frames,
        sample_us: sample_time * 1e6 / frames as f64,
        root_travel,
        seam_mm: seam * 1e3,
        bounds,
    })
}

/// Builds each clip's runtime form, compares runtime playback with the exact evaluator, and drives a pose pool.
fn runtime_section(sk: &anim_pose::Skeleton, clips: &[&Clip]) -> Result<()> {
    let options = RuntimeClipOptions::default();
    println!(
        "  runtime clips (budget {:.2} mm in model space, on cubes of half-size {:.0} mm around the joints; {:.4} rad per joint):",
        options.budget.translation * 1e3,
        options.vertex_distance * 1e3,
        options.budget.rotation
    );
    println!(
        "  {:<10} {:<30} {:>8} {:>7} {:>9} {:>10} {:>11} {:>8} {:>22}",
        "clip", "frames at", "rate", "frames", "bytes", "model (mm)", "local (rad)", "loops", "max joint diff (mm)"
    );
    let mut runtime = Vec::with_capacity(clips.len());
    let mut local = vec![Transform::IDENTITY; sk.joint_count()];
    let mut exact = vec![Mat4::IDENTITY; sk.joint_count()];
    let mut soa = vec![SoaTransform::IDENTITY; anim_pose::num_soa_joints(sk.joint_count())];
    let mut fast = vec![Affine3A::IDENTITY; sk.joint_count()];
    for clip in clips {
        let rt = RuntimeClip::build(clip, sk, &options)?;
        // Joint positions of the runtime path (SoA sampling, SoA local-to-model) against the exact path.
        let mut worst = 0.0f32;
        for f in 0..=60 {
            let t = clip.duration * f as f32 / 60.0;
            clip.sample_local_pose(sk, t, &mut local)?;
            sk.local_to_model(&local, &mut exact)?;
            SamplingJob {
                clip: &rt,
                time: t,
                output: &mut soa,
            }
            .run()?;
            LocalToModelJob {
                skeleton: sk,
                input: &soa,
                output: &mut fast,
                from: None,
                root: None,
            }
            .run()?;
            for (e, r) in exact.iter().zip(&fast) {
                worst = worst.max(e.w_axis.truncate().distance(Vec3::from(r.translation)));
            }
        }
        let e = rt.error();
        println!(
            "  {:<10} {:<30} {:>6.1}Hz {:>7} {:>9} {:>10.4} {:>11.5} {:>8} {:>22.4}",
            rt.name(),
            rt.frame_spacing().to_string(),
            rt.rate_hz(),
            rt.frame_count(),
            rt.memory_bytes(),
            e.model * 1e3,
            e.rotation,
            if rt.is_looping() { "yes" } else { "no" },
            worst * 1e3
        );
        if let Some(w) = rt.warning() {
            println!("  warning: {w}");
        }
        runtime.push(rt);
    }
    // A pose pool of every clip with 16 slots, and 10,000 instances spread over clips and phases.
    let pool_clips: Vec<PoolClip> = runtime.iter().map(|clip| PoolClip { clip, slots: 16 }).collect();
    let mut pool = PosePool::new(sk, &pool_clips, &PosePoolOptions::default())?;
    let instances = 10_000;
    let tracks: Vec<u16> = (0..instances).map(|i| (i % runtime.len()) as u16).collect();
    let times: Vec<f32> = (0..instances).map(|i| (i as f32 * 0.618_034).fract() * 4.0).collect();
    let mut refs = vec![SlotRef::default(); instances];
    let s = Instant::now();
    pool.update(0.5)?;
    let update_us = s.elapsed().as_secs_f64() * 1e6;
    let s = Instant::now();
    pool.map_instances(&tracks, &times, &mut refs)?;
    let map_us = s.elapsed().as_secs_f64() * 1e6;
    let mut used = vec![false; pool.slot_count()];
    for r in &refs {
        used[usize::from(r.slot_a)] = true;
        used[usize::from(r.slot_b)] = true;
    }
    println!(
        "  pose pool: {} clips x 16 slots = {} poses of {} joints, updated in {update_us:.0} us; {instances} instances \
         mapped to slot pairs in {map_us:.0} us, using {} slots",
        runtime.len(),
        pool.clip_slot_count(),
        pool.joint_count(),
        used.iter().filter(|&&u| u).count()
    );
    Ok(())
}
