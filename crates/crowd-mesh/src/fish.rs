//! [`fish_mesh`]: a generated fish for the procedural tier, a lofted body with a forked tail fin, a dorsal fin
//! and an anal fin, coloured dark on the back and silver on the belly.

use glam::{Vec2, Vec3};

use crate::procedural::ProceduralMesh;
use crate::{Error, Result};

/// The triangles of every [`fish_mesh`]: 336 for the body, 28 for the tail fin, 16 each for the dorsal and anal
/// fins.
pub const FISH_TRIANGLES: usize = 396;

/// Rings of the body behind the nose.
const RINGS: usize = 14;
/// Vertices per ring.
const SEGMENTS: usize = 12;
/// The nose's z, as a fraction of the length (the fork's tips are at `-0.5`).
const NOSE_Z: f32 = 0.5;
/// Where the body ends, at the caudal peduncle (the tail fin reaches on to `-0.5`).
const PEDUNCLE_Z: f32 = -0.30;
/// The largest half-height and half-width of the body.
const HALF_HEIGHT: f32 = 0.115;
const HALF_WIDTH: f32 = 0.05;
/// The half-height and half-width of the caudal peduncle.
const PEDUNCLE_HALF_HEIGHT: f32 = 0.028;
const PEDUNCLE_HALF_WIDTH: f32 = 0.012;
/// Half the thickness of each fin.
const FIN_HALF_THICKNESS: f32 = 0.004;

/// The tail fin's outline in `(z, y)`, counter-clockwise, with a point it is star-shaped from: a root inside the
/// peduncle, two lobes and the fork between them.
const TAIL_FIN: ([[f32; 2]; 7], [f32; 2]) = (
    [
        [-0.27, 0.024],
        [-0.40, 0.085],
        [-0.50, 0.165],
        [-0.42, 0.0],
        [-0.50, -0.165],
        [-0.40, -0.085],
        [-0.27, -0.024],
    ],
    [-0.36, 0.0],
);
/// The dorsal fin's outline (its base inside the body), counter-clockwise, and its centre.
const DORSAL_FIN: ([[f32; 2]; 4], [f32; 2]) = (
    [[0.04, 0.075], [0.24, 0.095], [0.10, 0.195], [0.02, 0.115]],
    [0.10, 0.12],
);
/// The anal fin's outline (its base inside the body), counter-clockwise, and its centre.
const ANAL_FIN: ([[f32; 2]; 4], [f32; 2]) = (
    [[-0.06, -0.05], [-0.20, -0.03], [-0.215, -0.07], [-0.12, -0.115]],
    [-0.15, -0.065],
);

/// RGBA8 colours (red in the low byte).
const BACK: [u8; 3] = [34, 62, 84];
const BELLY: [u8; 3] = [214, 220, 226];
const FIN: [u8; 3] = [72, 92, 108];
const EYE: [u8; 3] = [12, 12, 14];

/// A fish `length` mesh units long, for the procedural tier and [`Undulation::for_mesh`](crate::procedural::Undulation::for_mesh).
///
/// The body lies along +Z with the nose at `z = length / 2` and the tips of the forked tail at `z = -length / 2`,
/// so the mesh's z extent is exactly `length`; its back is +Y. The body is lofted from 14 elliptical
/// cross-sections of 12 vertices behind a single nose vertex, thickest about a third of the way back and tapering
/// to a narrow caudal peduncle, which a flat cap closes; the tail fin (two lobes and a fork), the dorsal fin and the
/// anal fin are thin closed slabs in the YZ plane whose roots lie inside the body.
/// Every part is closed, wound counter-clockwise seen from outside, with outward normals: smooth on the body,
/// flat on the fins and the cap. It has [`FISH_TRIANGLES`] triangles and 278 vertices, coloured dark on the back,
/// silver on the belly, with a dark eye on each side and grey fins.
///
/// # Errors
///
/// [`Error::Mesh`] naming the fish when `length` is not positive and finite.
pub fn fish_mesh(length: f32) -> Result<ProceduralMesh> {
    if !(length > 0.0 && length.is_finite()) {
        return Err(Error::mesh(
            "procedural mesh 'fish'",
            format!("length {length} is not positive and finite"),
        ));
    }
    let mut b = Builder::default();
    b.body(length);
    b.fin(&TAIL_FIN.0, TAIL_FIN.1, length);
    b.fin(&DORSAL_FIN.0, DORSAL_FIN.1, length);
    b.fin(&ANAL_FIN.0, ANAL_FIN.1, length);
    debug_assert_eq!(b.indices.len(), FISH_TRIANGLES * 3);
    ProceduralMesh::new("fish", b.positions, b.normals, b.colors, b.indices)
}

/// The vertex streams and triangles of a mesh under construction.
#[derive(Default)]
struct Builder {
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    colors: Vec<u32>,
    indices: Vec<u32>,
}

fn rgba8([r, g, b]: [u8; 3]) -> u32 {
    u32::from_le_bytes([r, g, b, 255])
}

/// The body's shape at `u` (0 at the nose, 1 at the peduncle), as fractions of the length: its half-width and
/// half-height. A round nose (`√u`), thickest at `u = 0.29`, down to the peduncle's section at `u = 1`.
fn section(u: f64) -> (f64, f64) {
    let shape = |u: f64| u.max(0.0).sqrt() * (1.0 - u).max(0.0).powf(1.2);
    let peak = shape(0.5 / 1.7);
    let t = shape(u) / peak;
    let tail = u * u * u;
    (
        f64::from(HALF_WIDTH) * t + f64::from(PEDUNCLE_HALF_WIDTH) * tail,
        f64::from(HALF_HEIGHT) * t + f64::from(PEDUNCLE_HALF_HEIGHT) * tail,
    )
}

/// Back to belly: the belly's silver below the flank, the back's colour above, blended by the height on the
/// section (`sin θ`).
fn body_color(sin_theta: f32) -> u32 {
    let w = ((sin_theta + 0.25) / 0.8).clamp(0.0, 1.0);
    let w = w * w * (3.0 - 2.0 * w);
    let mix = |i: usize| (f32::from(BELLY[i]) + (f32::from(BACK[i]) - f32::from(BELLY[i])) * w).round() as u8;
    rgba8([mix(0), mix(1), mix(2)])
}

impl Builder {
    fn vertex(&mut self, p: Vec3, n: Vec3, color: u32) -> u32 {
        self.positions.push(p);
        self.normals.push(n.normalize());
        self.colors.push(color);
        self.positions.len() as u32 - 1
    }

    fn triangle(&mut self, a: u32, b: u32, c: u32) {
        self.indices.extend_from_slice(&[a, b, c]);
    }

    /// The lofted body: the nose vertex, `RINGS` rings of `SEGMENTS` vertices (ring `i` at `u = (i / RINGS)^1.4`,
    /// vertex `j` at `θ = 2πj / SEGMENTS` from +X towards +Y), and a flat cap at the peduncle.
    ///
    /// Normals are the surface's: with half-width `a(z)` and half-height `b(z)`, the point
    /// `(a cos θ, b sin θ, z)` has the outward normal `(b cos θ, a sin θ, −(a b′ sin²θ + a′ b cos²θ))`, the
    /// derivatives taken in z. Winding: between ring `i` (ahead) and ring `i + 1`, the triangles `(A, C, B)` and
    /// `(B, C, D)` with `A, B` on ring `i` at `θⱼ, θⱼ₊₁` and `C, D` behind them face outward.
    fn body(&mut self, length: f32) {
        let body_length = f64::from(NOSE_Z - PEDUNCLE_Z);
        let nose = self.vertex(Vec3::new(0.0, 0.0, NOSE_Z * length), Vec3::Z, body_color(0.0));
        let first = nose + 1;
        for i in 1..=RINGS {
            let u = (i as f64 / RINGS as f64).powf(1.4);
            let (a, b) = section(u);
            // d/du by central differences (backwards at the peduncle), then dz = −body_length · du.
            let h = 1e-5;
            let (a0, b0) = section(u - h);
            let (a1, b1) = if i == RINGS { (a, b) } else { section(u + h) };
            let span = if i == RINGS { h } else { 2.0 * h };
            let (da_dz, db_dz) = ((a1 - a0) / span / -body_length, (b1 - b0) / span / -body_length);
            let z = f64::from(NOSE_Z) - u * body_length;
            for j in 0..SEGMENTS {
                let theta = std::f64::consts::TAU * j as f64 / SEGMENTS as f64;
                let (sin, cos) = theta.sin_cos();
                let p = Vec3::new((a * cos) as f32, (b * sin) as f32, z as f32) * length;
                let n = Vec3::new(
                    (b * cos) as f32,
                    (a * sin) as f32,
                    (-(a * db_dz * sin * sin + da_dz * b * cos * cos)) as f32,
                );
                let eye = i == 2 && (j == 1 || j == SEGMENTS / 2 - 1);
                let color = if eye { rgba8(EYE) } else { body_color(sin as f32) };
                self.vertex(p, n, color);
            }
        }
        let ring = |i: usize, j: usize| first + ((i - 1) * SEGMENTS + j % SEGMENTS) as u32;
        for j in 0..SEGMENTS {
            // The nose fan: (B, C, D) with B the nose.
            self.triangle(nose, ring(1, j), ring(1, j + 1));
        }
        for i in 1..RINGS {
            for j in 0..SEGMENTS {
                let (a, b, c, d) = (ring(i, j), ring(i, j + 1), ring(i + 1, j), ring(i + 1, j + 1));
                self.triangle(a, c, b);
                self.triangle(b, c, d);
            }
        }
        // The cap: the last ring again with the normal −Z, around a centre vertex, (A, centre, B).
        let z_end = PEDUNCLE_Z * length;
        let centre = self.vertex(Vec3::new(0.0, 0.0, z_end), Vec3::NEG_Z, body_color(0.0));
        let cap_first = centre + 1;
        for j in 0..SEGMENTS {
            let p = self.positions[ring(RINGS, j) as usize];
            let color = self.colors[ring(RINGS, j) as usize];
            self.vertex(p, Vec3::NEG_Z, color);
        }
        for j in 0..SEGMENTS {
            let a = cap_first + j as u32;
            let b = cap_first + ((j + 1) % SEGMENTS) as u32;
            self.triangle(a, centre, b);
        }
    }

    /// A fin: a slab `2 · FIN_HALF_THICKNESS` thick in the YZ plane over `outline` (`(z, y)` points,
    /// counter-clockwise, star-shaped from `centre`), as fractions of `length`.
    ///
    /// The +X face has the normal +X and the −X face −X, each a fan from the centre; the rim has a flat quad per
    /// outline edge whose normal is the edge's outward normal in the plane. In `(z, y)`, `cross(e₁, e₂)` of a
    /// triangle's edges is minus the x of its 3D normal, so the −X face keeps the outline's counter-clockwise order
    /// and the +X face reverses it.
    fn fin(&mut self, outline: &[[f32; 2]], centre: [f32; 2], length: f32) {
        let t = FIN_HALF_THICKNESS * length;
        let color = rgba8(FIN);
        let at = |x: f32, [z, y]: [f32; 2]| Vec3::new(x, y * length, z * length);
        let n = outline.len();
        for side in [1.0f32, -1.0] {
            let normal = Vec3::X * side;
            let c = self.vertex(at(side * t, centre), normal, color);
            let first = c + 1;
            for &p in outline {
                self.vertex(at(side * t, p), normal, color);
            }
            for k in 0..n {
                let (a, b) = (first + k as u32, first + ((k + 1) % n) as u32);
                if side > 0.0 {
                    self.triangle(c, b, a);
                } else {
                    self.triangle(c, a, b);
                }
            }
        }
        for k in 0..n {
            let (p, q) = (outline[k], outline[(k + 1) % n]);
            let d = Vec2::new(q[0] - p[0], q[1] - p[1]);
            // The outward normal of a counter-clockwise edge with direction (dz, dy) is (dy, −dz) in (z, y).
            let normal = Vec3::new(0.0, -d.x, d.y);
            let a_plus = self.vertex(at(t, p), normal, color);
            let b_plus = self.vertex(at(t, q), normal, color);
            let a_minus = self.vertex(at(-t, p), normal, color);
            let b_minus = self.vertex(at(-t, q), normal, color);
            self.triangle(a_plus, b_plus, a_minus);
            self.triangle(b_plus, b_minus, a_minus);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    const LENGTH: f32 = 2.0;

    fn body_only() -> Builder {
        let mut b = Builder::default();
        b.body(LENGTH);
        b
    }

    /// Each directed edge (by welded position) once, and its reverse once: every part is closed and consistently
    /// wound.
    fn assert_closed(positions: &[Vec3], indices: &[u32]) {
        let key = |v: u32| (positions[v as usize] * 1e5).round().as_ivec3().to_array();
        let mut edges: HashMap<([i32; 3], [i32; 3]), u32> = HashMap::new();
        for t in indices.chunks_exact(3) {
            for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
                *edges.entry((key(a), key(b))).or_default() += 1;
            }
        }
        for (&(a, b), &count) in &edges {
            assert_eq!(count, 1, "edge {a:?} → {b:?} is used {count} times");
            assert_eq!(
                edges.get(&(b, a)),
                Some(&1),
                "edge {a:?} → {b:?} has no twin: a hole or a flipped face"
            );
        }
    }

    /// Each triangle's geometric normal (counter-clockwise) agrees with its vertices' normals.
    fn assert_winding_matches_normals(positions: &[Vec3], normals: &[Vec3], indices: &[u32]) {
        for (k, t) in indices.chunks_exact(3).enumerate() {
            let [a, b, c] = [0, 1, 2].map(|i| positions[t[i] as usize]);
            let face = (b - a).cross(c - a).normalize();
            for &v in t {
                let d = face.dot(normals[v as usize]);
                assert!(d > 0.2, "triangle {k}: vertex {v}'s normal is {d} from the face's");
            }
        }
    }

    /// The signed volume of a closed mesh: positive when its faces wind counter-clockwise seen from outside.
    fn volume(positions: &[Vec3], indices: &[u32]) -> f32 {
        indices
            .chunks_exact(3)
            .map(|t| {
                let [a, b, c] = [0, 1, 2].map(|i| positions[t[i] as usize]);
                a.dot(b.cross(c)) / 6.0
            })
            .sum()
    }

    #[test]
    fn the_fish_is_closed_with_outward_normals() {
        let fish = fish_mesh(LENGTH).expect("a fish");
        assert_eq!(fish.triangle_count(), FISH_TRIANGLES);
        assert!((300..=600).contains(&fish.triangle_count()));
        assert_eq!(fish.vertex_count(), 278);
        assert_closed(fish.positions(), fish.indices());
        assert_winding_matches_normals(fish.positions(), fish.normals(), fish.indices());
        // Every closed part encloses a positive volume; the body's is about an ellipsoid's share of its box.
        let body = body_only();
        assert_closed(&body.positions, &body.indices);
        let v = volume(&body.positions, &body.indices);
        let box_volume = 2.0 * HALF_WIDTH * 2.0 * HALF_HEIGHT * (NOSE_Z - PEDUNCLE_Z) * LENGTH.powi(3);
        assert!(
            v > 0.2 * box_volume && v < 0.6 * box_volume,
            "body volume {v}, box {box_volume}"
        );
        let fins = volume(fish.positions(), fish.indices()) - v;
        assert!(fins > 0.0, "the fins' volume is {fins}");
    }

    #[test]
    fn body_normals_point_away_from_the_axis() {
        let body = body_only();
        for (v, (p, n)) in body.positions.iter().zip(&body.normals).enumerate() {
            let radial = Vec3::new(p.x, p.y, 0.0);
            if radial.length() < 1e-6 {
                // The nose points forward, the cap's centre backward.
                assert!(n.z.abs() > 0.99, "vertex {v}: {n}");
                continue;
            }
            if n.z.abs() > 0.99 {
                // The cap's ring.
                assert!(
                    *n == Vec3::NEG_Z && (p.z - PEDUNCLE_Z * LENGTH).abs() < 1e-6,
                    "vertex {v}"
                );
                continue;
            }
            assert!(n.dot(radial.normalize()) > 0.3, "vertex {v} at {p}: normal {n}");
        }
        // The fins' faces point away from their mid-plane.
        let fish = fish_mesh(LENGTH).expect("a fish");
        for (p, n) in fish.positions().iter().zip(fish.normals()).skip(body.positions.len()) {
            if n.x.abs() > 0.5 {
                assert_eq!(n.x.signum(), p.x.signum(), "fin vertex {p}: {n}");
            }
        }
    }

    #[test]
    fn fin_outlines_are_counter_clockwise_and_star_shaped() {
        let fins: [(&[[f32; 2]], [f32; 2]); 3] = [
            (&TAIL_FIN.0, TAIL_FIN.1),
            (&DORSAL_FIN.0, DORSAL_FIN.1),
            (&ANAL_FIN.0, ANAL_FIN.1),
        ];
        for (outline, c) in fins {
            for k in 0..outline.len() {
                let (p, q) = (outline[k], outline[(k + 1) % outline.len()]);
                let cross = (p[0] - c[0]) * (q[1] - c[1]) - (p[1] - c[1]) * (q[0] - c[0]);
                assert!(cross > 0.0, "{outline:?}: edge {k}");
            }
        }
    }

    #[test]
    fn the_fish_has_the_stated_length_and_proportions() {
        for length in [0.1, 1.0, 37.5] {
            let fish = fish_mesh(length).expect("a fish");
            let (min, max) = fish.bounds();
            assert!((max.z - length * 0.5).abs() <= 1e-6 * length, "nose {}", max.z);
            assert!((min.z + length * 0.5).abs() <= 1e-6 * length, "tail {}", min.z);
            assert!((max.x - HALF_WIDTH * length).abs() < 0.01 * length, "width {}", max.x);
            assert!(min.x == -max.x, "symmetric: {min} {max}");
            assert!(
                max.y > 0.15 * length && max.y < 0.25 * length,
                "the dorsal fin's tip {}",
                max.y
            );
            assert!(
                min.y < -0.1 * length && min.y > -0.2 * length,
                "the tail's lower lobe {}",
                min.y
            );
        }
        for bad in [0.0, -1.0, f32::NAN, f32::INFINITY] {
            let err = fish_mesh(bad).expect_err("a bad length").to_string();
            assert!(
                err.contains("procedural mesh 'fish'") && err.contains("length"),
                "{err}"
            );
        }
    }

    #[test]
    fn the_back_is_dark_and_the_belly_silver() {
        let fish = fish_mesh(LENGTH).expect("a fish");
        let luma = |c: u32| c.to_le_bytes()[..3].iter().map(|&b| u32::from(b)).sum::<u32>();
        let body = body_only().positions.len();
        let (mut top, mut bottom) = (u32::MAX, 0);
        for (p, &c) in fish.positions().iter().zip(fish.colors()).take(body) {
            if p.y > 0.8 * HALF_HEIGHT * LENGTH {
                top = top.min(luma(c)).min(top);
                assert!(luma(c) < 300, "back vertex {p}: {c:#010x}");
            }
            if p.y < -0.8 * HALF_HEIGHT * LENGTH {
                bottom = bottom.max(luma(c));
                assert!(luma(c) > 600, "belly vertex {p}: {c:#010x}");
            }
        }
        assert!(bottom > 0 && top < u32::MAX, "the sweep saw both");
    }
}
