//! The store's slot limit (`InstanceStore::set_max_slots`): adds that would need a cluster block past it fail
//! with `Error::SlotLimit`, exactly (a batch fails only when it really needs the block, and is then rolled back
//! with nothing observable changed), `maintain` never opens a block past it, and removals make room again.

mod common;

use crowd_cull::limits::MAX_SLOTS;
use crowd_cull::{Error, GroupId, Handle, Instance, InstanceDesc, InstanceStore, MaintainBudget};
use glam::Vec3;

/// Cluster capacity of these tests: every block is 4 slots.
const CAP: usize = 4;

/// Spot `i`: 10 m from every other spot, and clusters reach 1 m, so instances at one spot share clusters and
/// every spot needs clusters of its own.
fn spot(i: usize) -> Vec3 {
    Vec3::new(10.0 * (i % 100) as f32, 0.0, 10.0 * (i / 100) as f32)
}

fn at(i: usize) -> InstanceDesc {
    InstanceDesc::at(spot(i), (i % 3) as u32)
}

fn store() -> (InstanceStore, GroupId) {
    common::store(1.0, CAP as u32)
}

/// Everything observable of the store's instances: each live one's handle, data and sphere, and the centre of
/// its cluster; and the store's counts.
#[derive(Debug, PartialEq)]
struct Snapshot {
    instances: Vec<(Handle, Instance, (Vec3, f32), Vec3)>,
    slot_count: usize,
    len: usize,
    handle_capacity: usize,
    clusters: usize,
}

fn snapshot(store: &InstanceStore, g: GroupId) -> Snapshot {
    Snapshot {
        instances: store
            .live_handles()
            .map(|h| {
                (
                    h,
                    store.get(h).expect("live"),
                    store.sphere(h).expect("live"),
                    store.cluster_centre(h).expect("live"),
                )
            })
            .collect(),
        slot_count: store.slot_count(),
        len: store.len(),
        handle_capacity: store.handle_capacity(),
        clusters: store.cluster_count(g).expect("the group"),
    }
}

/// The store is sound and within its limit, and no changed slot lies past its slots.
fn check(store: &mut InstanceStore, g: GroupId) {
    store.check_invariants().expect("invariants hold");
    assert!(store.slot_count() <= store.max_slots());
    let mut ranges = Vec::new();
    store.take_changed_slots(g, &mut ranges).expect("the group");
    assert!(
        ranges.iter().all(|r| r.end as usize <= store.slot_count()),
        "{ranges:?} past {} slots",
        store.slot_count()
    );
}

/// Adds `spots` one at a time.
fn add_spots(store: &mut InstanceStore, g: GroupId, spots: &[usize]) -> Vec<Handle> {
    spots.iter().map(|&i| store.add(g, &at(i)).expect("adds")).collect()
}

fn add_batch(store: &mut InstanceStore, g: GroupId, spots: &[usize]) -> Result<Vec<Handle>, Error> {
    let descs: Vec<InstanceDesc> = spots.iter().map(|&i| at(i)).collect();
    let mut handles = vec![Handle::default(); descs.len()];
    store.add_many(g, &descs, &mut handles).map(|()| handles)
}

/// Where each handle index of `handles` lives: the part of a handle that a rollback must not change (reused
/// handles' generations may advance).
fn placement(store: &InstanceStore, handles: &[Handle]) -> Vec<(u32, u32)> {
    handles
        .iter()
        .map(|h| (h.index, store.get(*h).expect("live").slot))
        .collect()
}

struct Row {
    name: &'static str,
    /// The limit, in blocks.
    blocks: usize,
    /// Spots added one at a time first.
    setup: &'static [usize],
    /// The spots added, one at a time when `single`, else as one batch.
    spots: &'static [usize],
    single: bool,
    /// `None` when the adds succeed, else the index of the item that needs a block past the limit.
    fails_at: Option<usize>,
    /// The blocks the store holds after the adds (or after the part of them that fits).
    blocks_after: usize,
}

#[test]
fn adds_fail_exactly_when_they_need_a_block_past_the_limit() {
    let rows = [
        Row {
            name: "a single add that reaches the limit exactly",
            blocks: 3,
            setup: &[0, 1],
            spots: &[2],
            single: true,
            fails_at: None,
            blocks_after: 3,
        },
        Row {
            name: "a single add one block past the limit",
            blocks: 3,
            setup: &[0, 1, 2],
            spots: &[3],
            single: true,
            fails_at: Some(0),
            blocks_after: 3,
        },
        Row {
            name: "a single add at the limit that joins a cluster with room",
            blocks: 3,
            setup: &[0, 1, 2],
            spots: &[1],
            single: true,
            fails_at: None,
            blocks_after: 3,
        },
        Row {
            name: "a batch within the worst case (the fast path)",
            blocks: 8,
            setup: &[0],
            spots: &[1, 2],
            single: false,
            fails_at: None,
            blocks_after: 3,
        },
        Row {
            name: "a batch past the worst case that fits exactly",
            blocks: 3,
            setup: &[],
            spots: &[0, 0, 0, 0, 1, 1, 2, 2, 2, 2],
            single: false,
            fails_at: None,
            blocks_after: 3,
        },
        Row {
            name: "a batch whose fourth spot needs a fourth block",
            blocks: 3,
            setup: &[0],
            spots: &[0, 0, 0, 1, 1, 2, 3, 3],
            single: false,
            fails_at: Some(6),
            blocks_after: 3,
        },
        Row {
            name: "a batch whose fifth instance at one spot needs a second block",
            blocks: 1,
            setup: &[],
            spots: &[0, 0, 0, 0, 0],
            single: false,
            fails_at: Some(4),
            blocks_after: 1,
        },
    ];
    for row in rows {
        let (mut store, g) = store();
        let max = row.blocks * CAP;
        store.set_max_slots(max).expect("a limit above the slots");
        add_spots(&mut store, g, row.setup);
        check(&mut store, g);
        let before = snapshot(&store, g);
        let copy = store.clone();
        let result = if row.single {
            row.spots
                .iter()
                .map(|&i| store.add(g, &at(i)))
                .collect::<Result<Vec<_>, _>>()
        } else {
            add_batch(&mut store, g, row.spots)
        };
        check(&mut store, g);
        let name = row.name;
        match row.fails_at {
            None => {
                let handles = result.unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(store.len(), before.len + row.spots.len(), "{name}");
                assert_eq!(store.slot_count(), row.blocks_after * CAP, "{name}");
                for (h, &i) in handles.iter().zip(row.spots) {
                    assert_eq!(store.get(*h).expect("live").desc.position, spot(i), "{name}");
                }
            }
            Some(index) => {
                assert_eq!(
                    result,
                    Err(Error::SlotLimit {
                        index,
                        needed: max + CAP,
                        max
                    }),
                    "{name}"
                );
                assert_eq!(snapshot(&store, g), before, "{name}: the failed add changed the store");
                // What fits goes in, as it would have before the failed attempt.
                let fits = &row.spots[..index];
                let mut copy = copy;
                let (now, then) = if row.single {
                    (add_spots(&mut store, g, fits), add_spots(&mut copy, g, fits))
                } else {
                    (
                        add_batch(&mut store, g, fits).expect("a smaller batch fits"),
                        add_batch(&mut copy, g, fits).expect("a smaller batch fits"),
                    )
                };
                assert_eq!(placement(&store, &now), placement(&copy, &then), "{name}");
                assert_eq!(store.slot_count(), row.blocks_after * CAP, "{name}");
                check(&mut store, g);
            }
        }
    }
}

#[test]
fn a_rolled_back_batch_restores_the_free_handles_and_free_blocks() {
    let (mut store, g) = store();
    // Five spots of three, off the spots' centres by fractions that do not add up exactly, then spots 1 and 3
    // removed: six free handle entries and two free blocks.
    let handles: Vec<Handle> = (0..15)
        .map(|k| {
            let p = spot(k / 3) + Vec3::new(0.1 * (k % 3) as f32 + 0.037, 0.0, 0.3 / (k + 1) as f32);
            store.add(g, &InstanceDesc::at(p, 0)).expect("adds")
        })
        .collect();
    store.remove_many(&handles[3..6]).expect("removes");
    store.remove_many(&handles[9..12]).expect("removes");
    // Refit: the clusters the batch will touch are no longer queued for a refit.
    store.maintain(MaintainBudget {
        reassign: usize::MAX,
        refit: usize::MAX,
    });
    store
        .set_max_slots(store.slot_count())
        .expect("the slot count is a valid limit");
    check(&mut store, g);
    let before = snapshot(&store, g);
    let copy = store.clone();
    // Fills spots 0, 2 and 4, fills both free blocks, reuses every free handle entry and adds four, then needs
    // a block.
    let batch = [0, 2, 4, 7, 7, 7, 7, 8, 8, 8, 9];
    let err = add_batch(&mut store, g, &batch).expect_err("a block past the limit");
    let Error::SlotLimit { index, needed, max } = err else {
        panic!("{err:?}")
    };
    assert_eq!((index, needed, max), (10, 6 * CAP, 5 * CAP));
    assert_eq!(snapshot(&store, g), before);
    check(&mut store, g);
    // The free lists are as they were: the batch that fits takes the same handle entries and slots.
    let mut copy = copy;
    let now = add_batch(&mut store, g, &batch[..index]).expect("fits");
    let then = add_batch(&mut copy, g, &batch[..index]).expect("fits");
    assert_eq!(placement(&store, &now), placement(&copy, &then));
    assert_eq!(store.handle_capacity(), copy.handle_capacity());
    check(&mut store, g);
}

#[test]
fn a_large_batch_needs_only_the_blocks_it_fills() {
    // 100,000 instances 1 m apart in clusters of 256 within 16 m need some hundreds of blocks, far fewer than
    // the worst case of a block each (25.6 million slots).
    let mut store = InstanceStore::new(crowd_cull::ClusterSettings::default()).expect("settings");
    let g = store.add_group(common::group_desc()).expect("group");
    store.set_max_slots(2_800_000).expect("a valid limit");
    let descs: Vec<InstanceDesc> = (0..100_000)
        .map(|i| InstanceDesc::at(Vec3::new((i % 316) as f32, 0.0, (i / 316) as f32), 0))
        .collect();
    let mut handles = vec![Handle::default(); descs.len()];
    store.add_many(g, &descs, &mut handles).expect("fits");
    assert_eq!(store.len(), 100_000);
    assert!(store.slot_count() <= 2_800_000, "{}", store.slot_count());
    assert!(store.cluster_count(g).expect("the group") < 1_000);
    store.check_invariants().expect("invariants hold");
}

#[test]
fn the_limit_is_checked_when_set() {
    let (mut store, g) = store();
    assert_eq!(store.max_slots(), MAX_SLOTS, "the default");
    add_spots(&mut store, g, &[0, 1, 2]);
    let slots = store.slot_count();
    assert_eq!(slots, 3 * CAP);
    for asked in [0, slots - 1, MAX_SLOTS + 1, usize::MAX] {
        assert_eq!(
            store.set_max_slots(asked),
            Err(Error::MaxSlots {
                asked,
                min: slots,
                max: MAX_SLOTS
            })
        );
        assert_eq!(store.max_slots(), MAX_SLOTS, "a refused limit changed the limit");
    }
    store.set_max_slots(slots).expect("the slot count");
    assert_eq!(store.max_slots(), slots);
    store.set_max_slots(MAX_SLOTS).expect("MAX_SLOTS");
    let (mut empty, g) = self::store();
    empty.set_max_slots(0).expect("no slots at all");
    assert_eq!(
        empty.add(g, &at(0)),
        Err(Error::SlotLimit {
            index: 0,
            needed: CAP,
            max: 0
        })
    );
}

#[test]
fn maintain_leaves_a_drifter_in_its_cluster_at_the_limit() {
    let (mut store, g) = store();
    let handles = add_spots(&mut store, g, &[0, 0, 1, 1, 2, 2]);
    store.set_max_slots(store.slot_count()).expect("a valid limit");
    let all = MaintainBudget {
        reassign: usize::MAX,
        refit: usize::MAX,
    };
    store.maintain(all);
    let drifter = handles[0];
    let slot = store.get(drifter).expect("live").slot;
    store.set_position(drifter, spot(7)).expect("moves");
    let stats = store.maintain(all);
    assert_eq!(stats.reassigned, 0);
    assert_eq!(store.slot_count(), 3 * CAP, "maintain opened a block past the limit");
    assert_eq!(
        store.get(drifter).expect("live").slot,
        slot,
        "the drifter stays in its cluster"
    );
    check(&mut store, g);
    // A freed block takes it, within the limit.
    store.remove_many(&handles[4..]).expect("removes");
    store.set_position(drifter, spot(7) + Vec3::X * 0.1).expect("moves");
    let stats = store.maintain(all);
    assert_eq!(stats.reassigned, 1);
    assert_eq!(store.slot_count(), 3 * CAP);
    assert!(store.cluster_centre(drifter).expect("live").distance(spot(7)) < 1.0);
    check(&mut store, g);
    // So does a new block once the limit is raised.
    store.set_max_slots(4 * CAP).expect("a valid limit");
    store.set_position(handles[2], spot(8)).expect("moves");
    assert_eq!(store.maintain(all).reassigned, 1);
    assert_eq!(store.slot_count(), 4 * CAP);
    check(&mut store, g);
}

#[test]
fn removals_make_room_for_as_many_adds() {
    let (mut store, g) = store();
    store.set_max_slots(5 * CAP).expect("a valid limit");
    let spots: Vec<usize> = (0..5).flat_map(|i| [i; CAP]).collect();
    let handles = add_batch(&mut store, g, &spots).expect("fills the limit exactly");
    assert_eq!(store.slot_count(), 5 * CAP);
    assert!(matches!(store.add(g, &at(9)), Err(Error::SlotLimit { .. })));
    // Two whole spots go, and as many instances come back elsewhere, into their blocks.
    store
        .remove_many(&handles[CAP..2 * CAP])
        .and_then(|()| store.remove_many(&handles[3 * CAP..4 * CAP]))
        .expect("removes");
    let back: Vec<usize> = [8; CAP].into_iter().chain([9; CAP]).collect();
    add_batch(&mut store, g, &back).expect("fits the freed blocks");
    assert_eq!(store.len(), 5 * CAP);
    assert_eq!(store.slot_count(), 5 * CAP, "the slot count is unchanged");
    check(&mut store, g);
}
