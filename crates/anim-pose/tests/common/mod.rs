//! Shared helpers for the integration tests: locating the sample assets, walking folders, sampling a runtime clip
//! and measuring rotation angles.

#![allow(
    dead_code,
    reason = "each integration test binary uses a different subset of these helpers"
)]

use std::path::{Path, PathBuf};

use anim_pose::{Channel, Clip, RuntimeClip, SamplingJob, SoaTransform, Transform, unpack_soa};
use glam::{Quat, Vec4};

#[allow(
    unused_imports,
    reason = "each integration test binary uses a different subset of these helpers"
)]
pub use sample_assets::{ASSETS_VAR, sample_assets};

/// A sub-folder of the sample assets that must exist when the assets are configured.
pub fn asset_dir(name: &str) -> Option<PathBuf> {
    let dir = sample_assets()?.join(name);
    assert!(dir.is_dir(), "{} is missing from the sample assets", dir.display());
    Some(dir)
}

/// Every file under `dir` (recursively) whose name ends with one of `extensions`, sorted.
pub fn files_with_extensions(dir: &Path, extensions: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        let entries = std::fs::read_dir(&folder).unwrap_or_else(|e| panic!("cannot list {}: {e}", folder.display()));
        for entry in entries {
            let path = entry
                .unwrap_or_else(|e| panic!("cannot list {}: {e}", folder.display()))
                .path();
            if path.is_dir() {
                pending.push(path);
            } else if path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| extensions.iter().any(|ext| n.ends_with(ext)))
            {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// SoA sampling, unpacked to one transform per joint.
pub fn sample_soa(rc: &RuntimeClip, t: f32) -> Vec<Transform> {
    let mut soa = vec![SoaTransform::IDENTITY; rc.num_soa_joints()];
    SamplingJob {
        clip: rc,
        time: t,
        output: &mut soa,
    }
    .run()
    .expect("valid sampling job");
    let mut out = vec![Transform::IDENTITY; rc.joint_count()];
    unpack_soa(&soa, &mut out).expect("sized");
    out
}

/// The angle between two rotations, accurate for small angles: `4 asin(|a - b| / 2)` in f64.
pub fn angle(a: Quat, b: Quat) -> f32 {
    let (a, b) = (Vec4::from(a).as_dvec4(), Vec4::from(b).as_dvec4());
    let b = if a.dot(b) < 0.0 { -b } else { b };
    (4.0 * ((a - b).length() / 2.0).min(1.0).asin()) as f32
}

/// A clip named `name` over `channels`, whose duration is their last key time.
pub fn clip_of(name: &str, channels: Vec<Channel>) -> Clip {
    let duration = channels
        .iter()
        .filter_map(|c| c.times.last().copied())
        .fold(0.0, f32::max);
    Clip {
        name: name.into(),
        animation: 0,
        skeleton: 0,
        duration,
        channels,
    }
}
