//! Unit tests of the store's bulk moves and four-lane refit against their plain twins.

use super::bulk_move::{BULK_CHECK_CHUNK, BULK_MOVES_PER_CLUSTER, write_positions, write_positions_split};
use super::refit::fit_spheres;
use super::*;
use crate::bounds::Aabb;
use crate::group::{SoaSphere, grow};

fn desc() -> GroupDesc {
    GroupDesc {
        mesh: 0,
        material: 0,
        clip_bounds: vec![Aabb::new(Vec3::new(-0.5, 0.0, -0.5), Vec3::new(0.5, 1.8, 0.5))],
        lod_thresholds: vec![0.1],
        tier_thresholds: [0.2, 0.05, 0.01],
        rate_thresholds: [0.1, 0.03, 0.008],
        hysteresis: 0.1,
    }
}

#[test]
fn four_lane_fit_is_the_plain_grow() {
    let spheres: Vec<SoaSphere> = (0..8)
        .map(|k| {
            let f = |o: f32| Vec4::from_array(std::array::from_fn(|l| ((k * 4 + l) as f32 * 1.37 + o).sin() * 50.0));
            SoaSphere {
                x: f(0.0),
                y: f(1.0),
                z: f(2.0),
                r: f(3.0).abs() * 0.01 + 0.5,
            }
        })
        .collect();
    for n in 1..=32 {
        let mut plain = crate::bounds::Aabb::EMPTY;
        for i in 0..n {
            let sp = &spheres[i / 4];
            let l = i % 4;
            grow(&mut plain, Vec3::new(sp.x[l], sp.y[l], sp.z[l]), sp.r[l]);
        }
        assert_eq!(fit_spheres(&spheres[..n.div_ceil(4)], n), plain, "{n} spheres");
    }
}

#[test]
fn split_bulk_write_matches_the_plain_write() {
    let mut store = InstanceStore::new(ClusterSettings {
        radius: 2.0,
        capacity: 16,
    })
    .expect("settings");
    let g = store.add_group(desc()).expect("group");
    let descs: Vec<InstanceDesc> = (0..4000)
        .map(|i| InstanceDesc::at(Vec3::new((i % 64) as f32, 0.0, (i / 64) as f32), 0))
        .collect();
    let mut handles = vec![Handle::default(); descs.len()];
    store.add_many(g, &descs, &mut handles).expect("adds");
    // Every handle moves twice, in a scrambled order: the last position wins.
    let mut movers: Vec<Handle> = (0..2 * handles.len())
        .map(|i| handles[(i * 7919) % handles.len()])
        .collect();
    movers.reverse();
    let positions: Vec<Vec3> = (0..movers.len())
        .map(|i| Vec3::new(i as f32, 1.0, -(i as f32)))
        .collect();
    let slots: Vec<u32> = movers.iter().map(|h| store.handles[h.index as usize].slot).collect();
    let mut plain = store.groups[0].clone();
    write_positions(std::slice::from_mut(&mut plain), &store.handles, &movers, &positions);
    for threads in [1, 2, 3, 5] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a rayon pool");
        let mut split = store.groups[0].clone();
        pool.install(|| write_positions_split(&mut split, &slots, &positions));
        assert_eq!(split.position, plain.position, "{threads} threads");
        assert!(
            split
                .clusters
                .iter()
                .zip(&plain.clusters)
                .all(|(a, b)| a.moved == b.moved),
            "{threads} threads"
        );
    }
}

#[test]
fn a_bad_bulk_move_reports_the_first_bad_index_and_changes_nothing() {
    let mut store = InstanceStore::new(ClusterSettings {
        radius: 2.0,
        capacity: 16,
    })
    .expect("settings");
    let g = store.add_group(desc()).expect("group");
    let descs: Vec<InstanceDesc> = (0..3 * BULK_CHECK_CHUNK)
        .map(|i| InstanceDesc::at(Vec3::new((i % 64) as f32, 0.0, (i / 64) as f32), 0))
        .collect();
    let mut handles = vec![Handle::default(); descs.len()];
    store.add_many(g, &descs, &mut handles).expect("adds");
    let before = store.groups[0].position.clone();
    let mut positions: Vec<Vec3> = descs.iter().map(|d| d.position + Vec3::ONE).collect();
    // A NaN in a later piece and a stale handle in an earlier one: the earlier index is reported.
    positions[2 * BULK_CHECK_CHUNK + 5] = Vec3::NAN;
    let mut movers = handles.clone();
    movers[BULK_CHECK_CHUNK + 3].generation += 2;
    let err = store.set_positions(&movers, &positions).expect_err("a stale handle");
    assert!(
        matches!(err, Error::StaleHandle { index, .. } if index == BULK_CHECK_CHUNK + 3),
        "{err:?}"
    );
    movers[BULK_CHECK_CHUNK + 3] = handles[BULK_CHECK_CHUNK + 3];
    let err = store.set_positions(&movers, &positions).expect_err("a NaN");
    assert!(
        matches!(err, Error::NonFinite { index, .. } if index == 2 * BULK_CHECK_CHUNK + 5),
        "{err:?}"
    );
    assert_eq!(store.groups[0].position, before, "nothing moved");
    store.check_invariants().expect("invariants hold");
}

#[test]
fn bulk_moves_over_two_groups_refit_at_once_and_the_last_position_wins() {
    let mut store = InstanceStore::new(ClusterSettings {
        radius: 4.0,
        capacity: 8,
    })
    .expect("settings");
    let groups = [
        store.add_group(desc()).expect("group"),
        store.add_group(desc()).expect("group"),
    ];
    let mut handles = Vec::new();
    for i in 0..64 {
        let p = Vec3::new((i % 8) as f32, 0.0, (i / 8) as f32);
        handles.push(store.add(groups[i % 2], &InstanceDesc::at(p, 0)).expect("adds"));
    }
    store.maintain(MaintainBudget {
        reassign: usize::MAX,
        refit: usize::MAX,
    });
    // Every instance moves (a bulk batch), one of them twice, and some far beyond `R`.
    let mut movers = handles.clone();
    let mut positions: Vec<Vec3> = (0..64).map(|i| Vec3::new(i as f32 * 0.7, 1.0, -(i as f32))).collect();
    movers.push(handles[5]);
    positions.push(Vec3::new(100.0, 0.0, 0.0));
    let clusters: usize = store.groups.iter().map(|g| g.clusters.len()).sum();
    assert!(
        movers.len() * BULK_MOVES_PER_CLUSTER >= clusters,
        "the batch takes the bulk path"
    );
    store.set_positions(&movers, &positions).expect("moves");
    store
        .check_invariants()
        .expect("boxes hold spheres, clusters are filed at their centres");
    for (i, h) in handles.iter().enumerate() {
        let want = if i == 5 {
            Vec3::new(100.0, 0.0, 0.0)
        } else {
            positions[i]
        };
        assert_eq!(store.get(*h).expect("live").desc.position, want);
    }
    assert!(
        store
            .groups
            .iter()
            .all(|g| g.clusters.iter().all(|c| !c.moved && !c.dirty))
    );
    assert!(
        !store.reassign.is_empty(),
        "members far from their new centres are queued"
    );
    for _ in 0..16 {
        store.maintain(MaintainBudget {
            reassign: usize::MAX,
            refit: usize::MAX,
        });
    }
    store.check_invariants().expect("after maintenance");
    for h in &handles {
        let d = store
            .cluster_centre(*h)
            .expect("live")
            .distance(store.get(*h).expect("live").desc.position);
        assert!(d <= 4.0 * (1.0 + 1e-4), "{d}");
    }
}
