//! Shared helpers for anim-bake's integration tests: locating the sample assets.

#![allow(
    dead_code,
    reason = "each integration test binary uses a different subset of these helpers"
)]

use std::path::PathBuf;

/// The environment variable that names the shared sample-asset folder.
pub const ASSETS_VAR: &str = "CROWD_SAMPLE_ASSETS";

/// The sample-asset folder from [`ASSETS_VAR`].
///
/// When the variable is unset, this panics on CI (`CI=true`), so that a misconfigured CI fails, and
/// otherwise prints a loud skip line to stderr and returns `None`. When the variable is set, the folder
/// must exist.
pub fn sample_assets() -> Option<PathBuf> {
    match std::env::var_os(ASSETS_VAR) {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            assert!(
                dir.is_dir(),
                "{ASSETS_VAR} is set to {}, which is not a folder",
                dir.display()
            );
            Some(dir)
        }
        None => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "{ASSETS_VAR} is not set on CI: the sample-asset tests cannot run (set it to the shared assets folder)"
            );
            // The test harness captures `eprintln!` of passing tests; writing to the stderr handle itself
            // keeps the skip visible in every run.
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                format!("skipped: sample assets not found (set {ASSETS_VAR})\n").as_bytes(),
            );
            None
        }
    }
}

/// A file of the sample assets that must exist when the assets are configured.
pub fn asset_file(relative: &str) -> Option<PathBuf> {
    let path = sample_assets()?.join(relative);
    assert!(path.is_file(), "{} is missing from the sample assets", path.display());
    Some(path)
}

/// The default character committed under `assets/`.
pub fn default_character() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/crowd_character.glb")
}
