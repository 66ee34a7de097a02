//! Each LOD switch of the default character, at its switch size: the two levels' silhouettes agree.
//!
//! The switch sizes are `crowd_mesh::lod_thresholds` for half a pixel of error on a 1080-line viewport with a
//! 50-degree field of view (the demo's rule). The character stands at the distance where its screen size is the
//! threshold, and a 256 × 256 target shows the part of that viewport around it (a crop of the 1080-line frame),
//! with up to 8 × 8 samples a pixel where the character is small, so that each pixel's coverage is measured rather
//! than aliased. At each switch the coverages of level `k` and level `k + 1` (a sample is covered when its alpha is
//! above half) must overlap with an intersection over union (the sum of each pixel's smaller coverage over the sum
//! of its larger) of at least [`MIN_IOU`]`[k]`.
//!
//! Measured on lavapipe (2026-12-07, walk at 0.4 s): 0.982, 0.943, 0.892 and 0.778 for the switches 0→1 to 3→4, on
//! characters about 362, 99, 34 and 17 pixels tall. Half a pixel of error takes a visible share of a limb a pixel
//! wide, so the far switches keep less of the silhouette; a level that lost a limb falls further (a level one step
//! coarser than the switch's: 0.954, 0.852 and 0.692 at the first three switches).

mod common;

use common::images;
use crowd_cull::Tier;
use crowd_frame::{FrameCamera, Packet, PacketDraw, PacketParts, RecordKind};
use crowd_gpu::headless::OffscreenTarget;
use crowd_mesh::lod_thresholds;
use crowd_mesh::posed::pose_exact;
use glam::{Vec3, Vec3A};
use skin_pack::{PaletteEntry, PaletteFormat};

/// The least intersection over union of the silhouettes at each switch (`k` to `k + 1`).
const MIN_IOU: [f64; 4] = [0.97, 0.92, 0.86, 0.74];
const SIZE: u32 = 256;
/// The frame the switch sizes are for: 1080 lines, 50 degrees.
const VIEWPORT_LINES: f32 = 1080.0;
const FOV_Y_DEG: f32 = 50.0;
const WALK: usize = 1;

/// The coverage of each viewport pixel (0 to 1) of an RGBA8 image of `SIZE` × `SIZE` samples, `f` × `f` samples
/// a pixel, a sample covered when its alpha is above half.
fn coverage(pixels: &[u8], f: usize) -> Vec<f64> {
    let side = SIZE as usize / f;
    let mut out = vec![0.0; side * side];
    for (i, p) in pixels.chunks_exact(4).enumerate() {
        let (x, y) = (i % SIZE as usize / f, i / SIZE as usize / f);
        if p[3] > 127 && x < side && y < side {
            out[y * side + x] += 1.0 / (f * f) as f64;
        }
    }
    out
}

/// The intersection over union of two coverages (the sum of the smaller over the sum of the larger, pixel by pixel).
fn iou(a: &[f64], b: &[f64]) -> f64 {
    let both: f64 = a.iter().zip(b).map(|(x, y)| x.min(*y)).sum();
    let either: f64 = a.iter().zip(b).map(|(x, y)| x.max(*y)).sum();
    if either == 0.0 { 0.0 } else { both / either }
}

#[test]
fn each_lod_switch_keeps_the_silhouette() {
    let Some(gpu) = common::gpu() else { return };
    let model = images::default_character();
    let posed = pose_exact(&model, WALK, 0.4).expect("the pose").remove(0);
    let lods = &posed.packed[0].lods;
    assert_eq!(lods.len(), crowd_mesh::DEFAULT_LOD_TARGETS.len());
    let bounds = model.bounds();
    let centre = (bounds.min + bounds.max) * 0.5;
    let radius = ((bounds.max - bounds.min) * 0.5).length();
    let switches = lod_thresholds(lods, radius, VIEWPORT_LINES, 0.5, 0.1);
    let tan = (FOV_Y_DEG.to_radians() * 0.5).tan();
    let palettes: Vec<PaletteEntry> = posed
        .palette
        .iter()
        .map(|m| PaletteEntry::encode(m, Vec3A::ZERO))
        .collect();
    let records = [images::unique_record(Vec3::ZERO, 0)];
    let target = OffscreenTarget::new(&gpu.device, SIZE, SIZE).expect("a target");
    let mut renderer = images::renderer(&gpu, None);
    images::add_meshes(&gpu, &mut renderer, &posed.packed, &posed.materials);

    for (k, &s) in switches.iter().enumerate() {
        // crowd-cull's screen size is radius / (depth · tan(fov / 2)).
        let distance = radius / (s * tan);
        // The character's height in the viewport's pixels, and the samples per pixel (each way) that fit it 1.5
        // times in the target.
        let tall = (bounds.max.y - bounds.min.y) / (2.0 * distance * tan) * VIEWPORT_LINES;
        let f = ((SIZE as f32 / (1.5 * tall)) as usize).clamp(1, 8);
        // The crop: SIZE / f of the viewport's lines around the character, f samples a pixel each way.
        let crop_fov = 2.0 * (tan * (SIZE as usize / f) as f32 / VIEWPORT_LINES).atan();
        let camera = FrameCamera::perspective(
            centre + Vec3::Z * distance,
            centre,
            Vec3::Y,
            crop_fov,
            1.0,
            (distance - 2.0 * radius).max(distance * 1e-3),
            distance + 2.0 * radius,
        );
        let mut render_lod = |lod: u8| {
            let draws = [PacketDraw {
                lod,
                tier: Tier::Unique,
                kind: RecordKind::Unique,
                first_instance: 0,
                instance_count: 1,
            }];
            let packet: Packet = Packet::from_parts(&PacketParts {
                time: 0.0,
                camera,
                skin_joint_count: palettes.len(),
                pool_palettes: &[],
                unique_palettes: &palettes,
                records: &records,
                draws: &draws,
            })
            .expect("a packet");
            images::prepare(&gpu, &mut renderer, &packet);
            coverage(&images::render(&gpu, &target, &camera, &[&renderer]), f)
        };
        let (near, far) = (render_lod(k as u8), render_lod(k as u8 + 1));
        let covered: f64 = near.iter().sum();
        let overlap = iou(&near, &far);
        eprintln!(
            "switch {k} -> {}: screen size {s:.4}, {tall:.0} pixels tall, {covered:.0} pixels covered ({f} x {f} \
             samples each), IoU {overlap:.3} ({} and {} triangles)",
            k + 1,
            lods[k].triangles(),
            lods[k + 1].triangles()
        );
        assert!(
            covered > 20.0,
            "switch {k}: the character is in view ({covered} pixels)"
        );
        assert!(
            overlap >= MIN_IOU[k],
            "switch {k} -> {}: silhouettes overlap {overlap:.3} < {}",
            k + 1,
            MIN_IOU[k]
        );
    }
}
