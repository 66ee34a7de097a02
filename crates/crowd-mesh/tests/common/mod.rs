//! Shared helpers of crowd-mesh's tests: the sample-asset folder.

/// The sample-asset folder from `CROWD_SAMPLE_ASSETS`: panics on CI (`CI=true`) when it is unset, and otherwise
/// prints a loud skip line and returns `None`.
pub fn sample_assets() -> Option<std::path::PathBuf> {
    const VAR: &str = "CROWD_SAMPLE_ASSETS";
    match std::env::var_os(VAR) {
        Some(dir) => {
            let dir = std::path::PathBuf::from(dir);
            assert!(dir.is_dir(), "{VAR} is set to {}, which is not a folder", dir.display());
            Some(dir)
        }
        None => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "{VAR} is not set on CI: the sample-asset tests cannot run"
            );
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                format!("skipped: sample assets not found (set {VAR})\n").as_bytes(),
            );
            None
        }
    }
}
