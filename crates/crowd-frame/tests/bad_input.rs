//! Bad input gives an error that names what is wrong and changes nothing: characters, settings, spawns, clip
//! switches, steps. Edge cases work: an empty crowd, a removed instance in mid-fade, a crossfade from start to end.

mod common;

use crowd_frame::{
    Character, CharacterOptions, ClipId, CrowdFrame, Error, FrameCamera, FrameSettings, RecordKind, Spawn,
};
use glam::{Quat, Vec3, Vec4};
use skin_pack::{Overrun, PaletteEntry};

/// The error of `r`, or a panic.
fn err<T: std::fmt::Debug>(r: Result<T, Error>) -> Error {
    match r {
        Err(e) => e,
        Ok(v) => panic!("expected an error, got {v:?}"),
    }
}

/// Asserts that `$r` fails with an error matching `$p`, showing the error otherwise.
macro_rules! fails {
    ($r:expr, $p:pat) => {{
        let e = err($r);
        assert!(matches!(e, $p), "got {e:?}");
    }};
}

#[test]
fn characters_with_inconsistent_parts_are_refused() {
    let c = std::sync::Arc::new(common::character(4));
    let parts = || {
        (
            c.skeleton().clone(),
            c.clips().to_vec(),
            c.slots().to_vec(),
            c.clip_bounds().to_vec(),
            c.lod_count(),
        )
    };
    let (sk, clips, slots, bounds, lods) = parts();
    fails!(
        Character::new(sk, Vec::new(), Vec::new(), Vec::new(), lods),
        Error::ClipCount { clips: 0, .. }
    );
    let (sk, clips2, mut slots2, bounds2, lods2) = parts();
    slots2.pop();
    fails!(
        Character::new(sk, clips2, slots2, bounds2, lods2),
        Error::ClipTables {
            clips: 4,
            slots: 3,
            bounds: 4
        }
    );
    let (sk, clips3, slots3, mut bounds3, lods3) = parts();
    bounds3[1].min = Vec3::NAN;
    fails!(
        Character::new(sk, clips3, slots3, bounds3, lods3),
        Error::ClipBounds { clip: 1, .. }
    );
    let (sk, ..) = parts();
    fails!(
        Character::new(sk, clips, slots, bounds, 0),
        Error::LodCount { lods: 0, .. }
    );
    let model = common::model();
    fails!(
        Character::from_model(&model, 5, &CharacterOptions::default()),
        Error::SkeletonIndex { skeleton: 5, .. }
    );
    fails!(common::character(4).with_lod_count(0), Error::LodCount { lods: 0, .. });
    fails!(
        common::character(4).with_lod_count(9),
        Error::LodCount { lods: 9, max: 8 }
    );
}

#[test]
fn settings_that_do_not_fit_the_character_are_refused() {
    let c = std::sync::Arc::new(common::character(4));
    let bad_lods = FrameSettings {
        lod_thresholds: vec![0.1],
        ..FrameSettings::default()
    };
    fails!(
        CrowdFrame::<PaletteEntry>::new(c.clone(), bad_lods),
        Error::LodThresholds { thresholds: 1, .. }
    );
    let no_unique = FrameSettings {
        max_unique: 0,
        ..FrameSettings::default()
    };
    fails!(
        CrowdFrame::<PaletteEntry>::new(c.clone(), no_unique),
        Error::MaxUnique { max_unique: 0 }
    );
    let cpu_culled_without_pool = FrameSettings {
        pose_pool: false,
        ..FrameSettings::default()
    };
    fails!(
        CrowdFrame::<PaletteEntry>::new(c.clone(), cpu_culled_without_pool),
        Error::PosePool
    );
    let two_dropping = FrameSettings {
        packets: 2,
        overrun: Overrun::DropOldest,
        ..FrameSettings::default()
    };
    assert!(matches!(
        CrowdFrame::<PaletteEntry>::new(c.clone(), two_dropping),
        Err(Error::Palette(_))
    ));
    let bad_tiers = FrameSettings {
        tier_thresholds: [0.1, 0.2, 0.3],
        ..FrameSettings::default()
    };
    assert!(matches!(
        CrowdFrame::<PaletteEntry>::new(c.clone(), bad_tiers),
        Err(Error::Cull(_))
    ));
    // Two LODs with one threshold build.
    let two = common::character(4).with_lod_count(2).expect("two LODs");
    let settings = FrameSettings {
        lod_thresholds: vec![0.1],
        ..FrameSettings::default()
    };
    assert!(CrowdFrame::<PaletteEntry>::new(two, settings).is_ok());
}

#[test]
fn bad_spawns_and_switches_name_the_field_and_change_nothing() {
    let c = std::sync::Arc::new(common::character(4));
    let mut crowd: CrowdFrame = CrowdFrame::new(c.clone(), FrameSettings::default()).expect("builds");
    let good = Spawn::at(Vec3::new(0.0, 0.0, -5.0), ClipId(0));
    let cases = [
        (
            Spawn {
                clip: ClipId(99),
                ..good
            },
            "spawn 1 clip",
        ),
        (Spawn { scale: 0.0, ..good }, "spawn 1 scale"),
        (
            Spawn {
                scale: f32::NAN,
                ..good
            },
            "spawn 1 scale",
        ),
        (Spawn { scale: 1e6, ..good }, "spawn 1 scale"),
        (
            Spawn {
                tint: Vec4::new(1.5, 0.0, 0.0, 1.0),
                ..good
            },
            "spawn 1 tint",
        ),
        (Spawn { time: f32::NAN, ..good }, "spawn 1 time and speed"),
        (
            Spawn {
                speed: f32::INFINITY,
                ..good
            },
            "spawn 1 time and speed",
        ),
    ];
    for (bad, name) in cases {
        let mut handles = [Default::default(); 2];
        let e = err(crowd.add_many(&[good, bad], &mut handles));
        let field = match e {
            Error::SpawnClip { spawn: 1, .. } => "spawn 1 clip",
            Error::SpawnScale { spawn: 1, .. } => "spawn 1 scale",
            Error::Tint { spawn: Some(1), .. } => "spawn 1 tint",
            Error::SpawnTime { spawn: 1, .. } => "spawn 1 time and speed",
            ref other => panic!("{name}: got {other:?}"),
        };
        assert_eq!(field, name);
        assert!(e.to_string().starts_with(name), "{e}");
        assert!(crowd.is_empty(), "{name}: nothing was added");
    }
    let nan = Spawn {
        position: Vec3::NAN,
        ..good
    };
    assert!(matches!(crowd.add(&nan), Err(Error::Cull(_))));
    let skewed = Spawn {
        rotation: Quat::from_xyzw(0.0, 0.0, 0.0, 2.0),
        ..good
    };
    assert!(matches!(crowd.add(&skewed), Err(Error::Cull(_))));
    assert!(crowd.is_empty());
    let mut short = [Default::default(); 1];
    fails!(
        crowd.add_many(&[good, good], &mut short),
        Error::HandleCount { handles: 1, spawns: 2 }
    );

    let h = crowd.add(&good).expect("adds");
    fails!(crowd.play(h, ClipId(99), 0.2), Error::PlayClip { clip: 99, .. });
    fails!(crowd.play(h, ClipId(1), f32::NAN), Error::PlayFade { .. });
    fails!(crowd.set_tint(h, Vec4::splat(-1.0)), Error::Tint { spawn: None, .. });
    fails!(crowd.set_speed(h, f32::NAN), Error::Speed { .. });
    let before = crowd.store().get(h).expect("live").desc;
    assert_eq!(before.anim.clip, 0);
    crowd.remove(h).expect("removes");
    assert!(matches!(crowd.play(h, ClipId(1), 0.2), Err(Error::Cull(_))));
    assert!(matches!(crowd.set_position(h, Vec3::ZERO), Err(Error::Cull(_))));
}

#[test]
fn bad_steps_are_refused_before_anything_changes() {
    let c = std::sync::Arc::new(common::character(4));
    let mut crowd: CrowdFrame = CrowdFrame::new(c.clone(), FrameSettings::default()).expect("builds");
    crowd
        .add(&Spawn::at(Vec3::new(0.0, 0.0, -5.0), ClipId(0)))
        .expect("adds");
    let camera = common::camera(0);
    for dt in [f32::NAN, -0.1, f32::INFINITY] {
        fails!(crowd.step(dt, &camera), Error::StepDt { .. });
    }
    let broken = FrameCamera {
        eye: Vec3::NAN,
        ..camera
    };
    fails!(crowd.step(0.1, &broken), Error::Camera { what: "step" });
    assert_eq!(crowd.time(), 0.0);
    assert_eq!(crowd.exchange().stats().published, 0);
}

#[test]
fn an_empty_crowd_steps_and_publishes_empty_draws() {
    let c = std::sync::Arc::new(common::character(4));
    let mut crowd: CrowdFrame = CrowdFrame::new(c.clone(), FrameSettings::default()).expect("builds");
    let exchange = crowd.exchange().clone();
    crowd.step(0.016, &common::camera(0)).expect("steps");
    let packet = exchange.begin_read().expect("a packet");
    assert!(packet.records().is_empty());
    assert!(packet.draws().iter().all(|d| d.instance_count == 0));
    assert!(packet.dirty().records.is_empty() && packet.dirty().unique_palettes.is_empty());
    assert_eq!(packet.stats().visible, 0);
}

#[test]
fn a_crossfade_runs_through_a_bucket_and_ends_on_its_target() {
    let c = std::sync::Arc::new(common::character(8));
    let settings = FrameSettings {
        // Pooled at every distance.
        tier_thresholds: [f32::MAX, 1e-7, 5e-8],
        ..FrameSettings::default()
    };
    let mut crowd: CrowdFrame = CrowdFrame::new(c.clone(), settings).expect("builds");
    let exchange = crowd.exchange().clone();
    let h = crowd
        .add(&Spawn::at(Vec3::new(0.0, 0.0, -6.0), ClipId(0)))
        .expect("adds");
    let other = crowd
        .add(&Spawn::at(Vec3::new(1.0, 0.0, -6.0), ClipId(0)))
        .expect("adds");
    let camera = common::camera(0);
    let dt = 0.05;
    crowd.step(dt, &camera).expect("steps");
    drop(exchange.begin_read().expect("a packet"));
    let before = crowd.store().get(h).expect("live").desc.anim;
    crowd.play(h, ClipId(1), 0.2).expect("switches");
    crowd.play(other, ClipId(2), 0.2).expect("switches");
    crowd.remove(other).expect("removes in mid-fade");
    let after = crowd.store().get(h).expect("live").desc.anim;
    assert_eq!((after.clip, after.fade_target), (0, Some(1)));
    let phase = |clip: usize, t: f32| {
        let d = c.clips()[clip].duration();
        t.rem_euclid(d) / d
    };
    let now = crowd.anim_time();
    assert!(
        (phase(0, crowd_frame::clip_time(&before, now)) - phase(1, crowd_frame::clip_time(&after, now))).abs() < 1e-4,
        "the target continues the source's phase"
    );
    let clip_slots = crowd.pool().clip_slot_count() as u32;
    for frame in 0..8 {
        crowd.step(dt, &camera).expect("steps");
        let packet = exchange.begin_read().expect("a packet");
        assert_eq!(packet.records().len(), 1);
        let anim = crowd.store().get(h).expect("live").desc.anim;
        let slots = packet.records()[0].decode().slots;
        let draw = packet.draws().iter().find(|d| d.instance_count == 1).expect("one draw");
        assert_eq!(draw.kind, RecordKind::Pooled);
        let t = (frame + 1) as f32 * dt;
        if t < 0.2 - 1e-4 {
            assert_eq!(anim.fade_target, Some(1), "frame {frame}");
            assert!(
                (anim.fade_weight - t / 0.2).abs() < 1e-4,
                "frame {frame}: weight {}",
                anim.fade_weight
            );
            assert_eq!(packet.stats().fading, 1);
            // Weights between the endpoint levels map a bucket; the endpoints map the clips themselves.
            let w = anim.fade_weight * (crowd.pool().crossfade_levels() - 1) as f32;
            if w.round() > 0.0 && w.round() < (crowd.pool().crossfade_levels() - 1) as f32 {
                assert!(slots[0] >= clip_slots, "frame {frame}: slots {slots:?} are clip slots");
            }
        } else {
            assert_eq!(
                (anim.clip, anim.fade_target),
                (1, None),
                "frame {frame}: the fade ended"
            );
            assert_eq!(packet.stats().fading, 0);
            let clip1 = crowd.pool().clip_table()[1];
            assert!((clip1.first_slot..clip1.first_slot + clip1.slot_count).contains(&slots[0]));
        }
    }
}
