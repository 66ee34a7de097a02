//! Whole-document checks: the asset version, the `gltf` crate's schema validation, every accessor's
//! data, and every node and scene, whether or not a scene uses them.
//!
//! Mesh, skin and animation checks live with the code that imports those objects
//! ([`super::meshes`], [`super::skeleton`], [`super::clips`]), and run on every object of the document.

use gltf::json;
use gltf::json::accessor::ComponentType;
use gltf::json::validation::{Checked, Validate};

use super::Source;
use super::accessor::AccessorData;
use super::hierarchy::node_name;
use crate::{Error, ImportWarning, Result};

/// Tolerance for comparing an accessor's declared `min`/`max` with its data, relative to the value
/// (absolute below 1). Exporters write bounds as decimal text, so exact equality is too strict.
const BOUNDS_TOLERANCE: f64 = 1e-4;

/// The largest `| |q| - 1 |` accepted for a rotation quaternion in a node or an animation.
///
/// The Khronos sample SimpleSkin has keys with `|q| = 1.00023`, and normalized 8-bit rotations are off by
/// up to about 0.008; the validator corpus's non-unit key has `|q| = 0.548`.
pub(super) const UNIT_QUATERNION_TOLERANCE: f32 = 1e-2;

/// Required extensions that the `gltf` crate does not list but that this importer may ignore: they only
/// change shading, which crowd rendering does not take from the file.
///
/// `KHR_mesh_quantization` is not among them: its attribute formats are not read, so a file that
/// requires it is rejected as unsupported rather than with a confusing format error.
const READ_EXTENSIONS: &[&str] = &["KHR_materials_unlit"];

/// Checks `asset.version` and `asset.minVersion`.
///
/// # Errors
///
/// [`Error::Invalid`] for a malformed version, [`Error::Unsupported`] for a version other than 2.x.
pub(super) fn check_asset(root: &json::Root) -> Result<()> {
    let parse = |v: &str| -> Option<(u32, u32)> {
        let (major, minor) = v.split_once('.')?;
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(major) || !digits(minor) {
            return None;
        }
        Some((major.parse().ok()?, minor.parse().ok()?))
    };
    let version = &root.asset.version;
    let Some((major, _)) = parse(version) else {
        return Err(Error::invalid(
            "asset",
            format!("version '{version}' is not of the form 'major.minor'"),
        ));
    };
    if major != 2 {
        return Err(Error::Unsupported {
            object: "asset".to_owned(),
            message: format!("glTF version {version}"),
        });
    }
    if let Some(min) = &root.asset.min_version {
        let Some(parsed) = parse(min) else {
            return Err(Error::invalid(
                "asset",
                format!("minVersion '{min}' is not of the form 'major.minor'"),
            ));
        };
        if parsed > (2, 0) {
            return Err(Error::Unsupported {
                object: "asset".to_owned(),
                message: format!("minVersion {min}"),
            });
        }
    }
    Ok(())
}

/// Runs the `gltf` crate's schema validation, turning its reports into errors or warnings.
///
/// Accessors without a buffer view are valid (they are zeros), an unknown accessor `type` or attribute
/// name is a warning (the object cannot be used, which is an error where it is used), and
/// [`READ_EXTENSIONS`] may be required.
///
/// # Errors
///
/// [`Error::Invalid`] naming the JSON path of every other report, [`Error::Unsupported`] for required
/// extensions.
pub(super) fn check_schema(root: &json::Root, warnings: &mut Vec<ImportWarning>) -> Result<()> {
    // The crate's POSITION bounds check indexes the accessor list without a bounds check; make sure it
    // cannot panic.
    for (m, mesh) in root.meshes.iter().enumerate() {
        for (p, primitive) in mesh.primitives.iter().enumerate() {
            for (semantic, index) in &primitive.attributes {
                if index.value() >= root.accessors.len() {
                    return Err(Error::invalid(
                        format!("{} primitive {p}", super::meshes::mesh_name(root, m)),
                        format!(
                            "attribute {} refers to accessor {}, which does not exist",
                            semantic_name(semantic),
                            index.value()
                        ),
                    ));
                }
            }
        }
    }
    let mut errors = Vec::new();
    let mut unsupported = Vec::new();
    root.validate(root, json::Path::new, &mut |path, error| {
        let path = path().0;
        let is_field =
            |field: &str| path.starts_with("accessors[") && path.ends_with(field) && !path.contains("sparse");
        match error {
            json::validation::Error::Missing if is_field("].bufferView") => {}
            json::validation::Error::Invalid if is_field("].type") => warnings.push(ImportWarning {
                object: path.replace("accessors[", "accessor ").replace("].type", ""),
                message: "type is not a glTF accessor type; the accessor cannot be used".to_owned(),
            }),
            json::validation::Error::Invalid if path.ends_with("[\"<invalid semantic name>\"]") => {
                warnings.push(ImportWarning {
                    object: path.replace("[\"<invalid semantic name>\"]", ""),
                    message: "an attribute with an application-specific or unknown name is ignored".to_owned(),
                });
            }
            json::validation::Error::Unsupported => {
                if !READ_EXTENSIONS.iter().any(|ext| path.ends_with(&format!("\"{ext}\""))) {
                    unsupported.push(path);
                }
            }
            other => errors.push(format!("{path}: {other}")),
        }
    });
    if let Some(path) = unsupported.first() {
        return Err(Error::Unsupported {
            object: "glTF JSON".to_owned(),
            message: format!("required extension {path}"),
        });
    }
    if !errors.is_empty() {
        let shown: Vec<&str> = errors.iter().take(5).map(String::as_str).collect();
        let more = if errors.len() > 5 {
            format!(" (and {} more)", errors.len() - 5)
        } else {
            String::new()
        };
        return Err(Error::invalid("glTF JSON", format!("{}{more}", shown.join("; "))));
    }
    Ok(())
}

/// The glTF name of an attribute semantic.
pub(super) fn semantic_name(semantic: &Checked<json::mesh::Semantic>) -> String {
    match semantic {
        Checked::Valid(s) => s.to_string(),
        Checked::Invalid => "with an unknown name".to_owned(),
    }
}

/// What uses each accessor (its first use), for messages.
pub(super) fn accessor_labels(root: &json::Root) -> Vec<Option<String>> {
    let mut labels: Vec<Option<String>> = vec![None; root.accessors.len()];
    let mut set = |index: usize, label: &dyn Fn() -> String| {
        if let Some(slot @ None) = labels.get_mut(index) {
            *slot = Some(label());
        }
    };
    for m in 0..root.meshes.len() {
        let mesh = super::meshes::mesh_name(root, m);
        for (p, primitive) in mesh_primitives(root, m).iter().enumerate() {
            for (semantic, index) in &primitive.attributes {
                set(index.value(), &|| {
                    format!("{} of {mesh} primitive {p}", semantic_name(semantic))
                });
            }
            if let Some(indices) = primitive.indices {
                set(indices.value(), &|| format!("indices of {mesh} primitive {p}"));
            }
        }
    }
    for (s, skin) in root.skins.iter().enumerate() {
        if let Some(ibm) = skin.inverse_bind_matrices {
            set(ibm.value(), &|| {
                format!("inverseBindMatrices of {}", super::skeleton::skin_name(root, s))
            });
        }
    }
    for (a, animation) in root.animations.iter().enumerate() {
        let name = super::clips::animation_name(root, a);
        for (s, sampler) in animation.samplers.iter().enumerate() {
            set(sampler.input.value(), &|| format!("input of {name} sampler {s}"));
            set(sampler.output.value(), &|| format!("output of {name} sampler {s}"));
        }
    }
    labels
}

/// The primitives of mesh `m`, or none when it does not exist.
fn mesh_primitives(root: &json::Root, m: usize) -> &[json::mesh::Primitive] {
    root.meshes.get(m).map_or(&[], |mesh| mesh.primitives.as_slice())
}

/// Reads and checks every accessor: ranges, formats, finite floats and declared bounds.
///
/// # Errors
///
/// [`Error::Invalid`] naming the first accessor at fault.
pub(super) fn read_all_accessors(src: &Source<'_>) -> Result<Vec<Option<AccessorData>>> {
    let mut out = Vec::with_capacity(src.root.accessors.len());
    for index in 0..src.root.accessors.len() {
        let data = src.read(index)?;
        if let Some(a) = &data {
            check_accessor_data(src, a)?;
        }
        out.push(data);
    }
    Ok(out)
}

/// Checks an accessor's floats and its `min`/`max` against its data.
fn check_accessor_data(src: &Source<'_>, a: &AccessorData) -> Result<()> {
    let object = || src.accessor_name(a.index);
    let json = src
        .root
        .accessors
        .get(a.index)
        .ok_or_else(|| Error::invalid(object(), "does not exist"))?;
    let components = a.components();
    let bounds = |value: &Option<json::Value>, what: &str| -> Result<Option<Vec<f64>>> {
        let Some(value) = value else { return Ok(None) };
        let list = value
            .as_array()
            .filter(|l| l.len() == components)
            .and_then(|l| l.iter().map(json::Value::as_f64).collect::<Option<Vec<f64>>>())
            .ok_or_else(|| Error::invalid(object(), format!("{what} must be an array of {components} numbers")))?;
        Ok(Some(list))
    };
    let min = bounds(&json.min, "min")?;
    let max = bounds(&json.max, "max")?;
    if !a.has_data {
        // The validator checks data only when there is some: zero-filled accessors are exempt.
        return Ok(());
    }
    if a.component_type == ComponentType::F32
        && let Some((i, v)) = a.raw().iter().enumerate().find(|(_, v)| !v.is_finite())
    {
        return Err(Error::invalid(
            object(),
            format!(
                "element {} component {} is {v}, not a finite number",
                i / components,
                i % components
            ),
        ));
    }
    for (declared, is_min) in [(min, true), (max, false)] {
        let Some(declared) = declared else { continue };
        for (c, &d) in declared.iter().enumerate() {
            let column = a.raw().iter().skip(c).step_by(components).copied();
            let actual = if is_min {
                column.fold(f64::INFINITY, f64::min)
            } else {
                column.fold(f64::NEG_INFINITY, f64::max)
            };
            if (d - actual).abs() > BOUNDS_TOLERANCE * actual.abs().max(1.0) {
                return Err(Error::invalid(
                    object(),
                    format!(
                        "declared {} {d} of component {c} does not match the data's {} {actual}",
                        if is_min { "min" } else { "max" },
                        if is_min { "minimum" } else { "maximum" },
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Checks every node and scene: references, `skin` without `mesh`, `matrix` with TRS, finite transforms,
/// unit rotations, and scene nodes that are not roots.
///
/// # Errors
///
/// [`Error::Invalid`] naming the first node or scene at fault.
pub(super) fn check_nodes_and_scenes(src: &Source<'_>) -> Result<()> {
    let root = &src.root;
    for (i, node) in root.nodes.iter().enumerate() {
        let object = || node_name(root, i);
        if let Some(mesh) = node.mesh
            && mesh.value() >= root.meshes.len()
        {
            return Err(Error::invalid(
                object(),
                format!("refers to mesh {}, which does not exist", mesh.value()),
            ));
        }
        if let Some(skin) = node.skin {
            if skin.value() >= root.skins.len() {
                return Err(Error::invalid(
                    object(),
                    format!("refers to skin {}, which does not exist", skin.value()),
                ));
            }
            if node.mesh.is_none() {
                return Err(Error::invalid(object(), "has a skin but no mesh"));
            }
        }
        if let Some(m) = node.matrix {
            if node.translation.is_some() || node.rotation.is_some() || node.scale.is_some() {
                return Err(Error::invalid(
                    object(),
                    "has both a matrix and translation, rotation or scale",
                ));
            }
            if m.iter().any(|v| !v.is_finite()) {
                return Err(Error::invalid(object(), "matrix is not finite"));
            }
        }
        let finite = |v: &[f32]| v.iter().all(|x| x.is_finite());
        if !node.translation.is_none_or(|t| finite(&t))
            || !node.scale.is_none_or(|s| finite(&s))
            || !node.rotation.is_none_or(|r| finite(&r.0))
        {
            return Err(Error::invalid(object(), "translation, rotation or scale is not finite"));
        }
        if let Some(r) = node.rotation {
            let len = glam::Vec4::from_array(r.0).length();
            if (len - 1.0).abs() > UNIT_QUATERNION_TOLERANCE {
                return Err(Error::invalid(object(), format!("rotation has length {len}, not 1")));
            }
        }
    }
    if let Some(scene) = root.scene
        && scene.value() >= root.scenes.len()
    {
        return Err(Error::invalid(
            "glTF JSON",
            format!("default scene {} does not exist", scene.value()),
        ));
    }
    for (s, scene) in root.scenes.iter().enumerate() {
        for node in &scene.nodes {
            let n = node.value();
            if n >= root.nodes.len() {
                return Err(Error::invalid(
                    format!("scene {s}"),
                    format!("refers to node {n}, which does not exist"),
                ));
            }
            if let Some(parent) = src.hierarchy.parent(n) {
                return Err(Error::invalid(
                    format!("scene {s}"),
                    format!(
                        "lists {} as a root node, but it is a child of node {parent}",
                        node_name(root, n)
                    ),
                ));
            }
        }
    }
    Ok(())
}
