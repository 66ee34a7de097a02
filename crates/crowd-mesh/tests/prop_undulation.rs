//! `Undulation::displace`, the procedural tier's CPU reference, over random waves, vertices, phases, amplitudes and
//! times: amplitude 0 changes nothing, the lateral displacement stays within the envelope, the wave repeats every
//! `1 / frequency` seconds, and normals stay unit length and perpendicular to the displaced surface (checked against
//! finite differences of the displacement).

use crowd_mesh::Undulation;
use glam::Vec3;
use proptest::prelude::*;

fn undulation() -> impl Strategy<Value = Undulation> {
    (
        -2.0f32..2.0,
        0.2f32..10.0,
        0.0f32..0.15,
        -1.5f32..1.5,
        0.0f32..5.0,
        0.0f32..=1.0,
    )
        .prop_map(|(head_z, length, amplitude, body_waves, frequency, head)| Undulation {
            head_z: head_z * length,
            length,
            amplitude: amplitude * length,
            body_waves,
            frequency,
            head,
        })
}

fn unit() -> impl Strategy<Value = Vec3> {
    prop::array::uniform3(-1.0f32..1.0)
        .prop_filter("a direction", |v| Vec3::from(*v).length() > 1e-2)
        .prop_map(|v| Vec3::from(v).normalize())
}

/// A vertex of the body: `s` in `[0.02, 0.98]`, away from the clamps, and a lateral and vertical offset.
fn vertex(u: &Undulation) -> impl Strategy<Value = Vec3> + use<> {
    let (head_z, length) = (u.head_z, u.length);
    (0.02f32..0.98, -0.2f32..0.2, -0.2f32..0.2)
        .prop_map(move |(s, x, y)| Vec3::new(x * length, y * length, head_z - s * length))
}

fn case() -> impl Strategy<Value = (Undulation, Vec3, Vec3, f32, f32, f64)> {
    undulation().prop_flat_map(|u| (Just(u), vertex(&u), unit(), -3.0f32..3.0, 0.0f32..=1.0, -1e3f64..1e4))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn amplitude_zero_changes_nothing((u, p, n, phase, _, time) in case()) {
        let (q, m) = u.displace(p, n, phase, 0.0, time);
        prop_assert_eq!(q, p);
        prop_assert!((m - n).abs().max_element() <= 1e-6, "{} vs {}", m, n);
    }

    #[test]
    fn the_lateral_displacement_stays_within_the_envelope((u, p, n, phase, amplitude, time) in case()) {
        let (q, _) = u.displace(p, n, phase, amplitude, time);
        prop_assert_eq!((q.y, q.z), (p.y, p.z), "only x moves");
        let s = (u.head_z - p.z) / u.length;
        let bound = u.amplitude * amplitude * u.envelope(s);
        prop_assert!((q.x - p.x).abs() <= bound * (1.0 + 1e-5) + 1e-6 * u.length, "{} past {}", q.x - p.x, bound);
    }

    #[test]
    fn the_wave_repeats_every_period((u, p, n, phase, amplitude, time) in case()) {
        prop_assume!(u.frequency > 0.05);
        let period = 1.0 / f64::from(u.frequency);
        let (a, na) = u.displace(p, n, phase, amplitude, time);
        for k in [1.0, 3.0, -2.0] {
            let (b, nb) = u.displace(p, n, phase, amplitude, time + k * period);
            // The clock is wrapped in f64, so a whole number of periods changes the cycle by an f32 rounding only.
            prop_assert!((a - b).abs().max_element() <= 2e-5 * u.length, "{} vs {} after {} periods", a, b, k);
            prop_assert!((na - nb).abs().max_element() <= 2e-4, "{} vs {}", na, nb);
        }
        // A whole turn of phase is the same instance.
        let (c, _) = u.displace(p, n, phase + 1.0, amplitude, time);
        prop_assert!((a - c).abs().max_element() <= 2e-5 * u.length);
    }

    #[test]
    fn normals_stay_unit_and_perpendicular_to_the_surface((u, p, n, phase, amplitude, time) in case()) {
        let (q, m) = u.displace(p, n, phase, amplitude, time);
        prop_assert!((m.length() - 1.0).abs() <= 1e-5, "|n| = {}", m.length());
        // Two tangents of the undisplaced surface at p, displaced by central differences: the new normal is
        // perpendicular to both (the displacement's Jacobian maps tangents to tangents).
        let t1 = n.any_orthonormal_vector();
        let t2 = n.cross(t1);
        // Steps of 0.3% of the length: the truncation error (h² · offset‴ / 6) and the f32 rounding of the
        // positions (a few ulps over 2h) both stay under a tenth of the tolerance.
        let h = 3e-3 * u.length;
        for t in [t1, t2] {
            let ahead = u.displace(p + t * h, n, phase, amplitude, time).0;
            let behind = u.displace(p - t * h, n, phase, amplitude, time).0;
            let tangent = (ahead - behind).normalize();
            prop_assert!(m.dot(tangent).abs() <= 2e-3, "n' · t = {} at {} (moved to {})", m.dot(tangent), p, q);
        }
    }
}
