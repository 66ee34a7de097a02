//! Small scenes of the GPU tests: a two-joint box, grids of records, and pooled packets.

use anim_pose::{Aabb, Indices, SkinnedMesh};
use crowd_cull::Tier;
use crowd_frame::{FrameCamera, InstanceRecord, Packet, PacketDraw, PacketParts, RecordAnim, RecordKind};
use glam::{Quat, Vec3, Vec4};
use skin_pack::PaletteEntry;

/// A box of side `side` centred on the origin: its lower four corners follow joint 0, the upper four joint 1.
pub fn two_joint_box(side: f32) -> SkinnedMesh {
    let h = side * 0.5;
    let positions: Vec<Vec3> = (0..8)
        .map(|i| {
            Vec3::new(
                if i & 1 == 0 { -h } else { h },
                if i & 2 == 0 { -h } else { h },
                if i & 4 == 0 { -h } else { h },
            )
        })
        .collect();
    let faces: [[u16; 4]; 6] = [
        [0, 1, 3, 2],
        [4, 6, 7, 5],
        [0, 4, 5, 1],
        [2, 3, 7, 6],
        [0, 2, 6, 4],
        [1, 5, 7, 3],
    ];
    let indices: Vec<u16> = faces
        .iter()
        .flat_map(|f| [f[0], f[1], f[2], f[0], f[2], f[3]])
        .collect();
    SkinnedMesh {
        name: "mesh 'box' primitive 0".to_owned(),
        mesh: 0,
        primitive: 0,
        normals: positions.iter().map(|p| p.normalize()).collect(),
        tangents: vec![],
        uvs: vec![],
        colors: vec![],
        joints: (0..8).map(|i| [u16::from(i & 2 != 0), 0, 0, 0]).collect(),
        weights: vec![[1.0, 0.0, 0.0, 0.0]; 8],
        indices: Indices::U16(indices),
        max_influences: 1,
        source_max_influences: 1,
        material: anim_pose::Material::default(),
        bounds: Aabb::from_points(&positions),
        positions,
    }
}

/// The positions of a `cols × rows` grid of cells `spacing` apart in the XY plane, row by row from the top left.
pub fn grid(cols: usize, rows: usize, spacing: f32) -> Vec<Vec3> {
    let (w, h) = ((cols - 1) as f32 * spacing, (rows - 1) as f32 * spacing);
    (0..rows)
        .flat_map(|r| {
            (0..cols).map(move |c| Vec3::new(c as f32 * spacing - w * 0.5, h * 0.5 - r as f32 * spacing, 0.0))
        })
        .collect()
}

/// An orthographic-like camera (a narrow perspective from far away) that frames a `width × height` rectangle
/// centred on the origin of the XY plane, for an image of `aspect`.
pub fn plane_camera(width: f32, height: f32, aspect: f32) -> FrameCamera {
    let fov = 10f32.to_radians();
    let distance = (height * 0.5).max(width * 0.5 / aspect) / (fov * 0.5).tan() * 1.05;
    FrameCamera::perspective(
        Vec3::Z * distance,
        Vec3::ZERO,
        Vec3::Y,
        fov,
        aspect,
        distance * 0.5,
        distance * 2.0,
    )
}

/// A pooled record at `position`.
pub fn pooled_record(position: Vec3, slots: [u16; 2], fraction: f32) -> InstanceRecord {
    InstanceRecord::new(
        position,
        Quat::IDENTITY,
        1.0,
        RecordAnim::Pooled { slots, fraction },
        Vec4::ONE,
    )
    .expect("a record")
}

/// A packet of pooled records at LOD 0 over `pool` (slot-major palettes of `joints` entries), split into draws
/// of at most `per_draw` records.
pub fn pooled_packet(
    joints: usize,
    pool: &[PaletteEntry],
    records: &[InstanceRecord],
    per_draw: usize,
    camera: FrameCamera,
) -> Packet {
    let draws: Vec<PacketDraw> = (0..records.len())
        .step_by(per_draw.max(1))
        .map(|first| PacketDraw {
            lod: 0,
            tier: Tier::Pooled,
            kind: RecordKind::Pooled,
            first_instance: first as u32,
            instance_count: per_draw.min(records.len() - first) as u32,
        })
        .collect();
    Packet::from_parts(&PacketParts {
        time: 0.0,
        camera,
        skin_joint_count: joints,
        pool_palettes: pool,
        unique_palettes: &[],
        records,
        draws: &draws,
    })
    .expect("a valid packet")
}
