//! A pooled instance between two slots against the exact pose at its time: the default character walking, slots
//! posed exactly at `T0` and `T0 + DT`, the instance at fraction 0.5, the reference the exact pose at
//! `T0 + DT / 2` drawn as a unique instance. Threshold: mean absolute difference ≤ [`MEAN_LIMIT`] steps and at
//! most [`FLIPPED_LIMIT`] of the pixels off by more than 32; and the interpolation must be closer to the exact
//! pose than either slot alone (so the test sees the fraction).

mod common;

use common::images;
use common::scenes::pooled_packet;
use crowd_gpu::headless::OffscreenTarget;
use crowd_mesh::posed::{front_camera, pose_exact, unique_packet};
use glam::Vec3;
use skin_pack::{PaletteEntry, PaletteFormat};

const MEAN_LIMIT: f64 = 0.5;
const FLIPPED_LIMIT: f64 = 0.004;
const SIZE: (u32, u32) = (192, 256);
const WALK: usize = 1;
const T0: f32 = 0.4;
/// One tenth of a second between the slots: a pool of about 10 slots per second of clip.
const DT: f32 = 0.1;

#[test]
fn a_pooled_instance_between_two_slots_is_close_to_the_exact_pose() {
    let Some(gpu) = common::gpu() else { return };
    let model = images::default_character();
    let pose = |t: f32| pose_exact(&model, WALK, t).expect("the pose").remove(0);
    let (a, b, exact) = (pose(T0), pose(T0 + DT), pose(T0 + DT * 0.5));
    let camera = front_camera(&model.bounds(), SIZE.0 as f32 / SIZE.1 as f32);
    let target = OffscreenTarget::new(&gpu.device, SIZE.0, SIZE.1).expect("a target");
    let joints = exact.palette.len();

    let mut reference = images::renderer(&gpu, None);
    images::add_meshes(&gpu, &mut reference, &exact.packed, &exact.materials);
    let packet = unique_packet::<PaletteEntry>(joints, &exact.palette, &[images::unique_record(Vec3::ZERO, 0)], camera)
        .expect("a packet");
    images::prepare(&gpu, &mut reference, &packet);
    let reference = images::render(&gpu, &target, &camera, &[&reference]);

    let pool: Vec<PaletteEntry> = a
        .palette
        .iter()
        .chain(&b.palette)
        .map(|m| PaletteEntry::encode(m, glam::Vec3A::ZERO))
        .collect();
    let mut pooled = images::renderer(&gpu, None);
    images::add_meshes(&gpu, &mut pooled, &exact.packed, &exact.materials);
    let mut render_at = |fraction: f32| {
        let record = common::scenes::pooled_record(Vec3::ZERO, [0, 1], fraction);
        let packet = pooled_packet(joints, &pool, &[record], 1, camera);
        images::prepare(&gpu, &mut pooled, &packet);
        images::render(&gpu, &target, &camera, &[&pooled])
    };
    let between = images::difference(&render_at(0.5), &reference);
    let slot0 = images::difference(&render_at(0.0), &reference);
    let slot1 = images::difference(&render_at(1.0), &reference);
    eprintln!("pooled at 0.5: {between:?}; slot 0 alone: {slot0:?}; slot 1 alone: {slot1:?}");
    assert!(
        between.mean <= MEAN_LIMIT && between.flipped <= FLIPPED_LIMIT,
        "the pooled instance is too far from the exact pose: {between:?}"
    );
    assert!(
        between.mean < slot0.mean && between.mean < slot1.mean,
        "the fraction has no effect: {between:?} against {slot0:?} and {slot1:?}"
    );
}
