//! Test support shared by the workspace's crates: where the third-party sample assets are (the folder that
//! `CROWD_SAMPLE_ASSETS` names, which `.ci/run` sets) and where the committed default character is.
//!
//! A dev-dependency only: no library crate depends on it for its own code.

use std::path::{Path, PathBuf};

/// The environment variable that names the shared sample-asset folder.
pub const ASSETS_VAR: &str = "CROWD_SAMPLE_ASSETS";

/// The sample-asset folder from [`ASSETS_VAR`].
///
/// When the variable is unset, this panics on CI (`CI=true`), so that a misconfigured CI fails, and otherwise
/// prints a loud skip line to stderr and returns `None`. When the variable is set, the folder must exist (it
/// panics otherwise).
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
            // The test harness captures `eprintln!` of passing tests; writing to the stderr handle itself keeps
            // the skip visible in every run.
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                format!("skipped: sample assets not found (set {ASSETS_VAR})\n").as_bytes(),
            );
            None
        }
    }
}

/// A file of the sample assets, `relative` to their folder, which must exist when the assets are configured
/// (it panics otherwise); `None` where [`sample_assets`] is.
pub fn asset_file(relative: &str) -> Option<PathBuf> {
    let path = sample_assets()?.join(relative);
    assert!(path.is_file(), "{} is missing from the sample assets", path.display());
    Some(path)
}

/// The default character committed under the repository's `assets/`.
pub fn default_character() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/crowd_character.glb")
}
