//! glTF 2.0 import: `.glb`, `.gltf` with external files, and `data:` URIs.
//!
//! The `gltf` crate deserializes and validates the JSON; everything else is done here, with explicit
//! bounds checks, so that no input can make the importer panic or hang:
//! - [`container`] splits GLB files into their chunks;
//! - [`buffers`] loads buffers and checks buffer views;
//! - [`accessor`] reads accessors (strides, normalized integers, sparse data, zero-filled accessors);
//! - [`hierarchy`] finds parents and depths iteratively, rejecting cycles and nodes with two parents;
//! - [`validate`] checks the whole document, used or not, as the Khronos validator does;
//! - [`skeleton`], [`clips`] and [`meshes`] build the model's skeletons, clips and skinned meshes.
//!
//! Every error names the object at fault, for example `accessor 12 (JOINTS_0 of mesh 'Body' primitive 0):
//! vertex 5 influence 2 has joint index 70, out of range for skin 0 of 19 joints`.

mod accessor;
mod buffers;
mod clips;
mod container;
mod hierarchy;
mod meshes;
mod skeleton;
#[cfg(test)]
mod test_support;
mod validate;

use std::borrow::Cow;
use std::path::Path;

use gltf::json;

use self::accessor::{AccessorData, accessor_name, read_accessor};
use self::buffers::UriResolver;
use self::hierarchy::Hierarchy;
use crate::{Error, ImportWarning, Model, Result};

/// Imports a `.glb` or `.gltf` file; external buffers and images are read relative to its folder.
///
/// # Errors
///
/// [`Error::Io`] when the file cannot be read, or any error of [`import_slice`].
pub fn import_file(path: impl AsRef<Path>) -> Result<Model> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|source| Error::Io {
        path: path.display().to_string(),
        source,
    })?;
    let base_dir = path.parent().unwrap_or_else(|| Path::new(""));
    import_slice(&bytes, Some(base_dir))
}

/// Imports a `.glb` or `.gltf` held in memory. `base_dir` resolves external URIs; without it, only
/// embedded buffers and `data:` URIs can be read.
///
/// The whole document is validated, including objects that no scene uses, so that a broken object is
/// reported even when nothing imports it.
///
/// # Errors
///
/// - [`Error::Parse`] for a malformed GLB container or JSON text.
/// - [`Error::Invalid`] naming the object at fault for any invalid glTF object.
/// - [`Error::Unsupported`] for required extensions and URI schemes this importer does not read.
/// - [`Error::Io`] when an external file cannot be read.
pub fn import_slice(bytes: &[u8], base_dir: Option<&Path>) -> Result<Model> {
    let mut warnings = Vec::new();
    let (json_bytes, bin) = if container::is_glb(bytes) {
        let glb = container::parse_glb(bytes, &mut warnings)?;
        (glb.json, glb.bin)
    } else {
        (bytes, None)
    };
    let root: json::Root = json::deserialize::from_slice(json_bytes).map_err(|e| Error::Parse {
        context: "glTF JSON".to_owned(),
        message: e.to_string(),
    })?;
    validate::check_asset(&root)?;
    validate::check_schema(&root, &mut warnings)?;
    let hierarchy = Hierarchy::new(&root)?;
    let resolver = UriResolver { base_dir };
    let buffers = buffers::load_buffers(&root, bin, resolver, &mut warnings)?;
    buffers::check_views(&root, &buffers)?;
    let labels = validate::accessor_labels(&root);
    let mut src = Source {
        root,
        buffers,
        hierarchy,
        accessors: Vec::new(),
        labels,
        resolver,
        warnings,
    };
    src.accessors = validate::read_all_accessors(&src)?;
    validate::check_nodes_and_scenes(&src)?;
    let animated = clips::animated_nodes(&src.root);
    let skeletons = (0..src.root.skins.len())
        .map(|s| skeleton::build_skeleton(&src, s, &animated))
        .collect::<Result<Vec<_>>>()?;
    meshes::check_meshes(&mut src, &skeletons)?;
    clips::check_animations(&src)?;
    let clips = clips::build_clips(&mut src, &skeletons)?;
    let (meshes, bindings, images) = meshes::build_meshes(&mut src, &skeletons)?;
    let default_scene_nodes = default_scene_nodes(&src.root);
    Ok(Model {
        default_scene_nodes,
        skeletons,
        clips,
        meshes,
        bindings,
        images,
        warnings: src.warnings,
    })
}

/// The nodes of the default scene (scene 0 when the file names none) in depth-first order, children in the
/// order listed; empty when the file has no scene.
///
/// The walk uses an explicit stack, so deep hierarchies cannot overflow the call stack.
/// The document is known to be a forest whose scene nodes are roots, so each node is reached once;
/// a root listed twice by the scene is walked once.
fn default_scene_nodes(root: &json::Root) -> Vec<usize> {
    let scene = root.scene.map_or(0, |s| s.value());
    let Some(scene) = root.scenes.get(scene) else {
        return Vec::new();
    };
    let mut visited = vec![false; root.nodes.len()];
    let mut order = Vec::new();
    // Nodes are pushed in reverse so that they pop in the order listed.
    let mut stack: Vec<usize> = scene.nodes.iter().rev().map(|n| n.value()).collect();
    while let Some(n) = stack.pop() {
        match visited.get_mut(n) {
            Some(seen) if !*seen => *seen = true,
            _ => continue,
        }
        order.push(n);
        let children = root.nodes[n].children.iter().flatten();
        stack.extend(children.rev().map(|c| c.value()));
    }
    order
}

/// A parsed document with its loaded buffers and decoded accessors, shared by the import stages.
struct Source<'a> {
    /// The glTF JSON.
    root: json::Root,
    /// The buffers' bytes, checked against their `byteLength`.
    buffers: Vec<Cow<'a, [u8]>>,
    /// Parents and depths of all nodes.
    hierarchy: Hierarchy,
    /// Every accessor, decoded; `None` for an accessor whose `type` is unknown.
    accessors: Vec<Option<AccessorData>>,
    /// What uses each accessor, for messages.
    labels: Vec<Option<String>>,
    /// Where external URIs are read.
    resolver: UriResolver<'a>,
    /// Warnings collected so far.
    warnings: Vec<ImportWarning>,
}

impl Source<'_> {
    /// The name of accessor `index` with what uses it.
    fn accessor_name(&self, index: usize) -> String {
        accessor_name(&self.root, &self.labels, index)
    }

    /// The decoded accessor `index`.
    ///
    /// # Errors
    ///
    /// [`Error::Invalid`] naming the accessor when it does not exist or its `type` is unknown.
    fn accessor(&self, index: usize) -> Result<&AccessorData> {
        match self.accessors.get(index) {
            Some(Some(a)) => Ok(a),
            Some(None) => Err(Error::invalid(
                self.accessor_name(index),
                "has an unknown type, so it cannot be used",
            )),
            None => Err(Error::invalid(self.accessor_name(index), "does not exist")),
        }
    }

    /// Records a warning about `object`.
    fn warn(&mut self, object: impl Into<String>, message: impl Into<String>) {
        self.warnings.push(ImportWarning {
            object: object.into(),
            message: message.into(),
        });
    }

    /// Reads accessor `index` from the buffers (used once per accessor, by validation).
    fn read(&self, index: usize) -> Result<Option<AccessorData>> {
        read_accessor(&self.root, &self.buffers, index, &self.accessor_name(index))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chain of `n` nodes, each the child of the one before, optionally closed into a cycle.
    fn chain(n: usize, cycle: bool) -> String {
        let nodes: Vec<String> = (0..n)
            .map(|i| match (i + 1 < n, cycle) {
                (true, _) => format!(r#"{{"children":[{}]}}"#, i + 1),
                (false, true) => r#"{"children":[0]}"#.to_owned(),
                (false, false) => "{}".to_owned(),
            })
            .collect();
        format!(r#"{{"asset":{{"version":"2.0"}},"nodes":[{}]}}"#, nodes.join(","))
    }

    #[test]
    fn deep_hierarchies_import_without_recursion() {
        let model = import_slice(chain(100_000, false).as_bytes(), None).expect("a deep chain is valid");
        assert!(model.skeletons.is_empty());
        let e = import_slice(chain(100_000, true).as_bytes(), None)
            .expect_err("a cycle")
            .to_string();
        assert!(e.contains("cycle"), "{e}");
    }

    #[test]
    fn two_parents_and_cycles_are_errors() {
        let two = r#"{"asset":{"version":"2.0"},"nodes":[{"children":[2]},{"children":[2]},{}]}"#;
        let e = import_slice(two.as_bytes(), None).expect_err("two parents").to_string();
        assert!(e.starts_with("node 2: has two parents"), "{e}");
        let cycle = r#"{"asset":{"version":"2.0"},"nodes":[{"children":[1]},{"children":[0]}]}"#;
        assert!(import_slice(cycle.as_bytes(), None).is_err());
    }

    #[test]
    fn default_scene_nodes_are_depth_first() {
        let text = r#"{"asset":{"version":"2.0"},"scene":1,"scenes":[{"nodes":[0]},{"nodes":[3,0]}],
            "nodes":[{"children":[2,1]},{},{"children":[4]},{},{}]}"#;
        let model = import_slice(text.as_bytes(), None).expect("valid");
        assert_eq!(model.default_scene_nodes, [3, 0, 2, 4, 1]);
        let no_default = text.replace(r#""scene":1,"#, "");
        let model = import_slice(no_default.as_bytes(), None).expect("valid");
        assert_eq!(model.default_scene_nodes, [0, 2, 4, 1]);
        let model = import_slice(chain(3, false).as_bytes(), None).expect("valid");
        assert!(model.default_scene_nodes.is_empty());
    }

    #[test]
    fn external_uris_need_a_base_folder() {
        let text = r#"{"asset":{"version":"2.0"},"buffers":[{"byteLength":4,"uri":"a.bin"}]}"#;
        let e = import_slice(text.as_bytes(), None)
            .expect_err("no base folder")
            .to_string();
        assert!(e.contains("base folder"), "{e}");
    }
}
