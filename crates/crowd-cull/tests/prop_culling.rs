//! `CullingJob` against its plain twin and against a brute-force exact test, on random scenes and cameras:
//! - it never culls a visible instance: whenever a sample point of an instance's (oriented, animated) bounds
//!   lies strictly inside the frustum, the instance is in a visible list;
//! - its visible set is the reference's sphere test, plus only instances within rounding of a plane;
//! - LODs, tiers and rates equal the reference's boundary-by-boundary hysteresis rule, frame after frame;
//! - the output is well formed: lists ascend, ranges tile the index buffer, states match lists.

mod common;

use std::collections::HashMap;

use crowd_cull::FrameCamera;
use crowd_cull::bounds::clip_union;
use crowd_cull::reference::{ReferenceVisible, cull_reference_to_vec};
use crowd_cull::{
    AnimState, CullCamera, CullOutput, CullingCache, CullingJob, GroupId, Handle, InstanceDesc, InstanceStore,
    MaintainBudget, TierState,
};
use glam::{Quat, Vec3, Vec4};
use proptest::prelude::*;

fn desc() -> impl Strategy<Value = InstanceDesc> {
    (
        (-60.0f32..60.0, -8.0f32..8.0, -60.0f32..60.0),
        (-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0, 0.1f32..1.0),
        0.2f32..4.0,
        0u32..3,
        prop::option::of(0u32..3),
    )
        .prop_map(|((x, y, z), (a, b, c, d), scale, clip, fade)| InstanceDesc {
            position: Vec3::new(x, y, z),
            rotation: Quat::from_xyzw(a, b, c, d).normalize(),
            scale,
            anim: AnimState {
                fade_target: fade,
                fade_weight: 0.5,
                ..AnimState::clip(clip)
            },
            custom: Vec4::ONE,
            flags: 0,
        })
}

fn camera() -> impl Strategy<Value = (Vec3, Vec3, f32, f32, f32, f32)> {
    (
        (-40.0f32..40.0, -5.0f32..15.0, -40.0f32..40.0),
        (-1.0f32..1.0, -0.6f32..0.6, -1.0f32..1.0),
        0.2f32..2.2,
        0.4f32..2.5,
        0.05f32..3.0,
        5.0f32..150.0,
    )
        .prop_map(|((x, y, z), (dx, dy, dz), fov, aspect, near, depth)| {
            let dir = Vec3::new(dx, dy, dz);
            let dir = if dir.length() < 0.1 { Vec3::X } else { dir };
            (Vec3::new(x, y, z), dir, fov, aspect, near, near + depth)
        })
}

fn make_camera((eye, dir, fov, aspect, near, far): (Vec3, Vec3, f32, f32, f32, f32)) -> CullCamera {
    FrameCamera::perspective(eye, eye + dir, Vec3::Y, fov, aspect, near, far).cull_camera()
}

/// An orthographic camera (a sun's): eye, view direction, view height, aspect, and a depth range that may
/// start behind the eye.
fn ortho_camera() -> impl Strategy<Value = (Vec3, Vec3, f32, f32, f32, f32)> {
    (
        (-40.0f32..40.0, -5.0f32..60.0, -40.0f32..40.0),
        (-1.0f32..1.0, -1.0f32..0.6, -1.0f32..1.0),
        1.0f32..120.0,
        0.4f32..2.5,
        -20.0f32..3.0,
        5.0f32..150.0,
    )
        .prop_map(|((x, y, z), (dx, dy, dz), height, aspect, near, depth)| {
            let dir = Vec3::new(dx, dy, dz);
            // Away from the up axis, so that `Vec3::Y` is a valid up.
            let dir = if dir.length() < 0.1 || dir.normalize().y.abs() > 0.95 {
                Vec3::new(1.0, -1.0, 0.3)
            } else {
                dir
            };
            (Vec3::new(x, y, z), dir, height, aspect, near, near + depth)
        })
}

fn make_ortho((eye, dir, height, aspect, near, far): (Vec3, Vec3, f32, f32, f32, f32)) -> CullCamera {
    FrameCamera::orthographic(eye, eye + dir, Vec3::Y, height, aspect, near, far)
        .expect("a valid camera")
        .cull_camera()
}

/// A deterministic pseudo-random number in [0, 1).
fn unit(i: u32) -> f32 {
    let mut h = i.wrapping_mul(0x9E37_79B9) ^ 0x85EB_CA6B;
    h ^= h >> 15;
    h = h.wrapping_mul(0x2C1B_3C6D);
    h ^= h >> 12;
    (h >> 8) as f32 / (1u32 << 24) as f32
}

/// Sample points of the instance's bounds (corners, centre, and interior points), in world space.
fn samples(store: &InstanceStore, g: GroupId, h: Handle) -> Vec<Vec3> {
    let inst = store.get(h).expect("live");
    let bounds = clip_union(&store.group_desc(g).expect("group").clip_bounds, &inst.desc.anim);
    let d = inst.desc;
    let world = |p: Vec3| d.position + d.rotation * (p * d.scale);
    let mut pts = Vec::new();
    for i in 0..8 {
        let pick = |bit: u32, lo: f32, hi: f32| if i & bit == 0 { lo } else { hi };
        pts.push(world(Vec3::new(
            pick(1, bounds.min.x, bounds.max.x),
            pick(2, bounds.min.y, bounds.max.y),
            pick(4, bounds.min.z, bounds.max.z),
        )));
    }
    for i in 0..24u32 {
        let t = Vec3::new(
            unit(h.index * 97 + i * 3),
            unit(h.index * 97 + i * 3 + 1),
            unit(h.index * 97 + i * 3 + 2),
        );
        pts.push(world(bounds.min + (bounds.max - bounds.min) * t));
    }
    pts
}

fn strictly_inside(cam: &CullCamera, p: Vec3) -> bool {
    cam.planes.iter().all(|pl| pl.truncate().dot(p) + pl.w > 1e-3)
}

/// Distance of the sphere's far side beyond the most separating plane (negative when outside).
fn sphere_margin(cam: &CullCamera, c: Vec3, r: f32) -> f32 {
    cam.planes
        .iter()
        .map(|pl| pl.truncate().dot(c) + pl.w + r)
        .fold(f32::INFINITY, f32::min)
}

fn near_an_edge(s: f32, thresholds: &[f32], h: f32) -> bool {
    thresholds
        .iter()
        .flat_map(|t| [t * (1.0 - h), t * (1.0 + h)])
        .any(|e| (s - e).abs() <= 1e-4 * e)
}

fn one_frame(
    store: &mut InstanceStore,
    g: GroupId,
    cam: &CullCamera,
    cache: &mut CullingCache,
    output: &mut CullOutput,
) -> Result<(), TestCaseError> {
    let reference: HashMap<Handle, ReferenceVisible> = cull_reference_to_vec(store, cam)
        .into_iter()
        .map(|r| (r.handle, r))
        .collect();
    let before: HashMap<Handle, TierState> = store
        .live_handles()
        .map(|h| (h, store.get(h).expect("live").state))
        .collect();
    cache.prepare(store);
    output.prepare(store);
    let n = CullingJob {
        store,
        camera: cam,
        cache,
        output,
    }
    .run()
    .expect("culls");

    // The output is well formed.
    prop_assert_eq!(output.indices().len(), n);
    let mut cursor = 0;
    let mut visible = HashMap::new();
    for d in output.draws() {
        prop_assert_eq!(
            d.first_instance as usize,
            cursor,
            "ranges tile the index buffer in order"
        );
        cursor += d.instance_count as usize;
        let list = output.list(d.group, d.lod, d.tier);
        prop_assert_eq!(list.len(), d.instance_count as usize);
        prop_assert!(list.windows(2).all(|w| w[0] < w[1]), "a list does not ascend");
        for &slot in list {
            let h = store
                .handle_at(d.group, slot)
                .expect("a visible slot holds an instance");
            let st = store.get(h).expect("live").state;
            prop_assert!(st.is_visible());
            prop_assert_eq!((st.lod, st.tier()), (d.lod, d.tier));
            prop_assert_eq!(st.interpolate(), st.rate_divisor() > 1);
            prop_assert!(visible.insert(h, st).is_none(), "an instance is listed twice");
        }
    }
    prop_assert_eq!(cursor, n);

    let desc = store.group_desc(g).expect("group").clone();
    for h in store.live_handles() {
        let inst = store.get(h).expect("live");
        let in_job = visible.contains_key(&h);
        prop_assert_eq!(inst.state.is_visible(), in_job);
        if !in_job {
            prop_assert_eq!(inst.state.lod, before[&h].lod, "a culled instance keeps its LOD");
            prop_assert_eq!(inst.state.rate_divisor(), 8);
            prop_assert!(inst.state.interpolate());
        }
        // Never culls a visible instance (brute force over sample points of the real bounds).
        if !in_job {
            for p in samples(store, g, h) {
                prop_assert!(
                    !strictly_inside(cam, p),
                    "instance {:?} culled, but its bounds' point {} is visible",
                    h,
                    p
                );
            }
        }
        // The plain twin: same visible set up to rounding at the planes, same levels away from the edges.
        let (c, r) = store.sphere(h).expect("live");
        let scale = c.abs().max_element() + r + 1.0;
        match (in_job, reference.get(&h)) {
            (false, Some(_)) => prop_assert!(false, "the job culled {:?}, which the reference keeps", h),
            (true, None) => prop_assert!(
                sphere_margin(cam, c, r) > -1e-4 * scale,
                "the job keeps {:?}, which is clearly outside",
                h
            ),
            (true, Some(re)) => {
                let s = re.screen_size;
                let st = inst.state;
                if !near_an_edge(s, &desc.lod_thresholds, desc.hysteresis) {
                    prop_assert_eq!(st.lod, re.lod, "LOD of {:?} at screen size {}", h, s);
                }
                if !near_an_edge(s, &desc.tier_thresholds, desc.hysteresis) {
                    prop_assert_eq!(st.tier(), re.tier, "tier of {:?} at screen size {}", h, s);
                }
                if !near_an_edge(s, &desc.rate_thresholds, desc.hysteresis) {
                    prop_assert_eq!(st.rate_log2, re.rate_log2, "rate of {:?} at screen size {}", h, s);
                }
            }
            (false, None) => {}
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn culling_is_conservative_and_matches_the_reference(
        descs in prop::collection::vec(desc(), 0..400),
        capacity in prop::sample::select(vec![4u32, 8, 16, 64]),
        moves in prop::collection::vec((any::<prop::sample::Index>(), -6.0f32..6.0, -6.0f32..6.0), 0..80),
        maintain in any::<bool>(),
        cams in prop::collection::vec(camera(), 1..4),
        dolly in 0.5f32..3.0,
    ) {
        let (mut store, g) = common::store(6.0, capacity);
        let mut handles = vec![Handle::default(); descs.len()];
        store.add_many(g, &descs, &mut handles).expect("valid adds");
        // Moves leave boxes grown but not refit, unless maintenance runs.
        if !handles.is_empty() {
            for (i, dx, dz) in moves {
                let h = handles[i.index(handles.len())];
                let p = store.get(h).expect("live").desc.position + Vec3::new(dx, 0.0, dz);
                store.set_position(h, p).expect("moves");
            }
        }
        if maintain {
            store.maintain(MaintainBudget::default());
        }
        let (mut cache, mut output) = (CullingCache::new(), CullOutput::new());
        for c in cams {
            let cam = make_camera(c);
            one_frame(&mut store, g, &cam, &mut cache, &mut output)?;
            // Hysteresis from the states just written: the camera dollies back, then forth.
            let (eye, dir, fov, aspect, near, far) = c;
            let back = make_camera((eye - dir.normalize() * dolly, dir, fov, aspect, near, far));
            one_frame(&mut store, g, &back, &mut cache, &mut output)?;
            one_frame(&mut store, g, &cam, &mut cache, &mut output)?;
        }
    }

    #[test]
    fn orthographic_culling_is_conservative_matches_the_reference_and_ignores_distance(
        descs in prop::collection::vec(desc(), 0..400),
        capacity in prop::sample::select(vec![4u32, 8, 16, 64]),
        moves in prop::collection::vec((any::<prop::sample::Index>(), -6.0f32..6.0, -6.0f32..6.0), 0..80),
        maintain in any::<bool>(),
        cams in prop::collection::vec(ortho_camera(), 1..4),
        dolly in 0.5f32..3.0,
    ) {
        let (mut store, g) = common::store(6.0, capacity);
        let mut handles = vec![Handle::default(); descs.len()];
        store.add_many(g, &descs, &mut handles).expect("valid adds");
        if !handles.is_empty() {
            for (i, dx, dz) in moves {
                let h = handles[i.index(handles.len())];
                let p = store.get(h).expect("live").desc.position + Vec3::new(dx, 0.0, dz);
                store.set_position(h, p).expect("moves");
            }
        }
        if maintain {
            store.maintain(MaintainBudget::default());
        }
        let (mut cache, mut output) = (CullingCache::new(), CullOutput::new());
        for c in cams {
            let cam = make_ortho(c);
            prop_assert_eq!(cam.depth_plane, CullCamera::ORTHOGRAPHIC_DEPTH);
            // The screen size is the diameter over the view's height, however far the instance is.
            for r in cull_reference_to_vec(&store, &cam) {
                let (_, radius) = store.sphere(r.handle).expect("live");
                prop_assert_eq!(r.screen_size, radius * cam.proj_scale);
            }
            one_frame(&mut store, g, &cam, &mut cache, &mut output)?;
            // The camera backs off along its axis (its box moves, sizes stay), then returns.
            let (eye, dir, height, aspect, near, far) = c;
            let back = make_ortho((eye - dir.normalize() * dolly, dir, height, aspect, near, far));
            one_frame(&mut store, g, &back, &mut cache, &mut output)?;
            one_frame(&mut store, g, &cam, &mut cache, &mut output)?;
        }
    }
}
