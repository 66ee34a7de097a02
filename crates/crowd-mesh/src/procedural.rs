//! The procedural tier's data: [`ProceduralMesh`], a mesh drawn with no bones, and [`Undulation`], the swimming
//! wave that the GPU applies per vertex from each instance's phase and amplitude (`crowd_frame::RecordAnim::Procedural`).
//!
//! [`Undulation::displace`] is the CPU reference: `shaders/crowd_procedural.wgsl`'s `undulate` computes the same
//! expressions in the same order, line for line, from the same uniform values ([`Undulation::cycle`] and
//! `1 / length` are computed on the CPU once per frame and uploaded).
//!
//! # The wave
//!
//! The body lies along +Z with the head at `head_z`, the largest z, and the wave moves vertices along X only.
//! A vertex at height `z` has the body coordinate `s = clamp((head_z - z) / length, 0, 1)`: 0 at the head, 1 at
//! the tail (vertices ahead of the head do not move; those past the tail move as the tail does).
//! At time `t` (seconds) an instance of phase `φ` (turns) and amplitude fraction `a` moves it by
//!
//! ```text
//! offset(s, t) = A · a · envelope(s) · sin(2π · fract(s · body_waves − frequency · t + φ))
//! envelope(s)  = head + (1 − head) · s²
//! ```
//!
//! with `A` = [`Undulation::amplitude`]: a carangiform wave of `body_waves` wavelengths along the body, travelling
//! from the head to the tail at `frequency` beats a second, whose envelope grows from `head · A` at the head to `A`
//! at the tail. The displacement `(x, y, z) → (x + offset(s(z)), y, z)` is a shear in x by `d offset / dz`, so a
//! normal `n` becomes the inverse transpose of that shear applied to it, `(n.x, n.y, n.z − n.x · d offset / dz)`,
//! normalised.
//!
//! Properties (the unit tests and `tests/prop_undulation.rs` check each):
//! - at amplitude 0 every position is unchanged, bit for bit, and every normal within 1e-6 (it is renormalised);
//! - the head moves least: `|offset| ≤ A · a · envelope(s)`, and the envelope grows with `s`;
//! - the displacement is periodic in time with period `1 / frequency`;
//! - normals stay unit length (within 1e-5) and perpendicular to the displaced surface.
//!
//! # Example
//!
//! ```
//! use crowd_mesh::{Undulation, fish_mesh};
//!
//! let fish = fish_mesh(0.3)?;
//! let wave = Undulation::for_mesh(&fish);
//! wave.validate()?;
//! // The nose vertex of an instance at phase 0.25 and full amplitude, 1.5 s into the game.
//! let (p, n) = (fish.positions()[0], fish.normals()[0]);
//! let (moved, normal) = wave.displace(p, n, 0.25, 1.0, 1.5);
//! assert_eq!((moved.y, moved.z), (p.y, p.z), "only x moves");
//! assert!((normal.length() - 1.0).abs() < 1e-5);
//! // A whole period later the wave is where it was.
//! let later = wave.displace(p, n, 0.25, 1.0, 1.5 + 1.0 / f64::from(wave.frequency));
//! assert!((later.0 - moved).length() < 1e-6);
//! # Ok::<(), crowd_mesh::Error>(())
//! ```

use std::f32::consts::TAU;

use glam::Vec3;

use crate::{Error, Result};

/// How far from unit length a normal of a [`ProceduralMesh`] may be.
///
/// The undulation renormalises what it transforms, so a small deviation is harmless; a zero or far-off normal
/// is a broken mesh, refused where the mesh is built rather than drawn black.
pub const NORMAL_LENGTH_TOLERANCE: f32 = 1e-3;

/// A mesh of the procedural tier: positions, unit normals, RGBA8 vertex colours and a triangle list, in the
/// mesh's own space (for a swimmer, the body along +Z with the head at the largest z, as [`Undulation`] expects).
///
/// Checked once by [`ProceduralMesh::new`]; every mesh that exists holds its rules, so a renderer uploads it with
/// no further check. Front faces wind counter-clockwise, as in the rest of the toolkit (`crowd-gpu` draws both
/// sides and lights a back face from behind).
#[derive(Clone, Debug, PartialEq)]
pub struct ProceduralMesh {
    name: String,
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    colors: Vec<u32>,
    indices: Vec<u32>,
    min: Vec3,
    max: Vec3,
}

impl ProceduralMesh {
    /// A mesh named `name` from its vertex streams and triangle list.
    ///
    /// `colors` are RGBA8 unorm with red in the low byte (WGSL `unpack4x8unorm`, as `crowd_mesh::PackedMesh`'s).
    ///
    /// # Errors
    ///
    /// [`Error::Mesh`] naming the procedural mesh and the vertex or index at fault when: there is no vertex or no
    /// triangle; `normals` or `colors` differ in length from `positions`; a position or normal is not finite; a
    /// normal's length is off 1 by more than [`NORMAL_LENGTH_TOLERANCE`]; the index count is not a multiple of 3;
    /// an index is past the vertices.
    pub fn new(
        name: impl Into<String>,
        positions: Vec<Vec3>,
        normals: Vec<Vec3>,
        colors: Vec<u32>,
        indices: Vec<u32>,
    ) -> Result<Self> {
        let name = name.into();
        let fail = |what: String| Error::mesh(&format!("procedural mesh '{name}'"), what);
        if positions.is_empty() || indices.is_empty() {
            return Err(fail(format!(
                "{} vertices and {} indices: a mesh needs at least one triangle",
                positions.len(),
                indices.len()
            )));
        }
        for (stream, len) in [("normals", normals.len()), ("colors", colors.len())] {
            if len != positions.len() {
                return Err(fail(format!("{len} {stream} for {} positions", positions.len())));
            }
        }
        let (mut min, mut max) = (Vec3::INFINITY, Vec3::NEG_INFINITY);
        for (v, (p, n)) in positions.iter().zip(&normals).enumerate() {
            if !p.is_finite() {
                return Err(fail(format!("vertex {v}: position {p} is not finite")));
            }
            if !n.is_finite() || (n.length() - 1.0).abs() > NORMAL_LENGTH_TOLERANCE {
                return Err(fail(format!("vertex {v}: normal {n} is not of unit length")));
            }
            min = min.min(*p);
            max = max.max(*p);
        }
        if !indices.len().is_multiple_of(3) {
            return Err(fail(format!("{} indices are not whole triangles", indices.len())));
        }
        if let Some(k) = indices.iter().position(|&i| i as usize >= positions.len()) {
            return Err(fail(format!(
                "index {k} (triangle {}) is {}, past the {} vertices",
                k / 3,
                indices[k],
                positions.len()
            )));
        }
        Ok(Self {
            name,
            positions,
            normals,
            colors,
            indices,
            min,
            max,
        })
    }

    /// The mesh's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Vertex positions, in mesh space.
    pub fn positions(&self) -> &[Vec3] {
        &self.positions
    }

    /// Unit vertex normals.
    pub fn normals(&self) -> &[Vec3] {
        &self.normals
    }

    /// RGBA8 vertex colours, red in the low byte.
    pub fn colors(&self) -> &[u32] {
        &self.colors
    }

    /// The triangle list: three indices per triangle, counter-clockwise front faces.
    pub fn indices(&self) -> &[u32] {
        &self.indices
    }

    /// The number of vertices (at least 1).
    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }

    /// The number of triangles (at least 1).
    pub fn triangle_count(&self) -> usize {
        self.indices.len() / 3
    }

    /// The smallest and largest coordinates of the positions (the rest pose's box).
    pub fn bounds(&self) -> (Vec3, Vec3) {
        (self.min, self.max)
    }

    /// The mesh displaced on the CPU by `undulation` for an instance of `phase` and `amplitude` at `time` (each
    /// vertex through [`Undulation::displace`]), as a new mesh of the same name, colours and triangles: what the
    /// GPU draws for that instance, for references and tests.
    ///
    /// # Errors
    ///
    /// As [`ProceduralMesh::new`]: only when `undulation` fails [`Undulation::validate`] or the inputs are not
    /// finite, so that a position or normal becomes non-finite.
    pub fn displaced(&self, undulation: &Undulation, phase: f32, amplitude: f32, time: f64) -> Result<Self> {
        let cycle = undulation.cycle(time);
        let (positions, normals) = self
            .positions
            .iter()
            .zip(&self.normals)
            .map(|(&p, &n)| undulation.displace_at_cycle(p, n, phase, amplitude, cycle))
            .unzip();
        Self::new(
            self.name.clone(),
            positions,
            normals,
            self.colors.clone(),
            self.indices.clone(),
        )
    }
}

/// The swimming wave of the procedural tier (see the [module docs](self) for the formula): the body along +Z
/// from `head_z` back to `head_z - length`, displaced along X. All lengths are in mesh units (before the
/// instance's scale), times in seconds, phases in turns.
///
/// The fields are plain values; [`Undulation::validate`] states their rules, and a renderer calls it once when it
/// takes the wave. A wave that breaks them displaces to non-finite or meaningless values, never a panic.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Undulation {
    /// The z of the head, where `s = 0` (finite).
    pub head_z: f32,
    /// The body's length along −Z from the head to the tail, where `s = 1` (positive, finite, with a finite
    /// reciprocal).
    pub length: f32,
    /// The largest lateral displacement: the tail's, at amplitude fraction 1 (finite, at least 0).
    pub amplitude: f32,
    /// Wavelengths along the body (finite; carangiform swimmers show about one).
    pub body_waves: f32,
    /// Tail beats per second, in Hz (finite, at least 0; 0 freezes the wave at its phase).
    pub frequency: f32,
    /// The envelope at the head as a fraction of the tail's, in `[0, 1]`.
    pub head: f32,
}

impl Undulation {
    /// The default tail amplitude as a fraction of the body length: 0.1, about what carangiform fish show.
    pub const DEFAULT_AMPLITUDE: f32 = 0.1;
    /// The default wavelengths along the body.
    pub const DEFAULT_BODY_WAVES: f32 = 0.9;
    /// The default tail-beat frequency, in Hz.
    pub const DEFAULT_FREQUENCY: f32 = 2.0;
    /// The default envelope at the head, as a fraction of the tail's.
    pub const DEFAULT_HEAD: f32 = 0.12;

    /// A carangiform wave over `mesh`'s z extent: the head at its largest z, the length its depth in z, and the
    /// `DEFAULT_*` shape.
    pub fn for_mesh(mesh: &ProceduralMesh) -> Self {
        let (min, max) = mesh.bounds();
        let length = max.z - min.z;
        Self {
            head_z: max.z,
            length,
            amplitude: Self::DEFAULT_AMPLITUDE * length,
            body_waves: Self::DEFAULT_BODY_WAVES,
            frequency: Self::DEFAULT_FREQUENCY,
            head: Self::DEFAULT_HEAD,
        }
    }

    /// Checks the fields' rules (see each field).
    ///
    /// # Errors
    ///
    /// [`Error::Mesh`] naming `undulation` and the field at fault, with its value.
    pub fn validate(&self) -> Result<()> {
        let fail = |field: &str, value: f32, rule: &str| {
            Err(Error::mesh(
                "undulation",
                format!("{field} is {value}; it must be {rule}"),
            ))
        };
        if !self.head_z.is_finite() {
            return fail("head_z", self.head_z, "finite");
        }
        if !(self.length > 0.0 && self.length.is_finite() && (1.0 / self.length).is_finite()) {
            return fail("length", self.length, "positive and finite, with a finite reciprocal");
        }
        if !(self.amplitude >= 0.0 && self.amplitude.is_finite()) {
            return fail("amplitude", self.amplitude, "finite and at least 0");
        }
        if !self.body_waves.is_finite() {
            return fail("body_waves", self.body_waves, "finite");
        }
        if !(self.frequency >= 0.0 && self.frequency.is_finite()) {
            return fail("frequency", self.frequency, "finite and at least 0");
        }
        if !(0.0..=1.0).contains(&self.head) {
            return fail("head", self.head, "within [0, 1]");
        }
        Ok(())
    }

    /// The wave's clock at `time` seconds, in turns: `frequency · time` wrapped into `[0, 1]` (1 only by
    /// rounding, the same turn as 0), computed in f64 so that it stays exact to f32 precision however long the
    /// game runs. The shader receives it as a uniform.
    pub fn cycle(&self, time: f64) -> f32 {
        (f64::from(self.frequency) * time).rem_euclid(1.0) as f32
    }

    /// The envelope at body coordinate `s` (clamped to `[0, 1]`): `head + (1 − head) · s²`, from `head` at the
    /// head to 1 at the tail; the largest lateral displacement there is `amplitude · a · envelope(s)`.
    pub fn envelope(&self, s: f32) -> f32 {
        let s = s.clamp(0.0, 1.0);
        self.head + (1.0 - self.head) * s * s
    }

    /// The CPU reference of the shader's undulation: `position` and its unit `normal` (mesh space) displaced for
    /// an instance of `phase` (turns, any finite value) and amplitude fraction `amplitude` (`[0, 1]`, as the record
    /// decodes them) at `time` seconds. Returns the displaced position and its unit normal.
    pub fn displace(&self, position: Vec3, normal: Vec3, phase: f32, amplitude: f32, time: f64) -> (Vec3, Vec3) {
        self.displace_at_cycle(position, normal, phase, amplitude, self.cycle(time))
    }

    /// [`Undulation::displace`] at the wave's clock `cycle` ([`Undulation::cycle`] of the time): the exact twin of
    /// `undulate` in `shaders/crowd_procedural.wgsl`, whose uniform holds `cycle` and `1 / length`.
    pub fn displace_at_cycle(
        &self,
        position: Vec3,
        normal: Vec3,
        phase: f32,
        amplitude: f32,
        cycle: f32,
    ) -> (Vec3, Vec3) {
        let inv_length = 1.0 / self.length;
        // let s_raw = (wave.head_z - p.z) * wave.inv_length;
        let s_raw = (self.head_z - position.z) * inv_length;
        // let s = clamp(s_raw, 0.0, 1.0);
        let s = s_raw.clamp(0.0, 1.0);
        // let ds_dz = select(0.0, -wave.inv_length, s_raw > 0.0 && s_raw < 1.0);
        let ds_dz = if s_raw > 0.0 && s_raw < 1.0 { -inv_length } else { 0.0 };
        // let envelope = wave.head + (1.0 - wave.head) * s * s;
        let envelope = self.head + (1.0 - self.head) * s * s;
        // let d_envelope = 2.0 * (1.0 - wave.head) * s;
        let d_envelope = 2.0 * (1.0 - self.head) * s;
        // let turns = s * wave.body_waves - wave.cycle + phase;
        let turns = s * self.body_waves - cycle + phase;
        // let angle = TAU * (fract(turns + 0.5) - 0.5); in [-π, π), where Vulkan bounds the error of sin and cos
        // (WGSL's fract is x - floor(x), not Rust's f32::fract).
        let half = turns + 0.5;
        let angle = TAU * (half - half.floor() - 0.5);
        // let sin_a = sin(angle); let cos_a = cos(angle);
        let (sin_a, cos_a) = angle.sin_cos();
        // let a = wave.amplitude * amplitude;
        let a = self.amplitude * amplitude;
        // let offset = a * envelope * sin_a;
        let offset = a * envelope * sin_a;
        // let d_offset_dz = a * (d_envelope * sin_a + envelope * cos_a * (TAU * wave.body_waves)) * ds_dz;
        let d_offset_dz = a * (d_envelope * sin_a + envelope * cos_a * (TAU * self.body_waves)) * ds_dz;
        // The shear's inverse transpose: n.z loses n.x times the slope.
        let p = Vec3::new(position.x + offset, position.y, position.z);
        let n = Vec3::new(normal.x, normal.y, normal.z - d_offset_dz * normal.x).normalize();
        (p, n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn triangle() -> (Vec<Vec3>, Vec<Vec3>, Vec<u32>, Vec<u32>) {
        (
            vec![Vec3::ZERO, Vec3::X, Vec3::Y],
            vec![Vec3::Z; 3],
            vec![u32::MAX; 3],
            vec![0, 1, 2],
        )
    }

    /// One row per rule of `ProceduralMesh::new`: each broken rule is refused, naming the mesh and the element.
    #[test]
    fn every_mesh_rule_is_checked_and_named() {
        type Edit = fn(&mut (Vec<Vec3>, Vec<Vec3>, Vec<u32>, Vec<u32>));
        let rows: [(&str, Edit, &str); 9] = [
            ("no vertices", |m| m.0.clear(), "0 vertices"),
            ("no triangles", |m| m.3.clear(), "0 indices"),
            ("short normals", |m| m.1.truncate(2), "2 normals for 3 positions"),
            ("long colours", |m| m.2.push(0), "4 colors for 3 positions"),
            ("NaN position", |m| m.0[1].y = f32::NAN, "vertex 1: position"),
            ("zero normal", |m| m.1[2] = Vec3::ZERO, "vertex 2: normal"),
            ("long normal", |m| m.1[0] = Vec3::Z * 1.01, "vertex 0: normal"),
            ("partial triangle", |m| m.3.push(0), "4 indices are not whole triangles"),
            (
                "index past the vertices",
                |m| m.3[2] = 3,
                "index 2 (triangle 0) is 3, past the 3",
            ),
        ];
        for (rule, edit, says) in rows {
            let mut m = triangle();
            edit(&mut m);
            let err = ProceduralMesh::new("t", m.0, m.1, m.2, m.3)
                .expect_err(rule)
                .to_string();
            assert!(err.starts_with("procedural mesh 't': "), "{rule}: {err}");
            assert!(err.contains(says), "{rule}: {err}");
        }
        let (p, n, c, i) = triangle();
        let mesh = ProceduralMesh::new("t", p, n, c, i).expect("a valid triangle");
        assert_eq!((mesh.vertex_count(), mesh.triangle_count()), (3, 1));
        assert_eq!(mesh.bounds(), (Vec3::ZERO, Vec3::new(1.0, 1.0, 0.0)));
    }

    /// One row per field rule of `Undulation::validate`.
    #[test]
    fn every_undulation_rule_is_checked_and_named() {
        let ok = Undulation {
            head_z: 0.5,
            length: 1.0,
            amplitude: 0.1,
            body_waves: 1.0,
            frequency: 2.0,
            head: 0.1,
        };
        ok.validate().expect("valid");
        let rows: [(&str, Undulation); 9] = [
            ("head_z", Undulation { head_z: f32::NAN, ..ok }),
            ("length", Undulation { length: 0.0, ..ok }),
            ("length", Undulation { length: 1e-40, ..ok }),
            ("amplitude", Undulation { amplitude: -0.1, ..ok }),
            (
                "body_waves",
                Undulation {
                    body_waves: f32::INFINITY,
                    ..ok
                },
            ),
            ("frequency", Undulation { frequency: -1.0, ..ok }),
            (
                "frequency",
                Undulation {
                    frequency: f32::NAN,
                    ..ok
                },
            ),
            ("head", Undulation { head: 1.5, ..ok }),
            ("head", Undulation { head: f32::NAN, ..ok }),
        ];
        for (field, u) in rows {
            let err = u.validate().expect_err(field).to_string();
            assert!(err.starts_with(&format!("undulation: {field} is ")), "{err}");
        }
    }

    /// Over a cycle, the largest lateral displacement grows from the head (`head · A`) to the tail (`A`).
    #[test]
    fn the_head_moves_least_and_the_tail_most() {
        let u = Undulation {
            head_z: 0.5,
            length: 1.0,
            amplitude: 0.1,
            body_waves: 0.9,
            frequency: 2.0,
            head: 0.12,
        };
        let steps = 256;
        let largest = |s: f32| {
            (0..steps)
                .map(|k| {
                    let t = f64::from(k) / f64::from(steps) / 2.0;
                    let p = Vec3::new(0.02, 0.0, u.head_z - s * u.length);
                    (u.displace(p, Vec3::X, 0.3, 1.0, t).0.x - p.x).abs()
                })
                .fold(0.0f32, f32::max)
        };
        let sweep: Vec<f32> = (0..=10).map(|i| largest(i as f32 / 10.0)).collect();
        // Sampling a cycle in 256 steps catches the peak to within cos(π / 256) of it.
        let sampled = (std::f32::consts::PI / steps as f32).cos();
        for (i, &d) in sweep.iter().enumerate() {
            let s = i as f32 / 10.0;
            let bound = u.amplitude * u.envelope(s);
            assert!(
                d <= bound * (1.0 + 1e-5) && d >= bound * sampled - 1e-6,
                "s = {s}: {d} vs {bound}"
            );
        }
        assert!(sweep.windows(2).all(|w| w[0] < w[1]), "{sweep:?}");
        assert!((sweep[0] - u.head * u.amplitude).abs() < 1e-4, "the head: {}", sweep[0]);
        // Ahead of the head nothing moves; past the tail, vertices move as the tail.
        let ahead = Vec3::new(0.0, 0.0, 0.7);
        assert_eq!(
            u.displace(ahead, Vec3::X, 0.0, 1.0, 0.1).0.x,
            u.displace(Vec3::new(0.0, 0.0, 0.5), Vec3::X, 0.0, 1.0, 0.1).0.x
        );
        let past = u.displace(Vec3::new(0.0, 0.0, -0.8), Vec3::X, 0.0, 1.0, 0.1);
        assert_eq!(
            past.0.x,
            u.displace(Vec3::new(0.0, 0.0, -0.5), Vec3::X, 0.0, 1.0, 0.1).0.x
        );
        assert_eq!(past.1, Vec3::X, "no slope past the tail");
    }

    #[test]
    fn the_wave_travels_from_head_to_tail() {
        let u = Undulation {
            head_z: 0.0,
            length: 1.0,
            amplitude: 0.1,
            body_waves: 1.0,
            frequency: 1.0,
            head: 1.0,
        };
        // With a flat envelope, the crest at s = 0.25 at t = 0 is at s = 0.35 a tenth of a period later.
        let x = |s: f32, t: f64| u.displace(Vec3::new(0.0, 0.0, -s), Vec3::X, 0.0, 1.0, t).0.x;
        assert!((x(0.25, 0.0) - 0.1).abs() < 1e-6);
        assert!((x(0.35, 0.1) - 0.1).abs() < 1e-6);
    }
}
