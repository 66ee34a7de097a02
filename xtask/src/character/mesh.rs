//! The character's skinned mesh: overlapping closed surfaces per body part, painted with region colours and
//! skin weights that blend smoothly across each joint.
//!
//! Weights come from the position of a vertex along the bones of its part: a vertex within a blend distance
//! of a joint is shared between the bones on either side with a smoothstep, so bends do not crack.
//! The left limbs are built once and mirrored for the right.

use glam::DVec3;

use super::loft::{Station, Surface, Tube, ellipsoid};
use super::rig::{
    FINGER_SEGMENTS, FINGERS, Rig, Side, arm_direction, finger_base, finger_direction, palm_normal, thumb_direction,
};

/// The most joints that influence one vertex, as glTF's `JOINTS_0` and `WEIGHTS_0` hold.
pub const MAX_INFLUENCES: usize = 4;

/// A colour region of the character; instances tint each region by its colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Region {
    /// Face, neck, forearms and hands.
    Skin,
    /// The hair on the head.
    Hair,
    /// The eyes.
    Eyes,
    /// The T-shirt, with short sleeves.
    Shirt,
    /// The trousers.
    Trousers,
    /// The shoes.
    Shoes,
}

impl Region {
    /// The region's linear RGBA vertex colour as normalized bytes.
    ///
    /// The sRGB equivalents are skin (222, 170, 140), hair (75, 55, 40), eyes (35, 30, 30),
    /// shirt (175, 190, 210), trousers (90, 100, 125) and shoes (70, 58, 50).
    pub fn color(self) -> [u8; 4] {
        match self {
            Region::Skin => [186, 103, 67, 255],
            Region::Hair => [18, 10, 5, 255],
            Region::Eyes => [4, 3, 3, 255],
            Region::Shirt => [109, 131, 164, 255],
            Region::Trousers => [26, 32, 52, 255],
            Region::Shoes => [16, 11, 8, 255],
        }
    }
}

/// The skinned mesh, in the form the file stores.
#[derive(Clone, Debug, Default)]
pub struct Mesh {
    /// Bind-space positions.
    pub positions: Vec<[f32; 3]>,
    /// Unit smooth normals.
    pub normals: Vec<[f32; 3]>,
    /// Linear RGBA colours.
    pub colors: Vec<[u8; 4]>,
    /// Joint indices of the influences, strongest first; unused slots are 0.
    pub joints: Vec<[u8; 4]>,
    /// Influence weights, sorted in decreasing order and summing to 1; unused slots are 0.
    pub weights: Vec<[f32; 4]>,
    /// Counter-clockwise triangle list.
    pub indices: Vec<u16>,
}

/// Joint influences before they are sorted, merged and cut to [`MAX_INFLUENCES`].
type Influences = Vec<(usize, f64)>;

/// Hermite smoothstep from 0 at `edge0` to 1 at `edge1` (either order).
pub fn smoothstep(edge0: f64, edge1: f64, x: f64) -> f64 {
    let t = ((x - edge0) / (edge1 - edge0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// Weights along a chain of bones: `bones[i]` and `bones[i + 1]` meet at coordinate `joints[i].0`, and share
/// the vertices within `joints[i].1` of it. The coordinate `x` increases from the first bone to the last.
fn chain(x: f64, bones: &[usize], joints: &[(f64, f64)]) -> Influences {
    debug_assert_eq!(bones.len(), joints.len() + 1, "one joint between each two bones");
    let after: Vec<f64> = joints
        .iter()
        .map(|&(at, blend)| smoothstep(at - blend, at + blend, x))
        .collect();
    (0..bones.len())
        .map(|i| {
            let start = if i == 0 { 1.0 } else { after[i - 1] };
            let end = if i == joints.len() { 0.0 } else { after[i] };
            (bones[i], (start - end).max(0.0))
        })
        .collect()
}

/// `base` scaled by `1 - w`, plus `joint` with weight `w`.
fn blend(mut base: Influences, joint: usize, w: f64) -> Influences {
    for entry in &mut base {
        entry.1 *= 1.0 - w;
    }
    base.push((joint, w));
    base
}

/// Merges, sorts and cuts influences to at most four that sum to 1.
///
/// Ties are broken by joint index so that the result does not depend on the order of the input.
fn finalize(influences: &Influences) -> ([u8; 4], [f32; 4]) {
    let mut merged: Influences = Vec::new();
    for &(joint, w) in influences {
        match merged.iter_mut().find(|e| e.0 == joint) {
            Some(e) => e.1 += w,
            None => merged.push((joint, w)),
        }
    }
    let total: f64 = merged.iter().map(|e| e.1).sum();
    merged.retain(|e| e.1 >= 0.01 * total);
    merged.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
    merged.truncate(MAX_INFLUENCES);
    let total: f64 = merged.iter().map(|e| e.1).sum();
    let mut joints = [0u8; 4];
    let mut weights = [0f32; 4];
    for (k, &(joint, w)) in merged.iter().enumerate() {
        joints[k] = u8::try_from(joint).expect("joint indices fit in a byte");
        weights[k] = (w / total) as f32;
    }
    // The largest weight absorbs the rounding, so that the stored weights sum to 1 as closely as f32 allows.
    weights[0] = 1.0 - weights[1..].iter().sum::<f32>();
    (joints, weights)
}

/// Accumulates painted surfaces into one mesh.
struct Builder {
    positions: Vec<DVec3>,
    colors: Vec<[u8; 4]>,
    influences: Vec<Influences>,
    triangles: Vec<[u32; 3]>,
}

impl Builder {
    /// Adds `surface`, painted by `paint` from each vertex's position on the left side of the body.
    ///
    /// On the right side the surface is built on the left, painted there and then mirrored.
    fn add(&mut self, surface: &Surface, side: Side, paint: impl Fn(DVec3) -> (Region, Influences)) {
        let base = self.positions.len() as u32;
        let placed = if side == Side::Right {
            surface.mirrored()
        } else {
            surface.clone()
        };
        for (left, position) in surface.positions.iter().zip(&placed.positions) {
            let (region, influences) = paint(*left);
            self.positions.push(*position);
            self.colors.push(region.color());
            self.influences.push(influences);
        }
        self.triangles
            .extend(placed.triangles.iter().map(|t| t.map(|i| i + base)));
    }

    /// Computes area-weighted smooth normals and rounds everything to the stored types.
    fn finish(self) -> Mesh {
        let mut normals = vec![DVec3::ZERO; self.positions.len()];
        for t in &self.triangles {
            let [a, b, c] = t.map(|i| self.positions[i as usize]);
            let n = (b - a).cross(c - a);
            for i in t {
                normals[*i as usize] += n;
            }
        }
        let to_f32 = |v: DVec3| [v.x as f32, v.y as f32, v.z as f32];
        let (joints, weights) = self.influences.iter().map(finalize).unzip();
        Mesh {
            positions: self.positions.iter().map(|&p| to_f32(p)).collect(),
            normals: normals.iter().map(|n| to_f32(n.normalize())).collect(),
            colors: self.colors,
            joints,
            weights,
            indices: self
                .triangles
                .iter()
                .flatten()
                .map(|&i| u16::try_from(i).expect("the mesh fits 16-bit indices"))
                .collect(),
        }
    }
}

/// Builds the mesh for `rig`.
pub fn build(rig: &Rig) -> Mesh {
    let mut b = Builder {
        positions: Vec::new(),
        colors: Vec::new(),
        influences: Vec::new(),
        triangles: Vec::new(),
    };
    torso(&mut b, rig);
    neck_and_head(&mut b, rig);
    for side in Side::BOTH {
        arm(&mut b, rig, side);
        hand(&mut b, rig, side);
        leg(&mut b, rig, side);
        shoe(&mut b, rig, side);
    }
    b.finish()
}

/// The torso from the crotch to the base of the neck, weighted along the spine, with the hips following
/// the thighs and the shoulders following the clavicles.
fn torso(b: &mut Builder, rig: &Rig) {
    // Each row is the height, the half-width, the half-depth and the forward offset of a cross-section.
    let rows: [[f64; 4]; 12] = [
        [0.845, 0.07, 0.06, -0.005],
        [0.88, 0.14, 0.1, -0.008],
        [0.95, 0.17, 0.115, -0.012],
        [1.02, 0.16, 0.107, -0.008],
        [1.1, 0.142, 0.097, 0.0],
        [1.18, 0.146, 0.1, 0.006],
        [1.26, 0.16, 0.11, 0.012],
        [1.34, 0.172, 0.117, 0.015],
        [1.41, 0.178, 0.108, 0.008],
        [1.46, 0.162, 0.088, 0.0],
        [1.495, 0.1, 0.065, -0.005],
        [1.515, 0.055, 0.045, -0.008],
    ];
    let tube = Tube {
        stations: rows
            .iter()
            .map(|r| Station::new(DVec3::new(0.0, r[0], r[3]), r[1], r[2]))
            .collect(),
        rings_per_span: 3,
        segments: 24,
        reference: DVec3::X,
        exponent: 2.5,
        start_cap: 0.3,
        end_cap: 0.3,
    };
    let spine = ["pelvis", "spine_01", "spine_02", "spine_03", "chest", "neck"].map(|n| rig.index(n));
    let heights = [1, 2, 3, 4, 5].map(|i| rig.joints[spine[i]].position.y);
    let joints = [
        (heights[0], 0.04),
        (heights[1], 0.045),
        (heights[2], 0.045),
        (heights[3], 0.045),
        (heights[4], 0.03),
    ];
    let surface = tube.build();
    b.add(&surface, Side::Left, |p| {
        let mut w = chain(p.y, &spine, &joints);
        let side = if p.x >= 0.0 { Side::Left } else { Side::Right };
        let hip = (1.0 - smoothstep(0.86, 0.98, p.y)) * smoothstep(0.02, 0.1, p.x.abs()) * 0.6;
        w = blend(w, rig.side_index("thigh", side), hip);
        let shoulder = smoothstep(0.08, 0.16, p.x.abs()) * smoothstep(1.36, 1.45, p.y);
        w = blend(w, rig.side_index("clavicle", side), shoulder * 0.75);
        let arm = smoothstep(0.14, 0.19, p.x.abs()) * smoothstep(1.33, 1.42, p.y) * 0.4;
        w = blend(w, rig.side_index("upper_arm", side), arm);
        let region = if p.y > 0.995 { Region::Shirt } else { Region::Trousers };
        (region, w)
    });
}

/// The neck, the head with a nose, ears and eyes, and the hair region.
fn neck_and_head(b: &mut Builder, rig: &Rig) {
    let [chest, neck, head, jaw] = ["chest", "neck", "head", "jaw"].map(|n| rig.index(n));
    let neck_y = rig.joints[neck].position.y;
    let head_y = rig.joints[head].position.y;
    let neck_tube = Tube {
        stations: vec![
            Station::new(DVec3::new(0.0, 1.42, -0.012), 0.056, 0.056),
            Station::new(DVec3::new(0.0, 1.5, -0.008), 0.054, 0.056),
            Station::new(DVec3::new(0.0, 1.58, 0.0), 0.053, 0.056),
            Station::new(DVec3::new(0.0, 1.65, 0.006), 0.047, 0.05),
        ],
        rings_per_span: 2,
        segments: 14,
        reference: DVec3::X,
        exponent: 2.0,
        start_cap: 0.5,
        end_cap: 0.5,
    };
    b.add(&neck_tube.build(), Side::Left, |p| {
        (
            Region::Skin,
            chain(p.y, &[chest, neck, head], &[(neck_y, 0.03), (head_y, 0.03)]),
        )
    });

    let center = DVec3::new(0.0, 1.683, 0.02);
    let radii = DVec3::new(0.08, 0.115, 0.1);
    let mut skull = ellipsoid(
        center,
        DVec3::Y,
        DVec3::X,
        DVec3::new(radii.y, radii.x, radii.z),
        20,
        24,
    );
    for p in &mut skull.positions {
        let v = (*p - center) / radii;
        // The jaw narrows towards the chin, the back of the head is a little fuller, and below the ears the
        // back of the head recedes into the neck.
        p.x = center.x + (p.x - center.x) * (1.0 - 0.25 * (-v.y).max(0.0).powf(1.5));
        if v.z < 0.0 {
            p.z = center.z + (p.z - center.z) * (1.04 - 0.45 * (-v.y).max(0.0));
        }
        // The nose and the chin are smooth bumps on the front of the face.
        let front = v.z.max(0.0).powi(4);
        let nose = (-(p.x / 0.012).powi(2) - ((p.y - 1.657) / 0.02).powi(2)).exp();
        let chin = (-(p.x / 0.03).powi(2) - ((p.y - 1.592) / 0.018).powi(2)).exp();
        p.z += (0.02 * nose + 0.008 * chin) * front;
    }
    let head_weights = |p: DVec3| {
        let w = chain(p.y, &[neck, head], &[(head_y + 0.005, 0.03)]);
        let chin = smoothstep(1.655, 1.615, p.y) * smoothstep(-0.01, 0.04, p.z) * 0.9;
        blend(w, jaw, chin)
    };
    b.add(&skull, Side::Left, |p| {
        let v = (p - center) / radii;
        let hairline = 0.42 - 1.2 * (-v.z).max(0.0) - 0.25 * v.x * v.x;
        let region = if v.y > hairline { Region::Hair } else { Region::Skin };
        (region, head_weights(p))
    });
    for side in Side::BOTH {
        let ear = ellipsoid(
            DVec3::new(0.077, 1.675, 0.0),
            DVec3::X,
            DVec3::Y,
            DVec3::new(0.013, 0.029, 0.018),
            6,
            10,
        );
        b.add(&ear, side, |_| (Region::Skin, vec![(head, 1.0)]));
        let eye_joint = rig.side_index("eye", Side::Left);
        let eye_center = rig.joints[eye_joint].position;
        let eye = ellipsoid(eye_center, DVec3::Z, DVec3::X, DVec3::splat(0.0125), 6, 10);
        b.add(&eye, side, |_| (Region::Eyes, vec![(rig.side_index("eye", side), 1.0)]));
    }
}

/// The arm from inside the shoulder to the wrist, with a short sleeve.
fn arm(b: &mut Builder, rig: &Rig, side: Side) {
    let d = arm_direction();
    let shoulder = rig.joints[rig.side_index("upper_arm", Side::Left)].position;
    // Each row is the distance from the shoulder along the arm, the half-thickness along the palm normal and
    // the half-width front to back.
    let rows: [[f64; 3]; 12] = [
        [-0.035, 0.04, 0.042],
        [0.0, 0.051, 0.052],
        [0.05, 0.051, 0.05],
        [0.12, 0.047, 0.046],
        [0.2, 0.043, 0.042],
        [0.26, 0.04, 0.041],
        [0.28, 0.039, 0.041],
        [0.31, 0.04, 0.043],
        [0.38, 0.036, 0.039],
        [0.46, 0.03, 0.032],
        [0.53, 0.025, 0.029],
        [0.55, 0.024, 0.028],
    ];
    let tube = Tube {
        stations: rows
            .iter()
            .map(|r| Station::new(shoulder + d * r[0], r[1], r[2]))
            .collect(),
        rings_per_span: 2,
        segments: 16,
        reference: palm_normal(),
        exponent: 2.0,
        start_cap: 0.8,
        end_cap: 0.5,
    };
    let bones = ["clavicle", "upper_arm", "forearm", "hand"].map(|n| rig.side_index(n, side));
    let elbow = (rig.joints[rig.side_index("forearm", Side::Left)].position - shoulder).dot(d);
    let wrist = (rig.joints[rig.side_index("hand", Side::Left)].position - shoulder).dot(d);
    b.add(&tube.build(), side, |p| {
        let x = (p - shoulder).dot(d);
        let region = if x < 0.15 { Region::Shirt } else { Region::Skin };
        (region, chain(x, &bones, &[(0.0, 0.05), (elbow, 0.04), (wrist, 0.025)]))
    });
}

/// The palm and five three-segment fingers.
fn hand(b: &mut Builder, rig: &Rig, side: Side) {
    let d = arm_direction();
    let n = palm_normal();
    let hand = rig.side_index("hand", side);
    let wrist = rig.joints[rig.side_index("hand", Side::Left)].position;
    // Each row is the distance from the wrist, the half-thickness and the half-width across the knuckles.
    let rows: [[f64; 3]; 5] = [
        [-0.015, 0.016, 0.028],
        [0.02, 0.018, 0.038],
        [0.055, 0.018, 0.043],
        [0.085, 0.016, 0.044],
        [0.097, 0.013, 0.04],
    ];
    let palm = Tube {
        stations: rows
            .iter()
            .map(|r| Station::new(wrist + d * r[0] - n * 0.002, r[1], r[2]))
            .collect(),
        rings_per_span: 2,
        segments: 14,
        reference: n,
        exponent: 3.0,
        start_cap: 0.6,
        end_cap: 0.6,
    };
    let forearm = rig.side_index("forearm", side);
    b.add(&palm.build(), side, |p| {
        (
            Region::Skin,
            chain((p - wrist).dot(d), &[forearm, hand], &[(0.0, 0.025)]),
        )
    });
    for (f, name) in FINGERS.iter().enumerate() {
        let dir = if f == 0 { thumb_direction() } else { finger_direction(f) };
        let base = wrist + finger_base(f);
        let [l0, l1, l2] = FINGER_SEGMENTS[f];
        let r = if f == 0 { 0.0115 } else { 0.0092 - 0.0004 * f as f64 };
        let stations = vec![
            Station::new(base - dir * 0.01, r * 1.05, r * 1.1),
            Station::new(base + dir * (0.5 * l0), r, r * 1.05),
            Station::new(base + dir * l0, r * 0.95, r),
            Station::new(base + dir * (l0 + l1), r * 0.85, r * 0.9),
            Station::new(base + dir * (l0 + l1 + l2 - 0.8 * r), r * 0.78, r * 0.82),
        ];
        let tube = Tube {
            stations,
            rings_per_span: 2,
            segments: 8,
            reference: n,
            exponent: 2.0,
            start_cap: 0.6,
            end_cap: 1.0,
        };
        let mut bones = [hand; 4];
        for k in 0..3 {
            bones[k + 1] = rig.index(&format!("{name}_{:02}_{}", k + 1, side.suffix()));
        }
        let base_blend = if f == 0 { 0.015 } else { 0.01 };
        b.add(&tube.build(), side, |p| {
            let x = (p - base).dot(dir);
            (
                Region::Skin,
                chain(x, &bones, &[(0.0, base_blend), (l0, 0.008), (l0 + l1, 0.006)]),
            )
        });
    }
}

/// The leg from inside the hip to inside the shoe: trousers over the thigh and the shin.
fn leg(b: &mut Builder, rig: &Rig, side: Side) {
    // Each row is the height, the lateral offset, the forward offset, the half-width and the half-depth.
    let rows: [[f64; 5]; 12] = [
        [0.975, 0.084, -0.006, 0.08, 0.085],
        [0.92, 0.088, 0.0, 0.086, 0.091],
        [0.8, 0.09, 0.004, 0.08, 0.085],
        [0.68, 0.092, 0.008, 0.07, 0.074],
        [0.57, 0.094, 0.012, 0.059, 0.061],
        [0.5, 0.095, 0.013, 0.054, 0.056],
        [0.43, 0.096, 0.006, 0.053, 0.056],
        [0.35, 0.097, -0.006, 0.054, 0.059],
        [0.25, 0.098, -0.012, 0.049, 0.052],
        [0.15, 0.099, -0.016, 0.045, 0.047],
        [0.09, 0.1, -0.019, 0.044, 0.046],
        [0.05, 0.1, -0.02, 0.04, 0.042],
    ];
    let tube = Tube {
        stations: rows
            .iter()
            .map(|r| Station::new(DVec3::new(r[1], r[0], r[2]), r[3], r[4]))
            .collect(),
        rings_per_span: 3,
        segments: 16,
        reference: DVec3::X,
        exponent: 2.0,
        start_cap: 0.5,
        end_cap: 0.6,
    };
    let bones = ["thigh", "shin", "foot"].map(|n| rig.side_index(n, side));
    let height = |name: &str| rig.joints[rig.side_index(name, Side::Left)].position.y;
    let joints = [(-height("shin"), 0.045), (-height("foot"), 0.03)];
    let pelvis = rig.index("pelvis");
    b.add(&tube.build(), side, |p| {
        let w = chain(-p.y, &bones, &joints);
        let w = blend(w, pelvis, smoothstep(0.9, 1.0, p.y) * 0.6);
        (Region::Trousers, w)
    });
}

/// The shoe, with a flat sole on the ground, bending at the ball of the foot.
fn shoe(b: &mut Builder, rig: &Rig, side: Side) {
    // Each row is the forward offset, the centre height, the half-width and the half-height.
    let rows: [[f64; 4]; 7] = [
        [-0.07, 0.048, 0.035, 0.045],
        [-0.045, 0.052, 0.042, 0.052],
        [0.0, 0.058, 0.045, 0.06],
        [0.05, 0.05, 0.048, 0.05],
        [0.1, 0.04, 0.05, 0.04],
        [0.15, 0.035, 0.046, 0.033],
        [0.185, 0.03, 0.036, 0.026],
    ];
    let x = rig.joints[rig.side_index("foot", Side::Left)].position.x;
    let tube = Tube {
        stations: rows
            .iter()
            .map(|r| Station::new(DVec3::new(x + 0.03 * r[0], r[1], r[0]), r[2], r[3]))
            .collect(),
        rings_per_span: 3,
        segments: 16,
        reference: DVec3::X,
        exponent: 2.4,
        start_cap: 0.8,
        end_cap: 0.8,
    };
    let mut surface = tube.build();
    for p in &mut surface.positions {
        p.y = p.y.max(0.0);
    }
    let bones = ["foot", "toes"].map(|n| rig.side_index(n, side));
    let ball = rig.joints[rig.side_index("toes", Side::Left)].position.z;
    let shin = rig.side_index("shin", side);
    b.add(&surface, side, |p| {
        let w = chain(p.z, &bones, &[(ball, 0.03)]);
        (Region::Shoes, blend(w, shin, smoothstep(0.09, 0.125, p.y) * 0.6))
    });
}

/// The mesh's bind-space height: the top of the head above the soles.
#[cfg(test)]
pub fn height(mesh: &Mesh) -> f32 {
    let ys = mesh.positions.iter().map(|p| p[1]);
    ys.clone().fold(f32::MIN, f32::max) - ys.fold(f32::MAX, f32::min)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_are_sorted_normalized_and_blended() {
        let rig = super::super::rig::build();
        let mesh = build(&rig);
        let count = mesh.positions.len();
        assert!((3000..=8000).contains(&count), "{count} vertices");
        assert!(mesh.indices.iter().all(|&i| usize::from(i) < count));
        let mut shared = 0;
        for (w, j) in mesh.weights.iter().zip(&mesh.joints) {
            assert!(w.windows(2).all(|p| p[0] >= p[1]), "weights {w:?} are not sorted");
            assert!(
                (w.iter().sum::<f32>() - 1.0).abs() < 1e-6,
                "weights {w:?} do not sum to 1"
            );
            assert!(
                w.iter().zip(j).all(|(&w, &j)| w > 0.0 || j == 0),
                "unused influences point at joint 0"
            );
            assert!(j.iter().all(|&j| usize::from(j) < rig.len()));
            shared += usize::from(w[1] > 0.0);
        }
        assert!(shared > count / 10, "only {shared} vertices blend two joints or more");
        let h = height(&mesh);
        assert!((1.7..=1.9).contains(&h), "height {h}");
    }
}
