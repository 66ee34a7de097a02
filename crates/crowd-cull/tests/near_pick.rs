//! `InstanceStore::pick_nearest` against a scan of every instance: the same slots, largest screen size first.

mod common;

use crowd_cull::FrameCamera;
use crowd_cull::InstanceDesc;
use crowd_cull::reference::sphere_visible;
use glam::{Quat, Vec3};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn the_pick_equals_a_scan_of_every_instance(
        points in proptest::collection::vec((-80.0f32..80.0, 0.0f32..5.0, -80.0f32..80.0, 0.3f32..3.0, 0u32..3), 0..600),
        eye in (-60.0f32..60.0, 1.0f32..20.0, -60.0f32..60.0),
        look in (-60.0f32..60.0, -60.0f32..60.0),
        min_size in 0.01f32..0.5,
        max in 0usize..40,
    ) {
        let (mut store, g) = common::store(10.0, 16);
        for &(x, y, z, s, clip) in &points {
            let desc = InstanceDesc { scale: s, rotation: Quat::from_rotation_y(x), ..InstanceDesc::at(Vec3::new(x, y, z), clip) };
            store.add(g, &desc).expect("adds");
        }
        let eye = Vec3::new(eye.0, eye.1, eye.2);
        let target = Vec3::new(look.0, 0.0, look.1);
        prop_assume!(target.distance(eye) > 1.0);
        let camera = FrameCamera::perspective(eye, target, Vec3::Y, 1.0, 1.5, 0.1, 200.0).cull_camera();
        let mut out = vec![0u32; max];
        let mut scratch = vec![0f32; max];
        let n = store.pick_nearest(g, &camera, min_size, &mut out, &mut scratch).expect("picks");
        let mut all: Vec<(f32, u32)> = store
            .live_handles()
            .filter_map(|h| {
                let (c, r) = store.sphere(h).expect("live");
                let s = camera.screen_size(c, r);
                (sphere_visible(&camera, c, r) && s >= min_size).then(|| (s, store.get(h).expect("live").slot))
            })
            .collect();
        all.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        all.truncate(max);
        prop_assert_eq!(&out[..n], &all.iter().map(|a| a.1).collect::<Vec<_>>()[..]);
    }

    #[test]
    fn an_orthographic_pick_is_the_largest_spheres_wherever_they_are(
        points in proptest::collection::vec((-80.0f32..80.0, 0.0f32..5.0, -80.0f32..80.0, 0.3f32..3.0, 0u32..3), 0..600),
        eye in (-60.0f32..60.0, 20.0f32..60.0, -60.0f32..60.0),
        look in (-60.0f32..60.0, -60.0f32..60.0),
        height in 5.0f32..150.0,
        min_size in 0.01f32..0.5,
        max in 0usize..40,
    ) {
        let (mut store, g) = common::store(10.0, 16);
        for &(x, y, z, s, clip) in &points {
            let desc = InstanceDesc { scale: s, rotation: Quat::from_rotation_y(x), ..InstanceDesc::at(Vec3::new(x, y, z), clip) };
            store.add(g, &desc).expect("adds");
        }
        let eye = Vec3::new(eye.0, eye.1, eye.2);
        let target = Vec3::new(look.0, 0.0, look.1);
        prop_assume!(target.distance(eye) > 1.0 && (target - eye).normalize().y.abs() < 0.99);
        // A sun camera: its box reaches behind the eye.
        let camera = FrameCamera::orthographic(eye, target, Vec3::Y, height, 1.5, -30.0, 200.0)
            .expect("a valid camera")
            .cull_camera();
        let mut out = vec![0u32; max];
        let mut scratch = vec![0f32; max];
        let n = store.pick_nearest(g, &camera, min_size, &mut out, &mut scratch).expect("picks");
        // The diameter over the view's height, with no division by depth.
        prop_assert!((camera.proj_scale - 2.0 / height).abs() <= 1e-6 * camera.proj_scale);
        let mut all: Vec<(f32, u32)> = store
            .live_handles()
            .filter_map(|h| {
                let (c, r) = store.sphere(h).expect("live");
                let s = r * camera.proj_scale;
                (sphere_visible(&camera, c, r) && s >= min_size).then(|| (s, store.get(h).expect("live").slot))
            })
            .collect();
        all.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        all.truncate(max);
        prop_assert_eq!(&out[..n], &all.iter().map(|a| a.1).collect::<Vec<_>>()[..]);
    }
}
