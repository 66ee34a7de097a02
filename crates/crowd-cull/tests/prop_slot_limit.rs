//! Random sequences of adds, bulk adds, removes, single and bulk moves (some far off the area), maintenance and limit changes under a
//! small slot limit. After every step the store's invariants hold, its slots stay within the limit, every live
//! handle reads the model's data, and no changed slot lies past the slots. An add fails exactly when inserting
//! without the limit would pass it (checked on a copy), and a failed add changes nothing observable.

mod common;

use std::collections::HashMap;

use crowd_cull::limits::MAX_SLOTS;
use crowd_cull::{Error, GroupId, Handle, Instance, InstanceDesc, InstanceStore, MaintainBudget};
use glam::Vec3;
use proptest::prelude::*;

const CAP: usize = 4;

#[derive(Clone, Debug)]
enum Op {
    Add(Vec3),
    AddMany(Vec<Vec3>),
    Remove(usize),
    RemoveMany(Vec<usize>),
    Move(usize, Vec3),
    /// Moves an instance 60 m off the area, where no cluster is: `maintain` then needs a block for it.
    Drift(usize),
    MoveMany(Vec<(usize, Vec3)>),
    Maintain(usize, usize),
    /// Sets the limit to the slot count plus this many blocks.
    Limit(usize),
}

fn position() -> impl Strategy<Value = Vec3> {
    (0.0f32..30.0, 0.0f32..30.0).prop_map(|(x, z)| Vec3::new(x, 0.0, z))
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => position().prop_map(Op::Add),
        2 => prop::collection::vec(position(), 0..24).prop_map(Op::AddMany),
        3 => any::<usize>().prop_map(Op::Remove),
        1 => prop::collection::vec(any::<usize>(), 0..8).prop_map(Op::RemoveMany),
        3 => (any::<usize>(), position()).prop_map(|(i, p)| Op::Move(i, p)),
        2 => any::<usize>().prop_map(Op::Drift),
        1 => prop::collection::vec((any::<usize>(), position()), 0..32).prop_map(Op::MoveMany),
        2 => (0usize..8, 0usize..8).prop_map(|(a, b)| Op::Maintain(a, b)),
        1 => (0usize..4).prop_map(Op::Limit),
    ]
}

/// Every live instance's handle, data and cluster centre, and the store's counts.
type Snapshot = (Vec<(Handle, Instance, Vec3)>, usize, usize, usize);

fn snapshot(store: &InstanceStore) -> Snapshot {
    (
        store
            .live_handles()
            .map(|h| (h, store.get(h).expect("live"), store.cluster_centre(h).expect("live")))
            .collect(),
        store.slot_count(),
        store.len(),
        store.handle_capacity(),
    )
}

/// The slot count that inserting `descs` would reach without the limit.
fn unlimited_slots(store: &InstanceStore, g: GroupId, descs: &[InstanceDesc]) -> usize {
    let mut copy = store.clone();
    copy.set_max_slots(MAX_SLOTS).expect("MAX_SLOTS");
    let mut handles = vec![Handle::default(); descs.len()];
    copy.add_many(g, descs, &mut handles).expect("fits without the limit");
    copy.slot_count()
}

fn check(store: &mut InstanceStore, g: GroupId, model: &HashMap<Handle, Vec3>) -> Result<(), TestCaseError> {
    store
        .check_invariants()
        .map_err(|e| TestCaseError::fail(format!("{e}")))?;
    prop_assert!(store.slot_count() <= store.max_slots());
    prop_assert_eq!(store.len(), model.len());
    for (h, p) in model {
        prop_assert_eq!(store.get(*h).expect("live").desc.position, *p);
    }
    let mut ranges = Vec::new();
    store.take_changed_slots(g, &mut ranges).expect("the group");
    prop_assert!(
        ranges.iter().all(|r| r.end as usize <= store.slot_count()),
        "{:?}",
        ranges
    );
    Ok(())
}

/// Adds `positions` (one add when `single`), and checks that it fails exactly when the store without the limit
/// would pass it, and then changes nothing.
fn add(
    store: &mut InstanceStore,
    g: GroupId,
    positions: &[Vec3],
    single: bool,
    model: &mut HashMap<Handle, Vec3>,
) -> Result<(), TestCaseError> {
    let descs: Vec<InstanceDesc> = positions.iter().map(|p| InstanceDesc::at(*p, 0)).collect();
    let needs = unlimited_slots(store, g, &descs);
    let before = snapshot(store);
    let mut handles = vec![Handle::default(); descs.len()];
    let result = if single {
        store.add(g, &descs[0]).map(|h| handles[0] = h)
    } else {
        store.add_many(g, &descs, &mut handles)
    };
    match result {
        Ok(()) => {
            prop_assert!(needs <= store.max_slots());
            prop_assert_eq!(store.slot_count(), needs);
            for (h, p) in handles.into_iter().zip(positions) {
                model.insert(h, *p);
            }
        }
        Err(Error::SlotLimit { needed, max, .. }) => {
            prop_assert!(needs > max, "refused a batch that fits: {} slots of {}", needs, max);
            // Limits here are whole blocks, so the store was full when the add failed.
            prop_assert_eq!(needed, max + CAP);
            prop_assert_eq!(snapshot(store), before, "a failed add changed the store");
        }
        Err(e) => prop_assert!(false, "{}", e),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn the_slots_never_pass_the_limit(ops in prop::collection::vec(op(), 1..80), blocks in 1usize..10) {
        let (mut store, g) = common::store(2.0, CAP as u32);
        store.set_max_slots(blocks * CAP).expect("a valid limit");
        let mut model: HashMap<Handle, Vec3> = HashMap::new();
        let pick = |model: &HashMap<Handle, Vec3>, i: usize| {
            let mut live: Vec<Handle> = model.keys().copied().collect();
            live.sort_by_key(|h| h.index);
            (!live.is_empty()).then(|| live[i % live.len()])
        };
        for op in ops {
            match op {
                Op::Add(p) => add(&mut store, g, &[p], true, &mut model)?,
                Op::AddMany(ps) => add(&mut store, g, &ps, false, &mut model)?,
                Op::Remove(i) => {
                    if let Some(h) = pick(&model, i) {
                        store.remove(h).expect("removes");
                        model.remove(&h);
                    }
                }
                Op::RemoveMany(is) => {
                    let mut hs: Vec<Handle> = is.iter().filter_map(|&i| pick(&model, i)).collect();
                    hs.sort_by_key(|h| h.index);
                    hs.dedup();
                    store.remove_many(&hs).expect("removes");
                    for h in hs {
                        model.remove(&h);
                    }
                }
                Op::Move(i, p) => {
                    if let Some(h) = pick(&model, i) {
                        store.set_position(h, p).expect("moves");
                        model.insert(h, p);
                    }
                }
                Op::Drift(i) => {
                    if let Some(h) = pick(&model, i) {
                        let p = model[&h] + Vec3::new(60.0, 0.0, 0.0);
                        store.set_position(h, p).expect("moves");
                        model.insert(h, p);
                    }
                }
                Op::MoveMany(moves) => {
                    let (hs, ps): (Vec<Handle>, Vec<Vec3>) =
                        moves.iter().filter_map(|&(i, p)| pick(&model, i).map(|h| (h, p))).unzip();
                    store.set_positions(&hs, &ps).expect("moves");
                    for (h, p) in hs.into_iter().zip(ps) {
                        model.insert(h, p);
                    }
                }
                Op::Maintain(reassign, refit) => {
                    store.maintain(MaintainBudget { reassign, refit });
                }
                Op::Limit(extra) => {
                    let max = store.slot_count() + extra * CAP;
                    store.set_max_slots(max).expect("a valid limit");
                    prop_assert_eq!(store.max_slots(), max);
                }
            }
            check(&mut store, g, &model)?;
        }
        // Draining the queues under the limit keeps it too.
        for _ in 0..8 {
            store.maintain(MaintainBudget { reassign: usize::MAX, refit: usize::MAX });
            check(&mut store, g, &model)?;
        }
    }
}
