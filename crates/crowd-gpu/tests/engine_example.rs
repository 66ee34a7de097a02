//! Runs `examples/engine.rs`, the program an engine that owns its device, queue, encoders and pass writes, on a small
//! crowd (lavapipe on CI), so that it keeps compiling and drawing: the crowd covers a good part of the image and
//! every pixel it covers differs from the clear colour.

mod common;

#[path = "../examples/engine.rs"]
#[expect(dead_code, reason = "the example's `main` parses arguments; the test calls `run`")]
mod engine;

#[test]
fn the_engine_example_draws_its_crowd() {
    let Some(gpu) = common::gpu() else { return };
    let options = engine::Options {
        model: common::images::default_character_path(),
        bake: None,
        count: 2_000,
        frames: 3,
        size: (256, 144),
    };
    let (pixels, draws) = engine::run(&gpu.adapter, &gpu.device, &gpu.queue, &options).expect("the example runs");
    assert_eq!(pixels.len(), 256 * 144 * 4);
    assert!(draws > 0, "indirect draws were recorded");
    // The clear colour (0.5, 0.6, 0.7) in sRGB.
    let clear = [188u8, 203, 218, 255];
    let covered = pixels
        .chunks_exact(4)
        .filter(|p| p.iter().zip(clear).any(|(a, b)| a.abs_diff(b) > 2))
        .count();
    let share = covered as f64 / (256.0 * 144.0);
    assert!(
        (0.05..0.9).contains(&share),
        "the crowd covers {:.1}% of the image",
        share * 100.0
    );
}
