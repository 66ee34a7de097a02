//! What the demo's integration tests share: the adapter check and the headless arguments.

#![allow(dead_code, reason = "each test file uses a different subset")]

use std::path::Path;

use clap::Parser;
use crowd_gpu::headless::Gpu;

/// An adapter, or a loud skip (a failure under `CI=true`).
pub fn have_adapter() -> bool {
    gpu().is_some()
}

/// A device on the default adapter, or `None` after a loud skip (a failure under `CI=true`).
pub fn gpu() -> Option<Gpu> {
    let gpu = Gpu::open(None).expect("the adapter refused a device");
    if gpu.is_none() {
        assert!(
            std::env::var("CI").map_or(true, |v| v != "true"),
            "no wgpu adapter under CI=true: {}",
            crowd_demo::NO_ADAPTER
        );
        eprintln!("SKIPPED: no wgpu adapter ({})", crowd_demo::NO_ADAPTER);
    }
    gpu
}

/// One headless frame of `scene` with `count` characters, 0.5 s into the run, `size` (`WIDTHxHEIGHT`) pixels, written
/// to `out`.
pub fn headless_args(scene: &str, count: usize, size: &str, out: &Path) -> crowd_demo::Args {
    let mut a = crowd_demo::Args::parse_from([
        "crowd-demo",
        "--headless",
        "--scene",
        scene,
        "--frames",
        "1",
        "--seconds",
        "0.5",
        "--size",
        size,
    ]);
    a.count = Some(count);
    a.out = Some(out.to_owned());
    a
}
