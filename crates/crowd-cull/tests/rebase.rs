//! `InstanceStore::rebase_start_times`: every live instance of the group gets `f(anim)` as its start time and is
//! reported changed, exactly; empty slots, other groups and everything but start times stay as they were, on the
//! one-thread path of a small group and the split path of a large one.

mod common;

use std::ops::Range;

use crowd_cull::{AnimState, Error, GroupId, Handle, InstanceDesc, InstanceStore, TierState};
use glam::{Quat, Vec3, Vec4};

/// Everything a slot holds, for comparing whole groups.
type Slot = (Vec3, Quat, f32, AnimState, Vec4, u32, TierState);

fn slots(store: &InstanceStore, g: GroupId) -> Vec<Slot> {
    let s = store.group_slots(g).expect("the group");
    (0..s.position.len())
        .map(|i| {
            (
                s.position[i],
                s.rotation[i],
                s.scale[i],
                s.anim[i],
                s.custom[i],
                s.flags[i],
                s.state[i],
            )
        })
        .collect()
}

/// The live slots of group `g` as ascending merged ranges, as `take_changed_slots` reports them.
fn live_ranges(store: &InstanceStore, g: GroupId) -> Vec<Range<u32>> {
    let mut out: Vec<Range<u32>> = Vec::new();
    for s in 0..store.group_slot_count(g).expect("the group") as u32 {
        if store.handle_at(g, s).is_none() {
            continue;
        }
        match out.last_mut() {
            Some(last) if last.end == s => last.end = s + 1,
            _ => out.push(s..s + 1),
        }
    }
    out
}

/// Adds `n` instances to `g` in a square 1 m apart, with start times `i * 0.25`, then removes every seventh
/// (holes inside clusters) and a square at one corner a quarter of the side wide (deleted clusters).
fn populate(store: &mut InstanceStore, g: GroupId, n: usize) -> Vec<Handle> {
    let side = (n as f32).sqrt().ceil() as usize;
    let corner = side / 4;
    let descs: Vec<InstanceDesc> = (0..n)
        .map(|i| {
            let mut d = InstanceDesc::at(Vec3::new((i % side) as f32, 0.0, (i / side) as f32), (i % 3) as u32);
            d.anim.start_time = i as f32 * 0.25;
            d.anim.speed = 1.0 + (i % 5) as f32 * 0.1;
            d
        })
        .collect();
    let mut handles = vec![Handle::default(); n];
    store.add_many(g, &descs, &mut handles).expect("adds");
    let gone: Vec<Handle> = handles
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 7 == 3 || (i % side < corner && i / side < corner))
        .map(|(_, h)| *h)
        .collect();
    store.remove_many(&gone).expect("removes");
    store.live_handles().collect()
}

#[test]
fn every_live_start_time_is_rebased_and_reported_and_nothing_else_changes() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .expect("a rayon pool");
    // A group of a few slots (one thread) and one of tens of thousands (split over the pool), in one store.
    for (n, capacity) in [(40, 8), (30_000, 16), (30_000, 256)] {
        let (mut store, small) = common::store(6.0, capacity);
        let g = store.add_group(common::group_desc()).expect("a group");
        populate(&mut store, small, 30);
        let live = populate(&mut store, g, n);
        let mut ranges = Vec::new();
        for group in [small, g] {
            store.take_changed_slots(group, &mut ranges).expect("the group");
        }
        let (before, before_small) = (slots(&store, g), slots(&store, small));
        let spheres: Vec<(Vec3, f32)> = live.iter().map(|h| store.sphere(*h).expect("live")).collect();
        let live_slots = live_ranges(&store, g);
        let slot_count = store.slot_count();

        // An epoch move of 1,000 s, with the speed in the result so that `f` is seen to read the whole state.
        pool.install(|| store.rebase_start_times(g, |a| a.start_time - 1000.0 + a.speed))
            .expect("rebases");

        let after = slots(&store, g);
        for (s, (was, now)) in before.iter().zip(&after).enumerate() {
            let mut want = *was;
            if store.handle_at(g, s as u32).is_some() {
                want.3.start_time = was.3.start_time - 1000.0 + was.3.speed;
            }
            assert_eq!(*now, want, "{n} instances in clusters of {capacity}: slot {s}");
        }
        for (h, sphere) in live.iter().zip(&spheres) {
            assert_eq!(store.sphere(*h).expect("live"), *sphere, "a sphere moved");
        }
        assert_eq!(slots(&store, small), before_small, "another group changed");
        assert_eq!(store.slot_count(), slot_count);
        store.take_changed_slots(g, &mut ranges).expect("the group");
        assert_eq!(ranges, live_slots, "{n} instances in clusters of {capacity}");
        store.take_changed_slots(small, &mut ranges).expect("the group");
        assert!(ranges.is_empty(), "another group's slots were reported: {ranges:?}");
        store.check_invariants().expect("invariants hold");
    }
}

#[test]
fn an_unknown_group_is_an_error_that_changes_nothing() {
    let (mut store, g) = common::store(6.0, 8);
    populate(&mut store, g, 20);
    let mut ranges = Vec::new();
    store.take_changed_slots(g, &mut ranges).expect("the group");
    let before = slots(&store, g);
    assert_eq!(
        store.rebase_start_times(GroupId(1), |a| a.start_time + 1.0),
        Err(Error::UnknownGroup {
            index: 0,
            group: 1,
            group_count: 1
        })
    );
    assert_eq!(slots(&store, g), before);
    store.take_changed_slots(g, &mut ranges).expect("the group");
    assert!(ranges.is_empty());
    // An empty group has nothing to rebase.
    let empty = store.add_group(common::group_desc()).expect("a group");
    store
        .rebase_start_times(empty, |_| panic!("no instance to rebase"))
        .expect("rebases nothing");
}
