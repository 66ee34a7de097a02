//! Shared helpers for anim-bake's integration tests: locating the sample assets.

#![allow(
    dead_code,
    reason = "each integration test binary uses a different subset of these helpers"
)]

#[allow(
    unused_imports,
    reason = "each integration test binary uses a different subset of these helpers"
)]
pub use sample_assets::{ASSETS_VAR, asset_file, default_character, sample_assets};

/// A tiny skinned, animated model built in memory: a three-joint chain (the middle joint scaled uniformly), a
/// 12-vertex column skinned to pairs of joints, and two clips (a looping bend and a one-way stretch), so that file
/// tests can cut and corrupt a small bake at every byte.
pub fn tiny_model() -> anim_pose::Model {
    use anim_pose::{
        Aabb, Channel, Clip, Indices, Interpolation, Material, Model, NO_PARENT, Property, Skeleton, SkinBinding,
        SkinnedMesh, Transform,
    };
    use glam::{Mat4, Quat, Vec3, Vec4};

    let rest = vec![
        Transform::IDENTITY,
        Transform {
            translation: Vec3::Y * 0.5,
            ..Transform::IDENTITY
        },
        Transform {
            translation: Vec3::Y * 0.5,
            ..Transform::IDENTITY
        },
    ];
    let mut skeleton = Skeleton::from_parents("tiny", vec![NO_PARENT, 0, 1], rest).expect("a valid chain");
    skeleton.joint_names = vec!["root".into(), "middle".into(), "tip".into()];
    skeleton.inverse_bind_matrices = (0..3)
        .map(|j| Mat4::from_translation(-Vec3::Y * 0.5 * j as f32))
        .collect();
    let positions: Vec<Vec3> = (0..12)
        .map(|i| {
            let a = i as f32 * 2.1;
            Vec3::new(0.1 * a.cos(), 0.1 * i as f32, 0.1 * a.sin())
        })
        .collect();
    let normals: Vec<Vec3> = positions.iter().map(|p| Vec3::new(p.x, 0.2, p.z).normalize()).collect();
    let joints: Vec<[u16; 4]> = (0..12)
        .map(|i| [(i / 5) as u16, ((i / 5 + 1) % 3) as u16, 0, 0])
        .collect();
    let weights: Vec<[f32; 4]> = (0..12)
        .map(|i| {
            let w = 0.5 + 0.4 * ((i % 5) as f32 / 4.0);
            [w, 1.0 - w, 0.0, 0.0]
        })
        .collect();
    let mesh = SkinnedMesh {
        name: "column".into(),
        mesh: 0,
        primitive: 0,
        bounds: Aabb::from_points(&positions),
        positions,
        normals,
        tangents: Vec::new(),
        uvs: Vec::new(),
        colors: Vec::new(),
        joints,
        weights,
        indices: Indices::U16((0..12).collect()),
        max_influences: 2,
        source_max_influences: 2,
        material: Material::default(),
    };
    let quat = |angle: f32| Vec4::from(Quat::from_rotation_z(angle));
    let bend = Clip {
        name: "bend".into(),
        animation: 0,
        skeleton: 0,
        duration: 1.0,
        channels: vec![
            Channel {
                joint: 1,
                property: Property::Rotation,
                interpolation: Interpolation::Linear,
                times: vec![0.0, 0.25, 0.5, 0.75, 1.0],
                values: vec![quat(0.0), quat(0.6), quat(0.0), quat(-0.6), quat(0.0)],
            },
            Channel {
                joint: 2,
                property: Property::Rotation,
                interpolation: Interpolation::Linear,
                times: vec![0.0, 0.5, 1.0],
                values: vec![quat(0.0), quat(0.9), quat(0.0)],
            },
        ],
    };
    let stretch = Clip {
        name: "stretch".into(),
        animation: 1,
        skeleton: 0,
        duration: 0.5,
        channels: vec![Channel {
            joint: 1,
            property: Property::Scale,
            interpolation: Interpolation::Linear,
            times: vec![0.0, 0.5],
            values: vec![Vec4::new(1.0, 1.0, 1.0, 0.0), Vec4::new(1.3, 1.3, 1.3, 0.0)],
        }],
    };
    Model {
        skeletons: vec![skeleton],
        clips: vec![bend, stretch],
        meshes: vec![mesh],
        bindings: vec![SkinBinding {
            node: 0,
            name: "column".into(),
            skeleton: 0,
            meshes: 0..1,
        }],
        ..Model::default()
    }
}
