//! Every packet of a scripted crowd matches the plain reference of its frame (`crowd_frame::reference`): the
//! records bit for bit, the draws exactly, and the live slot and unique palettes within float rounding. The crowd
//! has every tier, tilted and scaled instances, moves and faded and cut clip switches; a second run uses a skin
//! that leaves joints out, so that palette offsets (`skin_joint_count` per slot) differ from the pool's stride.

mod common;

use crowd_cull::Tier;
use crowd_frame::reference::reference_frame;
use crowd_frame::{
    Character, CrowdFrame, DRAWS_PER_LOD, FrameSettings, INSTANCE_RECORD_SIZE, Packet, PacketDraw, RecordKind,
};
use glam::Affine3A;
use skin_pack::PaletteEntry;

/// The largest difference between two palettes' matrix elements, relative to the larger magnitude (at least 1).
fn palette_error(got: &[PaletteEntry], want: &[Affine3A]) -> f32 {
    assert_eq!(got.len(), want.len());
    got.iter()
        .zip(want)
        .map(|(g, w)| {
            let w = PaletteEntry::from_mat4(&glam::Mat4::from(*w));
            g.rows
                .iter()
                .flatten()
                .zip(w.rows.iter().flatten())
                .map(|(a, b)| (a - b).abs() / a.abs().max(b.abs()).max(1.0))
                .fold(0.0f32, f32::max)
        })
        .fold(0.0, f32::max)
}

/// Checks one packet against the reference of the frame's state.
fn check(crowd: &CrowdFrame, packet: &Packet, frame: usize) {
    let want = reference_frame(crowd).expect("the reference runs");
    assert_eq!(
        packet.records().len(),
        want.records.len(),
        "frame {frame}: record count"
    );
    for (i, (g, w)) in packet.records().iter().zip(&want.records).enumerate() {
        assert_eq!(g, w, "frame {frame}: record {i}");
    }
    assert_eq!(packet.draws(), &want.draws[..], "frame {frame}: draws");
    let s = packet.skin_joint_count();
    for (slot, palette) in &want.pool_palettes {
        let at = *slot as usize * s;
        let e = palette_error(&packet.pool_palettes()[at..at + s], palette);
        assert!(e < 1e-5, "frame {frame}: slot {slot} palette off by {e}");
    }
    assert_eq!(packet.unique_palettes().len(), want.unique_palettes.len() * s);
    for (k, palette) in want.unique_palettes.iter().enumerate() {
        let e = palette_error(&packet.unique_palettes()[k * s..(k + 1) * s], palette);
        assert!(e < 1e-5, "frame {frame}: unique palette {k} off by {e}");
    }
    // Every byte a draw reads is in a dirty range of this packet.
    let dirty = packet.dirty();
    let covered = |ranges: &[skin_pack::ByteRange], start: usize, end: usize| {
        ranges.iter().any(|r| r.start <= start && end <= r.end)
    };
    let entry = s * size_of::<PaletteEntry>();
    for d in packet.draws() {
        let records = &packet.records()[d.first_instance as usize..(d.first_instance + d.instance_count) as usize];
        for (k, r) in records.iter().enumerate() {
            let i = d.first_instance as usize + k;
            assert!(covered(
                &dirty.records,
                i * INSTANCE_RECORD_SIZE,
                (i + 1) * INSTANCE_RECORD_SIZE
            ));
            let decoded = r.decode();
            match d.kind {
                RecordKind::Pooled => {
                    for slot in decoded.slots {
                        let at = slot as usize * entry;
                        assert!(
                            covered(&dirty.pool_palettes, at, at + entry),
                            "frame {frame}: record {i} reads slot {slot}, which is not dirty"
                        );
                    }
                }
                RecordKind::Unique => {
                    let at = decoded.palette as usize * size_of::<PaletteEntry>();
                    assert!(covered(&dirty.unique_palettes, at, at + entry));
                }
            }
        }
    }
    let stats = packet.stats();
    assert_eq!(stats.visible as usize, packet.records().len());
    assert_eq!(stats.per_tier.iter().sum::<u32>(), stats.visible);
    assert_eq!(packet.draws().len(), DRAWS_PER_LOD * crowd.character().lod_count());
    let drawn: u32 = packet.draws().iter().map(|d: &PacketDraw| d.instance_count).sum();
    assert_eq!(
        drawn, stats.visible,
        "frame {frame}: every visible instance is drawn once"
    );
}

/// Runs `frames` scripted frames of `n` instances, checking each packet; returns the tiers seen.
fn run(character: &std::sync::Arc<Character>, settings: FrameSettings, n: usize, frames: usize) -> [u32; 4] {
    let mut crowd: CrowdFrame = CrowdFrame::new(character.clone(), settings).expect("the crowd builds");
    let mut script = common::Script::new(&mut crowd, 7, n);
    let exchange = crowd.exchange().clone();
    let mut seen = [0u32; 4];
    let (mut fades, mut unique) = (0, 0);
    for f in 0..frames {
        script.changes(&mut crowd, f, n / 50);
        crowd.step(1.0 / 30.0, &common::camera(f)).expect("steps");
        let packet = exchange.begin_read().expect("a packet");
        assert_eq!(packet.frame(), f as u64);
        check(&crowd, &packet, f);
        for (s, t) in seen.iter_mut().zip(packet.stats().per_tier) {
            *s += t;
        }
        fades += packet.stats().fading;
        unique += packet.stats().unique;
    }
    assert!(
        fades > 0 && unique > 0,
        "the script crossfades ({fades}) and has unique instances ({unique})"
    );
    seen
}

#[test]
fn packets_match_the_reference_in_every_tier() {
    let character = std::sync::Arc::new(common::character(8));
    let seen = run(&character, FrameSettings::default(), 3000, 40);
    for tier in Tier::ALL {
        assert!(seen[tier as usize] > 0, "no instance was {tier:?}: {seen:?}");
    }
}

#[test]
fn a_small_unique_cap_packs_the_rest_as_pooled() {
    let character = std::sync::Arc::new(common::character(6));
    let settings = FrameSettings {
        max_unique: 3,
        tier_thresholds: [0.05, 0.02, 0.01],
        ..FrameSettings::default()
    };
    run(&character, settings, 1500, 12);
}

#[test]
fn a_skin_that_leaves_joints_out_gets_its_own_palette_offsets() {
    let model = common::model();
    let full = common::character(6);
    let mut skeleton = full.skeleton().clone();
    let keep: Vec<usize> = (0..skeleton.skin_joints.len()).step_by(2).rev().collect();
    skeleton.skin_joints = keep.iter().map(|&k| skeleton.skin_joints[k]).collect();
    skeleton.inverse_bind_matrices = keep.iter().map(|&k| skeleton.inverse_bind_matrices[k]).collect();
    assert_ne!(skeleton.joint_count(), skeleton.skin_joint_count());
    let clips = model
        .clips_for(0)
        .map(|c| anim_pose::RuntimeClip::build(c, &skeleton, &Default::default()).expect("builds"))
        .collect();
    let character = Character::new(
        skeleton,
        clips,
        full.slots().to_vec(),
        full.clip_bounds().to_vec(),
        full.lod_count(),
    )
    .expect("the partial skin builds");
    run(&std::sync::Arc::new(character), FrameSettings::default(), 1000, 10);
}
