//! Shared helpers for skin-pack's integration tests: locating the sample assets.

#![allow(
    dead_code,
    reason = "each integration test binary uses a different subset of these helpers"
)]

#[allow(
    unused_imports,
    reason = "each integration test binary uses a different subset of these helpers"
)]
pub use sample_assets::{ASSETS_VAR, asset_file, default_character, sample_assets};
