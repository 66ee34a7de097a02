//! Figures of `cargo xtask bench` for `crowd_cull`: culling with LOD, tier and list output, cluster
//! maintenance while a tenth of the crowd moves, single adds and removes, at 1,000,000 and 100,000 instances.
//!
//! The scene: instances 1 m apart on a jittered square grid on the ground (one draw group, clusters of at most
//! 256 within 10 m), added tile by tile; a camera at the centre, 10 m up, looking along +x and slightly down,
//! with a 107-degree horizontal field of view, that sees about 30% of them. Everything runs in a rayon pool of
//! 2 threads. Moves are measured twice: a contiguous tenth of the crowd (a column marching together) and every
//! tenth instance (scattered over all of memory).

use std::time::Instant;

use crowd_cull::FrameCamera;
use crowd_cull::{
    Aabb, ClusterSettings, CullCamera, CullOutput, CullingCache, CullingJob, GroupDesc, GroupId, Handle, InstanceDesc,
    InstanceStore, MaintainBudget,
};
use glam::{Quat, Vec3};

use crate::harness::{Effort, Figure, median_seconds_per_iteration};

/// A deterministic scene of `n` instances.
pub struct Scene {
    /// The store.
    pub store: InstanceStore,
    /// The one draw group.
    pub group: GroupId,
    /// Every handle, in insertion order.
    pub handles: Vec<Handle>,
    /// Every description, in insertion order.
    pub descs: Vec<InstanceDesc>,
    /// The camera.
    pub camera: CullCamera,
}

/// A hash of `i` in `[0, 1)`, for deterministic scenes.
pub fn hash(i: u32) -> f32 {
    let mut h = i.wrapping_mul(0x9E37_79B9) ^ 0x85EB_CA6B;
    h ^= h >> 15;
    h = h.wrapping_mul(0x2C1B_3C6D);
    h ^= h >> 12;
    (h >> 8) as f32 / (1u32 << 24) as f32
}

/// The group description: a 1 × 1.8 × 1 m character with three clips, four LODs.
pub fn group_desc() -> GroupDesc {
    let b = Aabb::new(Vec3::new(-0.5, 0.0, -0.5), Vec3::new(0.5, 1.8, 0.5));
    GroupDesc {
        mesh: 0,
        material: 0,
        clip_bounds: vec![b, Aabb::new(b.min, b.max + Vec3::new(0.3, 0.2, 0.0)), b],
        lod_thresholds: vec![0.1, 0.03, 0.01],
        tier_thresholds: [0.2, 0.05, 0.01],
        rate_thresholds: [0.1, 0.03, 0.008],
        hysteresis: 0.1,
    }
}

/// Builds the scene with `n` instances (rounded down to a square).
pub fn scene(n: usize) -> Result<Scene, crowd_cull::Error> {
    let side = (n as f64).sqrt() as u32;
    let mut store = InstanceStore::new(ClusterSettings {
        radius: 10.0,
        capacity: 256,
    })?;
    let group = store.add_group(group_desc())?;
    let tile = 16;
    let mut descs = Vec::with_capacity((side * side) as usize);
    for ty in (0..side).step_by(tile) {
        for tx in (0..side).step_by(tile) {
            for y in ty..(ty + tile as u32).min(side) {
                for x in tx..(tx + tile as u32).min(side) {
                    let i = y * side + x;
                    let p = Vec3::new(x as f32 + hash(i) * 0.5, 0.0, y as f32 + hash(i ^ 0xABCD) * 0.5);
                    let mut d = InstanceDesc::at(p, i % 3);
                    d.rotation = Quat::from_rotation_y(hash(i ^ 0x1234) * std::f32::consts::TAU);
                    d.scale = 0.9 + 0.2 * hash(i ^ 0x777);
                    descs.push(d);
                }
            }
        }
    }
    let mut handles = vec![Handle::default(); descs.len()];
    store.add_many(group, &descs, &mut handles)?;
    let c = side as f32 * 0.5;
    let eye = Vec3::new(c, 10.0, c);
    let camera =
        FrameCamera::perspective(eye, eye + Vec3::new(1.0, -0.08, 0.0), Vec3::Y, 1.1, 2.2, 0.5, 5000.0).cull_camera();
    Ok(Scene {
        store,
        group,
        handles,
        descs,
        camera,
    })
}

/// Median milliseconds of one cull (+ LOD + tiers + lists), and the visible fraction.
fn cull_ms(quick: bool, scene: &mut Scene, pool: &rayon::ThreadPool) -> Result<(f64, f64), crowd_cull::Error> {
    let mut cache = CullingCache::new();
    let mut output = CullOutput::new();
    cache.prepare(&scene.store);
    output.prepare(&scene.store);
    let mut visible = 0;
    let store = &mut scene.store;
    let camera = &scene.camera;
    let secs = pool.install(|| {
        median_seconds_per_iteration(Effort::new(quick, 20), || {
            visible = CullingJob {
                store,
                camera,
                cache: &mut cache,
                output: &mut output,
            }
            .run()
            .expect("validated scene");
            std::hint::black_box(output.indices());
        })
    });
    Ok((secs * 1e3, visible as f64 / scene.handles.len() as f64))
}

/// Who moves: a tenth of the crowd.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Movers {
    /// One contiguous tenth of the crowd (a block of the square, like a marching column): every tenth cluster
    /// is touched, and all of its members move.
    Block,
    /// Every tenth instance: every cluster is touched, and the moves are scattered over all of memory.
    Scattered,
}

/// Median milliseconds of one frame of moving a tenth of the instances (walking at 1.4 m/s in random
/// directions) and maintaining the clusters: `(total, move part, maintain part)`.
fn maintain_ms(
    quick: bool,
    scene: &mut Scene,
    pool: &rayon::ThreadPool,
    who: Movers,
) -> Result<(f64, f64, f64), crowd_cull::Error> {
    let n = scene.handles.len();
    let pick = |i: usize| match who {
        Movers::Block => i < n / 10,
        Movers::Scattered => i.is_multiple_of(10),
    };
    let movers: Vec<Handle> = (0..n).filter(|&i| pick(i)).map(|i| scene.handles[i]).collect();
    let mut positions: Vec<Vec3> = (0..n).filter(|&i| pick(i)).map(|i| scene.descs[i].position).collect();
    let dirs: Vec<Vec3> = (0..movers.len())
        .map(|i| {
            let a = hash(i as u32 ^ 0x5555) * std::f32::consts::TAU;
            Vec3::new(a.cos(), 0.0, a.sin()) * (1.4 / 60.0)
        })
        .collect();
    let store = &mut scene.store;
    let budget = MaintainBudget::default();
    let mut move_s = Vec::new();
    let mut maintain_s = Vec::new();
    let effort = Effort::new(quick, 10);
    let total = pool.install(|| {
        median_seconds_per_iteration(effort, || {
            let t0 = Instant::now();
            for (p, d) in positions.iter_mut().zip(&dirs) {
                *p += *d;
            }
            store.set_positions(&movers, &positions).expect("valid moves");
            let t1 = Instant::now();
            std::hint::black_box(store.maintain(budget));
            let t2 = Instant::now();
            move_s.push((t1 - t0).as_secs_f64());
            maintain_s.push((t2 - t1).as_secs_f64());
        })
    });
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2] * 1e3
    };
    Ok((total * 1e3, median(&mut move_s), median(&mut maintain_s)))
}

/// Median nanoseconds of one add and one remove, over batches of 10,000 single calls into the full store:
/// - spawn: a squad of 10,000 new instances is added at a spawn point (a 100 m square beside the crowd), one
///   at a time, then removed one at a time (in a shuffled order);
/// - scattered: 10,000 instances spread over the whole crowd are removed, then added back (into the room their
///   removal left); every call touches cold memory.
///
/// Returns `(spawn add, spawn remove, scattered add, scattered remove)`.
fn add_remove_ns(quick: bool, scene: &mut Scene) -> Result<[f64; 4], crowd_cull::Error> {
    let batch = 10_000.min(scene.handles.len() / 10);
    let side = (scene.handles.len() as f64).sqrt() as f32;
    let squad: Vec<InstanceDesc> = (0..batch as u32)
        .map(|i| {
            let p = Vec3::new(side + 10.0 + (i % 100) as f32, 0.0, (i / 100) as f32 + hash(i) * 0.5);
            InstanceDesc::at(p, i % 3)
        })
        .collect();
    let mut order: Vec<usize> = (0..batch).collect();
    for i in (1..batch).rev() {
        order.swap(i, (hash(i as u32 ^ 0xBEEF) * (i + 1) as f32) as usize % (i + 1));
    }
    let stride = scene.handles.len() / batch;
    let picks: Vec<usize> = (0..batch).map(|i| i * stride).collect();
    let runs = if quick { 7 } else { 31 };
    let mut samples = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    let mut squad_handles = vec![Handle::default(); batch];
    let per = |d: std::time::Duration| d.as_secs_f64() * 1e9 / batch as f64;
    for run in 0..runs + 2 {
        let t0 = Instant::now();
        for (h, d) in squad_handles.iter_mut().zip(&squad) {
            *h = scene.store.add(scene.group, d)?;
        }
        let t1 = Instant::now();
        for &i in &order {
            scene.store.remove(squad_handles[i])?;
        }
        let t2 = Instant::now();
        for &i in &picks {
            scene.store.remove(scene.handles[i])?;
        }
        let t3 = Instant::now();
        for &i in &picks {
            scene.handles[i] = scene.store.add(scene.group, &scene.descs[i])?;
        }
        let t4 = Instant::now();
        if run >= 2 {
            samples[0].push(per(t1 - t0));
            samples[1].push(per(t2 - t1));
            samples[2].push(per(t4 - t3));
            samples[3].push(per(t3 - t2));
        }
    }
    Ok(samples.map(|mut v| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }))
}

/// Appends this part's figures to `figures`.
pub fn run(quick: bool, figures: &mut Vec<Figure>) -> Result<(), Box<dyn std::error::Error>> {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build()?;
    let mut push = |name: &str, value: f64, target: &'static str, met: bool| {
        figures.push(Figure {
            name: name.into(),
            value,
            target,
            met,
        })
    };
    for (n, tag) in [(1_000_000, "1m"), (100_000, "100k")] {
        let mut s = scene(n)?;
        let (cull, visible) = cull_ms(quick, &mut s, &pool)?;
        let big = n == 1_000_000;
        if big {
            push("crowd_cull.cull_1m_ms", cull, "<= 2", cull <= 2.0);
        } else {
            push("crowd_cull.cull_100k_ms", cull, "report", true);
        }
        push(&format!("crowd_cull.visible_fraction_{tag}"), visible, "~0.3", true);
        for (who, label) in [(Movers::Block, ""), (Movers::Scattered, "_scattered")] {
            let (total, moves, maintain) = maintain_ms(quick, &mut s, &pool, who)?;
            if big && who == Movers::Block {
                push("crowd_cull.maintain_1m_10pct_ms", total, "<= 2", total <= 2.0);
            } else {
                push(
                    &format!("crowd_cull.maintain_{tag}_10pct{label}_ms"),
                    total,
                    "report",
                    true,
                );
            }
            push(
                &format!("crowd_cull.maintain_{tag}_10pct{label}_move_part_ms"),
                moves,
                "part",
                true,
            );
            push(
                &format!("crowd_cull.maintain_{tag}_10pct{label}_maintain_part_ms"),
                maintain,
                "part",
                true,
            );
        }
        let (cull_after, _) = cull_ms(quick, &mut s, &pool)?;
        push(
            &format!("crowd_cull.cull_{tag}_after_moves_ms"),
            cull_after,
            "report",
            true,
        );
        let [add, remove, add_scattered, remove_scattered] = add_remove_ns(quick, &mut s)?;
        if big {
            push("crowd_cull.add_ns", add, "<= 200", add <= 200.0);
            push("crowd_cull.remove_ns", remove, "<= 200", remove <= 200.0);
        } else {
            push("crowd_cull.add_100k_ns", add, "report", true);
            push("crowd_cull.remove_100k_ns", remove, "report", true);
        }
        push(
            &format!("crowd_cull.add_{tag}_scattered_ns"),
            add_scattered,
            "report",
            true,
        );
        push(
            &format!("crowd_cull.remove_{tag}_scattered_ns"),
            remove_scattered,
            "report",
            true,
        );
        s.store.check_invariants()?;
    }
    Ok(())
}
