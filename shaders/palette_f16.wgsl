// The f16 skinning palette formats of skin-pack, decoded with integer operations that give exactly what
// unpack2x16float gives (no SHADER_F16 and no SHADER_FLOAT16_IN_FLOAT32 capability needed).
// Each decoder returns the three rows of a PaletteEntry (shaders/palette.wgsl), so that
// p' = (dot(r0, p1), dot(r1, p1), dot(r2, p1)) with p1 = (p, 1).
// Halves are packed two per u32, the first in the low 16 bits. Translations are stored relative to a
// per-palette origin, which the decoders add back in f32.
// skin_pack::Mat3x4F16 and skin_pack::QtF16 mirror these structs; crowd-gpu's tests check the sizes with naga,
// and the Rust decode_rows functions mirror the decoders line for line.
// Requires shaders/f16.wgsl (prepended by crowd_gpu::shaders::ShaderSource::composed).

// A 3x4 affine matrix in f16, 24 bytes: row i is (unpack_halves(rows[i].x), unpack_halves(rows[i].y)),
// that is (L_i0, L_i1, L_i2, t_i - origin_i).
struct Mat3x4F16 {
    rows: array<vec2<u32>, 3>,
}

// A similarity transform in f16, 16 bytes: rotation = quaternion (x, y), (z, w) with w >= 0;
// translation_scale = (t - origin).xy, ((t - origin).z, uniform scale s). s < 0 mirrors.
struct QtF16 {
    rotation: vec2<u32>,
    translation_scale: vec2<u32>,
}

// The rows of a Mat3x4F16 with the translation origin added back.
fn mat3x4_f16_rows(e: Mat3x4F16, origin: vec3<f32>) -> array<vec4<f32>, 3> {
    let r0 = vec4<f32>(unpack_halves(e.rows[0].x), unpack_halves(e.rows[0].y));
    let r1 = vec4<f32>(unpack_halves(e.rows[1].x), unpack_halves(e.rows[1].y));
    let r2 = vec4<f32>(unpack_halves(e.rows[2].x), unpack_halves(e.rows[2].y));
    return array<vec4<f32>, 3>(
        r0 + vec4<f32>(0.0, 0.0, 0.0, origin.x),
        r1 + vec4<f32>(0.0, 0.0, 0.0, origin.y),
        r2 + vec4<f32>(0.0, 0.0, 0.0, origin.z),
    );
}

// The rows of a QtF16: s * R(q / |q|) and the translation with the origin added back.
// The quaternion is renormalised, so its f16 rounding only turns the rotation; an all-zero entry
// decodes to the zero matrix (not NaN) thanks to the max().
fn qt_f16_rows(e: QtF16, origin: vec3<f32>) -> array<vec4<f32>, 3> {
    let q0 = vec4<f32>(unpack_halves(e.rotation.x), unpack_halves(e.rotation.y));
    let ts = vec4<f32>(unpack_halves(e.translation_scale.x), unpack_halves(e.translation_scale.y));
    let q = q0 * inverseSqrt(max(dot(q0, q0), 1e-30));
    let q2 = q + q;
    let xx = q.x * q2.x;
    let yy = q.y * q2.y;
    let zz = q.z * q2.z;
    let xy = q.x * q2.y;
    let xz = q.x * q2.z;
    let yz = q.y * q2.z;
    let wx = q.w * q2.x;
    let wy = q.w * q2.y;
    let wz = q.w * q2.z;
    let s = ts.w;
    let t = ts.xyz + origin;
    return array<vec4<f32>, 3>(
        vec4<f32>(s * (1.0 - (yy + zz)), s * (xy - wz), s * (xz + wy), t.x),
        vec4<f32>(s * (xy + wz), s * (1.0 - (xx + zz)), s * (yz - wx), t.y),
        vec4<f32>(s * (xz - wy), s * (yz + wx), s * (1.0 - (xx + yy)), t.z),
    );
}
