//! Tests of `cargo xtask skin`: the JSON shape, scene order, time wrapping, and agreement of the exact and
//! runtime paths with each other and with an independent evaluator.

use anim_pose::Aabb;
use serde_json::{Value, json};

use super::*;
use crate::world_reference::{Glb, glb_bytes, sample_path};

/// The default character, relative to this crate.
const CHARACTER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/crowd_character.glb");

fn character() -> Model {
    anim_pose::import_file(CHARACTER).expect("the default character imports")
}

/// A model from the sample assets, following the convention of `crates/anim-pose/tests/common/mod.rs`:
/// a loud skip when `CROWD_SAMPLE_ASSETS` is unset outside CI, a failure when it is unset on CI.
fn sample_model(name: &str) -> Option<(Model, String)> {
    let path = sample_path(name)?;
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
        "bufferViews": views
    });
    glb_bytes(doc, bin)
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
/// `exact` is the exact report at that single time. With a zero `budget`, only the f32 rounding term remains.
fn agreement_bound(model: &Model, animation: usize, t: f32, exact: &SkinReport, budget: anim_pose::ErrorBudget) -> f32 {
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
            let bound = agreement_bound(model, animation, t, &exact, anim_pose::ErrorBudget::default());
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

/// The largest distance between `report`'s positions (one time) and the reference's, entry by entry.
fn reference_difference(report: &SkinReport, reference: &[crate::world_reference::Skinned]) -> f64 {
    assert_eq!(report.meshes.len(), reference.len(), "one entry per skinned primitive");
    let mut worst = 0.0f64;
    for (m, r) in report.meshes.iter().zip(reference) {
        assert_eq!((m.node, m.primitive), (r.node, r.primitive), "scene order");
        for (p, q) in m.positions[0].chunks_exact(3).zip(&r.positions) {
            let p = glam::DVec3::new(f64::from(p[0]), f64::from(p[1]), f64::from(p[2]));
            worst = worst.max((p - *q).length());
        }
    }
    worst
}

/// Compares both paths of `cargo xtask skin` with the independent evaluator at `fractions` of animation
/// `animation`'s duration: the exact path within the f32 rounding term of the agreement bound, the runtime path
/// within the whole bound. Returns a summary line per path.
fn check_world_space(bytes: &[u8], name: &str, animation: usize, fractions: &[f32]) -> Vec<String> {
    let model = anim_pose::import_slice(bytes, None).expect("the model imports");
    let glb = Glb::parse(bytes);
    let mut worst = [(0.0f64, 0.0f32, 0.0f32); 2];
    let duration = skin_model(&model, name, animation, &[0.0], EvalPath::Exact)
        .expect("valid")
        .clip
        .duration;
    for &fraction in fractions {
        let t = fraction * duration;
        let reference = glb.skinned(Some(animation), f64::from(t));
        let exact = skin_model(&model, name, animation, &[t], EvalPath::Exact).expect("valid");
        let zero = anim_pose::ErrorBudget {
            translation: 0.0,
            rotation: 0.0,
        };
        let bounds = [
            agreement_bound(&model, animation, t, &exact, zero),
            agreement_bound(&model, animation, t, &exact, anim_pose::ErrorBudget::default()),
        ];
        for (i, path) in [EvalPath::Exact, EvalPath::Runtime].into_iter().enumerate() {
            let report = skin_model(&model, name, animation, &[t], path).expect("runtime clips build");
            let diff = reference_difference(&report, &reference);
            assert!(
                diff <= f64::from(bounds[i]),
                "{name} animation {animation} at {t} s, {path:?} path: {diff} from the independent evaluator, \
                 more than the bound of {}",
                bounds[i]
            );
            if diff > worst[i].0 {
                worst[i] = (diff, bounds[i], t);
            }
        }
    }
    ["exact", "runtime"]
        .iter()
        .zip(worst)
        .map(|(path, (diff, bound, t))| {
            format!("{name} {path} path: max difference from the independent evaluator {diff:.3e} at {t:.3} s (bound {bound:.3e})")
        })
        .collect()
}

/// A skin hung under animated nodes that are not joints, as vehicles, turntables and rig offset nodes are:
/// node 0 (a static `matrix` with rotation and non-uniform scale) > 1 (a turntable, rotated half a turn about +Y
/// over 2 s) > 2 (a static `matrix` with non-uniform scale: the rig's offset) > 3 (a vehicle, translated) > 4 (the
/// skin's root joint) > 5 (the arm joint, rotated about +Z). Node 6 draws the mesh with the skin and is translated
/// by 100 units, which glTF ignores.
fn animated_ancestors_glb() -> Vec<u8> {
    let mut bin: Vec<u8> = Vec::new();
    let mut views = Vec::new();
    let mut push = |values: &[f32]| {
        views.push(json!({"buffer": 0, "byteOffset": bin.len(), "byteLength": 4 * values.len()}));
        bin.extend(values.iter().flat_map(|v| v.to_le_bytes()));
        views.len() - 1
    };
    let quat = |axis: Vec3, angle: f32| glam::Quat::from_axis_angle(axis, angle).to_array();
    let positions = push(&[
        0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.5, 2.0, 0.3, 1.0, 1.0, 0.0, 0.3, 1.7, -0.2,
    ]);
    let weights = push(&[
        1.0, 0.0, 0.0, 0.0, 0.5, 0.5, 0.0, 0.0, 0.25, 0.75, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.6, 0.4, 0.0, 0.0, 1.0, 0.0,
        0.0, 0.0,
    ]);
    let ibms: Vec<f32> = [Mat4::IDENTITY, Mat4::from_translation(Vec3::new(0.0, -1.5, 0.0))]
        .iter()
        .flat_map(|m| m.to_cols_array())
        .collect();
    let ibms = push(&ibms);
    let times = push(&[0.0, 1.0, 2.0]);
    let turns: Vec<f32> = [0.0, 1.6, std::f32::consts::PI]
        .iter()
        .flat_map(|&a| quat(Vec3::Y, a))
        .collect();
    let turns = push(&turns);
    let drives = push(&[0.0, 0.0, 0.0, 3.0, 0.0, 1.0, 0.0, 0.5, 4.0]);
    let waves: Vec<f32> = [0.0, 0.9, -0.4].iter().flat_map(|&a| quat(Vec3::Z, a)).collect();
    let waves = push(&waves);
    let mut joints_bytes = vec![0u8, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0];
    let joints = {
        views.push(json!({"buffer": 0, "byteOffset": bin.len(), "byteLength": joints_bytes.len()}));
        bin.append(&mut joints_bytes);
        views.len() - 1
    };
    let stage = Mat4::from_scale_rotation_translation(
        Vec3::new(2.0, 1.0, 0.5),
        glam::Quat::from_rotation_x(0.3),
        Vec3::new(1.0, 2.0, 3.0),
    );
    let offset = Mat4::from_scale_rotation_translation(
        Vec3::new(1.0, 1.5, 0.8),
        glam::Quat::from_rotation_z(0.2),
        Vec3::new(0.0, 1.0, 0.0),
    );
    let accessor = |view: usize, count: usize, ty: &str| json!({"bufferView": view, "componentType": 5126, "count": count, "type": ty});
    let doc = json!({
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0, 6]}],
        "nodes": [
            {"name": "stage", "matrix": stage.to_cols_array(), "children": [1]},
            {"name": "turntable", "children": [2]},
            {"name": "rig offset", "matrix": offset.to_cols_array(), "children": [3]},
            {"name": "vehicle", "children": [4]},
            {"name": "hips", "translation": [0.0, 0.5, 0.0], "children": [5]},
            {"name": "arm", "translation": [0.0, 1.0, 0.0]},
            {"name": "body", "mesh": 0, "skin": 0, "translation": [100.0, 0.0, 0.0]}
        ],
        "skins": [{"joints": [4, 5], "inverseBindMatrices": 3}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "JOINTS_0": 1, "WEIGHTS_0": 2}}]}],
        "accessors": [
            {"bufferView": positions, "componentType": 5126, "count": 6, "type": "VEC3",
             "min": [0.0, 0.0, -0.2], "max": [1.0, 2.0, 0.3]},
            {"bufferView": joints, "componentType": 5121, "count": 6, "type": "VEC4"},
            accessor(weights, 6, "VEC4"),
            accessor(ibms, 2, "MAT4"),
            {"bufferView": times, "componentType": 5126, "count": 3, "type": "SCALAR", "min": [0.0], "max": [2.0]},
            accessor(turns, 3, "VEC4"),
            accessor(drives, 3, "VEC3"),
            accessor(waves, 3, "VEC4")
        ],
        "animations": [{
            "name": "ride",
            "samplers": [{"input": 4, "output": 5}, {"input": 4, "output": 6}, {"input": 4, "output": 7}],
            "channels": [
                {"sampler": 0, "target": {"node": 1, "path": "rotation"}},
                {"sampler": 1, "target": {"node": 3, "path": "translation"}},
                {"sampler": 2, "target": {"node": 5, "path": "rotation"}}
            ]
        }],
        "bufferViews": views
    });
    glb_bytes(doc, bin)
}

#[test]
fn world_space_follows_animated_ancestors_as_an_independent_evaluator_does() {
    let fractions = [0.0, 0.13, 0.37, 0.505, 0.75, 0.999];
    let bytes = animated_ancestors_glb();
    let model = anim_pose::import_slice(&bytes, None).expect("the test model imports");
    assert_eq!(
        model.skeletons[0].joint_names,
        ["turntable", "rig offset", "vehicle", "hips", "arm"],
        "the animated ancestors are joints"
    );
    let mut lines = check_world_space(&bytes, "ancestors.glb", 0, &fractions);
    if let Some(path) = sample_path("RecursiveSkeletons") {
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        lines.extend(check_world_space(&bytes, "RecursiveSkeletons.glb", 0, &fractions));
    }
    for line in lines {
        eprintln!("{line}");
    }
}
