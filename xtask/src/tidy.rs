//! Repository hygiene checks that run under `cargo test`.
//!
//! - Every Rust file starts with a `//!` header.
//! - Every shader in `shaders/` is registered in `crates/crowd-gpu/src/shaders.rs`, and every registered
//!   shader exists.
//! - No test is marked ignored, and none is marked as expected to panic.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name();
            if name == "target" || name.to_string_lossy().starts_with('.') {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
}

#[test]
fn every_rust_file_has_a_module_header() {
    let mut files = Vec::new();
    for d in ["crates", "xtask", "benches"] {
        rust_files(&root().join(d), &mut files);
    }
    assert!(
        files.len() > 10,
        "found only {} Rust files; is the tidy check looking in the right place?",
        files.len()
    );
    let bad: Vec<_> = files
        .iter()
        .filter(|p| {
            let text = std::fs::read_to_string(p).unwrap_or_default();
            !text.trim_start().starts_with("//!")
        })
        .collect();
    assert!(bad.is_empty(), "files without a `//!` header: {bad:?}");
}

#[test]
fn no_ignored_or_should_panic_tests() {
    let mut files = Vec::new();
    for d in ["crates", "xtask", "benches"] {
        rust_files(&root().join(d), &mut files);
    }
    let needles = [concat!("#[", "ignore"), concat!("#[", "should_panic")];
    let bad: Vec<_> = files
        .iter()
        .filter(|p| {
            let text = std::fs::read_to_string(p).unwrap_or_default();
            needles.iter().any(|n| text.contains(n))
        })
        .collect();
    assert!(bad.is_empty(), "ignored or should_panic tests in: {bad:?}");
}

#[test]
fn every_shader_is_registered() {
    let registry = std::fs::read_to_string(root().join("crates/crowd-gpu/src/shaders.rs")).expect("shaders.rs exists");
    let mut shaders: Vec<String> = std::fs::read_dir(root().join("shaders"))
        .expect("shaders/ exists")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".wgsl"))
        .collect();
    shaders.sort();
    assert!(!shaders.is_empty(), "shaders/ holds no WGSL files");
    for s in &shaders {
        assert!(
            registry.contains(&format!("shaders/{s}\")")),
            "shaders/{s} is not registered with include_str! in crowd-gpu/src/shaders.rs"
        );
    }
    let registered = registry.matches("include_str!(").count();
    assert_eq!(
        registered,
        shaders.len(),
        "shaders.rs registers {registered} files but shaders/ holds {shaders:?}"
    );
}
