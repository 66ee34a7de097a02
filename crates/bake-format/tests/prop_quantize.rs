//! Property tests of the VAT quantizers' error bounds (unorm positions relative to a box, octahedral normals) and
//! of the (vertex, frame) → texel layout formula.

use bake_format::quantize::{
    OCT8_ERROR_BOUND, OCT16_ERROR_BOUND, angle_between, decode_oct, decode_position, encode_oct8, encode_oct16,
    encode_position, position_error_bound, position_steps,
};
use bake_format::{VatFormat, VatLayout, VatQuant};
use glam::Vec3;
use proptest::prelude::*;

fn vec3(range: std::ops::Range<f32>) -> impl Strategy<Value = Vec3> {
    (range.clone(), range.clone(), range).prop_map(|(x, y, z)| Vec3::new(x, y, z))
}

/// A box (its corner and its positive extents, some tiny or flat) and a point inside it, given as fractions.
fn box_and_point() -> impl Strategy<Value = (Vec3, Vec3, Vec3)> {
    let extent = prop_oneof![0.0f32..1e-6, 1e-3f32..5.0, 5.0f32..300.0, Just(0.0f32)];
    (
        vec3(-500.0..500.0),
        (extent.clone(), extent.clone(), extent),
        vec3(0.0..1.0),
    )
        .prop_map(|(min, (ex, ey, ez), f)| {
            let e = Vec3::new(ex, ey, ez);
            (min, min + e, min + e * f)
        })
}

/// Unit normals, with the axes, the octahedron's edges and the lower hemisphere's folds well represented.
fn normal() -> impl Strategy<Value = Vec3> {
    prop_oneof![
        vec3(-1.0..1.0)
            .prop_filter("non-zero", |v| v.length() > 1e-3)
            .prop_map(Vec3::normalize),
        (0usize..6).prop_map(|i| [Vec3::X, -Vec3::X, Vec3::Y, -Vec3::Y, Vec3::Z, -Vec3::Z][i]),
        (-1.0f32..1.0, prop::bool::ANY).prop_map(|(x, up)| {
            // On the equator or just off it.
            Vec3::new(x, 1.0 - x.abs(), if up { 1e-4 } else { -1e-4 }).normalize()
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn unorm_positions_are_within_their_bound(
        (min, max, p) in box_and_point(),
        bits in prop_oneof![Just([16u32, 16, 16]), Just([11u32, 11, 10])],
    ) {
        let step = position_steps(min, max, bits);
        let codes = encode_position(p, min, step, bits);
        for (c, b) in codes.iter().zip(bits) {
            prop_assert!(*c < (1 << b));
        }
        let q = decode_position(codes, min, step);
        let bound = position_error_bound(min, max, bits);
        prop_assert!(q.distance(p) <= bound, "{p} -> {q}: {} > {bound}", q.distance(p));
    }

    #[test]
    fn octahedral_normals_are_within_their_bound(n in normal()) {
        let d8 = decode_oct(encode_oct8(n).map(u32::from), 8);
        let d16 = decode_oct(encode_oct16(n).map(u32::from), 16);
        prop_assert!((d8.length() - 1.0).abs() < 1e-5 && (d16.length() - 1.0).abs() < 1e-5);
        prop_assert!(angle_between(d8, n) <= OCT8_ERROR_BOUND, "{n}: {}", angle_between(d8, n));
        prop_assert!(angle_between(d16, n) <= OCT16_ERROR_BOUND, "{n}: {}", angle_between(d16, n));
    }

    #[test]
    fn texels_decode_within_the_format_bounds((min, max, p) in box_and_point(), n in normal()) {
        for format in VatFormat::ALL {
            let quant = VatQuant::new(min, max, format);
            let [s0, s1] = format.plane_texel_sizes();
            let (mut t0, mut t1) = (vec![0u8; s0], vec![0u8; s1]);
            let mut planes: [&mut [u8]; 2] = [&mut t0, &mut t1];
            format_encode(format, p, n, &quant, &mut planes);
            let (q, m) = format.decode(&t0, &t1, &quant);
            prop_assert!(q.distance(p) <= bake_format::vat_position_error_bound(format, min, max));
            prop_assert!(angle_between(m, n) <= format.normal_error_bound());
        }
    }

    #[test]
    fn the_layout_places_every_vertex_frame_once_within_the_limits(
        vertices in 1u32..3000,
        frames in 1u32..40,
        width in 1u32..9000,
        height in 1u32..200,
    ) {
        match VatLayout::new(vertices, frames, width, height) {
            Ok(l) => {
                prop_assert!(l.width <= width && l.height <= height && l.width * l.rows_per_frame >= vertices);
                prop_assert!(l.width * (l.rows_per_frame - 1) < vertices, "no empty row per frame");
                let mut seen = vec![false; l.texel_count().unwrap()];
                for f in 0..frames {
                    for v in 0..vertices {
                        let t = l.texel(v, f);
                        prop_assert!(t.x < l.width && t.y < l.height && t.layer < l.layers);
                        // The documented formula, spelled out.
                        prop_assert_eq!(t.layer, f / l.frames_per_layer);
                        prop_assert_eq!(t.y, (f % l.frames_per_layer) * l.rows_per_frame + v / l.width);
                        prop_assert_eq!(t.x, v % l.width);
                        let i = l.texel_index(t);
                        prop_assert!(!seen[i]);
                        seen[i] = true;
                    }
                }
            }
            Err(bake_format::Error::DeviceLimit { needed, .. }) => {
                prop_assert!(vertices.div_ceil(width) > height);
                prop_assert_eq!(needed, u64::from(vertices.div_ceil(width)));
            }
            Err(e) => prop_assert!(false, "{e}"),
        }
    }
}

/// Encodes through the public decoder's inverse: a one-vertex, one-frame VAT would do the same.
fn format_encode(format: VatFormat, p: Vec3, n: Vec3, quant: &VatQuant, planes: &mut [&mut [u8]; 2]) {
    bake_format::quantize::encode_texel(format, p, n, quant, planes);
}
