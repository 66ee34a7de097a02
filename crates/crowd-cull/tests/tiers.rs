//! LOD, tiers and update rates on hand-built scenes: chosen from screen size (not distance), stable inside the
//! hysteresis band, finest to coarsest with distance; animated bounds keep a waving arm (or a crossfade's
//! target clip) from being culled; each group gets its own lists.

mod common;

use crowd_cull::FrameCamera;
use crowd_cull::{
    AnimState, CullCamera, CullOutput, CullingCache, CullingJob, GroupId, Handle, InstanceDesc, InstanceStore, Tier,
};
use glam::Vec3;

/// Camera at the origin looking down -z, 60 degrees vertical field of view, square viewport.
fn camera() -> CullCamera {
    FrameCamera::perspective(
        Vec3::ZERO,
        Vec3::NEG_Z,
        Vec3::Y,
        std::f32::consts::FRAC_PI_3,
        1.0,
        0.1,
        10_000.0,
    )
    .cull_camera()
}

fn cull(store: &mut InstanceStore) -> CullOutput {
    let (mut cache, mut output) = (CullingCache::new(), CullOutput::new());
    cache.prepare(store);
    output.prepare(store);
    CullingJob {
        store,
        camera: &camera(),
        cache: &mut cache,
        output: &mut output,
    }
    .run()
    .expect("culls");
    output
}

/// The view depth at which an idle instance (sphere radius `r * scale`) has screen size `s`.
fn depth_for(s: f32, scale: f32) -> f32 {
    let b = common::group_desc().clip_bounds[0];
    b.half_extent().length() * scale * camera().proj_scale / s
}

/// Places an idle instance so that its sphere's centre is at view depth `z` on the view axis.
fn at_depth(z: f32, scale: f32) -> InstanceDesc {
    let b = common::group_desc().clip_bounds[0];
    InstanceDesc {
        scale,
        ..InstanceDesc::at(Vec3::new(0.0, 0.0, -z) - b.center() * scale, 0)
    }
}

#[test]
fn lod_follows_screen_size_not_distance() {
    let (mut store, g) = common::store(1000.0, 16);
    let z = depth_for(0.2, 1.0); // Between the LOD thresholds 0.4 and 0.1: LOD 1.
    let small = store.add(g, &at_depth(z, 1.0)).expect("adds");
    let big = store.add(g, &at_depth(z, 4.0)).expect("adds"); // Four times the screen size: 0.8, LOD 0.
    let tiny = store.add(g, &at_depth(z, 0.25)).expect("adds"); // 0.05: LOD 2.
    cull(&mut store);
    let lod = |h: Handle| store.get(h).expect("live").state.lod;
    assert_eq!(
        (lod(big), lod(small), lod(tiny)),
        (0, 1, 2),
        "same distance, different sizes"
    );
}

#[test]
fn hysteresis_stops_flicker_at_a_threshold() {
    let (mut store, g) = common::store(1000.0, 16);
    // Threshold 0.4 with a 10% band: [0.36, 0.44].
    let h = store.add(g, &at_depth(depth_for(0.5, 1.0), 1.0)).expect("adds");
    cull(&mut store);
    assert_eq!(store.get(h).expect("live").state.lod, 0);
    let mut history = Vec::new();
    for s in [0.39, 0.41, 0.38, 0.42, 0.37, 0.43] {
        store.update(h, &at_depth(depth_for(s, 1.0), 1.0)).expect("moves");
        cull(&mut store);
        history.push(store.get(h).expect("live").state.lod);
    }
    assert_eq!(history, vec![0; 6], "inside the band, the LOD holds");
    store.update(h, &at_depth(depth_for(0.35, 1.0), 1.0)).expect("moves");
    cull(&mut store);
    assert_eq!(store.get(h).expect("live").state.lod, 1, "below the band it changes");
    for s in [0.41, 0.38, 0.43, 0.37] {
        store.update(h, &at_depth(depth_for(s, 1.0), 1.0)).expect("moves");
        cull(&mut store);
        assert_eq!(
            store.get(h).expect("live").state.lod,
            1,
            "and holds again inside the band"
        );
    }
    store.update(h, &at_depth(depth_for(0.45, 1.0), 1.0)).expect("moves");
    cull(&mut store);
    assert_eq!(store.get(h).expect("live").state.lod, 0, "above the band it comes back");
}

#[test]
fn tiers_and_rates_coarsen_with_distance_and_low_rates_interpolate() {
    let (mut store, g) = common::store(1000.0, 16);
    // Tier thresholds 0.5, 0.08, 0.01; rate thresholds 0.2, 0.05, 0.01.
    let cases = [
        (1.0, Tier::Unique, 1),
        (0.1, Tier::Pooled, 2),
        (0.03, Tier::Baked, 4),
        (0.005, Tier::Vat, 8),
    ];
    let handles: Vec<Handle> = cases
        .iter()
        .map(|&(s, _, _)| store.add(g, &at_depth(depth_for(s, 1.0), 1.0)).expect("adds"))
        .collect();
    let output = cull(&mut store);
    for (h, (s, tier, rate)) in handles.iter().zip(cases) {
        let st = store.get(*h).expect("live").state;
        assert!(st.is_visible());
        assert_eq!((st.tier(), st.rate_divisor()), (tier, rate), "screen size {s}");
        assert_eq!(st.interpolate(), rate > 1, "screen size {s}");
        let slot = store.get(*h).expect("live").slot;
        assert!(output.list(g, st.lod, tier).contains(&slot));
        let slots = store.group_slots(g).expect("the group exists");
        assert_eq!(slots.state[slot as usize], st, "the slot view reads the same state");
        assert_eq!(
            slots.position[slot as usize],
            store.get(*h).expect("live").desc.position
        );
    }
    let total: u32 = output.draws().iter().map(|d| d.instance_count).sum();
    assert_eq!(total, 4);
}

#[test]
fn animated_bounds_keep_a_waving_arm_and_a_crossfade_target_visible() {
    let (mut store, g) = common::store(1000.0, 16);
    // Just left of the view at depth 20, facing the camera: idle bounds are outside, but the waving clip's
    // arm (up to 1.9 m to the instance's +x) reaches into the view.
    let half_width = 20.0 * (std::f32::consts::FRAC_PI_6).tan();
    let p = Vec3::new(-half_width - 2.2, 0.0, -20.0);
    let idle = store.add(g, &InstanceDesc::at(p, 0)).expect("adds");
    let waving = store.add(g, &InstanceDesc::at(p, 1)).expect("adds");
    let fading = store
        .add(
            g,
            &InstanceDesc {
                anim: AnimState {
                    fade_target: Some(1),
                    fade_weight: 0.1,
                    ..AnimState::clip(0)
                },
                ..InstanceDesc::at(p, 0)
            },
        )
        .expect("adds");
    cull(&mut store);
    let seen = |h| store.get(h).expect("live").state.is_visible();
    assert!(!seen(idle), "the idle instance's bounds are outside");
    assert!(seen(waving), "the waving arm is culled");
    assert!(seen(fading), "the crossfade target's bounds are ignored");
    // When the crossfade ends, the target clip is gone from the bounds.
    store.set_animation(fading, &AnimState::clip(0)).expect("animates");
    cull(&mut store);
    assert!(!store.get(fading).expect("live").state.is_visible());
}

#[test]
fn each_group_has_its_own_lists_and_thresholds() {
    let (mut store, a) = common::store(1000.0, 16);
    let mut coarse = common::group_desc();
    coarse.lod_thresholds = vec![10.0];
    let b = store.add_group(coarse).expect("adds a group");
    assert_eq!(b, GroupId(1));
    let ha = store.add(a, &at_depth(depth_for(1.0, 1.0), 1.0)).expect("adds");
    let hb = store.add(b, &at_depth(depth_for(1.0, 1.0), 1.0)).expect("adds");
    let output = cull(&mut store);
    assert_eq!(store.get(ha).expect("live").state.lod, 0);
    assert_eq!(
        store.get(hb).expect("live").state.lod,
        1,
        "group b's threshold puts it at LOD 1"
    );
    assert_eq!(output.list(a, 0, Tier::Unique), &[store.get(ha).expect("live").slot]);
    assert_eq!(output.list(b, 1, Tier::Unique), &[store.get(hb).expect("live").slot]);
    assert_eq!(output.draws().len(), 4 * 4 + 2 * 4);
    assert!(output.draw(b, 2, Tier::Unique).is_none(), "group b has two LODs");
}
