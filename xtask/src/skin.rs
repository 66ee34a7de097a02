//! `cargo xtask skin MODEL --clip N --times LIST --out FILE [--path exact|runtime]`: world-space skinned vertex
//! positions of a glTF model at given times of one animation, written as JSON for GPU tests and bakers.
//!
//! # Output
//!
//! ```json
//! {"model": "Fox.glb", "clip": {"index": 0, "name": "Survey", "duration": 3.4166667},
//!  "times": [0.0, 0.5],
//!  "meshes": [{"node": 2, "mesh": 0, "primitive": 0, "vertexCount": 1728, "positions": [[x0, y0, z0, x1, ...], [...]]}]}
//! ```
//!
//! - `times` are the times as given; each is evaluated at `t.rem_euclid(duration)` (at 0 when the duration is 0).
//! - `meshes` has one entry per (skinned node, primitive), nodes in the depth-first order of the default scene
//!   ([`anim_pose::Model::default_scene_nodes`], children in the order listed), primitives in mesh order.
//!   A file without a scene lists its skinned nodes in node order.
//! - `positions` holds one flat `[x, y, z, ...]` array of `3 · vertexCount` f32 values per time.
//!
//! # Semantics
//!
//! - World space follows glTF: a joint's world matrix is [`anim_pose::Skeleton::root_transform`] times its model
//!   matrix, so it includes all the joint's ancestors, and the transform of the skinned mesh's node is ignored.
//! - `N` is the glTF animation index. A file's clips are per (animation, skeleton): each skinned node uses the clip
//!   of animation `N` for its skeleton, or the rest pose when animation `N` does not animate that skeleton.
//!   `duration` is the animation's duration, which all its clips share.
//! - `exact` evaluates the glTF keys directly ([`anim_pose::Clip::sample_local_pose`],
//!   [`anim_pose::Skeleton::local_to_model`]); `runtime` goes through [`anim_pose::RuntimeClip::build`] with the
//!   default options, [`anim_pose::SamplingJob`] and [`anim_pose::LocalToModelJob`].
//!   Both skin with [`skin_pack::skin_positions_reference`].
//!
//! # How far apart the two paths may be
//!
//! A runtime clip meets the default [`anim_pose::ErrorBudget`]: every joint's local translation is within
//! `ε_t = 0.1 mm` and its local rotation within `ε_r = 0.001 rad` of the exact evaluation.
//! A joint's world matrix is the product of the local matrices along its chain, so, to first order, its error is
//! the sum of the errors that each joint of the chain contributes, each carried to world space by the parent's
//! world transform:
//! - a translation error at joint `i` moves every point it carries by at most `ε_t · s_i`, where `s_i` is the largest
//!   scale (column length) of the linear part of the parent's world matrix;
//! - a rotation error at joint `i` turns the points it carries about the joint's origin, moving a point at world
//!   distance `r` by at most `ε_r · κ_i · r` (a chord is shorter than its arc), where `κ_i` is the ratio of the largest
//!   to the smallest column length of the parent's linear part (1 for rigid or uniformly scaled parents; exact when
//!   the columns are orthogonal, as for any rotation times scale).
//!
//! A skinned vertex is a weighted average of its joints' transforms of it (weights that sum to 1), so it moves by
//! at most the largest of its joints' errors. With `D` the number of joints on the deepest chain, `S` and `κ` the
//! largest `s_i` and `κ_i`, and `R` the diagonal of the world-space box around all skinned vertices and joint
//! origins (a lever arm is never longer), every vertex satisfies
//!
//! `|v_runtime − v_exact| ≤ D · (ε_t · S + ε_r · κ · R) · (1 + D · ε_r) + 32 · D · ε_f32 · M`,
//!
//! where the factor `1 + D · ε_r` covers the second-order terms (the runtime chain above joint `i` is itself
//! rotated by at most `D · ε_r`) and the last term covers f32 rounding of the two matrix chains, with `M` the largest
//! absolute world coordinate. The test `exact_and_runtime_agree_within_the_budget` checks this on the default
//! character and on CesiumMan and Fox. The budget bounds rotation and translation only, so the bound assumes that
//! runtime clips reproduce scale keys exactly; the test would catch a model where they do not.

use std::path::Path;

use anim_pose::{
    Clip, LocalToModelJob, Model, RuntimeClip, RuntimeClipOptions, SamplingJob, Skeleton, SkinBinding, SoaTransform,
    Transform, num_soa_joints, pack_soa,
};
use anyhow::{Context, Result, bail};
use glam::{Affine3A, Mat4, Vec3};
use serde::Serialize;

/// Which evaluation path produces the poses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum EvalPath {
    /// The glTF keys, evaluated exactly.
    Exact,
    /// Runtime clips built with the default options, sampled with `SamplingJob` and `LocalToModelJob`.
    Runtime,
}

/// The JSON document that `cargo xtask skin` writes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SkinReport {
    /// The model's file name.
    pub model: String,
    /// The animation evaluated.
    pub clip: ClipInfo,
    /// The times requested, in seconds, before wrapping.
    pub times: Vec<f32>,
    /// One entry per (skinned node, primitive), in scene order.
    pub meshes: Vec<MeshPositions>,
}

/// The animation evaluated.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClipInfo {
    /// The glTF animation index.
    pub index: usize,
    /// The animation's name.
    pub name: String,
    /// The animation's duration in seconds.
    pub duration: f32,
}

/// The skinned positions of one primitive drawn by one node.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MeshPositions {
    /// The glTF node that draws the primitive.
    pub node: usize,
    /// The glTF mesh index.
    pub mesh: usize,
    /// The primitive index within the mesh.
    pub primitive: usize,
    /// The number of vertices.
    pub vertex_count: usize,
    /// One flat `[x, y, z, ...]` array of world-space positions per time.
    pub positions: Vec<Vec<f32>>,
}

/// Runs the command: imports `model_path`, skins it at `times` (a comma-separated list) of animation `clip`, and
/// writes the JSON to `out`.
pub fn run(model_path: &Path, clip: usize, times: &str, out: &Path, path: EvalPath) -> Result<()> {
    let times = parse_times(times)?;
    let model =
        anim_pose::import_file(model_path).with_context(|| format!("cannot import {}", model_path.display()))?;
    let name = model_path.file_name().map_or_else(
        || model_path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let report = skin_model(&model, &name, clip, &times, path)?;
    let json = serde_json::to_string(&report).context("cannot serialize the positions")?;
    std::fs::write(out, json).with_context(|| format!("cannot write {}", out.display()))?;
    println!(
        "wrote {}: {} primitives at {} times of animation {} '{}'",
        out.display(),
        report.meshes.len(),
        report.times.len(),
        report.clip.index,
        report.clip.name
    );
    Ok(())
}

/// Parses a comma-separated list of finite times in seconds, for example `0,0.5,1.25`.
///
/// # Errors
///
/// When the list is empty, or an item is not a number or not finite; the message names the item.
pub fn parse_times(list: &str) -> Result<Vec<f32>> {
    let mut times = Vec::new();
    for (i, item) in list.split(',').enumerate() {
        let item = item.trim();
        let t: f32 = item
            .parse()
            .with_context(|| format!("--times item {i} ('{item}') is not a number"))?;
        if !t.is_finite() {
            bail!("--times item {i} ('{item}') is not a finite time");
        }
        times.push(t);
    }
    Ok(times)
}

/// `t` wrapped into the clip: `t.rem_euclid(duration)`, or 0 when the duration is 0.
pub fn wrap_time(t: f32, duration: f32) -> f32 {
    if duration > 0.0 { t.rem_euclid(duration) } else { 0.0 }
}

/// Skins every (skinned node, primitive) of `model` at `times` of glTF animation `animation`.
///
/// # Errors
///
/// When `animation` animates no skeleton of the model (it is out of range), a time is not finite, or a runtime
/// clip cannot be built.
pub fn skin_model(
    model: &Model,
    file_name: &str,
    animation: usize,
    times: &[f32],
    path: EvalPath,
) -> Result<SkinReport> {
    let Some(first) = model.clips.iter().find(|c| c.animation == animation) else {
        let count = model.clips.iter().map(|c| c.animation + 1).max().unwrap_or(0);
        bail!(
            "--clip {animation} is out of range: {file_name} has {count} animations that animate a skeleton (0..{count})"
        );
    };
    if let Some(t) = times.iter().find(|t| !t.is_finite()) {
        bail!("time {t} is not finite");
    }
    let mut posers = model
        .skeletons
        .iter()
        .enumerate()
        .map(|(s, sk)| {
            let clip = model.clips.iter().find(|c| c.animation == animation && c.skeleton == s);
            Poser::new(sk, clip, path)
        })
        .collect::<Result<Vec<_>>>()?;
    let bindings = scene_bindings(model);
    let mut meshes: Vec<MeshPositions> = bindings
        .iter()
        .flat_map(|b| {
            model.meshes[b.meshes.clone()].iter().map(|m| MeshPositions {
                node: b.node,
                mesh: m.mesh,
                primitive: m.primitive,
                vertex_count: m.vertex_count(),
                positions: Vec::with_capacity(times.len()),
            })
        })
        .collect();
    let mut skinned = Vec::new();
    for &t in times {
        let t = wrap_time(t, first.duration);
        for poser in &mut posers {
            poser.pose(t)?;
        }
        let mut entry = meshes.iter_mut();
        for b in &bindings {
            let palette = &posers[b.skeleton].palette;
            for mesh in &model.meshes[b.meshes.clone()] {
                skinned.clear();
                skinned.resize(mesh.vertex_count(), Vec3::ZERO);
                skin_pack::skin_positions_reference(
                    palette,
                    &mesh.positions,
                    &mesh.joints,
                    &mesh.weights,
                    &mut skinned,
                )
                .with_context(|| format!("cannot skin {} for node {}", mesh.name, b.node))?;
                let out = entry.next().context("one output entry per primitive")?;
                out.positions.push(skinned.iter().flat_map(|p| p.to_array()).collect());
            }
        }
    }
    Ok(SkinReport {
        model: file_name.to_owned(),
        clip: ClipInfo {
            index: animation,
            name: first.name.clone(),
            duration: first.duration,
        },
        times: times.to_vec(),
        meshes,
    })
}

/// The skinned nodes in the depth-first order of the default scene; in node order when the file has no scene.
fn scene_bindings(model: &Model) -> Vec<&SkinBinding> {
    if model.default_scene_nodes.is_empty() {
        let mut all: Vec<&SkinBinding> = model.bindings.iter().collect();
        all.sort_by_key(|b| b.node);
        return all;
    }
    model
        .default_scene_nodes
        .iter()
        .filter_map(|&n| model.bindings.iter().find(|b| b.node == n))
        .collect()
}

/// Poses one skeleton at a time and keeps its world-space palette, with buffers reused across times.
struct Poser<'a> {
    skeleton: &'a Skeleton,
    /// The clip of the chosen animation for this skeleton; `None` for the rest pose.
    clip: Option<&'a Clip>,
    /// The runtime clip, on the runtime path.
    runtime: Option<RuntimeClip>,
    /// `Skeleton::root_transform` as an affine matrix.
    root: Affine3A,
    local: Vec<Transform>,
    model_mat4: Vec<Mat4>,
    soa: Vec<SoaTransform>,
    /// World-space joint matrices (model space on the exact path).
    model: Vec<Affine3A>,
    /// The world-space skinning palette at the last time posed.
    palette: Vec<Affine3A>,
    path: EvalPath,
}

impl<'a> Poser<'a> {
    fn new(skeleton: &'a Skeleton, clip: Option<&'a Clip>, path: EvalPath) -> Result<Self> {
        let runtime = match (path, clip) {
            (EvalPath::Runtime, Some(c)) => Some(
                RuntimeClip::build(c, skeleton, &RuntimeClipOptions::default())
                    .with_context(|| format!("cannot build a runtime clip of '{}'", c.name))?,
            ),
            _ => None,
        };
        let n = skeleton.joint_count();
        Ok(Self {
            skeleton,
            clip,
            runtime,
            root: Affine3A::from_mat4(skeleton.root_transform),
            local: skeleton.rest_pose.clone(),
            model_mat4: vec![Mat4::IDENTITY; n],
            soa: vec![SoaTransform::IDENTITY; num_soa_joints(n)],
            model: vec![Affine3A::IDENTITY; n],
            palette: vec![Affine3A::IDENTITY; skeleton.skin_joint_count()],
            path,
        })
    }

    /// Poses the skeleton at `t` (already wrapped) and writes its world-space palette.
    fn pose(&mut self, t: f32) -> Result<()> {
        let sk = self.skeleton;
        match self.path {
            EvalPath::Exact => {
                match self.clip {
                    Some(c) => c.sample_local_pose(sk, t, &mut self.local)?,
                    None => self.local.copy_from_slice(&sk.rest_pose),
                }
                sk.local_to_model(&self.local, &mut self.model_mat4)?;
                for (a, m) in self.model.iter_mut().zip(&self.model_mat4) {
                    *a = Affine3A::from_mat4(*m);
                }
                skin_pack::palette_from_model(sk, &self.model, Some(&self.root), &mut self.palette)?;
            }
            EvalPath::Runtime => {
                match &self.runtime {
                    Some(clip) => SamplingJob {
                        clip,
                        time: t,
                        output: &mut self.soa,
                    }
                    .run()?,
                    None => {
                        pack_soa(&sk.rest_pose, &mut self.soa).context("the SoA pose has the skeleton's size")?;
                    }
                }
                LocalToModelJob {
                    skeleton: sk,
                    input: &self.soa,
                    output: &mut self.model,
                    from: None,
                    root: Some(&self.root),
                }
                .run()?;
                skin_pack::palette_from_model(sk, &self.model, None, &mut self.palette)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use anim_pose::Aabb;
    use serde_json::{Value, json};

    use super::*;

    /// The default character, relative to this crate.
    const CHARACTER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/crowd_character.glb");

    fn character() -> Model {
        anim_pose::import_file(CHARACTER).expect("the default character imports")
    }

    /// A model from the sample assets, following the convention of `crates/anim-pose/tests/common/mod.rs`:
    /// a loud skip when `CROWD_SAMPLE_ASSETS` is unset outside CI, a failure when it is unset on CI.
    fn sample_model(name: &str) -> Option<(Model, String)> {
        const ASSETS_VAR: &str = "CROWD_SAMPLE_ASSETS";
        let Some(dir) = std::env::var_os(ASSETS_VAR) else {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "{ASSETS_VAR} is not set on CI: the sample-asset tests cannot run (set it to the shared assets folder)"
            );
            // The test harness captures `eprintln!` of passing tests; writing to the stderr handle itself
            // keeps the skip visible in every run.
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                format!("skipped: sample assets not found (set {ASSETS_VAR})\n").as_bytes(),
            );
            return None;
        };
        let path = PathBuf::from(dir).join("gltf").join(name).join(format!("{name}.glb"));
        let model = anim_pose::import_file(&path).unwrap_or_else(|e| panic!("cannot import {}: {e}", path.display()));
        Some((model, format!("{name}.glb")))
    }

    /// Every glTF animation index that animates a skeleton of `model`, in order.
    fn animations(model: &Model) -> Vec<usize> {
        let mut a: Vec<usize> = model.clips.iter().map(|c| c.animation).collect();
        a.dedup();
        a
    }

    #[test]
    fn times_parse_and_reject_garbage() {
        assert_eq!(parse_times("0, 0.5,1.25,-3").expect("valid"), [0.0, 0.5, 1.25, -3.0]);
        for (list, needle) in [
            ("nan", "not a finite time"),
            ("0,inf", "item 1 ('inf') is not a finite time"),
            ("0.5,abc", "item 1 ('abc') is not a number"),
            ("", "item 0 ('') is not a number"),
            ("1,,2", "item 1 ('') is not a number"),
        ] {
            let e = format!("{:#}", parse_times(list).expect_err(list));
            assert!(e.contains(needle), "{list}: {e}");
        }
    }

    #[test]
    fn times_wrap_modulo_the_duration() {
        assert_eq!(wrap_time(1.25, 1.0), 0.25);
        assert_eq!(wrap_time(-0.75, 1.0), 0.25);
        assert_eq!(wrap_time(0.5, 1.0), 0.5);
        assert_eq!(wrap_time(7.0, 0.0), 0.0);
    }

    #[test]
    fn json_has_the_documented_shape() {
        let model = character();
        let times = [0.0, 0.3, 5.0];
        let report = skin_model(&model, "crowd_character.glb", 0, &times, EvalPath::Exact).expect("valid");
        let value = serde_json::to_value(&report).expect("serializes");
        let keys = |v: &Value| -> Vec<String> {
            let mut k: Vec<String> = v.as_object().expect("an object").keys().cloned().collect();
            k.sort();
            k
        };
        assert_eq!(keys(&value), ["clip", "meshes", "model", "times"]);
        assert_eq!(value["model"], "crowd_character.glb");
        assert_eq!(keys(&value["clip"]), ["duration", "index", "name"]);
        assert_eq!(value["clip"]["index"], 0);
        assert_eq!(value["clip"]["name"], model.clips[0].name.as_str());
        assert_eq!(value["times"], json!([0.0, 0.3f32, 5.0]));
        let meshes = value["meshes"].as_array().expect("an array");
        let expected: usize = model.bindings.iter().map(|b| b.meshes.len()).sum();
        assert_eq!(meshes.len(), expected);
        assert!(!meshes.is_empty());
        for m in meshes {
            assert_eq!(keys(m), ["mesh", "node", "positions", "primitive", "vertexCount"]);
            let n = m["vertexCount"].as_u64().expect("a count") as usize;
            let positions = m["positions"].as_array().expect("an array");
            assert_eq!(positions.len(), times.len());
            for p in positions {
                assert_eq!(p.as_array().expect("an array").len(), 3 * n);
            }
        }
        // Floats are written as plain f32 values, shortest round trip.
        let text = serde_json::to_string(&report).expect("serializes");
        assert!(text.contains("\"times\":[0.0,0.3,5.0]"), "{}", &text[..200]);
    }

    #[test]
    fn bad_clip_index_is_an_error() {
        let model = character();
        let count = animations(&model).len();
        let e = skin_model(&model, "crowd_character.glb", count, &[0.0], EvalPath::Exact).expect_err("out of range");
        let text = format!("{e:#}");
        assert!(text.contains(&format!("--clip {count} is out of range")), "{text}");
        assert!(text.contains(&format!("has {count} animations")), "{text}");
    }

    #[test]
    fn command_writes_the_file_and_fails_cleanly() {
        let out = std::env::temp_dir().join(format!("xtask-skin-test-{}.json", std::process::id()));
        run(Path::new(CHARACTER), 1, "0.25,0.5", &out, EvalPath::Exact).expect("the command runs");
        let text = std::fs::read_to_string(&out).expect("the file was written");
        std::fs::remove_file(&out).expect("the file can be removed");
        let value: Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(value["clip"]["index"], 1);
        let e = run(Path::new(CHARACTER), 0, "0,nan", &out, EvalPath::Exact).expect_err("NaN");
        assert!(format!("{e:#}").contains("not a finite time"), "{e:#}");
        assert!(!out.exists(), "nothing is written on error");
    }

    #[test]
    fn times_are_taken_modulo_the_duration() {
        let model = character();
        for animation in animations(&model) {
            let report = skin_model(&model, "c", animation, &[0.0], EvalPath::Exact).expect("valid");
            let d = report.clip.duration;
            let t = 0.3 * d;
            let times = [t, t + d, t - d, t + 3.0 * d];
            let report = skin_model(&model, "c", animation, &times, EvalPath::Exact).expect("valid");
            for m in &report.meshes {
                for p in &m.positions[1..] {
                    // The wrapped times differ from `t` by a few ulps of the duration at most.
                    let diff = p
                        .iter()
                        .zip(&m.positions[0])
                        .map(|(a, b)| (a - b).abs())
                        .fold(0.0, f32::max);
                    assert!(diff < 1e-4, "animation {animation}: {diff} m");
                }
            }
        }
    }

    /// Splits a little-endian f32 or u16 list into bytes.
    fn bytes_of<T: Copy, const N: usize>(values: &[T], to_bytes: fn(T) -> [u8; N]) -> Vec<u8> {
        values.iter().flat_map(|&v| to_bytes(v)).collect()
    }

    /// A small GLB with two skins, three skinned nodes (one drawing a two-primitive mesh) and one animation that
    /// animates the first skin only. Node indices are chosen so that depth-first order differs from node order.
    ///
    /// - Scene nodes `[3, 0, 4, 6]`; node 0 has children `[2, 1]`; node 6 has child 5.
    /// - Nodes 1 and 2 draw mesh 0 with skin 0 (joint node 4); node 3 draws mesh 1 (two primitives) with skin 1
    ///   (joint node 5, translated by `(0, 2, 0)` under node 6, translated by `(0, 0, 3)`).
    ///   Node 3 itself is translated by `(100, 0, 0)`, which glTF ignores for skinned meshes.
    /// - Animation 0 translates joint 4 linearly from `(0, 0, 0)` at 0 s to `(1, 0, 0)` at 1 s.
    fn two_skin_glb() -> Vec<u8> {
        let mut bin = Vec::new();
        let mut views = Vec::new();
        let mut push = |bytes: Vec<u8>, bin: &mut Vec<u8>| {
            views.push(json!({"buffer": 0, "byteOffset": bin.len(), "byteLength": bytes.len()}));
            bin.extend_from_slice(&bytes);
            while !bin.len().is_multiple_of(4) {
                bin.push(0);
            }
            views.len() - 1
        };
        let positions = push(
            bytes_of(&[0.0f32, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0], f32::to_le_bytes),
            &mut bin,
        );
        let joints = push(vec![0u8; 12], &mut bin);
        let weights = push(
            bytes_of(
                &[1.0f32, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0],
                f32::to_le_bytes,
            ),
            &mut bin,
        );
        let indices = push(bytes_of(&[0u16, 1, 2], u16::to_le_bytes), &mut bin);
        let key_times = push(bytes_of(&[0.0f32, 1.0], f32::to_le_bytes), &mut bin);
        let key_values = push(bytes_of(&[0.0f32, 0.0, 0.0, 1.0, 0.0, 0.0], f32::to_le_bytes), &mut bin);
        let attributes = json!({"POSITION": 0, "JOINTS_0": 1, "WEIGHTS_0": 2});
        let primitive = json!({"attributes": attributes, "indices": 3});
        let doc = json!({
            "asset": {"version": "2.0"},
            "scene": 0,
            "scenes": [{"nodes": [3, 0, 4, 6]}],
            "nodes": [
                {"children": [2, 1]},
                {"mesh": 0, "skin": 0},
                {"mesh": 0, "skin": 0},
                {"mesh": 1, "skin": 1, "translation": [100.0, 0.0, 0.0]},
                {"name": "joint4"},
                {"name": "joint5", "translation": [0.0, 2.0, 0.0]},
                {"children": [5], "translation": [0.0, 0.0, 3.0]}
            ],
            "skins": [{"joints": [4]}, {"joints": [5]}],
            "meshes": [{"primitives": [primitive]}, {"primitives": [primitive, primitive]}],
            "accessors": [
                {"bufferView": positions, "componentType": 5126, "count": 3, "type": "VEC3",
                 "min": [0.0, 0.0, 0.0], "max": [1.0, 1.0, 0.0]},
                {"bufferView": joints, "componentType": 5121, "count": 3, "type": "VEC4"},
                {"bufferView": weights, "componentType": 5126, "count": 3, "type": "VEC4"},
                {"bufferView": indices, "componentType": 5123, "count": 3, "type": "SCALAR"},
                {"bufferView": key_times, "componentType": 5126, "count": 2, "type": "SCALAR",
                 "min": [0.0], "max": [1.0]},
                {"bufferView": key_values, "componentType": 5126, "count": 2, "type": "VEC3"}
            ],
            "animations": [{
                "name": "slide",
                "samplers": [{"input": 4, "output": 5}],
                "channels": [{"sampler": 0, "target": {"node": 4, "path": "translation"}}]
            }],
            "bufferViews": views,
            "buffers": [{"byteLength": bin.len()}]
        });
        let mut json_chunk = serde_json::to_vec(&doc).expect("serializes");
        while !json_chunk.len().is_multiple_of(4) {
            json_chunk.push(b' ');
        }
        let total = 12 + 8 + json_chunk.len() + 8 + bin.len();
        let word = |n: usize| u32::try_from(n).expect("small").to_le_bytes();
        let mut glb = Vec::with_capacity(total);
        glb.extend_from_slice(b"glTF");
        glb.extend_from_slice(&word(2));
        glb.extend_from_slice(&word(total));
        glb.extend_from_slice(&word(json_chunk.len()));
        glb.extend_from_slice(b"JSON");
        glb.extend_from_slice(&json_chunk);
        glb.extend_from_slice(&word(bin.len()));
        glb.extend_from_slice(b"BIN\0");
        glb.extend_from_slice(&bin);
        glb
    }

    #[test]
    fn meshes_follow_depth_first_scene_order_in_world_space() {
        let model = anim_pose::import_slice(&two_skin_glb(), None).expect("the test model imports");
        assert_eq!(model.default_scene_nodes, [3, 0, 2, 1, 4, 6, 5]);
        let times = [0.25, 1.25, -0.75];
        let report = skin_model(&model, "two.glb", 0, &times, EvalPath::Exact).expect("valid");
        assert_eq!(
            report.clip,
            ClipInfo {
                index: 0,
                name: "slide".to_owned(),
                duration: 1.0
            }
        );
        let order: Vec<(usize, usize, usize)> = report.meshes.iter().map(|m| (m.node, m.mesh, m.primitive)).collect();
        assert_eq!(order, [(3, 1, 0), (3, 1, 1), (2, 0, 0), (1, 0, 0)]);
        let shifted = |d: [f32; 3]| -> Vec<f32> {
            [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
                .iter()
                .flat_map(|v: &[f32; 3]| [v[0] + d[0], v[1] + d[1], v[2] + d[2]])
                .collect()
        };
        for m in &report.meshes {
            assert_eq!(m.vertex_count, 3);
            // Skin 1 is not animated by animation 0: its mesh stays at the rest pose, in world space (the joint's
            // ancestors count, the skinned node's own transform does not).
            let expected = if m.node == 3 {
                shifted([0.0, 2.0, 3.0])
            } else {
                shifted([0.25, 0.0, 0.0])
            };
            for p in &m.positions {
                assert_eq!(
                    p, &expected,
                    "node {} mesh {} primitive {}",
                    m.node, m.mesh, m.primitive
                );
            }
        }
        let e = skin_model(&model, "two.glb", 1, &times, EvalPath::Exact).expect_err("one animation");
        assert!(
            format!("{e:#}").contains("--clip 1 is out of range: two.glb has 1 animations"),
            "{e:#}"
        );
    }

    /// The bound of the module docs, at one time: `D · (ε_t · S + ε_r · κ · R) · (1 + D · ε_r) + 32 · D · ε_f32 · M`.
    /// `exact` is the exact report at that single time.
    fn agreement_bound(model: &Model, animation: usize, t: f32, exact: &SkinReport) -> f32 {
        let budget = anim_pose::ErrorBudget::default();
        let (mut depth, mut scale, mut kappa) = (0usize, 0.0f32, 1.0f32);
        let mut bounds = Aabb::EMPTY;
        for (s, sk) in model.skeletons.iter().enumerate() {
            let clip = model.clips.iter().find(|c| c.animation == animation && c.skeleton == s);
            let mut poser = Poser::new(sk, clip, EvalPath::Exact).expect("exact posers always build");
            poser.pose(wrap_time(t, exact.clip.duration)).expect("valid");
            let mut depths = vec![0u16; sk.joint_count()];
            sk.depths(&mut depths).expect("sizes match");
            depth = depth.max(usize::from(depths.iter().copied().max().unwrap_or(0)) + 1);
            for (j, &p) in sk.parents.iter().enumerate() {
                let parent = if p == anim_pose::NO_PARENT {
                    poser.root
                } else {
                    poser.root * poser.model[usize::from(p)]
                };
                let lengths = [
                    parent.matrix3.x_axis.length(),
                    parent.matrix3.y_axis.length(),
                    parent.matrix3.z_axis.length(),
                ];
                let (max, min) = (
                    lengths.iter().copied().fold(0.0, f32::max),
                    lengths.iter().copied().fold(f32::INFINITY, f32::min),
                );
                scale = scale.max(max);
                kappa = kappa.max(max / min);
                bounds = bounds.including(poser.root.transform_point3(poser.model[j].translation.into()));
            }
        }
        for m in &exact.meshes {
            for v in m.positions[0].chunks_exact(3) {
                bounds = bounds.including(Vec3::new(v[0], v[1], v[2]));
            }
        }
        let extent = bounds.size().length();
        let largest = bounds.min.abs().max(bounds.max.abs()).max_element();
        let d = depth as f32;
        d * (budget.translation * scale + budget.rotation * kappa * extent) * (1.0 + d * budget.rotation)
            + 32.0 * d * f32::EPSILON * largest
    }

    /// Checks exact against runtime on every animation of `model` at several times; returns a summary line per
    /// animation: the largest difference and the bound.
    fn check_agreement(model: &Model, name: &str) -> Vec<String> {
        let mut lines = Vec::new();
        for animation in animations(model) {
            let duration = skin_model(model, name, animation, &[0.0], EvalPath::Exact)
                .expect("valid")
                .clip
                .duration;
            let mut worst = (0.0f32, f32::INFINITY, 0.0f32);
            for fraction in [0.0, 0.07, 0.2, 0.33, 0.5, 0.61, 0.78, 0.9, 0.999] {
                let t = fraction * duration;
                let exact = skin_model(model, name, animation, &[t], EvalPath::Exact).expect("valid");
                let runtime = skin_model(model, name, animation, &[t], EvalPath::Runtime).expect("runtime clips build");
                let bound = agreement_bound(model, animation, t, &exact);
                for (e, r) in exact.meshes.iter().zip(&runtime.meshes) {
                    assert_eq!((e.node, e.mesh, e.primitive), (r.node, r.mesh, r.primitive));
                    for (i, (a, b)) in e.positions[0]
                        .chunks_exact(3)
                        .zip(r.positions[0].chunks_exact(3))
                        .enumerate()
                    {
                        let diff = (Vec3::from_slice(a) - Vec3::from_slice(b)).length();
                        assert!(
                            diff <= bound,
                            "{name} animation {animation} at {t} s: node {} primitive {} vertex {i} differs by {diff} m, \
                             more than the bound of {bound} m",
                            e.node,
                            e.primitive
                        );
                        if diff > worst.0 {
                            worst = (diff, bound, t);
                        }
                    }
                }
            }
            lines.push(format!(
                "{name} animation {animation} '{}': max exact-vs-runtime difference {:.3e} (at {:.3} s; bound there {:.3e}), in model units",
                model.clips.iter().find(|c| c.animation == animation).map_or("", |c| c.name.as_str()),
                worst.0,
                worst.2,
                worst.1
            ));
        }
        lines
    }

    #[test]
    fn exact_and_runtime_agree_within_the_budget() {
        let model = character();
        assert_eq!(animations(&model).len(), 4, "the default character has four clips");
        let mut lines = check_agreement(&model, "crowd_character.glb");
        for name in ["CesiumMan", "Fox"] {
            if let Some((model, file)) = sample_model(name) {
                lines.extend(check_agreement(&model, &file));
            }
        }
        for line in lines {
            eprintln!("{line}");
        }
    }
}
