//! Shared helpers for the crowd benches: the `bench!` naming macro, asset paths, generated test
//! characters, and the in-process harness behind `cargo xtask bench`.

pub mod alloc_count;
pub mod groups;
pub mod harness;
pub mod synthetic;

/// Names a benchmark `crate/operation/case`, so that every bench in the workspace sorts and filters alike.
#[macro_export]
macro_rules! bench {
    ($krate:literal, $op:literal) => {
        concat!($krate, "/", $op)
    };
    ($krate:literal, $op:literal, $case:expr) => {
        format!("{}/{}/{}", $krate, $op, $case)
    };
}

/// The workspace root, from this crate's manifest directory.
pub fn workspace_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The default character committed under `assets/`.
pub fn default_character() -> std::path::PathBuf {
    workspace_root().join("assets/crowd_character.glb")
}
