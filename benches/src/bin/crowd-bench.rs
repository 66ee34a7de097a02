//! `crowd-bench`: the headline measurements behind `cargo xtask bench [--quick] [--json FILE] [GROUP...]`.
//!
//! Each figure is the median of repeated runs after a warm-up, measured in-process in a release build.
//! `--quick` finishes in under a minute. Groups select figures by their crate prefix (`anim_pose`).
//! The criterion benches in `benches/benches/` cover the same operations for detailed work.

use std::path::PathBuf;

use anim_pose::{
    LocalToModelJob, PoolClip, PosePool, PosePoolOptions, RuntimeClip, RuntimeClipOptions, SamplingJob, Skeleton,
    SlotRef, SoaTransform,
};
use crowd_benches::harness::{Effort, Figure, median_seconds_per_iteration, report_json, report_table};
use glam::Affine3A;

/// One part of a group: appends its figures.
type Part = fn(bool, &mut Vec<Figure>) -> Result<(), Box<dyn std::error::Error>>;

struct Args {
    quick: bool,
    gpu: bool,
    json: Option<PathBuf>,
    groups: Vec<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        quick: false,
        gpu: false,
        json: None,
        groups: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => args.quick = true,
            "--gpu" => args.gpu = true,
            "--json" => args.json = Some(it.next().ok_or("--json needs a file name")?.into()),
            "--bench" => {}
            "-h" | "--help" => {
                return Err(format!(
                    "usage: cargo xtask bench [--quick] [--gpu] [--json FILE] [GROUP...]\ngroups: {} (crowd_gpu_device, baked_device and bevy \
                     run with --gpu or when named)",
                    GROUPS.join(", ")
                ));
            }
            g if g.starts_with('-') => return Err(format!("unknown option {g}")),
            g => args.groups.push(g.to_owned()),
        }
    }
    for g in &args.groups {
        if !GROUPS.contains(&g.as_str()) {
            return Err(format!("unknown group '{g}'; groups: {}", GROUPS.join(", ")));
        }
    }
    Ok(args)
}

/// Every group, by crate.
/// `pool_k` computes the pose-pool slot counts for error budgets; it takes tens of seconds, so `--quick` skips it
/// unless it is named.
/// `crowd_gpu_device` and `baked_device` render up to 1M instances; they run with `--gpu` or when named.
/// `bevy` builds and runs `crowd-bevy`'s side-by-side example (its own workspace, with Bevy); it runs with `--gpu` or
/// when named.
const GROUPS: &[&str] = &[
    "anim_pose",
    "pool_k",
    "skin_pack",
    "crowd_cull",
    "frame",
    "crowd_gpu",
    "crowd_gpu_device",
    "gpu_driven",
    "gpu_work",
    "baked",
    "baked_device",
    "bevy",
];

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    if cfg!(debug_assertions) {
        eprintln!(
            "warning: crowd-bench is a debug build; figures are meaningless (run it through `cargo xtask bench`)"
        );
    }
    let wants = |g: &str| args.groups.is_empty() || args.groups.iter().any(|x| x == g);
    let mut figures = Vec::new();
    if wants("anim_pose")
        && let Err(e) = anim_pose_group(args.quick, &mut figures)
    {
        eprintln!("error: anim_pose group: {e}");
        std::process::exit(1);
    }
    let named = |g: &str| args.groups.iter().any(|x| x == g);
    if (named("pool_k") || (args.groups.is_empty() && !args.quick))
        && let Err(e) = pool_k_group(&mut figures)
    {
        eprintln!("error: pool_k group: {e}");
        std::process::exit(1);
    }
    if wants("skin_pack") {
        let parts: [(&str, Part); 3] = [
            ("flatten", crowd_benches::groups::skin_pack_flatten::run),
            ("f16", crowd_benches::groups::skin_pack_f16::run),
            ("exchange", crowd_benches::groups::skin_pack_exchange::run),
        ];
        for (name, part) in parts {
            if let Err(e) = part(args.quick, &mut figures) {
                eprintln!("error: skin_pack group ({name}): {e}");
                std::process::exit(1);
            }
        }
    }
    if wants("crowd_cull")
        && let Err(e) = crowd_benches::groups::crowd_cull::run(args.quick, &mut figures)
    {
        eprintln!("error: crowd_cull group: {e}");
        std::process::exit(1);
    }
    if wants("frame")
        && let Err(e) = crowd_benches::groups::frame::run(args.quick, &mut figures)
    {
        eprintln!("error: frame group: {e}");
        std::process::exit(1);
    }
    if wants("crowd_gpu")
        && let Err(e) = crowd_benches::groups::crowd_gpu::run(args.quick, &mut figures)
    {
        eprintln!("error: crowd_gpu group: {e}");
        std::process::exit(1);
    }
    if wants("gpu_work")
        && let Err(e) = crowd_benches::groups::gpu_work::run(args.quick, &mut figures)
    {
        eprintln!("error: gpu_work group: {e}");
        std::process::exit(1);
    }
    if wants("gpu_driven")
        && let Err(e) = crowd_benches::groups::gpu_driven::run(args.quick, &mut figures)
    {
        eprintln!("error: gpu_driven group: {e}");
        std::process::exit(1);
    }
    if wants("baked")
        && let Err(e) = crowd_benches::groups::baked::run(args.quick, &mut figures)
    {
        eprintln!("error: baked group: {e}");
        std::process::exit(1);
    }
    if (args.gpu || named("crowd_gpu_device"))
        && let Err(e) = crowd_benches::groups::crowd_gpu::run_device(&mut figures)
    {
        eprintln!("error: crowd_gpu_device group: {e}");
        std::process::exit(1);
    }
    if (args.gpu || named("baked_device"))
        && let Err(e) = crowd_benches::groups::baked::run_device(&mut figures)
    {
        eprintln!("error: baked_device group: {e}");
        std::process::exit(1);
    }
    if (args.gpu || named("bevy"))
        && let Err(e) = crowd_benches::groups::bevy::run(args.quick, args.gpu, &mut figures)
    {
        eprintln!("error: bevy group: {e}");
        std::process::exit(1);
    }
    print!("{}", report_table(&figures));
    if let Some(path) = args.json {
        if let Err(e) = std::fs::write(&path, report_json(&figures)) {
            eprintln!("error: cannot write {}: {e}", path.display());
            std::process::exit(1);
        }
        println!("wrote {}", path.display());
    }
}

/// Per-joint costs of one instance's pose, in ns: sample + local-to-model, sampling alone, local-to-model alone,
/// each the median over buffer placements; and the slowest placement's sample + local-to-model.
struct PoseTimings {
    sample_ltm: f64,
    sample: f64,
    ltm: f64,
    sample_ltm_worst: f64,
}

/// How many placements of the pose buffers [`pose_timings`] measures: each shifts the local pose by one
/// `SoaTransform` (160 B) and the model-space matrices by a different multiple of 64 B, so that together they
/// sweep the 4 KiB page offsets. The sampling job's key loads and the jobs' stores can then alias in the low
/// 12 address bits ("4K aliasing"), which on this machine slows a pose by up to 40% at some offsets; a single
/// allocation would report whichever placement the allocator happened to give.
const PLACEMENTS: usize = 16;

/// The median of `values`.
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Measures [`PoseTimings`] for `clip`, advancing time by 1/60 s per iteration.
fn pose_timings(
    effort: Effort,
    placements: usize,
    skeleton: &Skeleton,
    clip: &RuntimeClip,
) -> Result<PoseTimings, anim_pose::Error> {
    let groups = clip.num_soa_joints();
    let joints = skeleton.joint_count();
    let mut local_all = vec![SoaTransform::IDENTITY; groups + PLACEMENTS];
    let mut model_all = vec![Affine3A::IDENTITY; joints + PLACEMENTS];
    let mut t = 0.0f32;
    let mut next_time = || {
        t += 1.0 / 60.0;
        if t > clip.duration() {
            t -= clip.duration();
        }
        std::hint::black_box(t)
    };
    let (mut sample_ltm, mut sample, mut ltm) = (Vec::new(), Vec::new(), Vec::new());
    for p in 0..placements {
        let local = &mut local_all[p..p + groups];
        let model = &mut model_all[(p * 5) % PLACEMENTS..][..joints];
        // Validate once outside the timed loops, so that they can unwrap.
        SamplingJob {
            clip,
            time: 0.0,
            output: local,
        }
        .run()?;
        LocalToModelJob {
            skeleton,
            input: local,
            output: model,
            from: None,
            root: None,
        }
        .run()?;
        sample_ltm.push(median_seconds_per_iteration(effort, || {
            SamplingJob {
                clip,
                time: next_time(),
                output: local,
            }
            .run()
            .expect("validated above");
            LocalToModelJob {
                skeleton,
                input: local,
                output: model,
                from: None,
                root: None,
            }
            .run()
            .expect("validated above");
            std::hint::black_box(&model);
        }));
        sample.push(median_seconds_per_iteration(effort, || {
            SamplingJob {
                clip,
                time: next_time(),
                output: local,
            }
            .run()
            .expect("validated above");
            std::hint::black_box(&local);
        }));
        ltm.push(median_seconds_per_iteration(effort, || {
            LocalToModelJob {
                skeleton,
                input: std::hint::black_box(&*local),
                output: model,
                from: None,
                root: None,
            }
            .run()
            .expect("validated above");
            std::hint::black_box(&model);
        }));
    }
    let per_joint = 1e9 / joints as f64;
    let worst = sample_ltm.iter().copied().fold(0.0, f64::max);
    Ok(PoseTimings {
        sample_ltm: median(&mut sample_ltm) * per_joint,
        sample: median(&mut sample) * per_joint,
        ltm: median(&mut ltm) * per_joint,
        sample_ltm_worst: worst * per_joint,
    })
}

fn anim_pose_group(quick: bool, figures: &mut Vec<Figure>) -> Result<(), Box<dyn std::error::Error>> {
    let model = anim_pose::import_file(crowd_benches::default_character())?;
    let skeleton = &model.skeletons[0];
    let walk = model
        .clips_for(0)
        .find(|c| c.name == "walk")
        .ok_or("the default character has no walk clip")?;
    let walk = RuntimeClip::build(walk, skeleton, &RuntimeClipOptions::default())?;
    // Each placement is measured for a sixteenth of the single-allocation effort.
    let effort = Effort::new(quick, 2_000);
    let placements = if quick { 4 } else { PLACEMENTS };
    let walk_timings = pose_timings(effort, placements, skeleton, &walk)?;
    let v = walk_timings.sample_ltm;
    figures.push(Figure {
        name: "anim_pose.sample_ltm_ns_per_joint".into(),
        value: v,
        target: "<= 10",
        met: v <= 10.0,
    });
    let (sample, ltm) = (walk_timings.sample, walk_timings.ltm);
    figures.push(Figure {
        name: "anim_pose.sample_ns_per_joint".into(),
        value: sample,
        target: "part",
        met: true,
    });
    figures.push(Figure {
        name: "anim_pose.ltm_ns_per_joint".into(),
        value: ltm,
        target: "part",
        met: true,
    });

    let skeleton67 = crowd_benches::synthetic::skeleton_67();
    let clip67 = RuntimeClip::build(
        &crowd_benches::synthetic::clip_for(&skeleton67),
        &skeleton67,
        &RuntimeClipOptions::default(),
    )?;
    let timings67 = pose_timings(effort, placements, &skeleton67, &clip67)?;
    let v = timings67.sample_ltm;
    figures.push(Figure {
        name: "anim_pose.sample_ltm_ns_per_joint_67".into(),
        value: v,
        target: "<= 10",
        met: v <= 10.0,
    });
    // A 35 s capture-like clip of the default character's skeleton, held by a key-time table: one bucket lookup
    // per pose instead of a multiply.
    let capture = RuntimeClip::build(
        &crowd_benches::synthetic::capture_clip_for(skeleton, 35.0),
        skeleton,
        &RuntimeClipOptions::default(),
    )?;
    if !matches!(capture.frame_spacing(), anim_pose::FrameSpacing::KeyTimes { .. }) {
        return Err(format!("the capture clip is {}, not a key-time table", capture.frame_spacing()).into());
    }
    let capture_timings = pose_timings(effort, placements, skeleton, &capture)?;
    figures.push(Figure {
        name: "anim_pose.sample_ltm_ns_per_joint_capture".into(),
        value: capture_timings.sample_ltm,
        target: "report",
        met: true,
    });
    for (name, v) in [
        (
            "anim_pose.sample_ltm_ns_per_joint_worst_placement",
            walk_timings.sample_ltm_worst,
        ),
        (
            "anim_pose.sample_ltm_ns_per_joint_67_worst_placement",
            timings67.sample_ltm_worst,
        ),
    ] {
        figures.push(Figure {
            name: name.into(),
            value: v,
            target: "report",
            met: true,
        });
    }

    // The pose pool: the default character's 4 clips with 32 slots each, updated on 2 threads.
    let clips: Vec<RuntimeClip> = model
        .clips_for(0)
        .map(|c| RuntimeClip::build(c, skeleton, &RuntimeClipOptions::default()))
        .collect::<Result<_, _>>()?;
    let pool_clips: Vec<PoolClip> = clips.iter().map(|clip| PoolClip { clip, slots: 32 }).collect();
    let mut pool = PosePool::new(skeleton, &pool_clips, &PosePoolOptions::default())?;
    let threads = rayon::ThreadPoolBuilder::new().num_threads(2).build()?;
    let mut t = 0.0f32;
    let secs = threads.install(|| {
        pool.update(t).expect("the pool updates");
        median_seconds_per_iteration(Effort::new(quick, 200), || {
            t += 1.0 / 60.0;
            pool.update(std::hint::black_box(t)).expect("the pool updates");
        })
    });
    let v = secs * 1e3;
    figures.push(Figure {
        name: "anim_pose.pool_update_ms".into(),
        value: v,
        target: "<= 0.1",
        met: v <= 0.1,
    });

    // Mapping 100,000 instances, spread over the 4 clips at scattered times, to slot pairs.
    let n = 100_000;
    let tracks: Vec<u16> = (0..n).map(|i| (i % clips.len()) as u16).collect();
    let times: Vec<f32> = (0..n).map(|i| (i as f32 * 0.618_034).fract() * 4.0).collect();
    let mut out = vec![SlotRef::default(); n];
    let secs = median_seconds_per_iteration(Effort::new(quick, 20), || {
        pool.map_instances(&tracks, std::hint::black_box(&times), &mut out)
            .expect("maps");
        std::hint::black_box(&out);
    });
    let v = secs * 1e9 / n as f64;
    figures.push(Figure {
        name: "anim_pose.slot_map_ns_per_instance".into(),
        value: v,
        target: "<= 2",
        met: v <= 2.0,
    });
    Ok(())
}

/// The smallest pose-pool slot count K per clip of the default character at 1 mm and 5 mm of vertex error.
fn pool_k_group(figures: &mut Vec<Figure>) -> Result<(), Box<dyn std::error::Error>> {
    let model = anim_pose::import_file(crowd_benches::default_character())?;
    let skeleton = &model.skeletons[0];
    let mesh = &model.meshes[0];
    for clip in model.clips_for(0) {
        let rt = RuntimeClip::build(clip, skeleton, &RuntimeClipOptions::default())?;
        for (mm, tolerance) in [(1, 1e-3f32), (5, 5e-3)] {
            let k = skin_pack::slots_for_tolerance(skeleton, &rt, &[mesh], tolerance, 4096)?;
            figures.push(Figure {
                name: format!("anim_pose.pool_k_{mm}mm.{}", clip.name),
                value: k as f64,
                target: "report",
                met: true,
            });
        }
    }
    Ok(())
}
