//! Writes the rig, mesh and clips as one binary glTF 2.0 (`.glb`) file.
//!
//! The JSON is built with `serde_json` maps, which sort their keys, and every float is written as the exact
//! decimal of the stored `f32`, so the output is byte-for-byte reproducible.
//! The binary chunk holds tightly packed, 4-byte aligned buffer views: vertex attributes and indices (with
//! their buffer targets), then the inverse bind matrices and the animation keys.

use serde_json::{Value, json};

use super::clips::{Clip, Values};
use super::mesh::Mesh;
use super::rig::Rig;

/// The `asset.generator` string.
pub const GENERATOR: &str = "crowd xtask gen-assets";

/// The name of the mesh, its node and its material.
pub const NAME: &str = "crowd_character";

/// The glTF component type of 32-bit floats.
const FLOAT: u32 = 5126;
/// The glTF component type of 16-bit unsigned integers.
const UNSIGNED_SHORT: u32 = 5123;
/// The glTF component type of bytes.
const UNSIGNED_BYTE: u32 = 5121;

/// The buffer view target of vertex attributes.
const ARRAY_BUFFER: u32 = 34962;
/// The buffer view target of indices.
const ELEMENT_ARRAY_BUFFER: u32 = 34963;

/// The binary chunk being laid out, with its buffer views and accessors.
#[derive(Default)]
struct Bin {
    data: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

/// An accessor's element type and component type.
struct Layout {
    kind: &'static str,
    component: u32,
    normalized: bool,
}

impl Bin {
    /// Appends `bytes` as a new buffer view at a 4-byte aligned offset and returns its index.
    fn view(&mut self, bytes: &[u8], target: Option<u32>) -> usize {
        while !self.data.len().is_multiple_of(4) {
            self.data.push(0);
        }
        let mut view = json!({ "buffer": 0, "byteOffset": self.data.len(), "byteLength": bytes.len() });
        if let Some(target) = target {
            view["target"] = json!(target);
        }
        self.data.extend_from_slice(bytes);
        self.views.push(view);
        self.views.len() - 1
    }

    /// Appends `bytes` as a buffer view with one accessor over all of it, and returns the accessor's index.
    fn accessor(
        &mut self,
        bytes: &[u8],
        count: usize,
        layout: Layout,
        target: Option<u32>,
        bounds: Option<(Value, Value)>,
    ) -> usize {
        let view = self.view(bytes, target);
        let mut accessor =
            json!({ "bufferView": view, "componentType": layout.component, "count": count, "type": layout.kind });
        if layout.normalized {
            accessor["normalized"] = json!(true);
        }
        if let Some((min, max)) = bounds {
            accessor["min"] = min;
            accessor["max"] = max;
        }
        self.accessors.push(accessor);
        self.accessors.len() - 1
    }

    /// Appends an accessor of `f32` vectors of `N` components.
    fn floats<const N: usize>(
        &mut self,
        values: &[[f32; N]],
        kind: &'static str,
        target: Option<u32>,
        bounds: bool,
    ) -> usize {
        let bytes: Vec<u8> = values.iter().flatten().flat_map(|v| v.to_le_bytes()).collect();
        let bounds = bounds.then(|| {
            let mut min = [f32::INFINITY; N];
            let mut max = [f32::NEG_INFINITY; N];
            for v in values {
                for k in 0..N {
                    min[k] = min[k].min(v[k]);
                    max[k] = max[k].max(v[k]);
                }
            }
            (floats_json(&min), floats_json(&max))
        });
        self.accessor(
            &bytes,
            values.len(),
            Layout {
                kind,
                component: FLOAT,
                normalized: false,
            },
            target,
            bounds,
        )
    }
}

/// A JSON array holding the exact values of `values`.
fn floats_json(values: &[f32]) -> Value {
    Value::Array(values.iter().map(|&v| json!(f64::from(v))).collect())
}

/// Builds the `.glb` bytes.
pub fn write(rig: &Rig, mesh: &Mesh, clips: &[Clip]) -> Vec<u8> {
    let mut bin = Bin::default();
    let count = mesh.positions.len();
    let position = bin.floats(&mesh.positions, "VEC3", Some(ARRAY_BUFFER), true);
    let normal = bin.floats(&mesh.normals, "VEC3", Some(ARRAY_BUFFER), false);
    let color = bin.accessor(
        mesh.colors.as_flattened(),
        count,
        Layout {
            kind: "VEC4",
            component: UNSIGNED_BYTE,
            normalized: true,
        },
        Some(ARRAY_BUFFER),
        None,
    );
    let joints = bin.accessor(
        mesh.joints.as_flattened(),
        count,
        Layout {
            kind: "VEC4",
            component: UNSIGNED_BYTE,
            normalized: false,
        },
        Some(ARRAY_BUFFER),
        None,
    );
    let weights = bin.floats(&mesh.weights, "VEC4", Some(ARRAY_BUFFER), false);
    let index_bytes: Vec<u8> = mesh.indices.iter().flat_map(|i| i.to_le_bytes()).collect();
    let indices = bin.accessor(
        &index_bytes,
        mesh.indices.len(),
        Layout {
            kind: "SCALAR",
            component: UNSIGNED_SHORT,
            normalized: false,
        },
        Some(ELEMENT_ARRAY_BUFFER),
        None,
    );
    let inverse_binds: Vec<[f32; 16]> = (0..rig.len())
        .map(|j| {
            let p = rig.stored_position(j);
            let mut m = [0.0; 16];
            for k in 0..4 {
                m[5 * k] = 1.0;
            }
            m[12..15].copy_from_slice(&[-p.x as f32, -p.y as f32, -p.z as f32]);
            m
        })
        .collect();
    let inverse_bind_matrices = bin.floats(&inverse_binds, "MAT4", None, false);
    let animations: Vec<Value> = clips.iter().map(|clip| animation(&mut bin, clip)).collect();

    let mut nodes: Vec<Value> = (0..rig.len())
        .map(|j| {
            let mut node = json!({ "name": rig.joints[j].name, "translation": floats_json(&rig.local_translation(j)) });
            let children = rig.children(j);
            if !children.is_empty() {
                node["children"] = json!(children);
            }
            node
        })
        .collect();
    let mesh_node = nodes.len();
    nodes.push(json!({ "name": NAME, "mesh": 0, "skin": 0 }));
    let root = json!({
        "asset": { "version": "2.0", "generator": GENERATOR },
        "scene": 0,
        "scenes": [{ "name": NAME, "nodes": [0, mesh_node] }],
        "nodes": nodes,
        "skins": [{
            "name": "crowd_skeleton",
            "inverseBindMatrices": inverse_bind_matrices,
            "skeleton": 0,
            "joints": (0..rig.len()).collect::<Vec<_>>(),
        }],
        "meshes": [{
            "name": NAME,
            "primitives": [{
                "attributes": {
                    "POSITION": position,
                    "NORMAL": normal,
                    "COLOR_0": color,
                    "JOINTS_0": joints,
                    "WEIGHTS_0": weights,
                },
                "indices": indices,
                "material": 0,
                "mode": 4,
            }],
        }],
        "materials": [{
            "name": NAME,
            "pbrMetallicRoughness": { "baseColorFactor": [1.0, 1.0, 1.0, 1.0], "metallicFactor": 0.0, "roughnessFactor": 0.8 },
        }],
        "animations": animations,
        "buffers": [{ "byteLength": bin.data.len().next_multiple_of(4) }],
        "bufferViews": bin.views,
        "accessors": bin.accessors,
    });
    let json = serde_json::to_vec(&root).expect("a JSON value always serializes");
    glb(json, bin.data)
}

/// Lays out one clip's keys and returns its glTF animation.
fn animation(bin: &mut Bin, clip: &Clip) -> Value {
    let times: Vec<[f32; 1]> = clip.times().iter().map(|&t| [t]).collect();
    let input = bin.floats(&times, "SCALAR", None, true);
    let mut channels = Vec::new();
    let mut samplers = Vec::new();
    for channel in &clip.channels {
        let (output, path) = match &channel.values {
            Values::Translation(v) => (bin.floats(v, "VEC3", None, false), "translation"),
            Values::Rotation(v) => (bin.floats(v, "VEC4", None, false), "rotation"),
        };
        channels.push(json!({ "sampler": samplers.len(), "target": { "node": channel.joint, "path": path } }));
        samplers.push(json!({ "input": input, "output": output, "interpolation": "LINEAR" }));
    }
    json!({ "name": clip.name, "channels": channels, "samplers": samplers })
}

/// Frames the JSON and binary chunks as a `.glb`: the JSON padded with spaces and the binary with zeros.
pub(crate) fn glb(mut json: Vec<u8>, mut bin: Vec<u8>) -> Vec<u8> {
    json.resize(json.len().next_multiple_of(4), b' ');
    bin.resize(bin.len().next_multiple_of(4), 0);
    let total = 12 + 8 + json.len() + 8 + bin.len();
    let word = |n: usize| u32::try_from(n).expect("the file is smaller than 4 GiB").to_le_bytes();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&word(total));
    out.extend_from_slice(&word(json.len()));
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&json);
    out.extend_from_slice(&word(bin.len()));
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(&bin);
    out
}
