//! Closed surfaces for the body parts: tubes swept through elliptical cross-sections, and ellipsoids.
//!
//! Every surface is a closed triangle mesh with outward-facing counter-clockwise triangles: rings of
//! vertices around a centre line, joined by quads, and closed at both ends by a fan around a pole vertex.

use std::f64::consts::{FRAC_PI_2, PI, TAU};

use glam::DVec3;

/// A closed triangle mesh, before it is painted with colours and skin weights.
#[derive(Clone, Debug, Default)]
pub struct Surface {
    /// Vertex positions in model space.
    pub positions: Vec<DVec3>,
    /// Counter-clockwise triangles, seen from outside, indexing `positions`.
    pub triangles: Vec<[u32; 3]>,
}

impl Surface {
    /// The mirror image through the plane x = 0, with the triangles' winding reversed so that they still face out.
    pub fn mirrored(&self) -> Surface {
        Surface {
            positions: self.positions.iter().map(|p| DVec3::new(-p.x, p.y, p.z)).collect(),
            triangles: self.triangles.iter().map(|&[a, b, c]| [a, c, b]).collect(),
        }
    }

    /// The enclosed volume: positive when the triangles face out.
    #[cfg(test)]
    pub fn signed_volume(&self) -> f64 {
        self.triangles
            .iter()
            .map(|t| {
                let [a, b, c] = t.map(|i| self.positions[i as usize]);
                a.dot(b.cross(c)) / 6.0
            })
            .sum()
    }
}

/// A control cross-section of a tube.
#[derive(Clone, Copy, Debug)]
pub struct Station {
    /// The centre of the cross-section.
    pub center: DVec3,
    /// The half-width along the tube's reference direction.
    pub radius_a: f64,
    /// The half-width across the reference direction.
    pub radius_b: f64,
}

impl Station {
    /// A station at `center` with half-widths `radius_a` and `radius_b`.
    pub fn new(center: DVec3, radius_a: f64, radius_b: f64) -> Self {
        Self {
            center,
            radius_a,
            radius_b,
        }
    }
}

/// A tube through a sequence of stations, smoothly interpolated, with rounded ends.
#[derive(Clone, Debug)]
pub struct Tube {
    /// The control cross-sections, at least two, from the start to the end of the tube.
    pub stations: Vec<Station>,
    /// Rings of vertices between two consecutive stations.
    pub rings_per_span: usize,
    /// Vertices per ring.
    pub segments: usize,
    /// The direction that `radius_a` is measured along, projected onto each cross-section's plane.
    pub reference: DVec3,
    /// The superellipse exponent of the cross-sections: 2 is an ellipse, larger is boxier.
    pub exponent: f64,
    /// The length of the start cap as a fraction of the first station's mean radius (1 is a hemisphere).
    pub start_cap: f64,
    /// The length of the end cap as a fraction of the last station's mean radius.
    pub end_cap: f64,
}

/// Uniform Catmull-Rom interpolation between `p1` and `p2` at `u` in [0, 1], and its derivative.
fn catmull_rom(p0: DVec3, p1: DVec3, p2: DVec3, p3: DVec3, u: f64) -> (DVec3, DVec3) {
    let (u2, u3) = (u * u, u * u * u);
    let value = 0.5
        * (2.0 * p1
            + (p2 - p0) * u
            + (2.0 * p0 - 5.0 * p1 + 4.0 * p2 - p3) * u2
            + (3.0 * p1 - p0 - 3.0 * p2 + p3) * u3);
    let slope = 0.5
        * ((p2 - p0)
            + (2.0 * p0 - 5.0 * p1 + 4.0 * p2 - p3) * (2.0 * u)
            + (3.0 * p1 - p0 - 3.0 * p2 + p3) * (3.0 * u2));
    (value, slope)
}

/// One ring of a tube: centre, right-handed frame (`a`, `b`, tangent) and half-widths.
#[derive(Clone, Copy, Debug)]
struct Ring {
    center: DVec3,
    a: DVec3,
    b: DVec3,
    radius_a: f64,
    radius_b: f64,
}

/// The unit superellipse point at angle `theta`: (cos θ, sin θ) with each coordinate raised to 2/exponent.
fn superellipse(theta: f64, exponent: f64) -> (f64, f64) {
    let shape = |c: f64| c.signum() * c.abs().powf(2.0 / exponent);
    (shape(theta.cos()), shape(theta.sin()))
}

impl Tube {
    /// The interpolated rings, from the start to the end, without the caps.
    fn rings(&self) -> Vec<Ring> {
        let n = self.stations.len();
        assert!(n >= 2, "a tube needs at least two stations");
        let at = |i: isize| self.stations[i.clamp(0, n as isize - 1) as usize];
        let mut rings = Vec::new();
        let steps = (n - 1) * self.rings_per_span;
        for k in 0..=steps {
            let span = (k / self.rings_per_span).min(n - 2) as isize;
            let u = (k as f64 - span as f64 * self.rings_per_span as f64) / self.rings_per_span as f64;
            let (s0, s1, s2, s3) = (at(span - 1), at(span), at(span + 1), at(span + 2));
            let (center, slope) = catmull_rom(s0.center, s1.center, s2.center, s3.center, u);
            let radius = |f: fn(&Station) -> f64| {
                let v = |s: Station| DVec3::splat(f(&s));
                catmull_rom(v(s0), v(s1), v(s2), v(s3), u).0.x
            };
            let tangent = slope.normalize();
            let a = (self.reference - tangent * self.reference.dot(tangent)).normalize();
            let b = tangent.cross(a);
            rings.push(Ring {
                center,
                a,
                b,
                radius_a: radius(|s| s.radius_a),
                radius_b: radius(|s| s.radius_b),
            });
        }
        rings
    }

    /// Builds the closed surface.
    pub fn build(&self) -> Surface {
        let body = self.rings();
        let cap_rings = (self.segments / 4).max(1);
        let cap = |ring: &Ring, tangent: DVec3, fraction: f64| -> (Vec<Ring>, DVec3) {
            let length = fraction * 0.5 * (ring.radius_a + ring.radius_b);
            let rings = (1..=cap_rings)
                .map(|k| {
                    let angle = FRAC_PI_2 * k as f64 / (cap_rings + 1) as f64;
                    Ring {
                        center: ring.center + tangent * (length * angle.sin()),
                        radius_a: ring.radius_a * angle.cos(),
                        radius_b: ring.radius_b * angle.cos(),
                        ..*ring
                    }
                })
                .collect();
            (rings, ring.center + tangent * length)
        };
        let first = body[0];
        let last = body[body.len() - 1];
        let (start_rings, start_pole) = cap(&first, first.a.cross(first.b) * -1.0, self.start_cap);
        let (end_rings, end_pole) = cap(&last, last.a.cross(last.b), self.end_cap);
        let rings: Vec<Ring> = start_rings.into_iter().rev().chain(body).chain(end_rings).collect();
        let profile: Vec<(f64, f64)> = (0..self.segments)
            .map(|j| superellipse(TAU * j as f64 / self.segments as f64, self.exponent))
            .collect();
        let points = rings
            .iter()
            .map(|r| {
                profile
                    .iter()
                    .map(|&(x, y)| r.center + r.a * (r.radius_a * x) + r.b * (r.radius_b * y))
                    .collect()
            })
            .collect();
        close_rings(points, start_pole, end_pole)
    }
}

/// Joins rings of equal size into a closed surface with a pole at each end.
///
/// The rings run from the start pole to the end pole, and each ring's vertices turn counter-clockwise
/// about the direction from the start to the end.
fn close_rings(rings: Vec<Vec<DVec3>>, start_pole: DVec3, end_pole: DVec3) -> Surface {
    let segments = rings[0].len();
    let mut surface = Surface::default();
    surface.positions.push(start_pole);
    for ring in &rings {
        debug_assert_eq!(ring.len(), segments, "rings of a surface have equal sizes");
        surface.positions.extend(ring);
    }
    let end = surface.positions.len() as u32;
    surface.positions.push(end_pole);
    let vertex = |ring: usize, j: usize| (1 + ring * segments + j % segments) as u32;
    for j in 0..segments {
        surface.triangles.push([0, vertex(0, j + 1), vertex(0, j)]);
    }
    for k in 0..rings.len() - 1 {
        for j in 0..segments {
            surface
                .triangles
                .push([vertex(k, j), vertex(k, j + 1), vertex(k + 1, j)]);
            surface
                .triangles
                .push([vertex(k, j + 1), vertex(k + 1, j + 1), vertex(k + 1, j)]);
        }
    }
    let last = rings.len() - 1;
    for j in 0..segments {
        surface.triangles.push([vertex(last, j), vertex(last, j + 1), end]);
    }
    surface
}

/// An ellipsoid with half-axes `radii` along `axis` (from pole to pole), along the part of `reference`
/// perpendicular to `axis`, and across both.
pub fn ellipsoid(center: DVec3, axis: DVec3, reference: DVec3, radii: DVec3, rings: usize, segments: usize) -> Surface {
    let t = axis.normalize();
    let a = (reference - t * reference.dot(t)).normalize();
    let b = t.cross(a);
    let points = (1..rings)
        .map(|k| {
            let polar = PI * k as f64 / rings as f64;
            let (along, across) = (-polar.cos(), polar.sin());
            (0..segments)
                .map(|j| {
                    let theta = TAU * j as f64 / segments as f64;
                    center
                        + t * (radii.x * along)
                        + a * (radii.y * across * theta.cos())
                        + b * (radii.z * across * theta.sin())
                })
                .collect()
        })
        .collect();
    close_rings(points, center - t * radii.x, center + t * radii.x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn surfaces_are_closed_and_face_out() {
        let tube = Tube {
            stations: vec![
                Station::new(DVec3::ZERO, 0.1, 0.2),
                Station::new(DVec3::new(0.0, 0.0, 1.0), 0.1, 0.2),
                Station::new(DVec3::new(0.0, 0.2, 2.0), 0.1, 0.2),
            ],
            rings_per_span: 4,
            segments: 12,
            reference: DVec3::X,
            exponent: 2.0,
            start_cap: 1.0,
            end_cap: 0.5,
        };
        let sphere = ellipsoid(DVec3::ONE, DVec3::Y, DVec3::X, DVec3::splat(1.0), 24, 32);
        for surface in [tube.build(), sphere.clone(), tube.build().mirrored()] {
            assert!(surface.signed_volume() > 0.0);
            // Every edge of a closed surface is used once in each direction.
            let mut edges: Vec<(u32, u32)> = surface
                .triangles
                .iter()
                .flat_map(|&[a, b, c]| [(a, b), (b, c), (c, a)])
                .collect();
            edges.sort_unstable();
            let mut reversed: Vec<(u32, u32)> = edges.iter().map(|&(a, b)| (b, a)).collect();
            reversed.sort_unstable();
            assert_eq!(edges, reversed);
        }
        let volume = sphere.signed_volume();
        assert!((volume - 4.0 / 3.0 * PI).abs() < 0.05, "unit sphere volume {volume}");
    }
}
