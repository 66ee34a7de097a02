//! Skeletons: one per glTF skin, with the joint layout that [`Skeleton`] documents.
//!
//! The joints are the skin's joints, every node on the path from a skin joint up to the lowest common
//! ancestor of all skin joints, and every node from there up to the highest ancestor that an animation
//! moves (a vehicle, a turntable, a rig's offset node, or a joint of another skin). The topmost of these
//! becomes joint 0, and the static part above it is the skeleton's `root_transform`, so that a clip drives
//! everything that glTF puts into a joint's world matrix. When the skin's own order is already
//! parent-before-child, starts at the root and needs no extra nodes, it is kept exactly; otherwise the
//! joints are sorted by depth, stably.

use std::collections::{HashMap, HashSet};

use glam::{Mat4, Vec4};
use gltf::json;
use gltf::json::accessor::{ComponentType, Type};

use super::Source;
use super::hierarchy::{joint_name, local_transform, node_name};
use crate::{Error, MAX_JOINTS, NO_PARENT, Result, Skeleton};

/// The largest deviation from `(0, 0, 0, 1)` allowed in the last row of an inverse bind matrix.
const AFFINE_TOLERANCE: f32 = 1e-4;

/// The name of skin `index` for messages: `skin 2 ('Armature')` or `skin 2`.
pub(super) fn skin_name(root: &json::Root, index: usize) -> String {
    match root.skins.get(index).and_then(|s| s.name.as_deref()) {
        Some(name) => format!("skin {index} ('{name}')"),
        None => format!("skin {index}"),
    }
}

/// Builds and validates the skeleton of skin `index`. `animated` holds the nodes whose translation, rotation or
/// scale some animation targets.
///
/// # Errors
///
/// [`Error::Invalid`] naming the skin when it has no joints, a joint twice or unresolved, joints without
/// a common root, a `skeleton` that is not a common root, more than [`MAX_JOINTS`] joints, or inverse bind
/// matrices of the wrong count, format or values; or naming a joint node whose transform is invalid.
pub(super) fn build_skeleton(src: &Source<'_>, index: usize, animated: &HashSet<usize>) -> Result<Skeleton> {
    let root = &src.root;
    let object = skin_name(root, index);
    let skin = root
        .skins
        .get(index)
        .ok_or_else(|| Error::invalid(&object, "does not exist"))?;
    if skin.joints.is_empty() {
        return Err(Error::invalid(&object, "has no joints"));
    }
    let joints: Vec<usize> = skin.joints.iter().map(|j| j.value()).collect();
    let mut seen: HashMap<usize, usize> = HashMap::with_capacity(joints.len());
    for (k, &node) in joints.iter().enumerate() {
        if node >= root.nodes.len() {
            return Err(Error::invalid(
                &object,
                format!("joint {k} is node {node}, which does not exist"),
            ));
        }
        if let Some(first) = seen.insert(node, k) {
            return Err(Error::invalid(
                &object,
                format!("lists node {node} twice, as joints {first} and {k}"),
            ));
        }
    }
    if joints.len() > MAX_JOINTS {
        return Err(Error::invalid(
            &object,
            format!("has {} joints, more than the limit of {MAX_JOINTS}", joints.len()),
        ));
    }
    let h = &src.hierarchy;
    // The lowest common ancestor of all joints.
    let mut lca = joints.first().copied().unwrap_or(0);
    for &node in &joints {
        lca = h.common_ancestor(lca, node).ok_or_else(|| {
            Error::invalid(
                &object,
                format!(
                    "joints {} and {} have no common root",
                    node_name(root, lca),
                    node_name(root, node)
                ),
            )
        })?;
    }
    if let Some(skeleton) = skin.skeleton {
        let s = skeleton.value();
        if s >= root.nodes.len() {
            return Err(Error::invalid(
                &object,
                format!("skeleton is node {s}, which does not exist"),
            ));
        }
        if !h.is_ancestor_or_self(s, lca) {
            return Err(Error::invalid(
                &object,
                format!(
                    "skeleton {} is not a common root of the skin's joints",
                    node_name(root, s)
                ),
            ));
        }
    }
    // The root: the highest animated ancestor of the common root, or the common root itself.
    let mut top = lca;
    let mut above = h.parent(lca);
    while let Some(node) = above {
        if animated.contains(&node) {
            top = node;
        }
        above = h.parent(node);
    }
    // The joint nodes: skin joints in order, then the nodes from the common root's parent up to the root, then
    // the extra nodes on the paths from the skin joints up to the common root.
    let mut nodes: Vec<usize> = joints.clone();
    let mut in_set: HashSet<usize> = joints.iter().copied().collect();
    let mut current = lca;
    while current != top && nodes.len() <= MAX_JOINTS {
        let Some(parent) = h.parent(current) else { break };
        if in_set.insert(parent) {
            nodes.push(parent);
        }
        current = parent;
    }
    for &joint in &joints {
        let mut current = joint;
        while current != lca {
            let Some(parent) = h.parent(current) else { break };
            if !in_set.insert(parent) {
                // The parent's own path up to the common root is already in the set.
                break;
            }
            nodes.push(parent);
            if nodes.len() > MAX_JOINTS {
                break;
            }
            current = parent;
        }
    }
    if nodes.len() > MAX_JOINTS {
        return Err(Error::invalid(
            &object,
            format!(
                "needs {} joints (with the nodes between its joints and its animated ancestors), more than the limit of {MAX_JOINTS}",
                nodes.len()
            ),
        ));
    }
    let keep_order = nodes.len() == joints.len()
        && joints.first() == Some(&top)
        && joints
            .iter()
            .enumerate()
            .skip(1)
            .all(|(k, &node)| h.parent(node).and_then(|p| seen.get(&p)).is_some_and(|&pk| pk < k));
    if !keep_order {
        // A stable sort by depth puts parents first (a parent is one level above its child) and keeps
        // the skin's order among joints of equal depth.
        nodes.sort_by_key(|&node| h.depth(node));
    }
    let joint_of: HashMap<usize, u16> = nodes
        .iter()
        .enumerate()
        .map(|(j, &node)| (node, u16::try_from(j).unwrap_or(NO_PARENT)))
        .collect();
    let mut parents = Vec::with_capacity(nodes.len());
    let mut rest_pose = Vec::with_capacity(nodes.len());
    let mut joint_names = Vec::with_capacity(nodes.len());
    for &node in &nodes {
        let parent = if node == top {
            NO_PARENT
        } else {
            h.parent(node).and_then(|p| joint_of.get(&p).copied()).ok_or_else(|| {
                Error::invalid(
                    &object,
                    format!("the parent of joint {} is not a joint", node_name(root, node)),
                )
            })?
        };
        parents.push(parent);
        rest_pose.push(local_transform(root, node)?);
        joint_names.push(joint_name(root, node));
    }
    let skin_joints: Vec<u16> = joints
        .iter()
        .map(|node| joint_of.get(node).copied().unwrap_or(NO_PARENT))
        .collect();
    let inverse_bind_matrices = inverse_bind_matrices(src, index, &object, joints.len())?;
    let skeleton = Skeleton {
        name: skin.name.clone().unwrap_or_else(|| format!("skin {index}")),
        skin: index,
        joint_names,
        parents,
        rest_pose,
        joint_nodes: nodes,
        skin_joints,
        inverse_bind_matrices,
        root_transform: h.parent_world_matrix(root, top),
    };
    skeleton
        .validate()
        .map_err(|e| Error::invalid(&object, e.to_string()))?;
    Ok(skeleton)
}

/// Reads and checks the inverse bind matrices of a skin with `joint_count` joints.
fn inverse_bind_matrices(src: &Source<'_>, skin: usize, object: &str, joint_count: usize) -> Result<Vec<Mat4>> {
    let root = &src.root;
    let Some(accessor) = root.skins.get(skin).and_then(|s| s.inverse_bind_matrices) else {
        return Ok(vec![Mat4::IDENTITY; joint_count]);
    };
    let a = src.accessor(accessor.value())?;
    let name = format!("accessor {}", accessor.value());
    if a.ty != Type::Mat4 || a.component_type != ComponentType::F32 {
        return Err(Error::invalid(
            object,
            format!("inverseBindMatrices {name} is {}, but must be MAT4 FLOAT", a.format()),
        ));
    }
    if a.count < joint_count {
        return Err(Error::invalid(
            object,
            format!(
                "inverseBindMatrices {name} has {} matrices for {joint_count} joints",
                a.count
            ),
        ));
    }
    let mut out = Vec::with_capacity(joint_count);
    for (k, m) in a.elements_to_vec::<16>().into_iter().take(joint_count).enumerate() {
        let m = Mat4::from_cols_array(&m);
        if !m.is_finite() {
            return Err(Error::invalid(
                object,
                format!("inverse bind matrix {k} in {name} is not finite"),
            ));
        }
        // Accessors without data are all zeros; the validator only checks stored matrices.
        if a.has_data && (m.row(3) - Vec4::W).abs().max_element() > AFFINE_TOLERANCE {
            return Err(Error::invalid(
                object,
                format!(
                    "inverse bind matrix {k} in {name} has last row {}, not (0, 0, 0, 1)",
                    m.row(3)
                ),
            ));
        }
        out.push(m);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use glam::{Mat4, Vec3};

    use super::super::import_slice;
    use super::super::test_support::DocBuilder;
    use crate::{MAX_JOINTS, Model, NO_PARENT, Result};

    fn import(nodes: &str, skins: &str) -> Result<Model> {
        let text = DocBuilder::default().finish(&format!(r#""nodes":{nodes},"skins":{skins}"#));
        import_slice(text.as_bytes(), None)
    }

    #[test]
    fn keeps_a_parent_first_skin_order_exactly() {
        let model = import(
            r#"[{"name":"hips","children":[1,2]},{"name":"spine"},{"name":"leg"}]"#,
            r#"[{"joints":[0,2,1]}]"#,
        )
        .expect("valid document");
        let s = &model.skeletons[0];
        assert_eq!(s.joint_nodes, vec![0, 2, 1]);
        assert_eq!(s.skin_joints, vec![0, 1, 2]);
        assert_eq!(s.parents, vec![NO_PARENT, 0, 0]);
        assert_eq!(s.joint_names, vec!["hips", "leg", "spine"]);
        assert_eq!(s.root_transform, Mat4::IDENTITY);
    }

    #[test]
    fn adds_nodes_up_to_the_common_root_and_sorts_by_depth() {
        // Node 0 (translated scene root) > 1 (joint-less middle) > 2 and 3; node 3 > 4 (a matrix node).
        // The skin lists 4, 2 and 3, whose lowest common ancestor is node 1, not in the skin.
        let nodes = r#"[{"translation":[0,0,5],"children":[1]},{"children":[2,3]},{},{"children":[4]},
                        {"matrix":[2,0,0,0, 0,2,0,0, 0,0,2,0, 1,2,3,1]}]"#;
        let model = import(nodes, r#"[{"name":"rig","joints":[4,2,3]}]"#).expect("valid document");
        let s = &model.skeletons[0];
        assert_eq!(s.name, "rig");
        assert_eq!(s.joint_nodes, vec![1, 2, 3, 4]);
        assert_eq!(s.parents, vec![NO_PARENT, 0, 0, 2]);
        assert_eq!(s.skin_joints, vec![3, 1, 2]);
        assert_eq!(s.joint_names[0], "node 1");
        assert!(s.rest_pose[3].translation.abs_diff_eq(Vec3::new(1.0, 2.0, 3.0), 1e-6));
        assert!(s.rest_pose[3].scale.abs_diff_eq(Vec3::splat(2.0), 1e-6));
        assert_eq!(s.root_transform, Mat4::from_translation(Vec3::new(0.0, 0.0, 5.0)));
        assert_eq!(s.inverse_bind_matrices, vec![Mat4::IDENTITY; 3]);
    }

    #[test]
    fn takes_in_animated_ancestors_up_to_the_highest() {
        // Node 0 (static, translated) > 1 (animated turntable) > 2 (static matrix, non-uniform scale)
        // > 3 (animated offset) > 4 (the skin's common root, not in the skin) > 5 and 6 (the skin's joints).
        // An animation also moves node 7, a scene root beside the rig, which no skeleton takes in.
        let mut doc = DocBuilder::default();
        let times = doc.floats("SCALAR", 1, &[0.0, 1.0]);
        let turns = doc.floats("VEC4", 4, &[0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0]);
        let slides = doc.floats("VEC3", 3, &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0]);
        let text = doc.finish(&format!(
            r#""nodes":[{{"translation":[0,0,5],"children":[1]}},{{"children":[2]}},
                {{"matrix":[2,0,0,0, 0,1,0,0, 0,0,3,0, 0,1,0,1],"children":[3]}},{{"children":[4]}},{{"children":[5,6]}},
                {{"name":"a"}},{{"name":"b"}},{{}}],
               "skins":[{{"joints":[6,5]}}],
               "animations":[{{"samplers":[{{"input":{times},"output":{turns}}},{{"input":{times},"output":{slides}}}],
                 "channels":[{{"sampler":0,"target":{{"node":1,"path":"rotation"}}}},
                             {{"sampler":1,"target":{{"node":3,"path":"translation"}}}},
                             {{"sampler":1,"target":{{"node":7,"path":"translation"}}}}]}}]"#
        ));
        let model = import_slice(text.as_bytes(), None).expect("valid document");
        let s = &model.skeletons[0];
        assert_eq!(s.joint_nodes, vec![1, 2, 3, 4, 6, 5]);
        assert_eq!(s.parents, vec![NO_PARENT, 0, 1, 2, 3, 3]);
        assert_eq!(
            s.skin_joints,
            vec![4, 5],
            "the skin's own joints keep their skin indices"
        );
        assert_eq!(
            s.root_transform,
            Mat4::from_translation(Vec3::new(0.0, 0.0, 5.0)),
            "only the static part above the highest animated ancestor"
        );
        assert!(s.rest_pose[1].scale.abs_diff_eq(Vec3::new(2.0, 1.0, 3.0), 1e-6));
        let clip = &model.clips[0];
        let targets: Vec<u16> = clip.channels.iter().map(|c| c.joint).collect();
        assert_eq!(targets, vec![0, 2], "the ancestors' channels drive the skeleton");
        assert!(
            model
                .warnings
                .iter()
                .any(|w| w.message.contains("1 channels target nodes that are not joints")),
            "{:?}",
            model.warnings
        );
    }

    #[test]
    fn rejects_bad_skins() {
        let cases = [
            (r#"[{},{}]"#, r#"[{"joints":[0,1]}]"#, "no common root"),
            (r#"[{"children":[1]},{}]"#, r#"[{"joints":[0,1,1]}]"#, "twice"),
            (
                r#"[{"children":[1]},{},{}]"#,
                r#"[{"joints":[1],"skeleton":2}]"#,
                "not a common root",
            ),
            (
                r#"[{"matrix":[1,0,0,0, 0,0,0,0, 0,0,1,0, 0,0,0,1]}]"#,
                r#"[{"joints":[0]}]"#,
                "not decomposable",
            ),
        ];
        for (nodes, skins, expected) in cases {
            let e = import(nodes, skins).expect_err(expected).to_string();
            assert!(e.contains(expected), "expected '{expected}' in: {e}");
        }
    }

    #[test]
    fn rejects_skins_over_the_joint_limit_by_name() {
        let n = MAX_JOINTS + 1;
        let children: Vec<String> = (1..n).map(|i| i.to_string()).collect();
        let mut nodes = vec![format!(r#"{{"children":[{}]}}"#, children.join(","))];
        nodes.extend((1..n).map(|_| "{}".to_owned()));
        let joints: Vec<String> = (0..n).map(|i| i.to_string()).collect();
        let e = import(
            &format!("[{}]", nodes.join(",")),
            &format!(r#"[{{"name":"Huge","joints":[{}]}}]"#, joints.join(",")),
        )
        .expect_err("too many joints")
        .to_string();
        assert!(e.starts_with("skin 0 ('Huge'): has 1025 joints"), "{e}");
    }

    #[test]
    fn checks_inverse_bind_matrices() {
        let mut doc = DocBuilder::default();
        let mut ibm = Mat4::IDENTITY.to_cols_array().to_vec();
        ibm.extend_from_slice(&Mat4::from_translation(Vec3::X).to_cols_array());
        let accessor = doc.floats("MAT4", 16, &ibm);
        let text = doc.finish(&format!(
            r#""nodes":[{{"children":[1]}},{{}}],"skins":[{{"joints":[0,1],"inverseBindMatrices":{accessor}}}]"#
        ));
        let model = import_slice(text.as_bytes(), None).expect("valid document");
        assert_eq!(
            model.skeletons[0].inverse_bind_matrices[1],
            Mat4::from_translation(Vec3::X)
        );

        let mut doc = DocBuilder::default();
        let mut bad = Mat4::IDENTITY.to_cols_array();
        bad[3] = 0.5;
        let accessor = doc.floats("MAT4", 16, &bad);
        let text = doc.finish(&format!(
            r#""nodes":[{{}}],"skins":[{{"joints":[0],"inverseBindMatrices":{accessor}}}]"#
        ));
        let e = import_slice(text.as_bytes(), None).expect_err("not affine").to_string();
        assert!(e.contains("not (0, 0, 0, 1)"), "{e}");
    }
}
