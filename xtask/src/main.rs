//! Project automation for the crowd toolkit: `cargo xtask <command>`.
//!
//! Commands:
//! - `demo`: imports the default character (or `--model PATH`), samples every clip, skins the mesh on the
//!   CPU at every sampled frame, and prints the skeleton, clip and animated-bounds statistics.
//! - `gen-assets`: regenerates `assets/crowd_character.glb` from our own code.
//! - `inspect MODEL`: prints a glTF model's skeleton tree, clips, skinned primitives and bounds.
//! - `bench`: runs the criterion benches (`cargo bench -p crowd-benches`).

mod character;
mod demo;
mod inspect;
#[cfg(test)]
mod tidy;

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "cargo xtask", about = "Automation for the crowd toolkit", version)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Import the default character, sample and skin every clip on the CPU, and print statistics.
    Demo {
        /// A glTF model to use instead of the default character.
        #[arg(long)]
        model: Option<PathBuf>,
        /// Sampling rate in Hz.
        #[arg(long, default_value_t = 30.0)]
        rate: f32,
    },
    /// Regenerate the default character, `assets/crowd_character.glb`.
    GenAssets {
        /// Only check that the committed file is up to date; exit non-zero if it is not.
        #[arg(long)]
        check: bool,
    },
    /// Print a glTF model's skeleton tree, clips, skinned primitives and bounds.
    Inspect {
        /// The `.glb` or `.gltf` file.
        model: PathBuf,
    },
    /// Run the criterion benches; extra arguments go to criterion.
    Bench {
        /// Arguments passed to the bench binaries, for example a filter.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

fn main() {
    let cli = Cli::parse();
    if let Err(e) = run(cli) {
        // The whole cause chain on one line, without a backtrace: the importer's message names the fault.
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn run(cli: Cli) -> Result<()> {
    let root = workspace_root();
    match cli.command {
        Cmd::Demo { model, rate } => {
            let path = model.unwrap_or_else(|| root.join(character::CHARACTER_PATH));
            demo::run(&path, rate)
        }
        Cmd::GenAssets { check } => gen_assets(&root, check),
        Cmd::Inspect { model } => inspect::run(&model),
        Cmd::Bench { args } => {
            let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
                .current_dir(&root)
                .args(["bench", "-p", "crowd-benches", "--"])
                .args(&args)
                .status()
                .context("cannot start cargo bench")?;
            if !status.success() {
                bail!("cargo bench failed with {status}");
            }
            Ok(())
        }
    }
}

fn gen_assets(root: &std::path::Path, check: bool) -> Result<()> {
    let path = root.join(character::CHARACTER_PATH);
    let bytes = character::generate_glb();
    if check {
        let committed = std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
        if committed != bytes {
            bail!("{} is out of date: run `cargo xtask gen-assets`", path.display());
        }
        println!("{} is up to date ({} bytes)", path.display(), bytes.len());
        return Ok(());
    }
    // Check that what we write imports before replacing the committed file.
    anim_pose::import_slice(&bytes, None).context("the generated character does not import")?;
    std::fs::write(&path, &bytes).with_context(|| format!("cannot write {}", path.display()))?;
    println!("wrote {} ({} bytes)", path.display(), bytes.len());
    Ok(())
}

/// The workspace root: the parent of this crate's manifest directory.
fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."))
}
