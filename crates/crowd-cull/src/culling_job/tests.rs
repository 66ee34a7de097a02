//! Unit tests of the culling kernel's packed level picks and bulk cluster path against the plain twins.

use glam::{Vec3, Vec4};

use crate::FrameCamera;

use super::chunk::{Class, Planes, classify};
use super::levels::{Edges, Levels, uniform_levels};
use super::*;
use crate::instance::TierState;
use crate::limits::{MAX_HYSTERESIS, MAX_LODS, RATE_COUNT};
use crate::reference::{cull_reference_to_vec, level_reference};
use crate::{Aabb, ClusterSettings, GroupDesc, InstanceDesc};

/// The packed float-lane levels of [`Edges::levels4`] against the plain twin [`level_reference`], exactly:
/// every table length, every previous level, and screen sizes on, just off and between every edge.
#[test]
fn packed_levels_match_the_reference_at_and_around_every_edge() {
    for lods in 1..MAX_LODS {
        for h in [0.0, 0.1, 0.25, MAX_HYSTERESIS] {
            let lod_thresholds: Vec<f32> = (0..lods).map(|i| 0.3 / (1.7f32).powi(i as i32)).collect();
            let desc = GroupDesc {
                mesh: 0,
                material: 0,
                clip_bounds: vec![Aabb::new(Vec3::ZERO, Vec3::ONE)],
                lod_thresholds,
                tier_thresholds: [0.2, 0.05, 0.01],
                rate_thresholds: [0.1, 0.03, 0.008],
                hysteresis: h,
            };
            let edges = Edges::new(&desc);
            let mut sizes = vec![0.0, 1e-6, 1.0, f32::INFINITY, f32::NAN];
            let all = desc
                .lod_thresholds
                .iter()
                .chain(&desc.tier_thresholds)
                .chain(&desc.rate_thresholds);
            for &t in all {
                for e in [t * (1.0 - h), t * (1.0 + h), t] {
                    sizes.extend([e, e.next_down(), e.next_up(), e * 0.97, e * 1.03]);
                }
            }
            for quad in sizes.chunks(4) {
                let mut s = [0.5f32; 4];
                s[..quad.len()].copy_from_slice(quad);
                for prev_lod in 0..=lods as u8 {
                    for prev_tier in 0..TIER_COUNT as u8 {
                        for prev_rate in 0..RATE_COUNT as u8 {
                            // Different previous levels in each lane.
                            let p = |l: u8, n: u8| (l + n) % (n + 1);
                            let prev = [
                                Vec4::from_array([0, 1, 2, 3].map(|l| f32::from(p(l + prev_lod, lods as u8)))),
                                Vec4::from_array([0, 1, 2, 3].map(|l| f32::from(p(l + prev_tier, 3)))),
                                Vec4::from_array([0, 1, 2, 3].map(|l| f32::from(p(l + prev_rate, 3)))),
                            ];
                            let (words, buckets) = edges.levels4(Vec4::from_array(s), prev);
                            for l in 0..4 {
                                let (pl, pt, pr) = (prev[0][l] as u8, prev[1][l] as u8, prev[2][l] as u8);
                                let lod = level_reference(&desc.lod_thresholds, h, s[l], pl);
                                let tier = level_reference(&desc.tier_thresholds, h, s[l], pt);
                                let rate = level_reference(&desc.rate_thresholds, h, s[l], pr);
                                assert_eq!(
                                    (words[l], buckets[l]),
                                    (
                                        u32::from_le_bytes([
                                            lod,
                                            tier,
                                            rate,
                                            TierState::VISIBLE | if rate > 0 { TierState::INTERPOLATE } else { 0 }
                                        ]),
                                        u32::from(lod) * TIER_COUNT as u32 + u32::from(tier)
                                    ),
                                    "lods {lods}, h {h}, s {}, prev {pl} {pt} {pr}",
                                    s[l]
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A crowd of 16 × 16 instances 1 m apart, in clusters of 64, and a camera looking at it along -z from
/// `distance` metres (every cluster wholly inside the frustum).
fn crowd() -> InstanceStore {
    let mut store = InstanceStore::new(ClusterSettings {
        radius: 6.0,
        capacity: 64,
    })
    .expect("settings");
    let g = store
        .add_group(GroupDesc {
            mesh: 0,
            material: 0,
            clip_bounds: vec![Aabb::new(Vec3::new(-0.5, 0.0, -0.5), Vec3::new(0.5, 1.8, 0.5))],
            lod_thresholds: vec![0.1, 0.01],
            tier_thresholds: [0.2, 0.05, 0.005],
            rate_thresholds: [0.1, 0.03, 0.004],
            hysteresis: 0.1,
        })
        .expect("group");
    for i in 0..256 {
        let mut d = InstanceDesc::at(Vec3::new((i % 16) as f32 - 8.0, 0.0, (i / 16) as f32 - 8.0), 0);
        d.scale = 0.9 + 0.2 * ((i * 37 % 17) as f32 / 16.0);
        store.add(g, &d).expect("adds");
    }
    store
}

fn camera(distance: f32) -> CullCamera {
    let eye = Vec3::new(0.0, 1.0, distance);
    FrameCamera::perspective(eye, Vec3::new(0.0, 1.0, 0.0), Vec3::Y, 0.8, 1.0, 0.1, 10_000.0).cull_camera()
}

/// Culls with the job and checks every instance's levels against the plain twin.
fn cull_and_compare(store: &mut InstanceStore, cam: &CullCamera) -> usize {
    let expected = cull_reference_to_vec(store, cam);
    let (mut cache, mut output) = (CullingCache::new(), CullOutput::new());
    cache.prepare(store);
    output.prepare(store);
    let visible = CullingJob {
        store,
        camera: cam,
        cache: &mut cache,
        output: &mut output,
    }
    .run()
    .expect("culls");
    assert_eq!(visible, expected.len());
    for r in &expected {
        let st = store.get(r.handle).expect("live").state;
        assert_eq!((st.lod, st.tier(), st.rate_log2), (r.lod, r.tier, r.rate_log2), "{r:?}");
        assert!(output.list(r.group, r.lod, r.tier).contains(&r.slot));
    }
    visible
}

/// Which clusters of group 0 take the bulk path of [`uniform_levels`] for `cam`.
fn uniform_clusters(store: &InstanceStore, cam: &CullCamera) -> Vec<bool> {
    let planes = Planes::new(cam);
    let grp = &store.groups[0];
    let levels = Levels {
        lod: grp.lod,
        tier: grp.tier,
        rate: grp.rate,
        edges: Edges::new(&grp.desc),
    };
    grp.clusters
        .iter()
        .enumerate()
        .filter(|(_, c)| c.len > 0)
        .map(|(k, c)| {
            assert!(classify(&c.aabb, &planes.planes) == Class::Inside);
            let lanes = k * grp.cap / 4..(k * grp.cap + c.len as usize).div_ceil(4);
            uniform_levels(&c.aabb, &grp.spheres[lanes], c.len as usize, &planes, &levels).is_some()
        })
        .collect()
}

#[test]
fn clusters_in_one_level_band_get_their_levels_in_bulk_as_the_reference_does() {
    let mut store = crowd();
    // Near: the crowd spans several bands, and instances get fine levels.
    let near = camera(40.0);
    assert!(
        uniform_clusters(&store, &near).iter().any(|u| !u),
        "some clusters straddle a band edge"
    );
    assert_eq!(cull_and_compare(&mut store, &near), 256);
    // Far, in the band of the coarsest LOD, VAT and rate 8: every cluster takes the bulk path, and every
    // instance crosses every boundary at once, as the reference's rule says.
    let far = camera(3_000.0);
    assert!(
        uniform_clusters(&store, &far).iter().all(|&u| u),
        "every cluster is in one band"
    );
    assert_eq!(cull_and_compare(&mut store, &far), 256);
    // A middle band (LOD 1, baked, rate 4), reached from the coarsest levels.
    let mid = camera(200.0);
    assert!(
        uniform_clusters(&store, &mid).iter().any(|&u| u),
        "a cluster is in one band"
    );
    assert_eq!(cull_and_compare(&mut store, &mid), 256);
    let st = store
        .get(store.live_handles().next().expect("live"))
        .expect("live")
        .state;
    assert_eq!((st.lod, st.tier(), st.rate_log2), (1, crate::Tier::Baked, 2));
}

/// An orthographic camera `height` high looking at the crowd of [`crowd`] along -z from `distance` metres.
fn orthographic(distance: f32, height: f32) -> CullCamera {
    let eye = Vec3::new(0.0, 1.0, distance);
    FrameCamera::orthographic(eye, Vec3::new(0.0, 1.0, 0.0), Vec3::Y, height, 1.0, 0.1, 10_000.0)
        .expect("a valid camera")
        .cull_camera()
}

#[test]
fn orthographic_cameras_size_by_height_alone_in_bulk_and_per_instance_as_the_reference_does() {
    let mut store = crowd();
    // (height, some cluster straddles a band edge, every cluster lies in one band); each from near and far.
    let rows = [(24.0, true, false), (1_000.0, false, true), (120.0, false, true)];
    for (height, straddles, uniform) in rows {
        for distance in [40.0, 3_000.0] {
            let cam = orthographic(distance, height);
            assert!((cam.proj_scale - 2.0 / height).abs() <= 1e-7 * cam.proj_scale);
            let bulk = uniform_clusters(&store, &cam);
            assert!(
                !straddles || bulk.iter().any(|u| !u),
                "height {height}: no cluster straddles"
            );
            assert!(
                !uniform || bulk.iter().all(|&u| u),
                "height {height}: a cluster straddles"
            );
            // The diameter over the height, whatever the distance.
            for r in cull_reference_to_vec(&store, &cam) {
                let (_, radius) = store.sphere(r.handle).expect("live");
                assert_eq!(
                    r.screen_size,
                    radius * cam.proj_scale,
                    "height {height}, distance {distance}"
                );
            }
            assert_eq!(
                cull_and_compare(&mut store, &cam),
                256,
                "height {height}, distance {distance}"
            );
        }
    }
    let st = store
        .get(store.live_handles().next().expect("live"))
        .expect("live")
        .state;
    assert_eq!((st.lod, st.tier(), st.rate_log2), (1, crate::Tier::Baked, 2));
}
