//! The GPU skinning path against skin-pack's CPU reference: a grid of the default character at different clips,
//! times and palette formats, rendered (1) skinned on the GPU and (2) skinned on the CPU and drawn as static meshes
//! by the same pipeline, and compared pixel by pixel; the CPU image is also compared with the stored reference
//! `tests/reference/skin_grid.png`.
//!
//! Both paths use the same inputs: the palette as the GPU decodes it (the f16 formats decoded with skin-pack's
//! decoders) and the mesh's quantized unorm8 weights, so the images differ only by floating-point arithmetic
//! order and the re-quantized normals of the static meshes.
//!
//! Thresholds, GPU against CPU (same device): mean absolute difference ≤ [`MEAN_LIMIT`] 8-bit steps per channel,
//! at most [`FLIPPED_LIMIT`] of the pixels differ by more than 32 steps (silhouette pixels whose coverage flipped),
//! and no channel differs by more than [`MAX_LIMIT`] except at such pixels. CPU image against the stored reference
//! (any adapter's rasterizer): mean ≤ [`STORED_MEAN_LIMIT`], flipped ≤ [`STORED_FLIPPED_LIMIT`].

mod common;

use common::images::{self, Difference, TestDraw};
use crowd_gpu::headless::OffscreenTarget;
use crowd_mesh::posed::{PosedSkin, front_camera, pose_exact, unique_packet};
use crowd_mesh::{PackedJoints, PackedMesh, PaletteKind};
use glam::{Affine3A, Vec3, Vec3A};
use skin_pack::{Mat3x4F16, PaletteEntry, PaletteFormat, QtF16};

const MEAN_LIMIT: f64 = 0.03;
const FLIPPED_LIMIT: f64 = 0.0001;
const MAX_LIMIT: u8 = 40;
const STORED_MEAN_LIMIT: f64 = 1.0;
const STORED_FLIPPED_LIMIT: f64 = 0.01;
const SIZE: (u32, u32) = (384, 256);

/// (glTF animation, time) per row.
const ROWS: [(usize, f32); 2] = [(1, 0.3), (3, 0.7)];
const FORMATS: [PaletteKind; 3] = [PaletteKind::F32, PaletteKind::Mat3x4F16, PaletteKind::QtF16];

/// The palette as the GPU decodes it from format `kind`.
fn as_decoded(palette: &[Affine3A], kind: PaletteKind) -> Vec<Affine3A> {
    fn decode<F: skin_pack::F16Format>(palette: &[Affine3A]) -> Vec<Affine3A> {
        let encoded: Vec<F> = palette.iter().map(|m| F::encode(m, Vec3A::ZERO)).collect();
        let mut out = vec![Affine3A::IDENTITY; palette.len()];
        skin_pack::decode_palette::<F>(bytemuck::cast_slice(&encoded), Vec3A::ZERO, &mut out).expect("decodes");
        out
    }
    match kind {
        PaletteKind::F32 => palette.to_vec(),
        PaletteKind::Mat3x4F16 => decode::<Mat3x4F16>(palette),
        PaletteKind::QtF16 => decode::<QtF16>(palette),
    }
}

/// `mesh` skinned on the CPU by `palette` with the packed mesh's quantized weights, as a static mesh of one
/// joint.
fn static_mesh(mesh: &anim_pose::SkinnedMesh, packed: &PackedMesh, palette: &[Affine3A]) -> PackedMesh {
    let weights: Vec<[f32; 4]> = packed
        .weights
        .iter()
        .map(|w| [0, 8, 16, 24].map(|s| ((w >> s) & 0xff) as f32 / 255.0))
        .collect();
    let joints: Vec<[u16; 4]> = match &packed.joints {
        PackedJoints::U8(j) => j
            .iter()
            .map(|w| [0, 8, 16, 24].map(|s| ((w >> s) & 0xff) as u16))
            .collect(),
        PackedJoints::U16(j) => j
            .iter()
            .map(|w| [w[0] as u16, (w[0] >> 16) as u16, w[1] as u16, (w[1] >> 16) as u16])
            .collect(),
    };
    let mut positions = vec![Vec3::ZERO; mesh.vertex_count()];
    let mut normals = vec![Vec3::ZERO; mesh.normals.len()];
    skin_pack::skin_reference(
        palette,
        &skin_pack::SkinInput {
            positions: &mesh.positions,
            normals: &mesh.normals,
            tangents: &[],
            joints: &joints,
            weights: &weights,
        },
        &mut skin_pack::SkinOutput {
            positions: &mut positions,
            normals: &mut normals,
            tangents: &mut [],
        },
    )
    .expect("the reference skins the mesh");
    let mut rigid = mesh.clone();
    rigid.positions = positions;
    rigid.normals = normals;
    rigid.joints = vec![[0; 4]; mesh.vertex_count()];
    rigid.weights = vec![[1.0, 0.0, 0.0, 0.0]; mesh.vertex_count()];
    PackedMesh::with_lods(&rigid, 1, &[1.0]).expect("the static mesh packs")
}

fn gpu_renderer<F: PaletteFormat + 'static>(
    gpu: &crowd_gpu::headless::Gpu,
    skin: &PosedSkin,
    palettes: &[Affine3A],
    positions: &[Vec3],
    camera: crowd_frame::FrameCamera,
) -> Box<dyn TestDraw> {
    let mut r = images::renderer::<F>(gpu, None);
    images::add_meshes(gpu, &mut r, &skin.packed, &skin.materials);
    let joints = skin.palette.len();
    let records: Vec<_> = positions
        .iter()
        .enumerate()
        .map(|(i, &p)| images::unique_record(p, (i * joints) as u32))
        .collect();
    let packet = unique_packet::<F>(joints, palettes, &records, camera).expect("the packet builds");
    images::prepare(gpu, &mut r, &packet);
    Box::new(r)
}

fn check(name: &str, d: Difference, mean: f64, flipped: f64, max: Option<u8>) -> bool {
    eprintln!("{name}: mean {:.4}, max {}, flipped {:.5}", d.mean, d.max, d.flipped);
    d.mean <= mean && d.flipped <= flipped && max.is_none_or(|m| d.max <= m || d.flipped > 0.0)
}

#[test]
fn gpu_skinning_matches_the_cpu_reference() {
    let Some(gpu) = common::gpu() else { return };
    let model = images::default_character();
    let poses: Vec<Vec<PosedSkin>> = ROWS
        .iter()
        .map(|&(clip, t)| pose_exact(&model, clip, t).expect("the pose"))
        .collect();
    assert_eq!(poses[0].len(), 1, "the default character has one skin");
    let bounds = model.bounds();
    let cell = bounds.size() * Vec3::new(1.3, 1.1, 0.0);
    let position = |row: usize, col: usize| Vec3::new(col as f32 * cell.x, -(row as f32) * cell.y, 0.0);
    let mut grid = anim_pose::Aabb::EMPTY;
    for row in 0..ROWS.len() {
        for col in 0..FORMATS.len() {
            grid = grid.union(anim_pose::Aabb {
                min: bounds.min + position(row, col),
                max: bounds.max + position(row, col),
            });
        }
    }
    let camera = front_camera(&grid, SIZE.0 as f32 / SIZE.1 as f32);
    let target = OffscreenTarget::new(&gpu.device, SIZE.0, SIZE.1).expect("a target");

    let mut gpu_path = Vec::new();
    let mut cpu_path = Vec::new();
    for (col, &kind) in FORMATS.iter().enumerate() {
        let skin = &poses[0][0];
        let palettes: Vec<Affine3A> = poses.iter().flat_map(|p| p[0].palette.clone()).collect();
        let positions: Vec<Vec3> = (0..ROWS.len()).map(|row| position(row, col)).collect();
        gpu_path.push(match kind {
            PaletteKind::F32 => gpu_renderer::<PaletteEntry>(&gpu, skin, &palettes, &positions, camera),
            PaletteKind::Mat3x4F16 => gpu_renderer::<Mat3x4F16>(&gpu, skin, &palettes, &positions, camera),
            PaletteKind::QtF16 => gpu_renderer::<QtF16>(&gpu, skin, &palettes, &positions, camera),
        });
        for (row, pose) in poses.iter().enumerate() {
            let skin = &pose[0];
            let decoded = as_decoded(&skin.palette, kind);
            let statics: Vec<PackedMesh> = skin
                .meshes
                .iter()
                .zip(&skin.packed)
                .map(|(&m, packed)| static_mesh(&model.meshes[m], packed, &decoded))
                .collect();
            let mut r = images::renderer(&gpu, None);
            images::add_meshes(&gpu, &mut r, &statics, &skin.materials);
            let record = images::unique_record(position(row, col), 0);
            let packet = unique_packet::<PaletteEntry>(1, &[Affine3A::IDENTITY], &[record], camera).expect("packet");
            images::prepare(&gpu, &mut r, &packet);
            cpu_path.push(r);
        }
    }
    let gpu_image = images::render(
        &gpu,
        &target,
        &camera,
        &gpu_path.iter().map(|r| r.as_ref()).collect::<Vec<_>>(),
    );
    let cpu_image = images::render(
        &gpu,
        &target,
        &camera,
        &cpu_path.iter().map(|r| r as &dyn TestDraw).collect::<Vec<_>>(),
    );
    let covered = gpu_image.chunks_exact(4).filter(|p| p[3] == 255).count();
    assert!(
        covered > (SIZE.0 * SIZE.1 / 20) as usize,
        "the characters cover only {covered} pixels"
    );

    let d = images::difference(&gpu_image, &cpu_image);
    if !check("GPU vs CPU skinning", d, MEAN_LIMIT, FLIPPED_LIMIT, Some(MAX_LIMIT)) {
        images::write_failure("skin_grid_gpu", SIZE, &gpu_image, &cpu_image);
        panic!("GPU skinning differs from the CPU reference: {d:?}; see tests/reference/skin_grid_gpu-*.png");
    }
    let stored = images::stored_reference("skin_grid", SIZE, &cpu_image);
    let d = images::difference(&cpu_image, &stored);
    if !check(
        "CPU image vs stored reference",
        d,
        STORED_MEAN_LIMIT,
        STORED_FLIPPED_LIMIT,
        None,
    ) {
        images::write_failure("skin_grid", SIZE, &cpu_image, &stored);
        panic!("the CPU-reference image differs from tests/reference/skin_grid.png: {d:?}");
    }
}
