//! Skinned meshes: attribute and index checks for every mesh primitive, and the import of every primitive
//! of every mesh that a skinned node draws, with its material and base colour image.
//!
//! Influences from all `JOINTS_n`/`WEIGHTS_n` sets are merged; more than four are reduced to the four
//! largest and renormalized, and every vertex's weights are sorted in decreasing order and sum to 1.
//! Triangle strips and fans become lists, non-indexed primitives get indices, and points and lines are
//! skipped with a warning.

use std::collections::{BTreeMap, HashMap};

use glam::{Vec2, Vec3, Vec4};
use gltf::json;
use gltf::json::accessor::{ComponentType, Type};
use gltf::json::mesh::{Mode, Semantic};
use gltf::json::validation::Checked;

use super::Source;
use super::accessor::AccessorData;
use super::buffers::view_bytes;
use super::skeleton::skin_name;
use super::validate::semantic_name;
use crate::{Aabb, Error, Indices, Material, Result, Skeleton, SkinBinding, SkinnedMesh, TextureImage};

/// The largest deviation of a vertex's weight sum from 1 that is accepted.
///
/// Weights stored as normalized bytes are off by up to `4 * 0.5 / 255 ≈ 0.008`; the validator corpus's
/// non-normalized vertex sums to 1.5.
const WEIGHT_SUM_TOLERANCE: f32 = 2e-2;

/// The name of mesh `index` for messages: `mesh 'Body'` or `mesh 3`.
pub(super) fn mesh_name(root: &json::Root, index: usize) -> String {
    match root.meshes.get(index).and_then(|m| m.name.as_deref()) {
        Some(name) => format!("mesh '{name}'"),
        None => format!("mesh {index}"),
    }
}

/// `accessor 12 (WEIGHTS_0 of mesh 'Body' primitive 0)`.
fn attribute_accessor_name(
    root: &json::Root,
    accessor: usize,
    attribute: &str,
    mesh: usize,
    primitive: usize,
) -> String {
    format!(
        "accessor {accessor} ({attribute} of {} primitive {primitive})",
        mesh_name(root, mesh)
    )
}

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

/// The joint and weight sets of a primitive, `(set, joints accessor, weights accessor)`, in set order.
fn influence_sets(primitive: &json::mesh::Primitive) -> Vec<(u32, usize, usize)> {
    let mut sets: BTreeMap<u32, (Option<usize>, Option<usize>)> = BTreeMap::new();
    for (semantic, index) in &primitive.attributes {
        match semantic {
            Checked::Valid(Semantic::Joints(n)) => sets.entry(*n).or_default().0 = Some(index.value()),
            Checked::Valid(Semantic::Weights(n)) => sets.entry(*n).or_default().1 = Some(index.value()),
            _ => {}
        }
    }
    sets.into_iter().filter_map(|(n, (j, w))| Some((n, j?, w?))).collect()
}

/// Checks every primitive of every mesh, and warns about meshes with joints drawn without a skin.
///
/// # Errors
///
/// [`Error::Invalid`] naming the mesh primitive or the accessor at fault.
pub(super) fn check_meshes(src: &mut Source<'_>, skeletons: &[Skeleton]) -> Result<()> {
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
                super::hierarchy::node_name(&src.root, i),
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

/// Imports every primitive of every mesh that a skinned node draws, the bindings of those nodes, and the
/// images that their materials use.
///
/// # Errors
///
/// [`Error::Invalid`] naming the primitive, accessor, material or image at fault.
pub(super) fn build_meshes(
    src: &mut Source<'_>,
    skeletons: &[Skeleton],
) -> Result<(Vec<SkinnedMesh>, Vec<SkinBinding>, Vec<TextureImage>)> {
    let mut meshes = Vec::new();
    let mut bindings = Vec::new();
    let mut images = Images::default();
    let mut imported: HashMap<usize, std::ops::Range<usize>> = HashMap::new();
    for n in 0..src.root.nodes.len() {
        let Some(node) = src.root.nodes.get(n) else { continue };
        let (Some(mesh), Some(skin)) = (node.mesh, node.skin) else {
            continue;
        };
        let (m, s) = (mesh.value(), skin.value());
        let range = match imported.get(&m) {
            Some(range) => range.clone(),
            None => {
                let start = meshes.len();
                let count = src.root.meshes.get(m).map_or(0, |mesh| mesh.primitives.len());
                for p in 0..count {
                    if let Some(mesh) = build_primitive(src, m, p, &mut images)? {
                        meshes.push(mesh);
                    }
                }
                let range = start..meshes.len();
                imported.insert(m, range.clone());
                range
            }
        };
        if s >= skeletons.len() {
            return Err(Error::invalid(
                super::hierarchy::node_name(&src.root, n),
                format!("refers to skin {s}, which does not exist"),
            ));
        }
        bindings.push(SkinBinding {
            node: n,
            name: super::hierarchy::joint_name(&src.root, n),
            skeleton: s,
            meshes: range,
        });
    }
    Ok((meshes, bindings, images.list))
}

/// Imports one primitive, or returns `None` (with a warning) for points and lines.
fn build_primitive(src: &mut Source<'_>, m: usize, p: usize, images: &mut Images) -> Result<Option<SkinnedMesh>> {
    let root = &src.root;
    let name = format!("{} primitive {p}", mesh_name(root, m));
    let primitive = root
        .meshes
        .get(m)
        .and_then(|mesh| mesh.primitives.get(p))
        .ok_or_else(|| Error::invalid(&name, "does not exist"))?
        .clone();
    let Checked::Valid(mode) = primitive.mode else {
        return Err(Error::invalid(&name, "has an invalid mode"));
    };
    if !matches!(mode, Mode::Triangles | Mode::TriangleStrip | Mode::TriangleFan) {
        src.warn(&name, format!("is drawn as {mode:?}, not triangles, and is skipped"));
        return Ok(None);
    }
    let attribute = |semantic: Semantic| primitive.attributes.get(&Checked::Valid(semantic)).map(|i| i.value());
    let position_index =
        attribute(Semantic::Positions).ok_or_else(|| Error::invalid(&name, "has no POSITION attribute"))?;
    let positions: Vec<Vec3> = src
        .accessor(position_index)?
        .elements_to_vec::<3>()
        .into_iter()
        .map(Vec3::from_array)
        .collect();
    let vertex_count = positions.len();
    let normals = match attribute(Semantic::Normals) {
        Some(i) => src
            .accessor(i)?
            .elements_to_vec::<3>()
            .into_iter()
            .map(Vec3::from_array)
            .collect(),
        None => Vec::new(),
    };
    let tangents = match attribute(Semantic::Tangents) {
        Some(i) => src
            .accessor(i)?
            .elements_to_vec::<4>()
            .into_iter()
            .map(Vec4::from_array)
            .collect(),
        None => Vec::new(),
    };
    let uvs = match attribute(Semantic::TexCoords(0)) {
        Some(i) => src
            .accessor(i)?
            .elements_to_vec::<2>()
            .into_iter()
            .map(Vec2::from_array)
            .collect(),
        None => Vec::new(),
    };
    let colors = match attribute(Semantic::Colors(0)) {
        Some(i) => {
            let a = src.accessor(i)?;
            if a.ty == Type::Vec3 {
                a.elements_to_vec::<3>()
                    .into_iter()
                    .map(|c| Vec3::from_array(c).extend(1.0))
                    .collect()
            } else {
                a.elements_to_vec::<4>().into_iter().map(Vec4::from_array).collect()
            }
        }
        None => Vec::new(),
    };
    let influences = build_influences(src, m, p, &primitive, vertex_count)?;
    let indices = build_indices(src, m, p, &primitive, mode, vertex_count)?;
    if primitive.targets.as_ref().is_some_and(|t| !t.is_empty()) {
        src.warn(&name, "has morph targets, which are ignored");
    }
    let material = build_material(src, primitive.material.map(|i| i.value()), images)?;
    Ok(Some(SkinnedMesh {
        name,
        mesh: m,
        primitive: p,
        bounds: Aabb::from_points(&positions),
        positions,
        normals,
        tangents,
        uvs,
        colors,
        joints: influences.joints,
        weights: influences.weights,
        indices,
        max_influences: influences.max_influences,
        source_max_influences: influences.source_max_influences,
        material,
    }))
}

/// Per-vertex influences reduced to four.
struct Influences {
    joints: Vec<[u16; 4]>,
    weights: Vec<[f32; 4]>,
    max_influences: u8,
    source_max_influences: u8,
}

/// Merges all joint/weight sets of a primitive, keeps the four largest influences per vertex,
/// renormalizes them and sorts them in decreasing order.
fn build_influences(
    src: &Source<'_>,
    m: usize,
    p: usize,
    primitive: &json::mesh::Primitive,
    vertex_count: usize,
) -> Result<Influences> {
    let root = &src.root;
    let sets = influence_sets(primitive);
    if sets.is_empty() {
        return Err(Error::invalid(
            format!("{} primitive {p}", mesh_name(root, m)),
            "is drawn with a skin but has no JOINTS_0 and WEIGHTS_0",
        ));
    }
    let mut decoded = Vec::with_capacity(sets.len());
    for &(n, j, w) in &sets {
        let joints = src.accessor(j)?.integers_to_vec();
        let weights = src.accessor(w)?.floats_to_vec();
        decoded.push((n, w, joints, weights));
    }
    let mut out = Influences {
        joints: Vec::with_capacity(vertex_count),
        weights: Vec::with_capacity(vertex_count),
        max_influences: 0,
        source_max_influences: 0,
    };
    let mut all: Vec<(u16, f32)> = Vec::with_capacity(4 * sets.len());
    for v in 0..vertex_count {
        all.clear();
        for (_, _, joints, weights) in &decoded {
            let j = joints.get(4 * v..4 * v + 4).unwrap_or(&[]);
            let w = weights.get(4 * v..4 * v + 4).unwrap_or(&[]);
            for (&joint, &weight) in j.iter().zip(w) {
                if weight > 0.0 {
                    all.push((u16::try_from(joint).unwrap_or(u16::MAX), weight));
                }
            }
        }
        let source = all.len();
        // A stable sort keeps the file's order among equal weights.
        all.sort_by(|a, b| b.1.total_cmp(&a.1));
        all.truncate(4);
        let sum: f32 = all.iter().map(|&(_, w)| w).sum();
        if !(sum > 0.0 && sum.is_finite()) {
            let (n, w, _, _) = decoded.first().ok_or_else(|| Error::invalid("mesh", "no weights"))?;
            return Err(Error::invalid(
                attribute_accessor_name(root, *w, &format!("WEIGHTS_{n}"), m, p),
                format!("vertex {v} weights sum to {sum}; every skinned vertex needs a positive weight"),
            ));
        }
        let mut joints = [0u16; 4];
        let mut weights = [0.0f32; 4];
        for (k, &(joint, weight)) in all.iter().enumerate() {
            if let (Some(j), Some(w)) = (joints.get_mut(k), weights.get_mut(k)) {
                *j = joint;
                *w = weight / sum;
            }
        }
        out.joints.push(joints);
        out.weights.push(weights);
        out.max_influences = out.max_influences.max(u8::try_from(all.len()).unwrap_or(4));
        out.source_max_influences = out.source_max_influences.max(u8::try_from(source).unwrap_or(u8::MAX));
    }
    Ok(out)
}

/// The triangle-list indices of a primitive, converted from strips and fans, or made up for a
/// non-indexed primitive.
fn build_indices(
    src: &Source<'_>,
    m: usize,
    p: usize,
    primitive: &json::mesh::Primitive,
    mode: Mode,
    vertex_count: usize,
) -> Result<Indices> {
    let (source, wide): (Vec<u32>, bool) = match primitive.indices {
        Some(index) => {
            let a = src.accessor(index.value())?;
            let values = a.integers_to_vec();
            if let Some(i) = values
                .iter()
                .position(|&v| usize::try_from(v).unwrap_or(usize::MAX) >= vertex_count)
            {
                return Err(Error::invalid(
                    attribute_accessor_name(&src.root, index.value(), "indices", m, p),
                    format!(
                        "index {i} is {}, out of range for {vertex_count} vertices",
                        values.get(i).copied().unwrap_or(0)
                    ),
                ));
            }
            (values, a.component_type == ComponentType::U32)
        }
        None => {
            let n = u32::try_from(vertex_count).map_err(|_| {
                Error::invalid(
                    format!("{} primitive {p}", mesh_name(&src.root, m)),
                    "has too many vertices",
                )
            })?;
            ((0..n).collect(), vertex_count > usize::from(u16::MAX) + 1)
        }
    };
    let list: Vec<u32> = match mode {
        Mode::TriangleStrip => (0..source.len().saturating_sub(2))
            .flat_map(|i| {
                let (a, b, c) = if i % 2 == 0 {
                    (i, i + 1, i + 2)
                } else {
                    (i + 1, i, i + 2)
                };
                [a, b, c]
            })
            .filter_map(|i| source.get(i).copied())
            .collect(),
        Mode::TriangleFan => (1..source.len().saturating_sub(1))
            .flat_map(|i| [i, i + 1, 0])
            .filter_map(|i| source.get(i).copied())
            .collect(),
        _ => source,
    };
    if wide {
        Ok(Indices::U32(list))
    } else {
        Ok(Indices::U16(
            list.into_iter().map(|i| u16::try_from(i).unwrap_or(u16::MAX)).collect(),
        ))
    }
}

/// Images imported so far, deduplicated by glTF image index.
#[derive(Default)]
struct Images {
    list: Vec<TextureImage>,
    by_gltf_index: HashMap<usize, usize>,
}

/// The material of a primitive, importing its base colour image.
fn build_material(src: &Source<'_>, material: Option<usize>, images: &mut Images) -> Result<Material> {
    let Some(index) = material else {
        return Ok(Material::default());
    };
    let root = &src.root;
    let object = || format!("material {index}");
    let mat = root
        .materials
        .get(index)
        .ok_or_else(|| Error::invalid(object(), "does not exist"))?;
    let pbr = &mat.pbr_metallic_roughness;
    let base_color_texture = match &pbr.base_color_texture {
        Some(info) => {
            let t = info.index.value();
            let texture = root
                .textures
                .get(t)
                .ok_or_else(|| Error::invalid(object(), format!("refers to texture {t}, which does not exist")))?;
            Some(import_image(src, texture.source.value(), images)?)
        }
        None => None,
    };
    Ok(Material {
        name: mat.name.clone().unwrap_or_else(|| format!("material {index}")),
        base_color_factor: Vec4::from_array(pbr.base_color_factor.0),
        base_color_texture,
    })
}

/// Imports glTF image `index` once, returning its index in the model's image list.
fn import_image(src: &Source<'_>, index: usize, images: &mut Images) -> Result<usize> {
    if let Some(&i) = images.by_gltf_index.get(&index) {
        return Ok(i);
    }
    let root = &src.root;
    let image = root
        .images
        .get(index)
        .ok_or_else(|| Error::invalid(format!("image {index}"), "does not exist"))?;
    let object = match &image.name {
        Some(name) => format!("image {index} ('{name}')"),
        None => format!("image {index}"),
    };
    let (bytes, uri_mime) = match (&image.uri, image.buffer_view) {
        (Some(uri), None) => {
            let data = src.resolver.read(uri, &object)?;
            (data.bytes, data.mime_type)
        }
        (None, Some(view)) => {
            if image.mime_type.is_none() {
                return Err(Error::invalid(&object, "has a bufferView but no mimeType"));
            }
            let bytes =
                view_bytes(root, &src.buffers, view.value()).map_err(|e| Error::invalid(&object, e.to_string()))?;
            (bytes.to_vec(), None)
        }
        _ => return Err(Error::invalid(&object, "must have exactly one of uri and bufferView")),
    };
    let sniffed = if bytes.starts_with(&[0x89, b'P', b'N', b'G']) {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else {
        None
    };
    let mime_type = image
        .mime_type
        .as_ref()
        .map(|m| m.0.clone())
        .or(uri_mime)
        .or_else(|| sniffed.map(str::to_owned));
    let name = image.name.clone().unwrap_or_else(|| format!("image {index}"));
    images.list.push(TextureImage { name, mime_type, bytes });
    let i = images.list.len() - 1;
    images.by_gltf_index.insert(index, i);
    Ok(i)
}

#[cfg(test)]
mod tests {
    use super::super::import_slice;
    use super::super::test_support::DocBuilder;
    use crate::{Indices, Model, Result};

    /// Nodes: joint 0 with joint children 1 to 5, and skinned mesh nodes 6 (and 7 when `two_nodes`)
    /// drawing mesh 0 'Body' with skin 0 of joints 0 to 5.
    fn skinned(doc: DocBuilder, primitive: &str, two_nodes: bool) -> Result<Model> {
        let extra = if two_nodes {
            r#",{"mesh":0,"skin":0,"name":"copy"}"#
        } else {
            ""
        };
        let text = doc.finish(&format!(
            r#""nodes":[{{"children":[1,2,3,4,5]}},{{}},{{}},{{}},{{}},{{}},{{"mesh":0,"skin":0}}{extra}],
               "skins":[{{"joints":[0,1,2,3,4,5]}}],
               "meshes":[{{"name":"Body","primitives":[{primitive}]}}]"#
        ));
        import_slice(text.as_bytes(), None)
    }

    const TRIANGLE: [f32; 9] = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0];

    #[test]
    fn more_than_four_influences_are_reduced_and_renormalized() {
        let mut doc = DocBuilder::default();
        let position = doc.floats("VEC3", 3, &TRIANGLE);
        let joints0 = doc.u16s("VEC4", 4, &[0, 1, 2, 3, 1, 0, 0, 0, 2, 0, 0, 0], "");
        let weights0 = doc.floats(
            "VEC4",
            4,
            &[0.1, 0.3, 0.05, 0.2, 1.0, 0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 0.0],
        );
        let joints1 = doc.u8s("VEC4", 4, &[4, 5, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0], "");
        let weights1 = doc.floats(
            "VEC4",
            4,
            &[0.25, 0.1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 0.0],
        );
        let primitive = format!(
            r#"{{"attributes":{{"POSITION":{position},"JOINTS_0":{joints0},"WEIGHTS_0":{weights0},"JOINTS_1":{joints1},"WEIGHTS_1":{weights1}}}}}"#
        );
        let model = skinned(doc, &primitive, false).expect("valid document");
        let mesh = &model.meshes[0];
        assert_eq!(mesh.source_max_influences, 6);
        assert_eq!(mesh.max_influences, 4);
        // The four largest of (0: 0.1), (1: 0.3), (2: 0.05), (3: 0.2), (4: 0.25), (5: 0.1), with ties in
        // file order, renormalized from their sum of 0.85.
        assert_eq!(mesh.joints[0], [1, 4, 3, 0]);
        let expected = [0.3 / 0.85, 0.25 / 0.85, 0.2 / 0.85, 0.1 / 0.85];
        for (w, e) in mesh.weights[0].iter().zip(expected) {
            assert!((w - e).abs() < 1e-6, "{:?}", mesh.weights[0]);
        }
        assert_eq!(mesh.joints[1], [1, 0, 0, 0]);
        assert_eq!(mesh.weights[1], [1.0, 0.0, 0.0, 0.0]);
        assert_eq!(mesh.joints[2], [2, 3, 0, 0]);
        assert_eq!(mesh.weights[2], [0.5, 0.5, 0.0, 0.0]);
    }

    /// A triangle's primitive with one influence per vertex, given as (joint, weight) per vertex.
    fn simple_primitive(doc: &mut DocBuilder, influences: [(u16, f32); 3], mode: &str) -> String {
        let position = doc.floats("VEC3", 3, &TRIANGLE);
        let joints: Vec<u16> = influences.iter().flat_map(|&(j, _)| [j, 0, 0, 0]).collect();
        let weights: Vec<f32> = influences.iter().flat_map(|&(_, w)| [w, 0.0, 0.0, 0.0]).collect();
        let joints = doc.u16s("VEC4", 4, &joints, "");
        let weights = doc.floats("VEC4", 4, &weights);
        format!(r#"{{"attributes":{{"POSITION":{position},"JOINTS_0":{joints},"WEIGHTS_0":{weights}}}{mode}}}"#)
    }

    #[test]
    fn a_non_indexed_primitive_gets_indices_and_shared_meshes_are_imported_once() {
        let mut doc = DocBuilder::default();
        let primitive = simple_primitive(&mut doc, [(0, 1.0), (1, 1.0), (5, 1.0)], "");
        let model = skinned(doc, &primitive, true).expect("valid document");
        assert_eq!(model.meshes.len(), 1);
        assert_eq!(model.meshes[0].indices, Indices::U16(vec![0, 1, 2]));
        assert_eq!(model.meshes[0].name, "mesh 'Body' primitive 0");
        assert_eq!(model.bindings.len(), 2);
        assert_eq!(model.bindings[0].meshes, 0..1);
        assert_eq!(model.bindings[1].meshes, 0..1);
        assert_eq!(model.bindings[1].name, "copy");
    }

    #[test]
    fn strips_become_lists_and_points_are_skipped() {
        let mut doc = DocBuilder::default();
        let position = doc.floats("VEC3", 3, &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0]);
        let joints = doc.u16s("VEC4", 4, &[0; 16], "");
        let weights = doc.floats("VEC4", 4, &[1.0, 0.0, 0.0, 0.0].repeat(4));
        let attributes = format!(r#"{{"POSITION":{position},"JOINTS_0":{joints},"WEIGHTS_0":{weights}}}"#);
        let primitives = format!(r#"{{"attributes":{attributes},"mode":5}},{{"attributes":{attributes},"mode":0}}"#);
        let model = skinned(doc, &primitives, false).expect("valid document");
        assert_eq!(model.meshes.len(), 1);
        assert_eq!(model.meshes[0].indices, Indices::U16(vec![0, 1, 2, 2, 1, 3]));
        assert!(
            model.warnings.iter().any(|w| w.object == "mesh 'Body' primitive 1"),
            "{:?}",
            model.warnings
        );
    }

    #[test]
    fn errors_name_the_accessor_attribute_mesh_and_primitive() {
        let mut doc = DocBuilder::default();
        let primitive = simple_primitive(&mut doc, [(0, 1.0), (1, 1.5), (2, 1.0)], "");
        let e = skinned(doc, &primitive, false)
            .expect_err("weights sum to 1.5")
            .to_string();
        assert_eq!(
            e,
            "accessor 2 (WEIGHTS_0 of mesh 'Body' primitive 0): vertex 1 weights sum to 1.5, not 1"
        );

        let mut doc = DocBuilder::default();
        let primitive = simple_primitive(&mut doc, [(0, 1.0), (6, 1.0), (2, 1.0)], "");
        let e = skinned(doc, &primitive, false).expect_err("joint 6 of 6").to_string();
        assert_eq!(
            e,
            "accessor 1 (JOINTS_0 of mesh 'Body' primitive 0): vertex 1 influence 0 has joint index 6, out of range for skin 0 of 6 joints"
        );

        let mut doc = DocBuilder::default();
        let primitive = simple_primitive(&mut doc, [(0, 1.0), (1, -1.0), (2, 1.0)], "");
        let e = skinned(doc, &primitive, false)
            .expect_err("negative weight")
            .to_string();
        assert!(
            e.starts_with("accessor 2 (WEIGHTS_0 of mesh 'Body' primitive 0): vertex 1"),
            "{e}"
        );

        let mut doc = DocBuilder::default();
        let primitive = simple_primitive(&mut doc, [(0, 1.0), (1, 0.0), (2, 1.0)], "");
        let e = skinned(doc, &primitive, false).expect_err("zero weights").to_string();
        assert!(
            e.starts_with("accessor 2 (WEIGHTS_0 of mesh 'Body' primitive 0): vertex 1 weights sum to 0"),
            "{e}"
        );

        let mut doc = DocBuilder::default();
        let primitive = simple_primitive(&mut doc, [(0, 1.0), (1, f32::NAN), (2, 1.0)], "");
        let e = skinned(doc, &primitive, false).expect_err("NaN weight").to_string();
        assert!(
            e.starts_with("accessor 2 (WEIGHTS_0 of mesh 'Body' primitive 0):"),
            "{e}"
        );
    }

    #[test]
    fn indices_out_of_range_are_errors() {
        let mut doc = DocBuilder::default();
        let primitive = simple_primitive(&mut doc, [(0, 1.0), (1, 1.0), (2, 1.0)], "");
        let indices = doc.u8s("SCALAR", 1, &[0, 1, 3], "");
        let primitive = primitive.replacen('}', &format!(r#"}},"indices":{indices}"#), 1);
        let e = skinned(doc, &primitive, false).expect_err("index 3 of 3").to_string();
        assert!(
            e.starts_with("accessor 3 (indices of mesh 'Body' primitive 0): index 2 is 3"),
            "{e}"
        );
    }
}
