//! Imports every Khronos sample model under `$CROWD_SAMPLE_ASSETS/gltf` and checks known counts,
//! structural invariants and one world-space property.

#![cfg(feature = "gltf")]

mod common;

use std::path::{Path, PathBuf};

use anim_pose::{Model, Transform, import_file};
use glam::Mat4;

/// Imports `path`, failing the test with the error message.
fn import(path: &Path) -> Model {
    import_file(path).unwrap_or_else(|e| panic!("{} failed to import: {e}", path.display()))
}

/// The sample model folder, or `None` when the assets are not configured.
fn models_dir() -> Option<PathBuf> {
    common::asset_dir("gltf")
}

/// Checks the invariants that every imported model must satisfy.
fn check_invariants(name: &str, model: &Model) {
    for skeleton in &model.skeletons {
        skeleton.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    for clip in &model.clips {
        let skeleton = &model.skeletons[clip.skeleton];
        clip.validate(skeleton).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut pose = vec![Transform::IDENTITY; skeleton.joint_count()];
        for t in [0.0, 0.5 * clip.duration, clip.duration] {
            clip.sample_local_pose(skeleton, t, &mut pose)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(
                pose.iter().all(Transform::is_finite),
                "{name}: clip '{}' gives a non-finite pose",
                clip.name
            );
        }
    }
    for binding in &model.bindings {
        assert!(
            binding.meshes.end <= model.meshes.len(),
            "{name}: binding '{}' range out of bounds",
            binding.name
        );
        let skin_joints = model.skeletons[binding.skeleton].skin_joint_count();
        for mesh in &model.meshes[binding.meshes.clone()] {
            for (v, joints) in mesh.joints.iter().enumerate() {
                assert!(
                    joints.iter().all(|&j| usize::from(j) < skin_joints),
                    "{name}: {} vertex {v} has joints {joints:?} past {skin_joints} skin joints",
                    mesh.name
                );
            }
        }
    }
    for mesh in &model.meshes {
        let n = mesh.vertex_count();
        assert_eq!(mesh.joints.len(), n, "{name}: {}", mesh.name);
        assert_eq!(mesh.weights.len(), n, "{name}: {}", mesh.name);
        for list in [
            mesh.normals.len(),
            mesh.uvs.len(),
            mesh.colors.len(),
            mesh.tangents.len(),
        ] {
            assert!(
                list == 0 || list == n,
                "{name}: {} has an attribute of {list} entries for {n} vertices",
                mesh.name
            );
        }
        for (v, w) in mesh.weights.iter().enumerate() {
            let sum: f32 = w.iter().sum();
            assert!(
                (sum - 1.0).abs() < 1e-5,
                "{name}: {} vertex {v} weights {w:?} sum to {sum}",
                mesh.name
            );
            assert!(
                w.windows(2).all(|p| p[0] >= p[1]),
                "{name}: {} vertex {v} weights {w:?} are not sorted",
                mesh.name
            );
        }
        assert_eq!(mesh.indices.len() % 3, 0, "{name}: {}", mesh.name);
        assert!(
            (0..mesh.indices.len()).all(|i| mesh.indices.get(i).is_some_and(|x| (x as usize) < n)),
            "{name}: {} has an index out of range",
            mesh.name
        );
        assert!(!mesh.bounds.is_empty(), "{name}: {} has empty bounds", mesh.name);
        if let Some(image) = mesh.material.base_color_texture {
            assert!(
                image < model.images.len(),
                "{name}: {} material image out of range",
                mesh.name
            );
        }
    }
}

#[test]
fn every_sample_model_imports_with_valid_invariants() {
    let Some(dir) = models_dir() else { return };
    let files = common::files_with_extensions(&dir, &[".glb", ".gltf"]);
    assert!(
        files.len() >= 7,
        "expected at least 7 sample models under {}, found {}",
        dir.display(),
        files.len()
    );
    for path in &files {
        let model = import(path);
        assert!(!model.skeletons.is_empty(), "{}: no skeletons", path.display());
        assert!(!model.meshes.is_empty(), "{}: no skinned meshes", path.display());
        assert!(!model.clips.is_empty(), "{}: no clips", path.display());
        check_invariants(&path.display().to_string(), &model);
    }
}

#[test]
fn cesium_man() {
    let Some(dir) = models_dir() else { return };
    let model = import(&dir.join("CesiumMan/CesiumMan.glb"));
    assert_eq!(model.skeletons.len(), 1);
    assert_eq!(model.skeletons[0].joint_count(), 19);
    assert_eq!(model.skeletons[0].skin_joint_count(), 19);
    assert_eq!(model.clips.len(), 1);
    assert!(
        (model.clips[0].duration - 2.0).abs() < 1e-3,
        "duration {}",
        model.clips[0].duration
    );
    assert_eq!(model.clips[0].channels.len(), 57);
    assert_eq!(model.meshes.len(), 1);
    assert_eq!(model.meshes[0].vertex_count(), 3273);
    let image = model.meshes[0]
        .material
        .base_color_texture
        .expect("CesiumMan has a base colour texture");
    assert!(
        model.images[image].bytes.starts_with(&[0xFF, 0xD8]),
        "the texture is not JPEG"
    );
    assert_eq!(model.images[image].mime_type.as_deref(), Some("image/jpeg"));
}

#[test]
fn cesium_man_rest_pose_is_its_bind_pose() {
    // CesiumMan's mesh node 'Cesium_Man' is a sibling of the skeleton root under 'Armature' (below the
    // 'Z_UP' node) with an identity local transform, and its inverse bind matrices invert the rest pose
    // relative to 'Armature'. So at rest, every world-space skinning matrix
    // `root_transform * model * IBM` equals the mesh node's world matrix, which is `root_transform`:
    // the skinned mesh appears exactly where the unskinned mesh would. (It is not the identity, because
    // of the Z-up to Y-up rotation above the skeleton.)
    let Some(dir) = models_dir() else { return };
    let model = import(&dir.join("CesiumMan/CesiumMan.glb"));
    let skeleton = &model.skeletons[0];
    assert!(
        !skeleton.root_transform.abs_diff_eq(Mat4::IDENTITY, 1e-3),
        "the root transform holds the Z-up rotation"
    );
    let mut model_space = vec![Mat4::IDENTITY; skeleton.joint_count()];
    skeleton
        .local_to_model(&skeleton.rest_pose, &mut model_space)
        .expect("sizes match");
    for (k, (&joint, ibm)) in skeleton
        .skin_joints
        .iter()
        .zip(&skeleton.inverse_bind_matrices)
        .enumerate()
    {
        let skinning = skeleton.root_transform * model_space[usize::from(joint)] * *ibm;
        assert!(
            skinning.abs_diff_eq(skeleton.root_transform, 1e-3),
            "skin joint {k} ('{}'): root * model * IBM = {skinning}, expected {}",
            skeleton.joint_names[usize::from(joint)],
            skeleton.root_transform
        );
    }
}

#[test]
fn fox() {
    let Some(dir) = models_dir() else { return };
    let model = import(&dir.join("Fox/Fox.glb"));
    assert_eq!(model.skeletons.len(), 1);
    assert_eq!(model.skeletons[0].skin_joint_count(), 24);
    let names: Vec<&str> = model.clips.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["Survey", "Walk", "Run"]);
    assert_eq!(model.meshes[0].vertex_count(), 1728);
    let image = model.meshes[0]
        .material
        .base_color_texture
        .expect("Fox has a base colour texture");
    assert!(
        model.images[image].bytes.starts_with(&[0x89, b'P', b'N', b'G']),
        "the texture is not PNG"
    );
}

#[test]
fn recursive_skeletons_share_one_mesh() {
    let Some(dir) = models_dir() else { return };
    let model = import(&dir.join("RecursiveSkeletons/RecursiveSkeletons.glb"));
    assert_eq!(model.skeletons.len(), 84);
    assert_eq!(model.bindings.len(), 84);
    let first = model.bindings[0].meshes.clone();
    assert!(!first.is_empty());
    assert!(
        model.bindings.iter().all(|b| b.meshes == first),
        "every binding shares the one mesh"
    );
    assert_eq!(model.meshes.len(), first.len());
    assert_eq!(model.meshes[0].vertex_count(), 40);
    // One glTF animation animates all 84 skeletons: one clip each, all of the same duration.
    assert_eq!(model.clips.len(), 84);
    assert!(
        model
            .clips
            .iter()
            .all(|c| c.name == "Track0" && (c.duration - 2.0).abs() < 1e-3)
    );
    // Each skin hangs under joints of other skins that the animation turns, so each skeleton takes those ancestors
    // in as joints without a skin index, and its clip drives them: every joint of every skeleton has its rotation
    // channel, and the 840 channels of the file are shared among the skeletons that hang under them.
    for clip in &model.clips {
        let skeleton = &model.skeletons[clip.skeleton];
        assert_eq!(
            clip.channels.len(),
            skeleton.joint_count(),
            "skeleton '{}'",
            skeleton.name
        );
    }
    let deepest = model
        .skeletons
        .iter()
        .map(|s| s.joint_count() - s.skin_joint_count())
        .max();
    assert_eq!(deepest, Some(20), "the most ancestors a skeleton takes in");
    assert_eq!(model.clips.iter().map(|c| c.channels.len()).sum::<usize>(), 2280);
}

#[test]
fn rigged_simple_and_rigged_figure() {
    let Some(dir) = models_dir() else { return };
    let simple = import(&dir.join("RiggedSimple/RiggedSimple.glb"));
    assert_eq!(simple.skeletons[0].skin_joint_count(), 2);
    assert_eq!(simple.meshes[0].vertex_count(), 160);
    let figure = import(&dir.join("RiggedFigure/RiggedFigure.glb"));
    assert_eq!(figure.skeletons[0].skin_joint_count(), 19);
    assert_eq!(figure.meshes[0].vertex_count(), 370);
}

#[test]
fn simple_skin_embedded_and_external_are_identical() {
    let Some(dir) = models_dir() else { return };
    let embedded = import(&dir.join("SimpleSkin/SimpleSkin.gltf"));
    let external = import(&dir.join("SimpleSkin/glTF/SimpleSkin.gltf"));
    assert_eq!(embedded.skeletons[0].skin_joint_count(), 2);
    assert_eq!(embedded.meshes[0].vertex_count(), 10);
    assert_eq!(embedded.clips.len(), 1);
    assert!((embedded.clips[0].duration - 5.5).abs() < 1e-6);
    assert_eq!(embedded, external);
}
