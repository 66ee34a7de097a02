// Quaternions (x, y, z, w): the one rotation of a vector and the one snorm16 decoder that every shader uses.
// `crowd_frame`'s `unpack_rotation` mirrors `unpack_snorm16_quat` line for line. Other shaders prepend this file.

// `v` rotated by the unit quaternion `q`: `v + w t + q.xyz × t` with `t = 2 q.xyz × v`.
fn quat_rotate(q: vec4<f32>, v: vec3<f32>) -> vec3<f32> {
    let t = 2.0 * cross(q.xyz, v);
    return v + q.w * t + cross(q.xyz, t);
}

// A quaternion stored as four snorm16, (x, y) in `w.x` and (z, w) in `w.y`, low half first; normalised.
fn unpack_snorm16_quat(w: vec2<u32>) -> vec4<f32> {
    return normalize(vec4<f32>(unpack2x16snorm(w.x), unpack2x16snorm(w.y)));
}
