//! `InstanceStore::take_changed_slots` never loses a change: after every batch of random adds, removes, single
//! and bulk moves, updates, animation and custom-data changes, start-time rebases and maintenance, every slot whose kept data differs
//! from a snapshot taken at the previous call lies in the reported ranges, and a crossfade's weight alone is not a
//! change.

mod common;

use std::ops::Range;

use crowd_cull::{AnimState, GroupId, Handle, InstanceDesc, InstanceStore, MaintainBudget};
use glam::{Quat, Vec3, Vec4};
use proptest::prelude::*;

/// What a GPU keeps of one slot, `None` when it holds no instance.
type Kept = Option<(Vec3, Quat, f32, u32, f32, f32, Option<u32>, Vec4)>;

fn snapshot(store: &InstanceStore, g: GroupId) -> Vec<Kept> {
    let s = store.group_slots(g).expect("the group");
    (0..store.group_slot_count(g).expect("the group"))
        .map(|i| {
            store.handle_at(g, i as u32).map(|_| {
                let a = s.anim[i];
                (
                    s.position[i],
                    s.rotation[i],
                    s.scale[i],
                    a.clip,
                    a.start_time,
                    a.speed,
                    a.fade_target,
                    s.custom[i],
                )
            })
        })
        .collect()
}

#[derive(Clone, Debug)]
enum Op {
    Add(f32, f32),
    Remove(usize),
    Move(usize, f32, f32),
    BulkMove(u64),
    Update(usize, f32),
    Play(usize, u32),
    FadeWeight(usize),
    Custom(usize),
    Rebase(f32),
    Maintain,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (-60.0f32..60.0, -60.0f32..60.0).prop_map(|(x, z)| Op::Add(x, z)),
        2 => any::<usize>().prop_map(Op::Remove),
        2 => (any::<usize>(), -80.0f32..80.0, -80.0f32..80.0).prop_map(|(i, x, z)| Op::Move(i, x, z)),
        1 => any::<u64>().prop_map(Op::BulkMove),
        1 => (any::<usize>(), 0.5f32..2.0).prop_map(|(i, s)| Op::Update(i, s)),
        1 => (any::<usize>(), 0u32..3).prop_map(|(i, c)| Op::Play(i, c)),
        1 => any::<usize>().prop_map(Op::FadeWeight),
        1 => any::<usize>().prop_map(Op::Custom),
        1 => (-100.0f32..100.0).prop_map(Op::Rebase),
        1 => Just(Op::Maintain),
    ]
}

fn covered(ranges: &[Range<u32>], s: usize) -> bool {
    ranges.iter().any(|r| r.contains(&(s as u32)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_change_is_reported(batches in proptest::collection::vec(proptest::collection::vec(op(), 1..40), 1..8)) {
        let (mut store, g) = common::store(8.0, 8);
        let mut live: Vec<Handle> = Vec::new();
        let mut ranges = Vec::new();
        store.take_changed_slots(g, &mut ranges).expect("the group");
        let mut before = snapshot(&store, g);
        for batch in batches {
            for op in batch {
                let pick = |i: usize| live[i % live.len()];
                match op {
                    Op::Add(x, z) => live.push(store.add(g, &InstanceDesc::at(Vec3::new(x, 0.0, z), 0)).expect("adds")),
                    Op::Remove(i) if !live.is_empty() => {
                        let h = live.swap_remove(i % live.len());
                        store.remove(h).expect("removes");
                    }
                    Op::Move(i, x, z) if !live.is_empty() => store.set_position(pick(i), Vec3::new(x, 0.0, z)).expect("moves"),
                    Op::BulkMove(seed) if !live.is_empty() => {
                        let positions: Vec<Vec3> = live
                            .iter()
                            .enumerate()
                            .map(|(k, _)| Vec3::new(((seed >> (k % 32)) & 63) as f32 - 32.0, 0.0, k as f32 % 50.0))
                            .collect();
                        store.set_positions(&live, &positions).expect("moves");
                    }
                    Op::Update(i, s) if !live.is_empty() => {
                        let h = pick(i);
                        let inst = store.get(h).expect("live");
                        let desc = InstanceDesc { scale: s, rotation: Quat::from_rotation_y(s), ..inst.desc };
                        store.update(h, &desc).expect("updates");
                    }
                    Op::Play(i, c) if !live.is_empty() => {
                        let h = pick(i);
                        let a = store.get(h).expect("live").desc.anim;
                        store.set_animation(h, &AnimState { fade_target: Some(c), fade_weight: 0.0, ..a }).expect("plays");
                    }
                    Op::FadeWeight(i) if !live.is_empty() => {
                        let h = pick(i);
                        let a = store.get(h).expect("live").desc.anim;
                        let w = if a.fade_target.is_some() { 0.5 } else { 0.0 };
                        store.set_animation(h, &AnimState { fade_weight: w, ..a }).expect("weights");
                    }
                    Op::Custom(i) if !live.is_empty() => store.set_custom(pick(i), Vec4::new(0.5, 0.25, 1.0, 1.0)).expect("tints"),
                    Op::Rebase(epoch) => store.rebase_start_times(g, |a| a.start_time - epoch).expect("rebases"),
                    Op::Maintain => {
                        store.maintain(MaintainBudget::default());
                    }
                    _ => {}
                }
            }
            store.take_changed_slots(g, &mut ranges).expect("the group");
            prop_assert!(ranges.windows(2).all(|w| w[0].end < w[1].start), "sorted, disjoint, merged: {ranges:?}");
            let after = snapshot(&store, g);
            for (s, now) in after.iter().enumerate() {
                let was = before.get(s).copied().flatten();
                if was != *now {
                    prop_assert!(covered(&ranges, s), "slot {s} changed ({was:?} -> {now:?}) but is not in {ranges:?}");
                }
            }
            before = after;
        }
        // With nothing done, nothing is reported.
        store.take_changed_slots(g, &mut ranges).expect("the group");
        prop_assert!(ranges.is_empty());
    }
}

#[test]
fn a_crossfade_weight_alone_is_no_change() {
    let (mut store, g) = common::store(8.0, 8);
    let h = store.add(g, &InstanceDesc::at(Vec3::ZERO, 0)).expect("adds");
    let mut ranges = Vec::new();
    store.take_changed_slots(g, &mut ranges).expect("the group");
    assert_eq!(ranges, vec![0..1]);
    let fading = AnimState {
        fade_target: Some(1),
        ..AnimState::clip(0)
    };
    store.set_animation(h, &fading).expect("plays");
    store.take_changed_slots(g, &mut ranges).expect("the group");
    assert_eq!(ranges, vec![0..1], "a new fade target is a change");
    store
        .set_animation(
            h,
            &AnimState {
                fade_weight: 0.7,
                ..fading
            },
        )
        .expect("weights");
    store.take_changed_slots(g, &mut ranges).expect("the group");
    assert!(ranges.is_empty(), "the weight alone: {ranges:?}");
}
