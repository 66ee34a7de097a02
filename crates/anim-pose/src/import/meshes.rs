//! Skinned meshes: attribute and index checks for every mesh primitive, and the import of every primitive
//! of every mesh that a skinned node draws, with its material and base colour image.
//!
//! Influences from all `JOINTS_n`/`WEIGHTS_n` sets are merged; more than four are reduced to the four
//! largest and renormalized, and every vertex's weights are sorted in decreasing order and sum to 1.
//! Triangle strips and fans become lists, non-indexed primitives get indices, and points and lines are
//! skipped with a warning.
//!
//! The checks of every primitive live in [`checks`], the materials and their images in [`materials`].

mod checks;
mod materials;

use std::collections::{BTreeMap, HashMap};

use glam::{Vec2, Vec3, Vec4};
use gltf::json;
use gltf::json::accessor::{ComponentType, Type};
use gltf::json::mesh::{Mode, Semantic};
use gltf::json::validation::Checked;

pub(super) use self::checks::check_meshes;
use self::materials::{Images, build_material};
use super::Source;
use crate::{Aabb, Error, Indices, Result, Skeleton, SkinBinding, SkinnedMesh, TextureImage};

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
