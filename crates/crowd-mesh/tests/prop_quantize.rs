//! Every vertex quantizer of `crowd_mesh::quantize` decodes within its stated bound, on random inputs that cover
//! both hemispheres of the octahedral map, UVs inside and outside `[0, 1]`, and weight sets with zeros.

use crowd_mesh::quantize::{
    OCT_NORMAL_ERROR_BOUND, UV_UNORM16_ERROR_BOUND, WEIGHT_ERROR_BOUND, decode_oct_normal, decode_uv_f16,
    decode_uv_unorm16, decode_weights, encode_oct_normal, encode_rgba8, encode_uv_f16, encode_uv_unorm16,
    quantize_weights, uv_f16_error_bound,
};
use glam::{Vec2, Vec3, Vec4};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]

    #[test]
    fn normals_turn_by_at_most_the_bound(x in -1.0f32..1.0, y in -1.0f32..1.0, z in -1.0f32..1.0, scale in 0.01f32..100.0) {
        let v = Vec3::new(x, y, z);
        prop_assume!(v.length() > 1e-3);
        let n = v.normalize();
        let d = decode_oct_normal(encode_oct_normal(v * scale));
        // acos loses precision near 1; the cross product's length is the sine of the angle.
        let angle = n.cross(d).length().asin();
        prop_assert!(n.dot(d) > 0.0 && angle <= OCT_NORMAL_ERROR_BOUND, "{n} -> {d}: {angle}");
    }

    #[test]
    fn unit_uvs_decode_within_half_a_unorm16_step(u in 0.0f32..=1.0, v in 0.0f32..=1.0) {
        let d = decode_uv_unorm16(encode_uv_unorm16(Vec2::new(u, v)));
        prop_assert!((d.x - u).abs() <= UV_UNORM16_ERROR_BOUND && (d.y - v).abs() <= UV_UNORM16_ERROR_BOUND);
    }

    #[test]
    fn tiling_uvs_decode_within_half_an_f16_ulp(u in -4000.0f32..4000.0, v in -1e-4f32..1e-4) {
        let d = decode_uv_f16(encode_uv_f16(Vec2::new(u, v)));
        prop_assert!((d.x - u).abs() <= uv_f16_error_bound(u), "{u} -> {}", d.x);
        prop_assert!((d.y - v).abs() <= uv_f16_error_bound(v), "{v} -> {}", d.y);
    }

    #[test]
    fn weights_sum_to_255_and_stay_within_a_step(
        first in 1e-3f32..1.0,
        rest in prop::array::uniform3(prop_oneof![Just(0.0f32), 0.0f32..1.0]),
        turn in 0usize..4,
    ) {
        // One weight is positive, at any influence; the others may be zero.
        let mut w = [first, rest[0], rest[1], rest[2]];
        w.rotate_left(turn);
        let sum: f32 = w.iter().sum();
        let q = quantize_weights(w).expect("valid weights");
        let bytes = [q & 0xff, (q >> 8) & 0xff, (q >> 16) & 0xff, q >> 24];
        prop_assert_eq!(bytes.iter().sum::<u32>(), 255);
        let d = decode_weights(q);
        for k in 0..4 {
            prop_assert!((d[k] - w[k] / sum).abs() < WEIGHT_ERROR_BOUND + 1e-6, "{w:?} -> {d}");
            if w[k] == 0.0 {
                prop_assert_eq!(bytes[k], 0);
            }
        }
    }

    #[test]
    fn colours_round_within_half_a_step(r in 0.0f32..=1.0, g in 0.0f32..=1.0, b in 0.0f32..=1.0, a in 0.0f32..=1.0) {
        let c = Vec4::new(r, g, b, a);
        let q = encode_rgba8(c);
        let d = Vec4::from_array([0, 8, 16, 24].map(|s| ((q >> s) & 0xff) as f32 / 255.0));
        prop_assert!((d - c).abs().max_element() <= 1.0 / 510.0 + 1e-6);
    }
}
