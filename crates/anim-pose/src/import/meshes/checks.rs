//! The checks of every mesh primitive, used or not: attribute formats and counts, joint/weight pairing, influence
//! data against the skins bound to the mesh, indices and morph targets, and the warning for meshes with joints
//! drawn without a skin.

use gltf::json;
use gltf::json::accessor::{ComponentType, Type};
use gltf::json::mesh::{Mode, Semantic};
use gltf::json::validation::Checked;

use super::{attribute_accessor_name, influence_sets, mesh_name};
use crate::import::Source;
use crate::import::accessor::AccessorData;
use crate::import::skeleton::skin_name;
use crate::import::validate::semantic_name;
use crate::{Error, Result, Skeleton};

/// The largest deviation of a vertex's weight sum from 1 that is accepted.
///
/// Weights stored as normalized bytes are off by up to `4 * 0.5 / 255 ≈ 0.008`; the validator corpus's
/// non-normalized vertex sums to 1.5.
const WEIGHT_SUM_TOLERANCE: f32 = 2e-2;

/// The skins that nodes bind to each mesh, in node order without repeats.
fn skins_per_mesh(root: &json::Root) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new(); root.meshes.len()];
    for node in &root.nodes {
        if let (Some(mesh), Some(skin)) = (node.mesh, node.skin)
            && let Some(list) = out.get_mut(mesh.value())
            && !list.contains(&skin.value())
        {
            list.push(skin.value());
        }
    }
    out
}

/// An accessor format: (type, component type, normalized).
type Format = (Type, ComponentType, bool);

/// Whether `a` has one of the formats in `allowed`.
fn has_format(a: &AccessorData, allowed: &[Format]) -> bool {
    allowed
        .iter()
        .any(|&(ty, ct, normalized)| a.ty == ty && a.component_type == ct && a.normalized == normalized)
}

/// The formats the glTF specification allows for an attribute, and their description.
fn attribute_formats(semantic: &Semantic) -> Option<(&'static [Format], &'static str)> {
    use ComponentType::{F32, U8, U16};
    use Type::{Vec2 as V2, Vec3 as V3, Vec4 as V4};
    Some(match semantic {
        Semantic::Positions => (&[(V3, F32, false)], "VEC3 FLOAT"),
        Semantic::Normals => (&[(V3, F32, false)], "VEC3 FLOAT"),
        Semantic::Tangents => (&[(V4, F32, false)], "VEC4 FLOAT"),
        Semantic::TexCoords(_) => (
            &[(V2, F32, false), (V2, U8, true), (V2, U16, true)],
            "VEC2 FLOAT, normalized UNSIGNED_BYTE or normalized UNSIGNED_SHORT",
        ),
        Semantic::Colors(_) => (
            &[
                (V3, F32, false),
                (V3, U8, true),
                (V3, U16, true),
                (V4, F32, false),
                (V4, U8, true),
                (V4, U16, true),
            ],
            "VEC3 or VEC4 FLOAT, normalized UNSIGNED_BYTE or normalized UNSIGNED_SHORT",
        ),
        Semantic::Joints(_) => (
            &[(V4, U8, false), (V4, U16, false)],
            "VEC4 UNSIGNED_BYTE or UNSIGNED_SHORT",
        ),
        Semantic::Weights(_) => (
            &[(V4, F32, false), (V4, U8, true), (V4, U16, true)],
            "VEC4 FLOAT, normalized UNSIGNED_BYTE or normalized UNSIGNED_SHORT",
        ),
        #[allow(
            unreachable_patterns,
            reason = "unreachable unless another crate of the build (Bevy's glTF loader) turns on gltf-json's `extras` \
                      feature, which adds a variant"
        )]
        _ => return None,
    })
}

/// Checks every primitive of every mesh, and warns about meshes with joints drawn without a skin.
///
/// # Errors
///
/// [`Error::Invalid`] naming the mesh primitive or the accessor at fault.
pub(crate) fn check_meshes(src: &mut Source<'_>, skeletons: &[Skeleton]) -> Result<()> {
    let skins = skins_per_mesh(&src.root);
    for m in 0..src.root.meshes.len() {
        let mesh_skins = skins.get(m).map_or(&[][..], Vec::as_slice);
        let count = src.root.meshes.get(m).map_or(0, |mesh| mesh.primitives.len());
        if count == 0 {
            return Err(Error::invalid(mesh_name(&src.root, m), "has no primitives"));
        }
        for p in 0..count {
            check_primitive(src, skeletons, m, p, mesh_skins)?;
        }
    }
    let mut warnings = Vec::new();
    for (i, node) in src.root.nodes.iter().enumerate() {
        let (Some(mesh), None) = (node.mesh, node.skin) else {
            continue;
        };
        let skinned = src.root.meshes.get(mesh.value()).is_some_and(|mesh| {
            mesh.primitives
                .iter()
                .any(|p| p.attributes.contains_key(&Checked::Valid(Semantic::Joints(0))))
        });
        if skinned {
            warnings.push((
                crate::import::hierarchy::node_name(&src.root, i),
                format!(
                    "draws {}, which has JOINTS_0, without a skin; it is not imported",
                    mesh_name(&src.root, mesh.value())
                ),
            ));
        }
    }
    for (object, message) in warnings {
        src.warn(object, message);
    }
    Ok(())
}

/// Checks one primitive: attribute formats and counts, joint/weight pairing and data, and indices.
fn check_primitive(src: &Source<'_>, skeletons: &[Skeleton], m: usize, p: usize, skins: &[usize]) -> Result<()> {
    let root = &src.root;
    let object = || format!("{} primitive {p}", mesh_name(root, m));
    let primitive = root
        .meshes
        .get(m)
        .and_then(|mesh| mesh.primitives.get(p))
        .ok_or_else(|| Error::invalid(object(), "does not exist"))?;
    let Checked::Valid(mode) = primitive.mode else {
        return Err(Error::invalid(object(), "has an invalid mode"));
    };
    let mut vertex_count: Option<usize> = None;
    let mut first_attribute = String::new();
    for (semantic, &index) in &primitive.attributes {
        let index = index.value();
        let name = semantic_name(semantic);
        let a = src.accessor(index).map_err(|_| {
            Error::invalid(
                attribute_accessor_name(root, index, &name, m, p),
                "does not exist or has an unknown type",
            )
        })?;
        match semantic {
            Checked::Valid(s) => {
                if let Some((formats, description)) = attribute_formats(s)
                    && !has_format(a, formats)
                {
                    return Err(Error::invalid(
                        attribute_accessor_name(root, index, &name, m, p),
                        format!("is {}, but {name} must be {description}", a.format()),
                    ));
                }
            }
            Checked::Invalid => {
                if a.component_type == ComponentType::U32 {
                    return Err(Error::invalid(
                        attribute_accessor_name(root, index, "an attribute", m, p),
                        "uses UNSIGNED_INT, which vertex attributes may not use",
                    ));
                }
            }
        }
        match vertex_count {
            None => {
                vertex_count = Some(a.count);
                first_attribute = name;
            }
            Some(n) if n != a.count => {
                return Err(Error::invalid(
                    object(),
                    format!(
                        "{name} has {} elements, but {first_attribute} has {n}; all attributes must have the same count",
                        a.count
                    ),
                ));
            }
            Some(_) => {}
        }
    }
    if !primitive.attributes.contains_key(&Checked::Valid(Semantic::Positions)) {
        return Err(Error::invalid(object(), "has no POSITION attribute"));
    }
    let vertex_count = vertex_count.unwrap_or(0);
    // Every JOINTS_n needs a WEIGHTS_n and the reverse.
    for semantic in primitive.attributes.keys() {
        let (other, n) = match semantic {
            Checked::Valid(Semantic::Joints(n)) => (Semantic::Weights(*n), n),
            Checked::Valid(Semantic::Weights(n)) => (Semantic::Joints(*n), n),
            _ => continue,
        };
        if !primitive.attributes.contains_key(&Checked::Valid(other.clone())) {
            return Err(Error::invalid(
                object(),
                format!(
                    "has {} but no {}; joints and weights come in pairs (set {n})",
                    semantic_name(semantic),
                    other.to_string()
                ),
            ));
        }
    }
    check_influences(src, skeletons, m, p, primitive, vertex_count, skins)?;
    let index_count = match primitive.indices {
        Some(indices) => {
            let index = indices.value();
            let name = || attribute_accessor_name(root, index, "indices", m, p);
            let a = src
                .accessor(index)
                .map_err(|_| Error::invalid(name(), "does not exist or has an unknown type"))?;
            let valid = a.ty == Type::Scalar
                && !a.normalized
                && matches!(
                    a.component_type,
                    ComponentType::U8 | ComponentType::U16 | ComponentType::U32
                );
            if !valid {
                return Err(Error::invalid(
                    name(),
                    format!(
                        "is {}, but indices must be SCALAR UNSIGNED_BYTE, UNSIGNED_SHORT or UNSIGNED_INT",
                        a.format()
                    ),
                ));
            }
            if let Some((i, v)) = a
                .raw()
                .iter()
                .enumerate()
                .find(|(_, v)| **v >= usize_to_f64(vertex_count))
            {
                return Err(Error::invalid(
                    name(),
                    format!("index {i} is {v}, out of range for {vertex_count} vertices"),
                ));
            }
            a.count
        }
        None => vertex_count,
    };
    if mode == Mode::Triangles && index_count % 3 != 0 {
        return Err(Error::invalid(
            object(),
            format!("has {index_count} vertex indices, which is not a multiple of 3 for TRIANGLES"),
        ));
    }
    if let Some(targets) = &primitive.targets {
        for (t, target) in targets.iter().enumerate() {
            for index in [target.positions, target.normals, target.tangents]
                .into_iter()
                .flatten()
            {
                let a = src.accessor(index.value())?;
                if a.count != vertex_count {
                    return Err(Error::invalid(
                        object(),
                        format!("morph target {t} has {} elements for {vertex_count} vertices", a.count),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// `n` as `f64` (exact for every count that fits in memory).
#[expect(clippy::cast_precision_loss, reason = "counts are far below 2^52")]
fn usize_to_f64(n: usize) -> f64 {
    n as f64
}

/// Checks the joint and weight data of a primitive against the skins bound to its mesh.
fn check_influences(
    src: &Source<'_>,
    skeletons: &[Skeleton],
    m: usize,
    p: usize,
    primitive: &json::mesh::Primitive,
    vertex_count: usize,
    skins: &[usize],
) -> Result<()> {
    let root = &src.root;
    let sets = influence_sets(primitive);
    if sets.is_empty() {
        return Ok(());
    }
    let mut decoded = Vec::with_capacity(sets.len());
    let mut has_weight_data = false;
    for &(n, j, w) in &sets {
        let weights = src.accessor(w)?;
        has_weight_data |= weights.has_data;
        decoded.push((n, j, w, src.accessor(j)?.raw(), weights.floats_to_vec()));
    }
    let mut used: Vec<(u32, f32)> = Vec::with_capacity(4 * sets.len());
    for v in 0..vertex_count {
        used.clear();
        let mut sum = 0.0f32;
        for (n, j_index, w_index, joints, weights) in &decoded {
            let (n, j_index, w_index) = (*n, *j_index, *w_index);
            let weight_name = || attribute_accessor_name(root, w_index, &format!("WEIGHTS_{n}"), m, p);
            let joint_name = || attribute_accessor_name(root, j_index, &format!("JOINTS_{n}"), m, p);
            let joint_values = joints.get(4 * v..4 * v + 4).unwrap_or(&[]);
            let weight_values = weights.get(4 * v..4 * v + 4).unwrap_or(&[]);
            for (c, (&joint, &weight)) in joint_values.iter().zip(weight_values).enumerate() {
                if !weight.is_finite() || weight < 0.0 {
                    return Err(Error::invalid(
                        weight_name(),
                        format!(
                            "vertex {v} influence {c} has weight {weight}; weights must be finite and non-negative"
                        ),
                    ));
                }
                #[expect(
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    reason = "joints are u8 or u16"
                )]
                let joint = joint as u32;
                for &s in skins {
                    let skin_joints = skeletons.get(s).map_or(0, Skeleton::skin_joint_count);
                    if usize::try_from(joint).unwrap_or(usize::MAX) >= skin_joints {
                        return Err(Error::invalid(
                            joint_name(),
                            format!(
                                "vertex {v} influence {c} has joint index {joint}, out of range for {} of {skin_joints} joints",
                                skin_name(root, s)
                            ),
                        ));
                    }
                }
                if weight > 0.0 {
                    if used.iter().any(|&(u, _)| u == joint) {
                        return Err(Error::invalid(
                            joint_name(),
                            format!("vertex {v} influence {c} uses joint {joint} a second time with a non-zero weight"),
                        ));
                    }
                    used.push((joint, weight));
                    sum += weight;
                }
            }
        }
        if has_weight_data && (sum - 1.0).abs() > WEIGHT_SUM_TOLERANCE {
            let (n, _, w, _, _) = decoded.first().ok_or_else(|| Error::invalid("mesh", "no weights"))?;
            return Err(Error::invalid(
                attribute_accessor_name(root, *w, &format!("WEIGHTS_{n}"), m, p),
                format!("vertex {v} weights sum to {sum}, not 1"),
            ));
        }
    }
    Ok(())
}
