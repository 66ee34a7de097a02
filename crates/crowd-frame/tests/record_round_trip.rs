//! Every field of an instance record decodes within its stated bound, over random instances; the largest errors
//! seen are printed.

use crowd_frame::{
    AMPLITUDE_ERROR_BOUND, FRACTION_ERROR_BOUND, InstanceRecord, PHASE_ERROR_BOUND, ROTATION_ERROR_BOUND, RecordAnim,
    SCALE_MAX, SCALE_MIN, SCALE_RELATIVE_ERROR_BOUND,
};
use glam::{DQuat, Quat, Vec3, Vec4};
use proptest::prelude::*;

/// The rotation angle between two quaternions, in f64 (f32's `acos` near 1 is far coarser than the bound).
fn angle(a: Quat, b: Quat) -> f64 {
    let d = |q: Quat| DQuat::from_xyzw(q.x.into(), q.y.into(), q.z.into(), q.w.into()).normalize();
    let r = d(a).conjugate() * d(b);
    2.0 * r.xyz().length().atan2(r.w.abs())
}

/// The distance between two phases around the circle, in turns, in f64.
fn turn_distance(a: f32, b: f32) -> f64 {
    let d = (f64::from(a) - f64::from(b)).rem_euclid(1.0);
    d.min(1.0 - d)
}

/// Phases: within one turn, a hair either side of whole turns, or far away (wrapped by the packer).
fn phase() -> impl Strategy<Value = f32> {
    prop_oneof![
        0.0f32..1.0,
        (-3i32..3, -1e-5f32..1e-5).prop_map(|(k, e)| k as f32 + e),
        -1e4f32..1e4,
    ]
}

/// Unit quaternions: uniform over the sphere, or with one component near zero (the hemisphere's edge).
fn rotation() -> impl Strategy<Value = Quat> {
    prop_oneof![
        prop::array::uniform4(-1.0f32..1.0),
        (prop::array::uniform3(-1.0f32..1.0), -1e-6f32..1e-6).prop_map(|(v, w)| [v[0], v[1], v[2], w]),
    ]
    .prop_filter("a direction", |q| Vec4::from_array(*q).length() > 1e-3)
    .prop_map(|q| Quat::from_vec4(Vec4::from_array(q).normalize()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn fields_decode_within_their_bounds(
        position in prop::array::uniform3(-1e5f32..1e5),
        q in rotation(),
        log_scale in SCALE_MIN.log2()..SCALE_MAX.log2(),
        fraction in 0.0f32..=1.0,
        slots in prop::array::uniform2(any::<u16>()),
        palette in any::<u32>(),
        pooled in any::<bool>(),
        tint in prop::array::uniform4(0.0f32..=1.0),
    ) {
        let scale = log_scale.exp2().clamp(SCALE_MIN, SCALE_MAX);
        let anim = if pooled { RecordAnim::Pooled { slots, fraction } } else { RecordAnim::Unique { palette } };
        let r = InstanceRecord::new(Vec3::from(position), q, scale, anim, Vec4::from(tint)).expect("packs");
        let d = r.decode();
        prop_assert_eq!(d.position, Vec3::from(position));
        prop_assert!(angle(q, d.rotation) <= f64::from(ROTATION_ERROR_BOUND), "{} rad", angle(q, d.rotation));
        prop_assert!(((d.scale - scale) / scale).abs() <= SCALE_RELATIVE_ERROR_BOUND, "{} vs {}", d.scale, scale);
        prop_assert!((Vec4::from(tint) - d.tint).abs().max_element() <= 1.0 / 510.0 + 1e-7);
        if pooled {
            prop_assert!((d.fraction - fraction).abs() <= FRACTION_ERROR_BOUND, "{} vs {}", d.fraction, fraction);
            prop_assert_eq!(d.slots, [u32::from(slots[0]), u32::from(slots[1])]);
        } else {
            prop_assert_eq!(d.palette, palette);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn procedural_phase_and_amplitude_decode_within_their_bounds(
        phase in phase(),
        amplitude in prop_oneof![0.0f32..=1.0, Just(0.0), Just(1.0)],
        q in rotation(),
    ) {
        let anim = RecordAnim::Procedural { phase, amplitude };
        let r = InstanceRecord::new(Vec3::ZERO, q, 1.0, anim, Vec4::ONE).expect("packs");
        let d = r.decode();
        prop_assert!((0.0..=1.0).contains(&d.phase), "decoded phase {}", d.phase);
        let e = turn_distance(d.phase, phase);
        prop_assert!(e <= f64::from(PHASE_ERROR_BOUND), "phase {} decodes as {} ({e:e} turns)", phase, d.phase);
        prop_assert!(
            (d.amplitude - amplitude).abs() <= AMPLITUDE_ERROR_BOUND,
            "amplitude {} decodes as {}", amplitude, d.amplitude
        );
        // The other fields are unaffected by the procedural word.
        prop_assert!(angle(q, d.rotation) <= f64::from(ROTATION_ERROR_BOUND));
        prop_assert_eq!(d.scale, 1.0);
        prop_assert_eq!(d.fraction, 0.0);
    }
}

/// The largest procedural errors over a deterministic sweep of phases (every unorm16 step crossed, negative phases
/// and whole turns) and amplitudes, printed, and each within its bound.
#[test]
fn largest_procedural_errors_over_a_sweep() {
    let (mut phase_error, mut amplitude_error) = (0.0f64, 0.0f32);
    for i in 0..400_000u32 {
        let phase = -2.0 + i as f32 * (4.0 / 400_000.0) + (i % 7) as f32 * 1.3e-6;
        let amplitude = (i as f32 * 0.618_034).fract();
        let anim = RecordAnim::Procedural { phase, amplitude };
        let d = InstanceRecord::new(Vec3::ZERO, Quat::IDENTITY, 1.0, anim, Vec4::ONE)
            .expect("packs")
            .decode();
        phase_error = phase_error.max(turn_distance(d.phase, phase));
        amplitude_error = amplitude_error.max((d.amplitude - amplitude).abs());
    }
    eprintln!(
        "largest errors: phase {phase_error:.3e} turns (bound {PHASE_ERROR_BOUND:.3e}), amplitude {amplitude_error:.3e} (bound {AMPLITUDE_ERROR_BOUND:.3e})"
    );
    assert!(phase_error <= f64::from(PHASE_ERROR_BOUND));
    assert!(amplitude_error <= AMPLITUDE_ERROR_BOUND);
}

/// The largest errors over a deterministic sweep, printed for the record, and each within its bound.
#[test]
fn largest_errors_over_a_sweep() {
    let (mut rotation, mut scale, mut fraction) = (0.0f64, 0.0f32, 0.0f32);
    for i in 0..200_000u32 {
        let a = i as f32 * 0.618_034;
        let q = Quat::from_euler(
            glam::EulerRot::YXZ,
            a * 3.1,
            (a * 1.7).sin() * 3.0,
            (a * 0.3).cos() * 3.0,
        );
        let s = (SCALE_MIN.log2() + (SCALE_MAX.log2() - SCALE_MIN.log2()) * (i as f32 / 200_000.0)).exp2();
        let s = s.clamp(SCALE_MIN, SCALE_MAX);
        let f = i as f32 / 199_999.0;
        let anim = RecordAnim::Pooled {
            slots: [0, 1],
            fraction: f,
        };
        let d = InstanceRecord::new(Vec3::ZERO, q, s, anim, Vec4::ONE)
            .expect("packs")
            .decode();
        rotation = rotation.max(angle(q, d.rotation));
        scale = scale.max(((d.scale - s) / s).abs());
        fraction = fraction.max((d.fraction - f).abs());
    }
    eprintln!(
        "largest errors: rotation {rotation:.3e} rad (bound {ROTATION_ERROR_BOUND:.3e}), scale {scale:.3e} relative (bound {SCALE_RELATIVE_ERROR_BOUND:.3e}), fraction {fraction:.3e} (bound {FRACTION_ERROR_BOUND:.3e})"
    );
    assert!(rotation <= f64::from(ROTATION_ERROR_BOUND));
    assert!(scale <= SCALE_RELATIVE_ERROR_BOUND);
    assert!(fraction <= FRACTION_ERROR_BOUND);
}
