// The procedural tier's draw (crowd_gpu::ProceduralRenderer): one mesh drawn instanced with no bones. Each instance
// reads its record by @builtin(instance_index), displaces the vertex by the swimming wave from the record's phase
// and amplitude (`undulate`, the twin of crowd_mesh::procedural::Undulation::displace_at_cycle, line for line),
// then places it by the record's rotation, scale and position. The fragment stage lights it with frame.wgsl's
// frame_light, as crowd_skin.wgsl's fs_main does (two-sided), with vertex colour times tint.
// Requires shaders/frame.wgsl, quat.wgsl and instance_record.wgsl.

// The wave of this frame: crowd_gpu's WaveUniform, 32 bytes (crowd_mesh::procedural::Undulation with the clock and
// the reciprocal of the length computed on the CPU).
struct WaveUniform {
    // The z of the head (s = 0).
    head_z: f32,
    // 1 / length: the body coordinate s grows by it per unit of -z.
    inv_length: f32,
    // The largest lateral displacement, in mesh units (the tail's at amplitude 1).
    amplitude: f32,
    // Wavelengths along the body.
    body_waves: f32,
    // The envelope at the head, as a fraction of the tail's.
    head: f32,
    // The wave's clock in turns: frequency * time wrapped into [0, 1].
    cycle: f32,
    pad0: u32,
    pad1: u32,
}

// Group 0, binding 0: the frame (the main camera for vs_main, the depth camera for vs_depth).
@group(0) @binding(0) var<uniform> frame: FrameUniform;
// Group 0, binding 1: the wave.
@group(0) @binding(1) var<uniform> wave: WaveUniform;
// Group 0, binding 2: the instances' records, bound whole; instance i reads records[i].
@group(0) @binding(2) var<storage, read> records: array<InstanceRecord>;

const TAU: f32 = 6.283185307179586;

// The vertex of crowd_gpu's procedural mesh: 28 bytes, f32 position and unit normal, RGBA8 colour.
struct VertexIn {
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) color: u32,
}

struct VertexOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) normal: vec3<f32>,
    // Vertex colour times the record's tint.
    @location(1) color: vec4<f32>,
}

// A displaced mesh-space vertex: its position and unit normal.
struct Undulated {
    p: vec3<f32>,
    n: vec3<f32>,
}

// The swimming wave at mesh-space position `p` with unit normal `n`, for an instance of `phase` (turns) and
// `amplitude` (a fraction of wave.amplitude): x moves by a * envelope(s) * sin(2 pi fract(s * body_waves - cycle +
// phase)), and the normal by the inverse transpose of that shear in x. Keep in step with
// crowd_mesh::procedural::Undulation::displace_at_cycle.
fn undulate(p: vec3<f32>, n: vec3<f32>, phase: f32, amplitude: f32) -> Undulated {
    let s_raw = (wave.head_z - p.z) * wave.inv_length;
    let s = clamp(s_raw, 0.0, 1.0);
    let ds_dz = select(0.0, -wave.inv_length, s_raw > 0.0 && s_raw < 1.0);
    let envelope = wave.head + (1.0 - wave.head) * s * s;
    let d_envelope = 2.0 * (1.0 - wave.head) * s;
    let turns = s * wave.body_waves - wave.cycle + phase;
    // In [-pi, pi), where Vulkan bounds the error of sin and cos.
    let angle = TAU * (fract(turns + 0.5) - 0.5);
    let sin_a = sin(angle);
    let cos_a = cos(angle);
    let a = wave.amplitude * amplitude;
    let offset = a * envelope * sin_a;
    let d_offset_dz = a * (d_envelope * sin_a + envelope * cos_a * (TAU * wave.body_waves)) * ds_dz;
    return Undulated(vec3<f32>(p.x + offset, p.y, p.z), normalize(vec3<f32>(n.x, n.y, n.z - d_offset_dz * n.x)));
}

@vertex
fn vs_main(v: VertexIn, @builtin(instance_index) instance: u32) -> VertexOut {
    let r = records[instance];
    let u = undulate(v.position, v.normal, record_phase(r), record_amplitude(r));
    var out: VertexOut;
    // The same placement as vs_depth's, so that a depth-only pass writes the depth this pass draws at.
    out.clip = frame.view_proj * vec4<f32>(record_transform_point(r, u.p), 1.0);
    out.normal = quat_rotate(record_rotation(r), u.n);
    out.color = unpack4x8unorm(v.color) * record_tint(r);
    return out;
}

// The depth-only draw (shadow maps): the same displacement and placement of the position, nothing else.
@vertex
fn vs_depth(@location(0) position: vec3<f32>, @builtin(instance_index) instance: u32) -> @builtin(position) vec4<f32> {
    let r = records[instance];
    let u = undulate(position, vec3<f32>(0.0, 0.0, 1.0), record_phase(r), record_amplitude(r));
    return frame.view_proj * vec4<f32>(record_transform_point(r, u.p), 1.0);
}

@fragment
fn fs_main(in: VertexOut, @builtin(front_facing) front: bool) -> @location(0) vec4<f32> {
    // Two-sided, as crowd_skin.wgsl's fs_main: a back face is lit as seen.
    let n = normalize(select(-in.normal, in.normal, front));
    return vec4<f32>(in.color.rgb * frame_light(frame, n), 1.0);
}
