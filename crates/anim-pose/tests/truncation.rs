//! Cuts sample files at every byte length and checks that the importer fails cleanly on each prefix:
//! an error, never a panic, and success only for the whole file.

#![cfg(feature = "gltf")]

mod common;

use std::path::Path;
use std::time::Instant;

/// Imports every prefix of the file at `path` (read relative to no folder) and checks the outcomes.
///
/// With `patch_glb_length`, each prefix of 12 bytes or more also gets its GLB header's length field set
/// to the prefix length, so that the chunk and buffer checks, not just the header's length check, see
/// every truncation.
fn check_every_prefix(path: &Path, patch_glb_length: bool) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let start = Instant::now();
    let mut failures = Vec::new();
    let mut prefix = Vec::with_capacity(bytes.len());
    for n in 0..bytes.len() {
        prefix.clear();
        prefix.extend_from_slice(&bytes[..n]);
        if patch_glb_length && n >= 12 {
            prefix[8..12].copy_from_slice(&u32::try_from(n).expect("small file").to_le_bytes());
        }
        let prefix = &prefix;
        match std::panic::catch_unwind(|| anim_pose::import_slice(prefix, None)) {
            Ok(Ok(_)) => failures.push(format!("{n} bytes: imported a truncated file")),
            Ok(Err(_)) => {}
            Err(_) => failures.push(format!("{n} bytes: panicked")),
        }
    }
    let full = std::panic::catch_unwind(|| anim_pose::import_slice(&bytes, None));
    match full {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => failures.push(format!("the whole file ({} bytes) failed: {e}", bytes.len())),
        Err(_) => failures.push(format!("the whole file ({} bytes) panicked", bytes.len())),
    }
    eprintln!(
        "{}: {} prefixes checked in {:?}",
        path.display(),
        bytes.len(),
        start.elapsed()
    );
    assert!(failures.is_empty(), "{}:\n{}", path.display(), failures.join("\n"));
}

#[test]
fn rigged_simple_glb_fails_cleanly_when_truncated() {
    let Some(dir) = common::asset_dir("gltf") else { return };
    let path = dir.join("RiggedSimple/RiggedSimple.glb");
    check_every_prefix(&path, false);
    check_every_prefix(&path, true);
}

#[test]
fn simple_skin_embedded_gltf_fails_cleanly_when_truncated() {
    let Some(dir) = common::asset_dir("gltf") else { return };
    check_every_prefix(&dir.join("SimpleSkin/SimpleSkin.gltf"), false);
}
