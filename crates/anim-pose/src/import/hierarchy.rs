//! The node hierarchy: parents, depths and transforms, found iteratively.
//!
//! No function here recurses over nodes, so a hierarchy of any depth cannot overflow the stack.
//! Cycles, nodes with two parents, self-references and unresolved children are errors.

use glam::{Mat4, Quat, Vec3};
use gltf::json;

use crate::{Error, Result, Transform};

/// The name of node `index` for messages: `node 3 ('Hips')` or `node 3`.
pub(super) fn node_name(root: &json::Root, index: usize) -> String {
    match root.nodes.get(index).and_then(|n| n.name.as_deref()) {
        Some(name) => format!("node {index} ('{name}')"),
        None => format!("node {index}"),
    }
}

/// The joint name of node `index`: its name, or `node N`.
pub(super) fn joint_name(root: &json::Root, index: usize) -> String {
    match root.nodes.get(index).and_then(|n| n.name.as_deref()) {
        Some(name) => name.to_owned(),
        None => format!("node {index}"),
    }
}

/// The parent and depth of every node of a document, which is known to be a forest.
#[derive(Clone, Debug)]
pub(super) struct Hierarchy {
    /// The parent of each node, `None` for roots.
    pub parents: Vec<Option<usize>>,
    /// The depth of each node below its root (roots have depth 0).
    pub depths: Vec<usize>,
}

impl Hierarchy {
    /// Builds the hierarchy of `root`'s nodes.
    ///
    /// # Errors
    ///
    /// [`Error::Invalid`] naming the node at fault for an unresolved child, a node listed as its own child
    /// or twice by one parent, a node with two parents, or a cycle.
    pub fn new(root: &json::Root) -> Result<Self> {
        let n = root.nodes.len();
        let mut parents: Vec<Option<usize>> = vec![None; n];
        for (p, node) in root.nodes.iter().enumerate() {
            for child in node.children.iter().flatten() {
                let c = child.value();
                if c >= n {
                    return Err(Error::invalid(
                        node_name(root, p),
                        format!("has child {c}, which does not exist"),
                    ));
                }
                if c == p {
                    return Err(Error::invalid(node_name(root, p), "lists itself as a child (a cycle)"));
                }
                match parents.get(c).copied().flatten() {
                    Some(q) if q == p => {
                        return Err(Error::invalid(node_name(root, p), format!("lists child {c} twice")));
                    }
                    Some(q) => {
                        return Err(Error::invalid(
                            node_name(root, c),
                            format!("has two parents, node {q} and node {p}"),
                        ));
                    }
                    None => {
                        if let Some(slot) = parents.get_mut(c) {
                            *slot = Some(p);
                        }
                    }
                }
            }
        }
        // Each node has at most one parent now, so following parents from any node either reaches a root
        // or enters a cycle. Walk up from every node without a known depth, then assign depths on the way
        // back down.
        const UNKNOWN: usize = usize::MAX;
        const VISITING: usize = usize::MAX - 1;
        let mut depths = vec![UNKNOWN; n];
        let mut path = Vec::new();
        for start in 0..n {
            if depths.get(start).copied() != Some(UNKNOWN) {
                continue;
            }
            path.clear();
            let mut current = start;
            let base = loop {
                let d = depths.get(current).copied().unwrap_or(UNKNOWN);
                if d == VISITING {
                    return Err(Error::invalid(
                        node_name(root, current),
                        "is its own ancestor: the node hierarchy has a cycle",
                    ));
                }
                if d != UNKNOWN {
                    break d + 1;
                }
                if let Some(slot) = depths.get_mut(current) {
                    *slot = VISITING;
                }
                path.push(current);
                match parents.get(current).copied().flatten() {
                    Some(p) => current = p,
                    None => break 0,
                }
            };
            // `path` runs from `start` up to the topmost unknown node, whose depth is `base`.
            for (i, &node) in path.iter().rev().enumerate() {
                if let Some(slot) = depths.get_mut(node) {
                    *slot = base + i;
                }
            }
        }
        Ok(Self { parents, depths })
    }

    /// The parent of `node`.
    pub fn parent(&self, node: usize) -> Option<usize> {
        self.parents.get(node).copied().flatten()
    }

    /// The depth of `node`.
    pub fn depth(&self, node: usize) -> usize {
        self.depths.get(node).copied().unwrap_or(0)
    }

    /// True when `ancestor` is `node` or one of its ancestors.
    pub fn is_ancestor_or_self(&self, ancestor: usize, node: usize) -> bool {
        let mut current = Some(node);
        while let Some(c) = current {
            if c == ancestor {
                return true;
            }
            current = self.parent(c);
        }
        false
    }

    /// The lowest common ancestor of `a` and `b`, or `None` when they are in different trees.
    pub fn common_ancestor(&self, a: usize, b: usize) -> Option<usize> {
        let (mut a, mut b) = (a, b);
        while self.depth(a) > self.depth(b) {
            a = self.parent(a)?;
        }
        while self.depth(b) > self.depth(a) {
            b = self.parent(b)?;
        }
        while a != b {
            a = self.parent(a)?;
            b = self.parent(b)?;
        }
        Some(a)
    }

    /// The world matrix of `node`'s parent: the product of the local matrices of all its ancestors.
    /// Identity for a root.
    pub fn parent_world_matrix(&self, root: &json::Root, node: usize) -> Mat4 {
        let mut world = Mat4::IDENTITY;
        let mut current = self.parent(node);
        while let Some(c) = current {
            world = local_matrix(root, c) * world;
            current = self.parent(c);
        }
        world
    }
}

/// The local matrix of node `index`: its `matrix`, or `T * R * S`. Identity for a missing node.
pub(super) fn local_matrix(root: &json::Root, index: usize) -> Mat4 {
    let Some(node) = root.nodes.get(index) else {
        return Mat4::IDENTITY;
    };
    match node.matrix {
        Some(m) => Mat4::from_cols_array(&m),
        None => trs(node).to_mat4(),
    }
}

/// The TRS properties of a node, defaults filled in. The rotation is normalized when it is not zero.
fn trs(node: &json::Node) -> Transform {
    let translation = node.translation.map_or(Vec3::ZERO, Vec3::from_array);
    let rotation = node.rotation.map_or(Quat::IDENTITY, |q| {
        let q = Quat::from_array(q.0);
        let len = q.length();
        if len > 0.0 && len.is_finite() { q / len } else { q }
    });
    let scale = node.scale.map_or(Vec3::ONE, Vec3::from_array);
    Transform {
        translation,
        rotation,
        scale,
    }
}

/// The rest transform of node `index` for a skeleton: its TRS, or its `matrix` decomposed.
///
/// # Errors
///
/// [`Error::Invalid`] naming the node when its matrix is not decomposable or its transform is not finite.
pub(super) fn local_transform(root: &json::Root, index: usize) -> Result<Transform> {
    let node = root
        .nodes
        .get(index)
        .ok_or_else(|| Error::invalid(node_name(root, index), "does not exist"))?;
    let t = match node.matrix {
        Some(m) => Transform::from_mat4(&Mat4::from_cols_array(&m)).ok_or_else(|| {
            Error::invalid(
                node_name(root, index),
                "matrix is not decomposable into translation, rotation and scale",
            )
        })?,
        None => trs(node),
    };
    if !t.is_finite() {
        return Err(Error::invalid(node_name(root, index), "transform is not finite"));
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(text: &str) -> json::Root {
        json::deserialize::from_str(text).expect("valid test JSON")
    }

    #[test]
    fn rejects_cycles_and_two_parents() {
        let cycle = root(r#"{"asset":{"version":"2.0"},"nodes":[{"children":[1]},{"children":[2]},{"children":[0]}]}"#);
        let e = Hierarchy::new(&cycle).expect_err("cycle").to_string();
        assert!(e.contains("cycle"), "{e}");
        let two = root(r#"{"asset":{"version":"2.0"},"nodes":[{"children":[2]},{"children":[2]},{}]}"#);
        let e = Hierarchy::new(&two).expect_err("two parents").to_string();
        assert!(e.contains("node 2") && e.contains("two parents"), "{e}");
        let own = root(r#"{"asset":{"version":"2.0"},"nodes":[{"children":[0]}]}"#);
        assert!(Hierarchy::new(&own).is_err());
        let missing = root(r#"{"asset":{"version":"2.0"},"nodes":[{"children":[5]}]}"#);
        assert!(Hierarchy::new(&missing).is_err());
    }

    /// A chain of `n` nodes, each the child of the one before, optionally closed into a cycle.
    fn chain(n: usize, cycle: bool) -> String {
        let mut text = String::from(r#"{"asset":{"version":"2.0"},"nodes":["#);
        for i in 0..n {
            if i > 0 {
                text.push(',');
            }
            if i + 1 < n {
                text.push_str(&format!(r#"{{"children":[{}]}}"#, i + 1));
            } else if cycle {
                text.push_str(r#"{"children":[0]}"#);
            } else {
                text.push_str("{}");
            }
        }
        text.push_str("]}");
        text
    }

    #[test]
    fn deep_chains_do_not_overflow_the_stack() {
        let n = 100_000;
        let h = Hierarchy::new(&root(&chain(n, false))).expect("a deep chain is valid");
        assert_eq!(h.depth(n - 1), n - 1);
        assert_eq!(h.common_ancestor(n - 1, n / 2), Some(n / 2));
        assert!(h.is_ancestor_or_self(0, n - 1));
        let e = Hierarchy::new(&root(&chain(n, true)))
            .expect_err("a deep cycle")
            .to_string();
        assert!(e.contains("cycle"), "{e}");
    }

    #[test]
    fn finds_common_ancestors() {
        let r = root(r#"{"asset":{"version":"2.0"},"nodes":[{"children":[1,2]},{"children":[3]},{},{},{}]}"#);
        let h = Hierarchy::new(&r).expect("valid");
        assert_eq!(h.common_ancestor(3, 2), Some(0));
        assert_eq!(h.common_ancestor(3, 1), Some(1));
        assert_eq!(h.common_ancestor(3, 4), None);
    }
}
