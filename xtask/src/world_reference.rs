//! An independent glTF world-space evaluator, for tests: skinned vertex positions computed with the plainest
//! formula of the glTF specification, sharing no code with `anim_pose`.
//!
//! It reads the GLB container and the JSON with `serde_json` alone, reads accessors itself, evaluates the
//! animation's samplers at `t` (STEP, LINEAR with shortest-path slerp, CUBICSPLINE), walks the node tree from the
//! default scene's roots multiplying local matrices in f64, and for every node that draws a mesh with a skin sums
//! `w · world(joint) · IBM · p` over each vertex's influences, ignoring the mesh node's own transform.
//! `skin`'s tests compare `cargo xtask skin`'s exact and runtime paths against it, and this module's tests check
//! that runtime clips hold their model-space budget against it.

use std::collections::HashMap;
use std::path::PathBuf;

use glam::{DMat4, DQuat, DVec3, DVec4};
use serde_json::Value;

/// A GLB file: its JSON and its binary chunk.
pub struct Glb {
    json: Value,
    bin: Vec<u8>,
}

/// The skinned positions of one primitive drawn by one node, as [`crate::skin::MeshPositions`] orders them.
pub struct Skinned {
    /// The node that draws the primitive.
    pub node: usize,
    /// The primitive index within the node's mesh.
    pub primitive: usize,
    /// World-space positions.
    pub positions: Vec<DVec3>,
}

/// The little-endian `u32` at byte `at` of a GLB header.
fn word(bytes: &[u8], at: usize) -> usize {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("four bytes")) as usize
}

impl Glb {
    /// Splits a GLB file into its JSON and binary chunks.
    ///
    /// # Panics
    ///
    /// On anything but a well-formed GLB with a JSON chunk (tests feed it valid files).
    pub fn parse(bytes: &[u8]) -> Self {
        assert_eq!(&bytes[..4], b"glTF", "not a GLB file");
        let json_len = word(bytes, 12);
        assert_eq!(&bytes[16..20], b"JSON");
        let json = serde_json::from_slice(&bytes[20..20 + json_len]).expect("valid JSON");
        let rest = 20 + json_len;
        let bin = if bytes.len() > rest {
            let len = word(bytes, rest);
            bytes[rest + 8..rest + 8 + len].to_vec()
        } else {
            Vec::new()
        };
        Self { json, bin }
    }

    fn get(&self, kind: &str, index: usize) -> &Value {
        &self.json[kind][index]
    }

    /// Accessor `index` as rows of f64 components (normalized integers mapped to `[0, 1]` or `[-1, 1]`).
    fn accessor(&self, index: usize) -> Vec<Vec<f64>> {
        let a = self.get("accessors", index);
        assert!(a.get("sparse").is_none(), "sparse accessors are not read here");
        let count = a["count"].as_u64().expect("a count") as usize;
        let components = match a["type"].as_str().expect("a type") {
            "SCALAR" => 1,
            "VEC2" => 2,
            "VEC3" => 3,
            "VEC4" => 4,
            "MAT4" => 16,
            other => panic!("accessor type {other} is not read here"),
        };
        let component_type = a["componentType"].as_u64().expect("a component type");
        let size = match component_type {
            5120 | 5121 => 1,
            5122 | 5123 => 2,
            5125 | 5126 => 4,
            other => panic!("component type {other}"),
        };
        let normalized = a["normalized"].as_bool().unwrap_or(false);
        let Some(view) = a["bufferView"].as_u64() else {
            return vec![vec![0.0; components]; count];
        };
        let view = self.get("bufferViews", view as usize);
        assert_eq!(
            view["buffer"].as_u64(),
            Some(0),
            "only the GLB's own buffer is read here"
        );
        let start = view["byteOffset"].as_u64().unwrap_or(0) as usize + a["byteOffset"].as_u64().unwrap_or(0) as usize;
        let stride = view["byteStride"].as_u64().map_or(components * size, |s| s as usize);
        (0..count)
            .map(|i| {
                (0..components)
                    .map(|c| {
                        let at = start + i * stride + c * size;
                        let b = &self.bin[at..at + size];
                        let raw = match component_type {
                            5120 => f64::from(b[0] as i8),
                            5121 => f64::from(b[0]),
                            5122 => f64::from(i16::from_le_bytes([b[0], b[1]])),
                            5123 => f64::from(u16::from_le_bytes([b[0], b[1]])),
                            5125 => f64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
                            _ => f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
                        };
                        match (normalized, component_type) {
                            (true, 5120) => (raw / 127.0).max(-1.0),
                            (true, 5121) => raw / 255.0,
                            (true, 5122) => (raw / 32767.0).max(-1.0),
                            (true, 5123) => raw / 65535.0,
                            _ => raw,
                        }
                    })
                    .collect()
            })
            .collect()
    }

    /// The local matrix of every node at time `t` of `animation` (the rest pose for `None`).
    fn local_matrices(&self, animation: Option<usize>, t: f64) -> Vec<DMat4> {
        let nodes = self.json["nodes"].as_array().map_or(&[][..], Vec::as_slice);
        let floats = |v: &Value, n: usize, default: &[f64]| -> Vec<f64> {
            v.as_array().map_or_else(
                || default.to_vec(),
                |a| a.iter().take(n).map(|x| x.as_f64().expect("a number")).collect(),
            )
        };
        let mut trs: Vec<(DVec3, DQuat, DVec3)> = Vec::with_capacity(nodes.len());
        let mut matrices: Vec<Option<DMat4>> = Vec::with_capacity(nodes.len());
        for node in nodes {
            let matrix = node.get("matrix").map(|m| DMat4::from_cols_slice(&floats(m, 16, &[])));
            let t = floats(&node["translation"], 3, &[0.0; 3]);
            let r = floats(&node["rotation"], 4, &[0.0, 0.0, 0.0, 1.0]);
            let s = floats(&node["scale"], 3, &[1.0; 3]);
            trs.push((
                DVec3::from_slice(&t),
                DQuat::from_xyzw(r[0], r[1], r[2], r[3]).normalize(),
                DVec3::from_slice(&s),
            ));
            matrices.push(matrix);
        }
        if let Some(a) = animation {
            let animation = self.get("animations", a);
            for channel in animation["channels"].as_array().expect("channels") {
                let node = channel["target"]["node"].as_u64().expect("a target node") as usize;
                let path = channel["target"]["path"].as_str().expect("a path");
                if path == "weights" {
                    continue;
                }
                let sampler = &animation["samplers"][channel["sampler"].as_u64().expect("a sampler") as usize];
                let v = self.sample(sampler, path == "rotation", t);
                // An animated node has no matrix (glTF); its TRS replaces the rest values.
                matrices[node] = None;
                match path {
                    "translation" => trs[node].0 = v.truncate(),
                    "rotation" => trs[node].1 = DQuat::from_vec4(v),
                    _ => trs[node].2 = v.truncate(),
                }
            }
        }
        trs.iter()
            .zip(matrices)
            .map(|(&(t, r, s), m)| m.unwrap_or_else(|| DMat4::from_scale_rotation_translation(s, r, t)))
            .collect()
    }

    /// A sampler's value at `t`: `(x, y, z, 0)` for vectors, a unit `(x, y, z, w)` for rotations.
    fn sample(&self, sampler: &Value, rotation: bool, t: f64) -> DVec4 {
        let times: Vec<f64> = self
            .accessor(sampler["input"].as_u64().expect("an input") as usize)
            .into_iter()
            .map(|v| v[0])
            .collect();
        let values: Vec<DVec4> = self
            .accessor(sampler["output"].as_u64().expect("an output") as usize)
            .into_iter()
            .map(|v| DVec4::new(v[0], v[1], v[2], v.get(3).copied().unwrap_or(0.0)))
            .collect();
        let mode = sampler["interpolation"].as_str().unwrap_or("LINEAR");
        let cubic = mode == "CUBICSPLINE";
        let key = |k: usize| if cubic { values[3 * k + 1] } else { values[k] };
        let n = times.len();
        let v = if t <= times[0] {
            key(0)
        } else if t >= times[n - 1] {
            key(n - 1)
        } else {
            let k = times.iter().rposition(|&k| k <= t).expect("t is after the first key");
            let dt = times[k + 1] - times[k];
            let u = (t - times[k]) / dt;
            match mode {
                "STEP" => key(k),
                "CUBICSPLINE" => {
                    let (p0, m0) = (values[3 * k + 1], values[3 * k + 2] * dt);
                    let (p1, m1) = (values[3 * k + 4], values[3 * k + 3] * dt);
                    let (u2, u3) = (u * u, u * u * u);
                    p0 * (2.0 * u3 - 3.0 * u2 + 1.0)
                        + m0 * (u3 - 2.0 * u2 + u)
                        + p1 * (3.0 * u2 - 2.0 * u3)
                        + m1 * (u3 - u2)
                }
                _ if rotation => {
                    let (a, mut b) = (key(k).normalize(), key(k + 1).normalize());
                    if a.dot(b) < 0.0 {
                        b = -b;
                    }
                    let theta = a.dot(b).clamp(-1.0, 1.0).acos();
                    if theta < 1e-9 {
                        a
                    } else {
                        (a * ((1.0 - u) * theta).sin() + b * (u * theta).sin()) / theta.sin()
                    }
                }
                _ => key(k) + (key(k + 1) - key(k)) * u,
            }
        };
        if rotation {
            v.normalize()
        } else {
            v.truncate().extend(0.0)
        }
    }

    /// World matrices of the nodes reached from the default scene's roots (scene 0 when the file names none),
    /// and those nodes in depth-first order, children in the order listed.
    fn world_matrices(&self, local: &[DMat4]) -> (HashMap<usize, DMat4>, Vec<usize>) {
        let scene = self.json["scene"].as_u64().unwrap_or(0) as usize;
        let roots = self.json["scenes"][scene]["nodes"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let mut world = HashMap::new();
        let mut order = Vec::new();
        let mut stack: Vec<(usize, DMat4)> = roots
            .iter()
            .rev()
            .map(|r| (r.as_u64().expect("a node") as usize, DMat4::IDENTITY))
            .collect();
        while let Some((node, parent)) = stack.pop() {
            let m = parent * local[node];
            world.insert(node, m);
            order.push(node);
            let children = self.get("nodes", node)["children"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            stack.extend(children.iter().rev().map(|c| (c.as_u64().expect("a node") as usize, m)));
        }
        (world, order)
    }

    /// The world matrix of every node of the default scene at time `t` of `animation`.
    pub fn node_worlds(&self, animation: Option<usize>, t: f64) -> HashMap<usize, DMat4> {
        self.world_matrices(&self.local_matrices(animation, t)).0
    }

    /// Every skinned primitive of the default scene at time `t` of `animation`, in depth-first node order and
    /// mesh primitive order.
    pub fn skinned(&self, animation: Option<usize>, t: f64) -> Vec<Skinned> {
        let local = self.local_matrices(animation, t);
        let (world, order) = self.world_matrices(&local);
        let mut out = Vec::new();
        for node in order {
            let n = self.get("nodes", node);
            let (Some(mesh), Some(skin)) = (n["mesh"].as_u64(), n["skin"].as_u64()) else {
                continue;
            };
            let skin = self.get("skins", skin as usize);
            let joints: Vec<usize> = skin["joints"]
                .as_array()
                .expect("joints")
                .iter()
                .map(|j| j.as_u64().expect("a joint node") as usize)
                .collect();
            let ibms: Vec<DMat4> = match skin["inverseBindMatrices"].as_u64() {
                Some(a) => self
                    .accessor(a as usize)
                    .iter()
                    .map(|m| DMat4::from_cols_slice(m))
                    .collect(),
                None => vec![DMat4::IDENTITY; joints.len()],
            };
            let joint_matrices: Vec<DMat4> = joints.iter().zip(&ibms).map(|(j, ibm)| world[j] * *ibm).collect();
            let primitives = self.get("meshes", mesh as usize)["primitives"]
                .as_array()
                .expect("primitives");
            for (p, primitive) in primitives.iter().enumerate() {
                let attribute = |name: &str| {
                    let index = primitive["attributes"][name]
                        .as_u64()
                        .unwrap_or_else(|| panic!("no {name}"));
                    self.accessor(index as usize)
                };
                let (positions, joint_sets, weights) =
                    (attribute("POSITION"), attribute("JOINTS_0"), attribute("WEIGHTS_0"));
                let skinned = positions
                    .iter()
                    .zip(&joint_sets)
                    .zip(&weights)
                    .map(|((p, js), ws)| {
                        let p = DVec3::from_slice(p);
                        js.iter()
                            .zip(ws)
                            .map(|(&j, &w)| w * joint_matrices[j as usize].transform_point3(p))
                            .sum()
                    })
                    .collect();
                out.push(Skinned {
                    node,
                    primitive: p,
                    positions: skinned,
                });
            }
        }
        out
    }
}

/// A GLB file of `doc` with `bin` as its buffer 0 (whose `byteLength` is set here, padded to 4 bytes).
pub fn glb_bytes(mut doc: Value, bin: Vec<u8>) -> Vec<u8> {
    doc["buffers"] = serde_json::json!([{"byteLength": bin.len().next_multiple_of(4)}]);
    crate::character::glb::glb(serde_json::to_vec(&doc).expect("serializes"), bin)
}

/// The path of a sample model's GLB file: a loud skip when `CROWD_SAMPLE_ASSETS` is unset outside CI, a failure
/// when it is unset on CI (`sample_assets::sample_assets`).
pub(crate) fn sample_path(name: &str) -> Option<PathBuf> {
    Some(
        sample_assets::sample_assets()?
            .join("gltf")
            .join(name)
            .join(format!("{name}.glb")),
    )
}

#[cfg(test)]
mod tests {
    //! Runtime clips against the independent evaluator, in model space: the budget of a runtime clip bounds how far
    //! its virtual vertices move from the exact pose, so at the times the build measures they stay within the
    //! budget of this evaluator too, give or take how far anim-pose's exact path itself is from it (the f32
    //! rounding of the exact local values, carried along the chains).

    use std::cell::RefCell;
    use std::collections::HashMap;
    use std::rc::Rc;

    use anim_pose::{Clip, Model, RuntimeClip, RuntimeClipOptions, Skeleton, SkinnedMesh, Transform, VirtualVertices};
    use glam::{DMat4, DQuat, DVec3};

    use super::{Glb, Skinned, sample_path};
    use crate::skin::{EvalPath, skin_model};

    /// The evaluator's answers for one animation, kept per time: the clips of a file share most of their check
    /// times, and each answer evaluates the whole file.
    struct Reference {
        /// The file.
        glb: Glb,
        /// The animation.
        animation: Option<usize>,
        /// Node world matrices, by the bits of the time.
        worlds: RefCell<HashMap<u32, Rc<HashMap<usize, DMat4>>>>,
        /// Skinned primitives, by the bits of the time.
        skinned: RefCell<HashMap<u32, Rc<Vec<Skinned>>>>,
    }

    impl Reference {
        /// The world matrix of every node at `t`.
        fn worlds(&self, t: f32) -> Rc<HashMap<usize, DMat4>> {
            let mut memo = self.worlds.borrow_mut();
            let entry = memo.entry(t.to_bits());
            Rc::clone(entry.or_insert_with(|| Rc::new(self.glb.node_worlds(self.animation, f64::from(t)))))
        }

        /// Every skinned primitive at `t`.
        fn skinned(&self, t: f32) -> Rc<Vec<Skinned>> {
            let mut memo = self.skinned.borrow_mut();
            let entry = memo.entry(t.to_bits());
            Rc::clone(entry.or_insert_with(|| Rc::new(self.glb.skinned(self.animation, f64::from(t)))))
        }
    }

    /// The world matrix of every joint of `skeleton` posed by `local`, multiplied in f64:
    /// `root_transform` times the chain of local matrices.
    fn joint_worlds(skeleton: &Skeleton, local: &[Transform]) -> Vec<DMat4> {
        let root = skeleton.root_transform.as_dmat4();
        let mut out: Vec<DMat4> = Vec::with_capacity(local.len());
        for (l, &p) in local.iter().zip(&skeleton.parents) {
            let q = l.rotation;
            let m = DMat4::from_scale_rotation_translation(
                l.scale.as_dvec3(),
                DQuat::from_xyzw(f64::from(q.x), f64::from(q.y), f64::from(q.z), f64::from(q.w)),
                l.translation.as_dvec3(),
            );
            let parent = if p == anim_pose::NO_PARENT {
                root
            } else {
                out[usize::from(p)]
            };
            out.push(parent * m);
        }
        out
    }

    /// The times checked: every key time of `clip` and the midpoints between keys, then, in every frame interval
    /// of `rc`, its midpoint and the two points `1/2 ∓ 1/(2√3)` of the way where a normalized lerp strays most from
    /// a slerp: the times at which the build measures whole poses.
    fn check_times(clip: &Clip, rc: &RuntimeClip) -> Vec<f32> {
        let mut keys: Vec<f32> = clip.channels.iter().flat_map(|c| c.times.iter().copied()).collect();
        keys.sort_by(f32::total_cmp);
        keys.dedup();
        let mut times = keys.clone();
        times.extend(keys.windows(2).map(|w| 0.5 * (w[0] + w[1])));
        for f in 0..rc.frame_count().saturating_sub(1) {
            let (a, b) = (f64::from(rc.frame_time(f)), f64::from(rc.frame_time(f + 1)));
            let points = [0.211_324_865_405_187_1, 0.5, 0.788_675_134_594_812_9];
            times.extend(points.map(|u| (a + (b - a) * u) as f32));
        }
        times.retain(|t| (0.0..=clip.duration).contains(t));
        times
    }

    /// The largest distance between the corners of a cube of half-size `distance` (model units) around a joint,
    /// carried by `a` and by `b`, the cube scaled into the joint's frame by the largest column length of `b`.
    fn cube_distance(a: &DMat4, b: &DMat4, distance: f64) -> f64 {
        let scale = [b.x_axis, b.y_axis, b.z_axis]
            .iter()
            .map(|c| c.truncate().length())
            .fold(0.0, f64::max);
        let h = distance / scale;
        let d = *a - *b;
        (0..8)
            .map(|i| {
                let c = DVec3::new(
                    if i & 1 == 0 { -h } else { h },
                    if i & 2 == 0 { -h } else { h },
                    if i & 4 == 0 { -h } else { h },
                );
                d.transform_point3(c).length()
            })
            .fold(0.0, f64::max)
    }

    /// Linear-blend skinning of `mesh` by the joint world matrices `worlds` of `skeleton`, in f64.
    fn skin(skeleton: &Skeleton, worlds: &[DMat4], mesh: &SkinnedMesh) -> Vec<DVec3> {
        let palette: Vec<DMat4> = skeleton
            .skin_joints
            .iter()
            .zip(&skeleton.inverse_bind_matrices)
            .map(|(&j, ibm)| worlds[usize::from(j)] * ibm.as_dmat4())
            .collect();
        mesh.positions
            .iter()
            .zip(&mesh.joints)
            .zip(&mesh.weights)
            .map(|((p, js), ws)| {
                let p = p.as_dvec3();
                js.iter()
                    .zip(ws)
                    .map(|(&j, &w)| f64::from(w) * palette[usize::from(j)].transform_point3(p))
                    .sum()
            })
            .collect()
    }

    /// What one kind of runtime clip reached against the evaluator over every clip and check time.
    #[derive(Default)]
    struct Worst {
        /// The largest runtime-to-evaluator distance, the time and the clip's skeleton.
        runtime: (f64, f32, usize),
        /// The largest exact-to-evaluator distance.
        exact: f64,
        /// The largest model-space error the builds reported.
        reported: f32,
        /// The most frames of a clip.
        frames: usize,
    }

    /// Checks the runtime clips of every skeleton of `model`, built by `build`, at [`check_times`]: `measure`
    /// gives the distance between two poses (joint world matrices) of a skeleton at a time, against the evaluator's
    /// poses, and the runtime's must be within the budget plus the exact path's own distance.
    fn check(
        model: &Model,
        what: &str,
        build: impl Fn(&Clip, &Skeleton) -> RuntimeClip,
        measure: impl Fn(&Skeleton, usize, &[DMat4], f32) -> f64,
    ) -> Worst {
        let budget = RuntimeClipOptions::default().budget.translation;
        let mut worst = Worst::default();
        for clip in &model.clips {
            let skeleton = &model.skeletons[clip.skeleton];
            let rc = build(clip, skeleton);
            assert!(rc.warning().is_none(), "{what}: {:?}", rc.warning());
            assert!(rc.error().model <= budget, "{what}: {:?}", rc.error());
            worst.reported = worst.reported.max(rc.error().model);
            worst.frames = worst.frames.max(rc.frame_count());
            let mut local = vec![Transform::IDENTITY; skeleton.joint_count()];
            for t in check_times(clip, &rc) {
                clip.sample_local_pose(skeleton, t, &mut local).expect("valid");
                let exact = measure(skeleton, clip.skeleton, &joint_worlds(skeleton, &local), t);
                rc.sample_reference(t, &mut local).expect("valid");
                let runtime = measure(skeleton, clip.skeleton, &joint_worlds(skeleton, &local), t);
                assert!(
                    runtime <= f64::from(budget) + exact,
                    "{what}, skeleton {} at {t} s: the runtime pose is {runtime:.3e} from the independent \
                     evaluator, more than the budget {budget:.1e} plus the exact path's {exact:.3e}",
                    clip.skeleton
                );
                if runtime > worst.runtime.0 {
                    worst.runtime = (runtime, t, clip.skeleton);
                }
                worst.exact = worst.exact.max(exact);
            }
        }
        let (runtime, t, skeleton) = worst.runtime;
        eprintln!(
            "RecursiveSkeletons, {what}: largest distance from the independent evaluator {runtime:.3e} (skeleton \
             {skeleton} at {t:.3} s; the exact path's largest {:.3e}), budget {budget:.1e}; the builds reported at \
             most {:.3e}, with at most {} frames",
            worst.exact, worst.reported, worst.frames
        );
        worst
    }

    #[test]
    fn recursive_skeletons_runtime_clips_hold_their_model_space_budget() {
        let Some(path) = sample_path("RecursiveSkeletons") else {
            return;
        };
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let model = anim_pose::import_slice(&bytes, None).expect("the model imports");
        let reference = Reference {
            glb: Glb::parse(&bytes),
            animation: Some(model.clips[0].animation),
            worlds: RefCell::default(),
            skinned: RefCell::default(),
        };
        let options = RuntimeClipOptions::default();
        // The default build: cubes of `vertex_distance` around every joint, against the evaluator's node matrices.
        check(
            &model,
            "cubes around the joints (RuntimeClip::build)",
            |clip, skeleton| RuntimeClip::build(clip, skeleton, &options).expect("builds"),
            |skeleton, _, worlds, t| {
                let reference = reference.worlds(t);
                worlds
                    .iter()
                    .zip(&skeleton.joint_nodes)
                    .map(|(w, node)| cube_distance(w, &reference[node], f64::from(options.vertex_distance)))
                    .fold(0.0, f64::max)
            },
        );
        // With the meshes' virtual vertices: the skinned vertices themselves, against the evaluator's skinning.
        let meshes_of = |s: usize| -> Vec<(usize, &SkinnedMesh)> {
            model
                .bindings
                .iter()
                .filter(|b| b.skeleton == s)
                .flat_map(|b| model.meshes[b.meshes.clone()].iter().map(move |m| (b.node, m)))
                .collect()
        };
        check(
            &model,
            "skinned vertices (RuntimeClip::build_with_vertices)",
            |clip, skeleton| {
                let meshes: Vec<&SkinnedMesh> = meshes_of(clip.skeleton).into_iter().map(|(_, m)| m).collect();
                let vertices = VirtualVertices::from_meshes(skeleton, &meshes).expect("valid meshes");
                RuntimeClip::build_with_vertices(clip, skeleton, &options, &vertices).expect("builds")
            },
            |skeleton, s, worlds, t| {
                let drawn = meshes_of(s);
                let reference = reference.skinned(t);
                let mut worst = 0.0f64;
                for (node, mesh) in &drawn {
                    let r = reference
                        .iter()
                        .find(|r| r.node == *node && r.primitive == mesh.primitive)
                        .expect("the evaluator skins every drawn primitive");
                    for (p, q) in skin(skeleton, worlds, mesh).iter().zip(&r.positions) {
                        worst = worst.max(p.distance(*q));
                    }
                }
                worst
            },
        );
        // `cargo xtask skin`'s runtime path, in f32 from sampling to skinning, at the key times and the midpoints
        // between them: within the budget plus twice the exact path's f32 rounding, which stands in for the
        // runtime jobs' own.
        let clip = &model.clips[0];
        let mut keys: Vec<f32> = clip.channels.iter().flat_map(|c| c.times.iter().copied()).collect();
        keys.sort_by(f32::total_cmp);
        keys.dedup();
        let mut times = keys.clone();
        times.extend(keys.windows(2).map(|w| 0.5 * (w[0] + w[1])));
        let name = "RecursiveSkeletons.glb";
        let paths =
            [EvalPath::Exact, EvalPath::Runtime].map(|p| skin_model(&model, name, 0, &times, p).expect("skins"));
        let budget = f64::from(options.budget.translation);
        let mut worst = (0.0f64, 0.0f64, 0.0f32);
        for (i, &t) in times.iter().enumerate() {
            let reference = reference.skinned(t);
            let [exact, runtime] = [&paths[0], &paths[1]].map(|report| {
                let mut d = 0.0f64;
                for (m, r) in report.meshes.iter().zip(reference.iter()) {
                    assert_eq!((m.node, m.primitive), (r.node, r.primitive), "scene order");
                    for (p, q) in m.positions[i].chunks_exact(3).zip(&r.positions) {
                        d = d.max((DVec3::new(p[0].into(), p[1].into(), p[2].into()) - *q).length());
                    }
                }
                d
            });
            assert!(
                runtime <= budget + 2.0 * exact,
                "the f32 runtime path at {t} s is {runtime:.3e} from the independent evaluator, more than the budget \
                 {budget:.1e} plus twice the exact path's {exact:.3e}"
            );
            if runtime > worst.0 {
                worst = (runtime, exact, t);
            }
        }
        eprintln!(
            "RecursiveSkeletons, `cargo xtask skin --path runtime` (f32): largest distance from the independent \
             evaluator {:.3e} at {:.3} s (the exact path's {:.3e} there), budget {budget:.1e}",
            worst.0, worst.2, worst.1
        );
    }
}
