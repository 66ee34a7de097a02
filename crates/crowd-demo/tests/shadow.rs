//! The sun's shadows: a character outside the main view casts onto the ground inside it.
//!
//! One default character stands 1.6 m from the origin towards the sun; the camera looks straight down at the origin
//! from 4 m with a 25° field of view, so the character is out of the frame but its shadow (about 1.7 m long) crosses
//! it. The frame is drawn with the crowd in the instance view (so that any character pixel would be seen), with
//! and without shadows: with them, a band of the ground must be darker, and no character pixel may appear.

use std::collections::HashSet;

use crowd_demo::assets::{Assets, default_model};
use crowd_demo::stage::{Stage, msaa_samples};
use crowd_frame::{ClipId, CrowdFrame, FrameCamera, Spawn};
use crowd_gpu::headless::{OFFSCREEN_COLOR_FORMAT, OffscreenTarget};
use crowd_gpu::{DebugView, Lighting, RenderPath};
use glam::{Quat, Vec3};

mod common;

const SIZE: u32 = 128;

#[test]
fn a_caster_outside_the_view_darkens_the_visible_ground() {
    let Some(gpu) = common::gpu() else {
        return;
    };
    let assets = Assets::load(&default_model(), None).expect("default character");
    let samples = msaa_samples(&gpu.adapter, OFFSCREEN_COLOR_FORMAT);
    let config = crowd_demo::stage::renderer_config(&gpu.adapter, &gpu.device, OFFSCREEN_COLOR_FORMAT, samples);
    let path = RenderPath::for_config(&gpu.device, &config);
    let settings = crowd_demo::frame_settings(&assets, path, SIZE as f32, 25f32.to_radians(), 1.6);
    let mut crowd = CrowdFrame::new(assets.character.clone(), settings).expect("crowd");
    let sun = Vec3::from_array(Lighting::default().sun_direction);
    let towards_sun = Vec3::new(sun.x, 0.0, sun.z).normalize();
    let ground_y = assets.framing.ground_y;
    crowd
        .add(&Spawn {
            rotation: Quat::IDENTITY,
            ..Spawn::at(towards_sun * 1.6 + Vec3::Y * ground_y, ClipId(0))
        })
        .expect("add");
    let group = crowd.store().group_desc(crowd.group()).expect("group").clone();
    let mut stage = Stage::new(
        &gpu.device,
        &gpu.queue,
        config,
        path,
        &assets,
        Some(&group),
        (Vec3::ZERO, 20.0),
    )
    .expect("stage");
    stage.set_debug_view(DebugView::InstanceId);
    let camera = FrameCamera::perspective(
        Vec3::new(0.0, ground_y + 4.0, 0.0),
        Vec3::new(0.0, ground_y, 0.0),
        Vec3::Z,
        25f32.to_radians(),
        1.0,
        0.05,
        100.0,
    );
    let target = OffscreenTarget::new(&gpu.device, SIZE, SIZE).expect("target");
    let exchange = crowd.exchange().clone();
    let mut frame = |shadows: bool| {
        crowd.step(1.0 / 30.0, &camera).expect("step");
        let packet = exchange.begin_read().expect("packet");
        stage.set_shadows(shadows);
        stage
            .draw(&gpu.device, &gpu.queue, &packet, &target.color_view, (SIZE, SIZE))
            .expect("draw");
        target.read_rgba8(&gpu).expect("readback")
    };
    let lit = frame(false);
    let shadowed = frame(true);
    let colours: HashSet<[u8; 3]> = (0..512).map(crowd_gpu::instance_id_color).collect();
    let character_pixels = shadowed
        .chunks_exact(4)
        .filter(|p| colours.contains(&[p[0], p[1], p[2]]))
        .count();
    assert_eq!(character_pixels, 0, "the caster must be outside the main view");
    let luminance = |p: &[u8]| 0.2126 * f32::from(p[0]) + 0.7152 * f32::from(p[1]) + 0.0722 * f32::from(p[2]);
    let darker = lit
        .chunks_exact(4)
        .zip(shadowed.chunks_exact(4))
        .filter(|(a, b)| luminance(b) < 0.8 * luminance(a))
        .count();
    let brighter = lit
        .chunks_exact(4)
        .zip(shadowed.chunks_exact(4))
        .filter(|(a, b)| luminance(b) > luminance(a) + 1.0)
        .count();
    let share = darker as f32 / (SIZE * SIZE) as f32;
    eprintln!("the shadow darkens {:.1}% of the frame", share * 100.0);
    // The shadow crosses a corner of the 1.8 m square view (11% of the frame when this test was written).
    assert!(share > 0.05 && share < 0.5, "{share}");
    assert_eq!(brighter, 0, "shadows only darken");
}
