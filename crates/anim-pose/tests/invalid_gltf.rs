//! Runs the importer over the Khronos glTF-Validator corpus under `$CROWD_SAMPLE_ASSETS/invalid-gltf`:
//! every file whose validator report has errors must be rejected, every other file must import, and no
//! file may panic or hang.

#![cfg(feature = "gltf")]

mod common;

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

/// How long one import may take before it counts as a hang.
const HANG_LIMIT: Duration = Duration::from_secs(10);

/// The number of test inputs in the corpus, so that a missing folder cannot pass vacuously.
const EXPECTED_INPUTS: usize = 62;

/// What happened when importing one file.
enum Outcome {
    /// The import returned a model, with its warnings.
    Imported(Vec<String>),
    /// The import returned an error, with its message.
    Rejected(String),
    /// The import panicked, with the panic message.
    Panicked(String),
    /// The import did not finish within [`HANG_LIMIT`].
    Hung,
}

/// Imports `path` on its own thread, catching panics and giving up after [`HANG_LIMIT`].
fn import_guarded(path: &Path) -> Outcome {
    let (tx, rx) = mpsc::channel();
    let owned = path.to_path_buf();
    std::thread::spawn(move || {
        let result = std::panic::catch_unwind(|| anim_pose::import_file(&owned));
        let outcome = match result {
            Ok(Ok(model)) => Outcome::Imported(model.warnings.iter().map(ToString::to_string).collect()),
            Ok(Err(e)) => Outcome::Rejected(e.to_string()),
            Err(panic) => Outcome::Panicked(
                panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_else(|| "a non-string panic".to_owned()),
            ),
        };
        // The receiver is gone only after a hang was already reported.
        let _ = tx.send(outcome);
    });
    rx.recv_timeout(HANG_LIMIT).unwrap_or(Outcome::Hung)
}

/// The validator's error count for `input`, read from `<input>.report.json`.
fn expected_errors(input: &Path) -> u64 {
    let mut report = input.as_os_str().to_owned();
    report.push(".report.json");
    let report = PathBuf::from(report);
    let text = std::fs::read(&report).unwrap_or_else(|e| panic!("cannot read {}: {e}", report.display()));
    let json: gltf::json::Value =
        gltf::json::deserialize::from_slice(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", report.display()));
    json.pointer("/issues/numErrors")
        .and_then(gltf::json::Value::as_u64)
        .unwrap_or_else(|| panic!("{} has no issues.numErrors", report.display()))
}

#[test]
fn invalid_files_are_rejected_and_valid_files_import() {
    let Some(dir) = common::asset_dir("invalid-gltf") else {
        return;
    };
    let inputs = common::files_with_extensions(&dir, &[".gltf", ".glb"]);
    assert_eq!(
        inputs.len(),
        EXPECTED_INPUTS,
        "expected {EXPECTED_INPUTS} test inputs under {}",
        dir.display()
    );
    let mut failures = Vec::new();
    let (mut rejected, mut imported) = (0usize, 0usize);
    for input in &inputs {
        let name = input.strip_prefix(&dir).unwrap_or(input).display().to_string();
        let errors = expected_errors(input);
        match import_guarded(input) {
            Outcome::Rejected(message) => {
                rejected += 1;
                eprintln!("rejected {name}: {message}");
                if errors == 0 {
                    failures.push(format!(
                        "{name}: the validator reports no errors, but the import failed: {message}"
                    ));
                }
            }
            Outcome::Imported(warnings) => {
                imported += 1;
                eprintln!("imported {name} ({} warnings: {})", warnings.len(), warnings.join("; "));
                if errors > 0 {
                    failures.push(format!(
                        "{name}: the validator reports {errors} errors, but the import succeeded"
                    ));
                }
            }
            Outcome::Panicked(message) => failures.push(format!("{name}: the import panicked: {message}")),
            Outcome::Hung => failures.push(format!("{name}: the import took longer than {HANG_LIMIT:?}")),
        }
    }
    eprintln!(
        "invalid-gltf corpus: {rejected} rejected, {imported} imported, {} inputs",
        inputs.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} files failed:\n{}",
        failures.len(),
        inputs.len(),
        failures.join("\n")
    );
}
