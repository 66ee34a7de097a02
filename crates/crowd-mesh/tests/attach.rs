//! `crowd_mesh::attach`: a rigid part becomes one more mesh of its binding, weighted wholly to its joint, placed
//! in the joint's space; bad input gets an error that names it.

use anim_pose::{Model, SkinBinding};
use crowd_mesh::attach::{RigidPart, attach_rigid, joint_bind_transform};
use crowd_mesh::{Error, PackedMesh};
use glam::{Affine3A, Vec3, Vec4};

fn character() -> Model {
    anim_pose::import_file(concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/crowd_character.glb"))
        .expect("the default character imports")
}

/// A unit triangle in its own space.
fn triangle() -> RigidPart {
    RigidPart {
        name: "tag".to_owned(),
        positions: vec![Vec3::ZERO, Vec3::X, Vec3::Y],
        normals: vec![Vec3::Z; 3],
        colors: Vec::new(),
        indices: vec![0, 1, 2],
        base_color: Vec4::new(1.0, 0.0, 0.0, 1.0),
    }
}

#[test]
fn the_part_is_placed_in_the_joint_space_and_weighted_to_it() {
    let mut model = character();
    let sk = &model.skeletons[0];
    let j = sk.find_joint("head").expect("a head joint");
    let k = sk
        .skin_joints
        .iter()
        .position(|&s| usize::from(s) == j)
        .expect("skin joint");
    let placement = Affine3A::from_translation(Vec3::new(0.0, 0.1, 0.0));
    let meshes_before = model.meshes.len();
    let m = attach_rigid(&mut model, 0, "head", &triangle(), placement).expect("attaches");
    assert_eq!(model.meshes.len(), meshes_before + 1);
    assert_eq!(model.bindings[0].meshes.end, m + 1, "the binding draws the new mesh");
    let mesh = &model.meshes[m];
    assert!(mesh.joints.iter().all(|j| j[0] as usize == k) && mesh.weights.iter().all(|w| w[0] == 1.0));
    // Back in the joint's space through the inverse bind matrix, each vertex is the placed part's.
    let ibm = model.skeletons[0].inverse_bind_matrices[k];
    for (p, want) in mesh.positions.iter().zip(triangle().positions) {
        let back = ibm.transform_point3(*p);
        assert!(
            back.distance(placement.transform_point3(want)) < 1e-5,
            "{back} vs {want}"
        );
    }
    // The joint's bind transform is the inverse of its inverse bind matrix.
    let bind = joint_bind_transform(&model, 0, "head").expect("bind");
    assert!((glam::Mat4::from(bind) * ibm).abs_diff_eq(glam::Mat4::IDENTITY, 1e-5));
    PackedMesh::new(mesh, model.skeletons[0].skin_joint_count()).expect("the attachment packs");
}

#[test]
fn later_bindings_keep_their_meshes() {
    let mut model = character();
    let last = model.meshes.len();
    // A second binding after the first, drawing a copy of its first mesh.
    model.meshes.push(model.meshes[0].clone());
    model.bindings.push(SkinBinding {
        node: 0,
        name: "copy".to_owned(),
        skeleton: 0,
        meshes: last..last + 1,
    });
    let copy = model.meshes[last].clone();
    let m = attach_rigid(&mut model, 0, "head", &triangle(), Affine3A::IDENTITY).expect("attaches");
    assert_eq!(m, model.bindings[0].meshes.end - 1);
    let moved = model.bindings[1].meshes.clone();
    assert_eq!(moved, last + 1..last + 2);
    assert_eq!(model.meshes[moved.start], copy);
}

#[test]
fn bad_parts_and_joints_are_named() {
    let mut model = character();
    let message = |e: &Error| e.to_string();
    let e = attach_rigid(&mut model, 0, "tail", &triangle(), Affine3A::IDENTITY).expect_err("no tail");
    assert!(message(&e).contains("no joint named 'tail'"));
    let e = attach_rigid(&mut model, 7, "head", &triangle(), Affine3A::IDENTITY).expect_err("no binding 7");
    assert!(message(&e).contains("binding 7"));
    let mut p = triangle();
    p.indices = vec![0, 1, 3];
    let e = attach_rigid(&mut model, 0, "head", &p, Affine3A::IDENTITY).expect_err("index past");
    assert!(message(&e).contains("index 2 is 3, past the 3 vertices"), "{e:?}");
    let mut p = triangle();
    p.normals.pop();
    let e = attach_rigid(&mut model, 0, "head", &p, Affine3A::IDENTITY).expect_err("normals");
    assert!(message(&e).contains("2 normals for 3 vertices"));
    let mut p = triangle();
    p.positions[1] = Vec3::NAN;
    let e = attach_rigid(&mut model, 0, "head", &p, Affine3A::IDENTITY).expect_err("NaN");
    assert!(message(&e).contains("vertex 1"), "{e:?}");
    let e = attach_rigid(&mut model, 0, "head", &triangle(), Affine3A::from_scale(Vec3::ZERO)).expect_err("flat");
    assert!(message(&e).contains("normal"), "{e:?}");
    let count = model.meshes.len();
    assert_eq!(count, character().meshes.len(), "a failed attachment adds nothing");
}
