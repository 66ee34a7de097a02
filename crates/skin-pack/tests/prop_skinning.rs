//! Property tests of CPU skinning.
//!
//! - The parallel `SkinningJob` equals the scalar `skin_reference` for random palettes, vertices and weights.
//! - Skinning with an identity palette returns the input (normals and tangents renormalized).
//! - A vertex with one influence of weight 1 is moved by exactly that palette entry.

use glam::{Affine3A, Quat, Vec3, Vec4};
use proptest::prelude::*;
use skin_pack::{SkinInput, SkinOutput, SkinningJob, skin_positions_reference, skin_reference};

/// One random vertex: position, normal, tangent, joints and weights.
type Vertex = (Vec3, Vec3, Vec4, [u16; 4], [f32; 4]);

fn vec3_strategy(range: f32) -> impl Strategy<Value = Vec3> {
    (-range..range, -range..range, -range..range).prop_map(|(x, y, z)| Vec3::new(x, y, z))
}

fn unit_strategy() -> impl Strategy<Value = Vec3> {
    vec3_strategy(1.0)
        .prop_filter("non-degenerate", |v| v.length_squared() > 0.01)
        .prop_map(Vec3::normalize)
}

fn affine_strategy() -> impl Strategy<Value = Affine3A> {
    (
        (0.2f32..3.0, 0.2f32..3.0, 0.2f32..3.0),
        unit_strategy(),
        -3.2f32..3.2,
        vec3_strategy(10.0),
    )
        .prop_map(|((sx, sy, sz), axis, angle, t)| {
            Affine3A::from_scale_rotation_translation(Vec3::new(sx, sy, sz), Quat::from_axis_angle(axis, angle), t)
        })
}

/// Weights as the importer leaves them: non-negative, sorted in decreasing order, summing to 1.
fn weights_strategy() -> impl Strategy<Value = [f32; 4]> {
    prop::array::uniform4(0.0f32..1.0).prop_map(|mut w| {
        w.sort_by(|a, b| b.total_cmp(a));
        let sum: f32 = w.iter().sum();
        if sum <= 0.0 {
            [1.0, 0.0, 0.0, 0.0]
        } else {
            w.map(|x| x / sum)
        }
    })
}

fn vertex_strategy(palette_len: usize) -> impl Strategy<Value = Vertex> {
    let joint = 0..u16::try_from(palette_len).expect("small palette");
    (
        vec3_strategy(2.0),
        unit_strategy(),
        (unit_strategy(), prop_oneof![Just(1.0f32), Just(-1.0f32)]).prop_map(|(t, w)| t.extend(w)),
        prop::array::uniform4(joint),
        weights_strategy(),
    )
}

fn case_strategy() -> impl Strategy<Value = (Vec<Affine3A>, Vec<Vertex>)> {
    (1usize..12).prop_flat_map(|palette_len| {
        (
            prop::collection::vec(affine_strategy(), palette_len),
            // Up to a few thousand vertices, so that the job splits into several chunks.
            prop::collection::vec(vertex_strategy(palette_len), 0..3000),
        )
    })
}

/// The vertices split into attribute arrays.
struct Arrays {
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    tangents: Vec<Vec4>,
    joints: Vec<[u16; 4]>,
    weights: Vec<[f32; 4]>,
}

fn arrays(vertices: &[Vertex]) -> Arrays {
    Arrays {
        positions: vertices.iter().map(|v| v.0).collect(),
        normals: vertices.iter().map(|v| v.1).collect(),
        tangents: vertices.iter().map(|v| v.2).collect(),
        joints: vertices.iter().map(|v| v.3).collect(),
        weights: vertices.iter().map(|v| v.4).collect(),
    }
}

/// Skins `a` with the scalar reference and returns positions, normals and tangents.
fn reference(palette: &[Affine3A], a: &Arrays) -> (Vec<Vec3>, Vec<Vec3>, Vec<Vec4>) {
    let n = a.positions.len();
    let (mut p, mut nr, mut t) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n], vec![Vec4::ZERO; n]);
    let input = SkinInput {
        positions: &a.positions,
        normals: &a.normals,
        tangents: &a.tangents,
        joints: &a.joints,
        weights: &a.weights,
    };
    let mut output = SkinOutput {
        positions: &mut p,
        normals: &mut nr,
        tangents: &mut t,
    };
    skin_reference(palette, &input, &mut output).expect("valid input");
    (p, nr, t)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn parallel_job_equals_reference((palette, vertices) in case_strategy()) {
        let a = arrays(&vertices);
        let n = vertices.len();
        let (rp, rn, rt) = reference(&palette, &a);
        let (mut p, mut nr, mut t) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n], vec![Vec4::ZERO; n]);
        SkinningJob {
            palette: &palette,
            positions: &a.positions,
            normals: &a.normals,
            tangents: &a.tangents,
            joints: &a.joints,
            weights: &a.weights,
            out_positions: &mut p,
            out_normals: &mut nr,
            out_tangents: &mut t,
        }
        .run()
        .expect("valid input");
        // Both run the same per-vertex code, so they agree exactly; 1e-6 is the documented tolerance.
        for i in 0..n {
            prop_assert!(p[i].abs_diff_eq(rp[i], 1e-6), "vertex {i}: position {} vs {}", p[i], rp[i]);
            prop_assert!(nr[i].abs_diff_eq(rn[i], 1e-6), "vertex {i}: normal {} vs {}", nr[i], rn[i]);
            prop_assert!(t[i].abs_diff_eq(rt[i], 1e-6), "vertex {i}: tangent {} vs {}", t[i], rt[i]);
        }
        // The positions-only helper gives the same positions.
        let mut only = vec![Vec3::ZERO; n];
        skin_positions_reference(&palette, &a.positions, &a.joints, &a.weights, &mut only).expect("valid input");
        prop_assert_eq!(only, rp);
    }

    #[test]
    fn identity_palette_returns_the_input((palette, vertices) in case_strategy()) {
        let palette = vec![Affine3A::IDENTITY; palette.len()];
        let a = arrays(&vertices);
        let (p, nr, t) = reference(&palette, &a);
        for (i, v) in vertices.iter().enumerate() {
            // Weights sum to 1 within rounding, so the blended identity is the identity within a few ulps.
            prop_assert!(p[i].abs_diff_eq(v.0, 1e-5), "vertex {i}: {} vs {}", p[i], v.0);
            prop_assert!(nr[i].abs_diff_eq(v.1, 1e-5), "vertex {i}: {} vs {}", nr[i], v.1);
            prop_assert!(t[i].abs_diff_eq(v.2, 1e-5), "vertex {i}: {} vs {}", t[i], v.2);
        }
    }

    #[test]
    fn one_influence_is_the_palette_transform((palette, vertices) in case_strategy()) {
        let mut a = arrays(&vertices);
        for w in &mut a.weights {
            *w = [1.0, 0.0, 0.0, 0.0];
        }
        let (p, nr, t) = reference(&palette, &a);
        for i in 0..vertices.len() {
            let m = palette[usize::from(a.joints[i][0])];
            prop_assert_eq!(p[i], m.transform_point3(a.positions[i]), "vertex {}", i);
            let normal = m.matrix3.inverse().transpose().mul_vec3(a.normals[i]).normalize();
            prop_assert!(nr[i].abs_diff_eq(normal, 1e-5), "vertex {i}: {} vs {normal}", nr[i]);
            let tangent = m.transform_vector3(a.tangents[i].truncate()).normalize().extend(a.tangents[i].w);
            prop_assert!(t[i].abs_diff_eq(tangent, 1e-5), "vertex {i}: {} vs {tangent}", t[i]);
        }
    }
}
