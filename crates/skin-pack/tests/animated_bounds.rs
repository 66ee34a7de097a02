//! Tests of `animated_bounds`: on the default character, every clip's box holds every skinned vertex at random
//! times (within the motion of one sub-step), is exact at the sampled frames, widens for the waving arm, and bad
//! input is an error.

use anim_pose::{Aabb, LocalToModelJob, RuntimeClip, RuntimeClipOptions, SamplingJob, SoaTransform};
use glam::{Affine3A, Vec3};
use skin_pack::{BOUNDS_SUBSTEPS, Error, animated_bounds, palette_from_model, skin_positions_reference};

fn skinned(model: &anim_pose::Model, clip: &RuntimeClip, time: f32) -> Vec<Vec3> {
    let skeleton = &model.skeletons[0];
    let mesh = &model.meshes[0];
    let mut local = vec![SoaTransform::IDENTITY; clip.num_soa_joints()];
    SamplingJob {
        clip,
        time,
        output: &mut local,
    }
    .run()
    .expect("samples");
    let mut model_space = vec![Affine3A::IDENTITY; skeleton.joint_count()];
    LocalToModelJob {
        skeleton,
        input: &local,
        output: &mut model_space,
        from: None,
        root: None,
    }
    .run()
    .expect("converts");
    let mut palette = vec![Affine3A::IDENTITY; skeleton.skin_joint_count()];
    palette_from_model(skeleton, &model_space, None, &mut palette).expect("palette");
    let mut out = vec![Vec3::ZERO; mesh.positions.len()];
    skin_positions_reference(&palette, &mesh.positions, &mesh.joints, &mesh.weights, &mut out).expect("skins");
    out
}

#[test]
fn every_clip_holds_every_vertex_at_every_time() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/crowd_character.glb");
    let model = anim_pose::import_file(path).expect("the default character imports");
    let skeleton = &model.skeletons[0];
    let mut sizes = Vec::new();
    for clip in model.clips_for(0) {
        let rt = RuntimeClip::build(clip, skeleton, &RuntimeClipOptions::default()).expect("builds");
        let bounds = animated_bounds(skeleton, &rt, &[&model.meshes[0]]).expect("bounds");
        // The sampled times: every frame, and `BOUNDS_SUBSTEPS - 1` evenly spaced times in every frame interval.
        // The margin: how far any vertex moves in half a sub-step, measured.
        let steps = (rt.frame_count() - 1) * BOUNDS_SUBSTEPS;
        let mut margin = 0.0f32;
        let mut exact = Aabb::EMPTY;
        for s in 0..=steps {
            let (t0, t1) = (
                rt.frame_time(s / BOUNDS_SUBSTEPS),
                rt.frame_time(s / BOUNDS_SUBSTEPS + 1),
            );
            let sub = (t1 - t0) / BOUNDS_SUBSTEPS as f32;
            let t = t0 + (t1 - t0) * (s % BOUNDS_SUBSTEPS) as f32 / BOUNDS_SUBSTEPS as f32;
            let a = skinned(&model, &rt, t);
            for &p in &a {
                exact = exact.including(p);
            }
            let b = skinned(&model, &rt, t + 0.5 * sub);
            margin = a.iter().zip(&b).map(|(a, b)| a.distance(*b)).fold(margin, f32::max);
        }
        assert_eq!(bounds, exact, "{}: the box is exact at the sampled times", clip.name);
        for i in 0..97 {
            let t = rt.duration() * ((i as f32 * 0.618_034).fract());
            for p in skinned(&model, &rt, t) {
                let outside = (bounds.min - p).max(p - bounds.max).max_element();
                assert!(
                    outside <= margin,
                    "{} at {t}: {p} is {outside} m outside {bounds:?}",
                    clip.name
                );
            }
        }
        sizes.push((clip.name.clone(), bounds.max - bounds.min));
    }
    // The waving arm widens the wave clip's box past the idle clip's.
    let width = |n: &str| sizes.iter().find(|(c, _)| c == n).expect("clip").1.x;
    assert!(width("wave") > width("idle") + 0.1, "{sizes:?}");
}

#[test]
fn bad_input_is_an_error() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/crowd_character.glb");
    let model = anim_pose::import_file(path).expect("the default character imports");
    let skeleton = &model.skeletons[0];
    let clip = model.clips_for(0).next().expect("a clip");
    let rt = RuntimeClip::build(clip, skeleton, &RuntimeClipOptions::default()).expect("builds");
    let other = anim_pose::Skeleton::from_parents(
        "two",
        vec![anim_pose::NO_PARENT, 0],
        vec![anim_pose::Transform::IDENTITY; 2],
    )
    .expect("valid");
    assert!(matches!(
        animated_bounds(&other, &rt, &[]),
        Err(Error::BufferSize { actual, .. }) if actual == skeleton.joint_count()
    ));
    let mut mesh = model.meshes[0].clone();
    mesh.joints[3][0] = 999;
    assert!(matches!(
        animated_bounds(skeleton, &rt, &[&mesh]),
        Err(Error::JointOutOfRange {
            vertex: 3,
            influence: 0,
            joint: 999,
            ..
        })
    ));
    assert_eq!(animated_bounds(skeleton, &rt, &[]), Ok(Aabb::EMPTY));
}

/// The box is in instance space: under a root transform (here a uniform scale and a move, which map boxes to boxes)
/// it is the model-space box transformed, as the palettes of `FlattenJob` are.
#[test]
fn the_root_transform_is_included() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/crowd_character.glb");
    let model = anim_pose::import_file(path).expect("the default character imports");
    let skeleton = &model.skeletons[0];
    assert_eq!(
        skeleton.root_transform,
        glam::Mat4::IDENTITY,
        "the default character has no root transform"
    );
    let clip = model.clips_for(0).next().expect("a clip");
    let rt = RuntimeClip::build(clip, skeleton, &RuntimeClipOptions::default()).expect("builds");
    let plain = animated_bounds(skeleton, &rt, &[&model.meshes[0]]).expect("bounds");
    let mut rooted = skeleton.clone();
    let (scale, shift) = (0.01f32, Vec3::new(3.0, -1.0, 0.5));
    rooted.root_transform =
        glam::Mat4::from_scale_rotation_translation(Vec3::splat(scale), glam::Quat::IDENTITY, shift);
    let b = animated_bounds(&rooted, &rt, &[&model.meshes[0]]).expect("bounds");
    for (got, want) in [(b.min, plain.min * scale + shift), (b.max, plain.max * scale + shift)] {
        assert!(got.abs_diff_eq(want, 1e-5), "{got} is not {want}");
    }
}
