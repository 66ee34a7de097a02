//! Tests of the generated file: reproducibility, glTF validity and the clips' loops.

use super::{CHARACTER_PATH, clips, generate_glb, rig};

/// The committed file, relative to this crate.
const COMMITTED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/crowd_character.glb");

/// Splits a `.glb` into its JSON and binary chunks, checking the framing.
fn chunks(bytes: &[u8]) -> (&[u8], &[u8]) {
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("four bytes")) as usize;
    assert_eq!(&bytes[0..4], b"glTF");
    assert_eq!(word(4), 2);
    assert_eq!(word(8), bytes.len());
    let json_len = word(12);
    assert_eq!(&bytes[16..20], b"JSON");
    assert_eq!(json_len % 4, 0);
    let bin_at = 20 + json_len;
    let bin_len = word(bin_at);
    assert_eq!(&bytes[bin_at + 4..bin_at + 8], b"BIN\0");
    assert_eq!(bin_len % 4, 0);
    assert_eq!(bin_at + 8 + bin_len, bytes.len());
    (&bytes[20..bin_at], &bytes[bin_at + 8..])
}

#[test]
fn generation_is_reproducible() {
    assert!(generate_glb() == generate_glb(), "two generations differ");
}

#[test]
fn committed_file_is_up_to_date() {
    let committed = std::fs::read(COMMITTED).unwrap_or_default();
    assert!(
        committed == generate_glb(),
        "{CHARACTER_PATH} is missing or out of date with the generator; run `cargo xtask gen-assets`"
    );
}

#[test]
fn file_is_valid_gltf() {
    let bytes = generate_glb();
    assert!(bytes.len() < 1 << 20, "the file has {} bytes", bytes.len());
    let (json, bin) = chunks(&bytes);
    let root = gltf_json::Root::from_slice(json).expect("the JSON chunk parses as glTF");
    let mut errors = Vec::new();
    gltf_json::validation::Validate::validate(&root, &root, gltf_json::Path::new, &mut |path, error| {
        errors.push(format!("{}: {error:?}", path()));
    });
    assert!(errors.is_empty(), "validation errors: {errors:?}");
    assert_eq!(root.asset.generator.as_deref(), Some("crowd xtask gen-assets"));
    assert_eq!(root.buffers[0].byte_length.0 as usize, bin.len());
    for view in &root.buffer_views {
        let offset = view.byte_offset.map_or(0, |o| o.0 as usize);
        assert_eq!(offset % 4, 0);
        assert!(offset + view.byte_length.0 as usize <= bin.len());
    }
}

#[test]
fn clips_loop_exactly() {
    let rig = rig::build();
    let clips = clips::build(&rig);
    let names: Vec<_> = clips.iter().map(|c| c.name).collect();
    assert_eq!(names, ["idle", "walk", "run", "wave"]);
    for clip in &clips {
        assert!(
            clip.duration() >= 1.0,
            "clip '{}' lasts {} s",
            clip.name,
            clip.duration()
        );
        assert_eq!(*clip.times().last().expect("keys"), clip.duration());
        for channel in &clip.channels {
            let same = match &channel.values {
                clips::Values::Translation(v) => v.len() == clip.times().len() && v[0] == v[v.len() - 1],
                clips::Values::Rotation(v) => v.len() == clip.times().len() && v[0] == v[v.len() - 1],
            };
            assert!(same, "clip '{}' joint {} does not loop", clip.name, channel.joint);
        }
    }
}

/// Tests that read the file back with the `anim-pose` importer and check what it gives.
mod imported {
    use anim_pose::{Indices, Model, Skeleton, Transform};
    use glam::{Mat4, Vec3};

    use super::generate_glb;

    fn model() -> Model {
        anim_pose::import_slice(&generate_glb(), None).expect("the character imports")
    }

    /// The model-space pose of `clip` at time `t`.
    fn model_pose(skeleton: &Skeleton, clip: &anim_pose::Clip, t: f32) -> Vec<Mat4> {
        let mut local = vec![Transform::IDENTITY; skeleton.joint_count()];
        clip.sample_local_pose(skeleton, t, &mut local)
            .expect("the clip samples");
        let mut model = vec![Mat4::IDENTITY; skeleton.joint_count()];
        skeleton.local_to_model(&local, &mut model).expect("the pose converts");
        model
    }

    /// The skinned mesh positions for a model-space pose.
    fn skin(model: &Model, pose: &[Mat4]) -> Vec<Vec3> {
        let skeleton = &model.skeletons[0];
        let mut palette = vec![Mat4::IDENTITY; skeleton.skin_joint_count()];
        skeleton.palette(pose, &mut palette).expect("the palette fits");
        let mesh = &model.meshes[0];
        mesh.positions
            .iter()
            .zip(&mesh.joints)
            .zip(&mesh.weights)
            .map(|((&p, j), w)| {
                (0..4)
                    .map(|k| palette[usize::from(j[k])].transform_point3(p) * w[k])
                    .sum()
            })
            .collect()
    }

    /// The Pearson correlation of two series.
    fn correlation(a: &[f32], b: &[f32]) -> f32 {
        let mean = |v: &[f32]| v.iter().sum::<f32>() / v.len() as f32;
        let (ma, mb) = (mean(a), mean(b));
        let cov: f32 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
        let var = |v: &[f32], m: f32| v.iter().map(|x| (x - m) * (x - m)).sum::<f32>();
        cov / (var(a, ma) * var(b, mb)).sqrt()
    }

    #[test]
    fn rig_and_mesh_import() {
        let model = model();
        assert_eq!(model.skeletons.len(), 1);
        let skeleton = &model.skeletons[0];
        assert!(
            (40..=70).contains(&skeleton.joint_count()),
            "{} joints",
            skeleton.joint_count()
        );
        for name in [
            "pelvis",
            "spine_01",
            "spine_02",
            "spine_03",
            "chest",
            "neck",
            "head",
            "clavicle_l",
            "upper_arm_r",
            "forearm_l",
            "hand_l",
            "hand_r",
            "thumb_03_l",
            "index_02_r",
            "thigh_l",
            "shin_r",
            "foot_l",
            "foot_r",
            "toes_l",
            "toes_r",
        ] {
            assert!(skeleton.find_joint(name).is_some(), "no joint named '{name}'");
        }
        assert_eq!(model.meshes.len(), 1);
        let mesh = &model.meshes[0];
        assert!(
            (3000..=8000).contains(&mesh.vertex_count()),
            "{} vertices",
            mesh.vertex_count()
        );
        assert!(matches!(mesh.indices, Indices::U16(_)));
        assert!(mesh.max_influences <= 4);
        let blended = mesh.weights.iter().filter(|w| w[1] > 0.0).count();
        assert!(
            blended > mesh.vertex_count() / 10,
            "only {blended} vertices have two influences or more"
        );
        assert_eq!(mesh.normals.len(), mesh.vertex_count());
        assert_eq!(mesh.colors.len(), mesh.vertex_count());
        assert_eq!(mesh.material.base_color_factor, glam::Vec4::ONE);
        assert_eq!(mesh.material.name, "crowd_character");
        assert!(model.warnings.is_empty(), "import warnings: {:?}", model.warnings);
    }

    #[test]
    fn bind_pose_skins_to_the_mesh() {
        let model = model();
        let skeleton = &model.skeletons[0];
        let mut model_space = vec![Mat4::IDENTITY; skeleton.joint_count()];
        skeleton
            .local_to_model(&skeleton.rest_pose, &mut model_space)
            .expect("the rest pose converts");
        let skinned = skin(&model, &model_space);
        for (a, b) in skinned.iter().zip(&model.meshes[0].positions) {
            assert!(a.abs_diff_eq(*b, 1e-5), "bind pose moves {b} to {a}");
        }
        let bounds = anim_pose::Aabb::from_points(&skinned);
        assert!((1.6..=2.0).contains(&bounds.size().y), "height {}", bounds.size().y);
        assert!(bounds.min.y.abs() < 0.005, "the soles are at y = {}", bounds.min.y);
    }

    #[test]
    fn clips_loop_and_keep_feet_near_the_ground() {
        let model = model();
        let skeleton = &model.skeletons[0];
        let names: Vec<&str> = model.clips.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["idle", "walk", "run", "wave"]);
        for clip in &model.clips {
            assert!(clip.duration >= 1.0, "clip '{}' lasts {} s", clip.name, clip.duration);
            let mut start = vec![Transform::IDENTITY; skeleton.joint_count()];
            let mut end = start.clone();
            clip.sample_local_pose(skeleton, 0.0, &mut start)
                .expect("the clip samples");
            clip.sample_local_pose(skeleton, clip.duration, &mut end)
                .expect("the clip samples");
            for (a, b) in start.iter().zip(&end) {
                assert!(
                    a.translation.abs_diff_eq(b.translation, 1e-6),
                    "clip '{}' does not loop",
                    clip.name
                );
                assert!(
                    a.rotation.abs_diff_eq(b.rotation, 1e-6),
                    "clip '{}' does not loop",
                    clip.name
                );
            }
            for k in 0..20 {
                let t = clip.duration * k as f32 / 20.0;
                let skinned = skin(&model, &model_pose(skeleton, clip, t));
                let bounds = anim_pose::Aabb::from_points(&skinned);
                assert!(
                    bounds.min.y > -0.02,
                    "clip '{}' sinks to y = {} at {t} s",
                    clip.name,
                    bounds.min.y
                );
                assert!(
                    (1.5..=2.2).contains(&bounds.max.y),
                    "clip '{}' reaches y = {} at {t} s",
                    clip.name,
                    bounds.max.y
                );
            }
        }
    }

    #[test]
    fn walk_and_run_alternate_legs_and_swing_arms() {
        let model = model();
        let skeleton = &model.skeletons[0];
        let joint = |name: &str| skeleton.find_joint(name).expect("the joint exists");
        // The forward pitch of the bone from joint `from` to joint `to`, in degrees.
        let pitch = |pose: &[Mat4], from: &str, to: &str| {
            let d = pose[joint(to)].w_axis.truncate() - pose[joint(from)].w_axis.truncate();
            d.z.atan2(-d.y).to_degrees()
        };
        for (name, min_swing) in [("walk", 20.0), ("run", 40.0)] {
            let clip = model.clips.iter().find(|c| c.name == name).expect("the clip exists");
            let mut series: [Vec<f32>; 6] = Default::default();
            let mut pelvis = Vec::new();
            for k in 0..60 {
                let pose = model_pose(skeleton, clip, clip.duration * k as f32 / 60.0);
                let bones = [
                    ("thigh_l", "shin_l"),
                    ("thigh_r", "shin_r"),
                    ("upper_arm_l", "forearm_l"),
                    ("upper_arm_r", "forearm_r"),
                    ("shin_l", "foot_l"),
                    ("shin_r", "foot_r"),
                ];
                for (s, (from, to)) in series.iter_mut().zip(bones) {
                    s.push(pitch(&pose, from, to));
                }
                pelvis.push(pose[joint("pelvis")].w_axis.y);
            }
            let range =
                |v: &[f32]| v.iter().fold(f32::MIN, |a, &b| a.max(b)) - v.iter().fold(f32::MAX, |a, &b| a.min(b));
            let [thigh_l, thigh_r, arm_l, arm_r, shin_l, shin_r] = &series;
            assert!(
                correlation(thigh_l, thigh_r) < -0.5,
                "{name}: the thighs swing together"
            );
            assert!(
                range(thigh_l) > min_swing && range(thigh_r) > min_swing,
                "{name}: the thighs swing too little"
            );
            assert!(
                correlation(arm_l, thigh_l) < -0.5,
                "{name}: the left arm swings with the left leg"
            );
            assert!(
                correlation(arm_r, thigh_r) < -0.5,
                "{name}: the right arm swings with the right leg"
            );
            // The knee bends: the shin pitches further back than the thigh at some point of the cycle.
            let bend = thigh_l.iter().zip(shin_l).map(|(t, s)| t - s).fold(f32::MIN, f32::max);
            assert!(bend > 40.0, "{name}: the left knee bends only {bend} degrees");
            assert!(range(shin_r) > min_swing, "{name}: the right shin swings too little");
            assert!(range(&pelvis) > 0.01, "{name}: the pelvis does not bob");
        }
    }
}
