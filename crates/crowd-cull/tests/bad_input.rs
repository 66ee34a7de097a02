//! Bad input is an error that changes nothing: NaN and infinite values, unknown clips and groups, stale and
//! duplicate handles, bad settings and cameras, unprepared buffers. Also: an empty store culls to empty lists.

mod common;

use crowd_cull::FrameCamera;
use crowd_cull::{
    AnimState, ClusterSettings, CullCamera, CullOutput, CullingCache, CullingJob, Error, GroupId, Handle, InstanceDesc,
    InstanceStore, Tier,
};
use glam::{Quat, Vec3, Vec4};

fn ok_desc() -> InstanceDesc {
    InstanceDesc::at(Vec3::new(1.0, 0.0, 2.0), 0)
}

/// Every way a description can be bad, with the error expected (for item `index`).
fn bad_descs(index: usize) -> Vec<(InstanceDesc, Error)> {
    let ok = ok_desc();
    let mut v = Vec::new();
    let non_finite = |what| Error::NonFinite { what, index };
    v.push((
        InstanceDesc {
            position: Vec3::new(f32::NAN, 0.0, 0.0),
            ..ok
        },
        non_finite("position"),
    ));
    v.push((
        InstanceDesc {
            position: Vec3::new(0.0, f32::INFINITY, 0.0),
            ..ok
        },
        non_finite("position"),
    ));
    v.push((
        InstanceDesc {
            rotation: Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0),
            ..ok
        },
        non_finite("rotation"),
    ));
    v.push((
        InstanceDesc {
            rotation: Quat::from_xyzw(0.0, 0.0, 0.0, 2.0),
            ..ok
        },
        Error::OutOfRange {
            what: "rotation (must be unit length)",
            index,
        },
    ));
    v.push((InstanceDesc { scale: f32::NAN, ..ok }, non_finite("scale")));
    v.push((
        InstanceDesc {
            scale: f32::NEG_INFINITY,
            ..ok
        },
        non_finite("scale"),
    ));
    v.push((
        InstanceDesc { scale: 0.0, ..ok },
        Error::OutOfRange {
            what: "scale (must be > 0)",
            index,
        },
    ));
    v.push((
        InstanceDesc {
            custom: Vec4::new(0.0, f32::NAN, 0.0, 0.0),
            ..ok
        },
        non_finite("custom data"),
    ));
    v.push((
        InstanceDesc {
            anim: AnimState::clip(3),
            ..ok
        },
        Error::UnknownClip {
            index,
            clip: 3,
            group: 0,
            clip_count: 3,
        },
    ));
    v.push((
        InstanceDesc {
            anim: AnimState {
                fade_target: Some(9),
                fade_weight: 0.5,
                ..AnimState::clip(1)
            },
            ..ok
        },
        Error::UnknownClip {
            index,
            clip: 9,
            group: 0,
            clip_count: 3,
        },
    ));
    v.push((
        InstanceDesc {
            anim: AnimState {
                speed: f32::NAN,
                ..AnimState::clip(1)
            },
            ..ok
        },
        non_finite("animation state"),
    ));
    v.push((
        InstanceDesc {
            anim: AnimState {
                fade_target: Some(2),
                fade_weight: 1.5,
                ..AnimState::clip(1)
            },
            ..ok
        },
        Error::OutOfRange {
            what: "fade weight (0 to 1)",
            index,
        },
    ));
    v
}

#[test]
fn bad_descriptions_are_rejected_and_leave_nothing_behind() {
    let (mut store, g) = common::store(4.0, 8);
    let keep = store.add(g, &ok_desc()).expect("a valid add");
    let before = store.get(keep).expect("live");
    for (desc, err) in bad_descs(0) {
        assert_eq!(store.add(g, &desc), Err(err), "{desc:?}");
        assert_eq!(store.update(keep, &desc), Err(err), "{desc:?}");
        assert_eq!(store.len(), 1);
        assert_eq!(store.get(keep), Ok(before), "a failed update changed the instance");
        store.check_invariants().expect("invariants hold");
    }
    // In a batch, the error names the item, and nothing of the batch is added.
    for (desc, err) in bad_descs(2) {
        let batch = [ok_desc(), ok_desc(), desc, ok_desc()];
        let mut handles = [Handle::default(); 4];
        assert_eq!(store.add_many(g, &batch, &mut handles), Err(err));
        assert_eq!(store.len(), 1, "a failed batch was half inserted");
        assert_eq!(store.cluster_count(g), Ok(1));
        let hs = [keep, keep, keep, keep];
        assert_eq!(store.update_many(&hs, &batch), Err(err));
        assert_eq!(store.get(keep), Ok(before));
    }
    store.check_invariants().expect("invariants hold");
    assert_eq!(
        store.add(GroupId(5), &ok_desc()),
        Err(Error::UnknownGroup {
            index: 0,
            group: 5,
            group_count: 1
        })
    );
    assert_eq!(
        store.set_position(keep, Vec3::NAN),
        Err(Error::NonFinite {
            what: "position",
            index: 0
        })
    );
    assert_eq!(
        store.set_positions(&[keep, keep], &[Vec3::ONE, Vec3::new(0.0, f32::NAN, 0.0)]),
        Err(Error::NonFinite {
            what: "position",
            index: 1
        })
    );
    assert_eq!(store.get(keep), Ok(before), "a failed bulk move moved the first item");
    assert!(store.set_animation(keep, &AnimState::clip(77)).is_err());
    assert!(store.set_custom(keep, Vec4::splat(f32::INFINITY)).is_err());
    assert_eq!(store.get(keep), Ok(before));
    let mut short = [Handle::default(); 1];
    assert!(matches!(
        store.add_many(g, &[ok_desc(), ok_desc()], &mut short),
        Err(Error::BufferSize {
            what: "handles",
            expected: 2,
            actual: 1
        })
    ));
}

#[test]
fn stale_handles_are_errors_never_another_instances_data() {
    let (mut store, g) = common::store(4.0, 8);
    let a = store.add(g, &ok_desc()).expect("adds");
    let b = store
        .add(g, &InstanceDesc::at(Vec3::new(1.5, 0.0, 2.0), 1))
        .expect("adds");
    store.remove(a).expect("removes");
    let stale = Error::StaleHandle {
        index: 0,
        handle_index: a.index,
        generation: a.generation,
    };
    assert_eq!(store.get(a), Err(stale));
    assert_eq!(store.remove(a), Err(stale), "double remove");
    assert_eq!(store.set_position(a, Vec3::ZERO), Err(stale));
    assert_eq!(store.update(a, &ok_desc()), Err(stale));
    assert_eq!(store.set_animation(a, &AnimState::clip(0)), Err(stale));
    assert!(!store.contains(a));
    // The slot is reused by the next add, with a new generation; the old handle stays stale.
    let c = store
        .add(g, &InstanceDesc::at(Vec3::new(9.0, 0.0, 9.0), 2))
        .expect("adds");
    assert_eq!(c.index, a.index, "the handle slot is reused");
    assert_ne!(c.generation, a.generation);
    assert_eq!(store.get(a), Err(stale), "a stale handle reads the new instance");
    assert_eq!(store.remove(a), Err(stale), "a stale handle removes the new instance");
    assert_eq!(store.get(c).expect("live").desc.anim.clip, 2);
    assert_eq!(
        store.get(b).expect("live").desc.anim.clip,
        1,
        "the swap-removed neighbour kept its data"
    );
    // A handle that never existed.
    assert!(
        store
            .get(Handle {
                index: 1000,
                generation: 1
            })
            .is_err()
    );
    assert!(
        store
            .get(Handle {
                index: b.index,
                generation: 0
            })
            .is_err()
    );
    // Bulk removal checks every handle first: a stale or duplicate handle removes nothing.
    assert_eq!(
        store.remove_many(&[b, a]),
        Err(Error::StaleHandle {
            index: 1,
            handle_index: a.index,
            generation: a.generation
        })
    );
    assert_eq!(
        store.remove_many(&[b, c, b]),
        Err(Error::DuplicateHandle {
            index: 2,
            handle_index: b.index
        })
    );
    assert_eq!(store.len(), 2);
    assert!(store.contains(b) && store.contains(c));
    store.remove_many(&[b, c]).expect("removes both");
    assert!(store.is_empty());
    assert_eq!(store.cluster_count(g), Ok(0), "empty clusters are deleted");
    store.check_invariants().expect("invariants hold");
}

#[test]
fn bad_settings_are_rejected() {
    for (radius, capacity) in [
        (0.0, 8),
        (-1.0, 8),
        (f32::NAN, 8),
        (f32::INFINITY, 8),
        (1.0, 0),
        (1.0, 6),
        (1.0, 12),
        (1.0, 2048),
    ] {
        assert!(
            InstanceStore::new(ClusterSettings { radius, capacity }).is_err(),
            "{radius} {capacity}"
        );
    }
    let mut store = InstanceStore::new(ClusterSettings::default()).expect("default settings are valid");
    let mut bad = common::group_desc();
    bad.lod_thresholds = vec![0.1, 0.2];
    assert!(store.add_group(bad).is_err());
    assert_eq!(store.group_count(), 0);
}

fn camera() -> CullCamera {
    FrameCamera::perspective(
        Vec3::new(0.0, 1.7, 10.0),
        Vec3::new(0.0, 1.0, 0.0),
        Vec3::Y,
        1.0,
        1.5,
        0.1,
        200.0,
    )
    .cull_camera()
}

#[test]
fn bad_cameras_and_unprepared_buffers_are_errors() {
    let (mut store, g) = common::store(4.0, 8);
    store.add(g, &ok_desc()).expect("adds");
    let mut cache = CullingCache::new();
    let mut output = CullOutput::new();
    let cam = camera();
    let mut job = CullingJob {
        store: &mut store,
        camera: &cam,
        cache: &mut cache,
        output: &mut output,
    };
    assert_eq!(job.run(), Err(Error::NotPrepared { what: "cache" }));
    job.cache.prepare(job.store);
    assert_eq!(job.run(), Err(Error::NotPrepared { what: "output" }));
    job.output.prepare(job.store);
    assert_eq!(job.run(), Ok(1));
    for plane in 0..6 {
        let mut nan = cam;
        nan.planes[plane].z = f32::NAN;
        let mut job = CullingJob {
            store: &mut store,
            camera: &nan,
            cache: &mut cache,
            output: &mut output,
        };
        assert_eq!(
            job.run(),
            Err(Error::Camera {
                what: "frustum plane",
                index: plane
            })
        );
    }
    // The store grew past what the buffers were prepared for.
    for i in 0..20 {
        store
            .add(g, &InstanceDesc::at(Vec3::new(i as f32 * 10.0, 0.0, 0.0), 0))
            .expect("adds");
    }
    let mut job = CullingJob {
        store: &mut store,
        camera: &cam,
        cache: &mut cache,
        output: &mut output,
    };
    assert!(matches!(job.run(), Err(Error::NotPrepared { .. })));
    // A new group changes the shape of the output.
    store.add_group(common::group_desc()).expect("adds a group");
    cache.prepare(&store);
    let mut job = CullingJob {
        store: &mut store,
        camera: &cam,
        cache: &mut cache,
        output: &mut output,
    };
    assert_eq!(job.run(), Err(Error::NotPrepared { what: "output" }));
}

#[test]
fn an_empty_store_culls_to_empty_lists() {
    let cam = camera();
    for groups in 0..3 {
        let mut store = InstanceStore::new(ClusterSettings::default()).expect("valid");
        for _ in 0..groups {
            store.add_group(common::group_desc()).expect("valid");
        }
        let mut cache = CullingCache::new();
        let mut output = CullOutput::new();
        cache.prepare(&store);
        output.prepare(&store);
        let n = CullingJob {
            store: &mut store,
            camera: &cam,
            cache: &mut cache,
            output: &mut output,
        }
        .run()
        .expect("culls");
        assert_eq!(n, 0);
        assert!(output.indices().is_empty());
        assert_eq!(output.draws().len(), groups * 4 * 4);
        assert!(output.draws().iter().all(|d| d.instance_count == 0));
        assert!(output.list(GroupId(0), 0, Tier::Unique).is_empty());
        assert!(output.list(GroupId(9), 0, Tier::Unique).is_empty());
    }
}
