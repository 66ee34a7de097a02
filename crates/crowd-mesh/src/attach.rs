//! Rigid attachments (a spear in the hand, a helmet on the head) as one more skinned mesh of a character, weighted
//! wholly to one joint.
//!
//! A mesh weighted 1 to skin joint `k` is skinned by the palette entry `root · model[j] · inverse_bind[k]`. Its
//! vertices are stored in bind space as `bind[k] · v`, where `v` is the vertex in the joint's space and `bind[k]`
//! the inverse of the inverse bind matrix, so every tier that poses the character poses the attachment by
//! `root · model[j] · v`: the socket transform of `anim_bake::SocketData`, applied to the attachment. The unique
//! and pooled tiers read the same joint's palette entry, the baked tier the same joint's bone-animation entry, and
//! a vertex-animation bake of the model stores the attachment's vertices with the rest of the character. The
//! attachment then shares the character's draws, LODs and culling bounds.

use anim_pose::{Aabb, Indices, Material, Model, SkinnedMesh};
use glam::{Affine3A, Mat4, Vec3, Vec4};

use crate::{Error, Result};

/// Rigid geometry to attach: positions and normals in the part's own space, a triangle list, and optional
/// linear RGBA vertex colours.
#[derive(Clone, Debug, PartialEq)]
pub struct RigidPart {
    /// The part's name, for messages and the new mesh's name.
    pub name: String,
    /// Vertex positions in the part's space.
    pub positions: Vec<Vec3>,
    /// Unit vertex normals, one per vertex.
    pub normals: Vec<Vec3>,
    /// Linear RGBA colours, one per vertex, or empty.
    pub colors: Vec<Vec4>,
    /// Triangle list, counter-clockwise front faces.
    pub indices: Vec<u32>,
    /// The material's base colour factor.
    pub base_color: Vec4,
}

/// The bind-space transform of joint `joint` (by name) of binding `binding`'s skin: the inverse of its inverse
/// bind matrix, which maps the joint's space to the mesh's bind space.
///
/// # Errors
///
/// [`Error::Scene`] when the binding does not exist, the skeleton has no joint of that name, the joint is not in
/// the skin (it has no inverse bind matrix), or its inverse bind matrix cannot be inverted.
pub fn joint_bind_transform(model: &Model, binding: usize, joint: &str) -> Result<Affine3A> {
    let (_, k) = skin_joint(model, binding, joint)?;
    let skeleton = &model.skeletons[model.bindings[binding].skeleton];
    let inverse_bind = skeleton.inverse_bind_matrices[k];
    let det = inverse_bind.determinant();
    if !(det.is_finite() && det.abs() > 1e-12) {
        return Err(Error::scene(format!(
            "joint '{joint}' of skin '{}': its inverse bind matrix cannot be inverted (determinant {det})",
            skeleton.name
        )));
    }
    Ok(Affine3A::from_mat4(inverse_bind.inverse()))
}

/// Adds `part` to `model` as one more mesh drawn by binding `binding`, weighted wholly to joint `joint` (by name),
/// with `placement` mapping the part's space to the joint's space. Returns the new mesh's index in
/// `Model::meshes`.
///
/// The mesh goes right after the binding's last mesh, so the binding's range stays contiguous; the ranges of
/// bindings after it move up by one.
///
/// # Errors
///
/// As [`joint_bind_transform`]; [`Error::Mesh`] naming the part when it has no vertex, its normal or colour count
/// differs from its vertex count, a position or normal (after placement) is not finite, its indices are not whole
/// triangles, or an index is past its vertices.
pub fn attach_rigid(
    model: &mut Model,
    binding: usize,
    joint: &str,
    part: &RigidPart,
    placement: Affine3A,
) -> Result<usize> {
    let (_, k) = skin_joint(model, binding, joint)?;
    let bind = joint_bind_transform(model, binding, joint)? * placement;
    let name = format!("{} on '{joint}'", part.name);
    let n = part.positions.len();
    if n == 0 {
        return Err(Error::mesh(&name, "has no vertex"));
    }
    if part.normals.len() != n {
        return Err(Error::mesh(
            &name,
            format!("has {} normals for {n} vertices", part.normals.len()),
        ));
    }
    if !(part.colors.is_empty() || part.colors.len() == n) {
        return Err(Error::mesh(
            &name,
            format!("has {} colours for {n} vertices", part.colors.len()),
        ));
    }
    if !part.indices.len().is_multiple_of(3) {
        return Err(Error::mesh(
            &name,
            format!("has {} indices, not whole triangles", part.indices.len()),
        ));
    }
    if let Some(i) = part.indices.iter().position(|&x| x as usize >= n) {
        return Err(Error::mesh(
            &name,
            format!("index {i} is {}, past the {n} vertices", part.indices[i]),
        ));
    }
    let normal_matrix = Mat4::from(bind).inverse().transpose();
    let positions: Vec<Vec3> = part.positions.iter().map(|&p| bind.transform_point3(p)).collect();
    let normals: Vec<Vec3> = part
        .normals
        .iter()
        .map(|&v| normal_matrix.transform_vector3(v).normalize_or_zero())
        .collect();
    if let Some(v) = positions.iter().position(|p| !p.is_finite()) {
        return Err(Error::mesh(
            &name,
            format!("vertex {v}: the placed position is not finite"),
        ));
    }
    if let Some(v) = normals.iter().position(|p| !p.is_finite() || *p == Vec3::ZERO) {
        return Err(Error::mesh(
            &name,
            format!("vertex {v}: the placed normal is zero or not finite"),
        ));
    }
    let joint_index = u16::try_from(k).map_err(|_| Error::mesh(&name, format!("skin joint {k} does not fit u16")))?;
    let mesh = SkinnedMesh {
        name: name.clone(),
        mesh: usize::MAX,
        primitive: 0,
        bounds: Aabb::from_points(&positions),
        positions,
        normals,
        tangents: Vec::new(),
        uvs: Vec::new(),
        colors: part.colors.clone(),
        joints: vec![[joint_index, 0, 0, 0]; n],
        weights: vec![[1.0, 0.0, 0.0, 0.0]; n],
        indices: Indices::U32(part.indices.clone()),
        max_influences: 1,
        source_max_influences: 1,
        material: Material {
            name: part.name.clone(),
            base_color_factor: part.base_color,
            base_color_texture: None,
        },
    };
    let at = model.bindings[binding].meshes.end;
    model.meshes.insert(at, mesh);
    for (b, other) in model.bindings.iter_mut().enumerate() {
        if b == binding {
            other.meshes.end += 1;
        } else if other.meshes.start >= at {
            other.meshes.start += 1;
            other.meshes.end += 1;
        }
    }
    Ok(at)
}

/// The skeleton joint and the skin joint of `joint` (by name) in binding `binding`'s skin.
fn skin_joint(model: &Model, binding: usize, joint: &str) -> Result<(usize, usize)> {
    let b = model.bindings.get(binding).ok_or_else(|| {
        Error::scene(format!(
            "binding {binding} is past the model's {} bindings",
            model.bindings.len()
        ))
    })?;
    let skeleton = model.skeletons.get(b.skeleton).ok_or_else(|| {
        Error::scene(format!(
            "binding '{}' names skeleton {}, past the model's {}",
            b.name,
            b.skeleton,
            model.skeletons.len()
        ))
    })?;
    let j = skeleton
        .find_joint(joint)
        .ok_or_else(|| Error::scene(format!("skin '{}' has no joint named '{joint}'", skeleton.name)))?;
    let k = skeleton
        .skin_joints
        .iter()
        .position(|&s| usize::from(s) == j)
        .ok_or_else(|| {
            Error::scene(format!(
                "joint '{joint}' of skin '{}' is not a skin joint (no inverse bind matrix)",
                skeleton.name
            ))
        })?;
    Ok((j, k))
}
