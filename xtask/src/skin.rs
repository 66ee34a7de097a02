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
//!   [`anim_pose::Skeleton::local_to_model`]); `runtime` goes through [`anim_pose::RuntimeClip::build_with_vertices`]
//!   with the default options and the virtual vertices of the meshes that the skeleton skins, so that the budget
//!   bounds every skinned vertex in model space, then [`anim_pose::SamplingJob`] and [`anim_pose::LocalToModelJob`].
//!   Both skin with [`skin_pack::skin_positions_reference`].
//!
//! # How far apart the two paths may be
//!
//! A runtime clip meets the default [`anim_pose::ErrorBudget`]: at the times its build measures, every skinned vertex
//! is within `ε_t = 0.1 mm` of the exact pose in model space (before f32 rounding), and every joint's local
//! translation within `ε_t` and its local rotation within `ε_r = 0.001 rad` of the exact evaluation.
//! The bound below rests on the per-joint budget alone, so it holds at every time, however loosely.
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
    Clip, LocalToModelJob, Model, RuntimeClip, RuntimeClipOptions, SamplingJob, Skeleton, SkinBinding, SkinnedMesh,
    SoaTransform, Transform, VirtualVertices, num_soa_joints, pack_soa,
};
use anyhow::{Context, Result, bail};
use glam::{Affine3A, Mat4, Vec3};
use serde::Serialize;

/// Which evaluation path produces the poses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum EvalPath {
    /// The glTF keys, evaluated exactly.
    Exact,
    /// Runtime clips built with the default options on the meshes' virtual vertices, sampled with `SamplingJob` and
    /// `LocalToModelJob`.
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
            let meshes: Vec<&SkinnedMesh> = model
                .bindings
                .iter()
                .filter(|b| b.skeleton == s)
                .flat_map(|b| &model.meshes[b.meshes.clone()])
                .collect();
            Poser::with_meshes(sk, clip, path, &meshes)
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
    /// A poser without meshes, for the tests' exact posers.
    #[cfg(test)]
    fn new(skeleton: &'a Skeleton, clip: Option<&'a Clip>, path: EvalPath) -> Result<Self> {
        Self::with_meshes(skeleton, clip, path, &[])
    }

    /// A poser whose runtime clip measures its model-space error on the virtual vertices of `meshes`, the meshes
    /// that the skeleton skins (on cubes around the joints when there are none).
    fn with_meshes(
        skeleton: &'a Skeleton,
        clip: Option<&'a Clip>,
        path: EvalPath,
        meshes: &[&SkinnedMesh],
    ) -> Result<Self> {
        let runtime = match (path, clip) {
            (EvalPath::Runtime, Some(c)) => {
                let options = RuntimeClipOptions::default();
                let rt = if meshes.is_empty() {
                    RuntimeClip::build(c, skeleton, &options)
                } else {
                    VirtualVertices::from_meshes(skeleton, meshes)
                        .and_then(|vertices| RuntimeClip::build_with_vertices(c, skeleton, &options, &vertices))
                }
                .with_context(|| format!("cannot build a runtime clip of '{}'", c.name))?;
                if let Some(w) = rt.warning() {
                    eprintln!("warning: {w}");
                }
                Some(rt)
            }
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
mod tests;
