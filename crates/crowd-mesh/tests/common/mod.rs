//! Shared helpers of crowd-mesh's tests: the sample-asset folder.

#[allow(
    unused_imports,
    reason = "each integration test binary uses a different subset of these helpers"
)]
pub use sample_assets::sample_assets;
