//! Project automation for the crowd toolkit: `cargo xtask <command>`.
//!
//! Commands:
//! - `demo [ARGS]`: runs the demo application, `crates/crowd-demo` (a scene in a window, or headless frames and
//!   figures where there is no display).
//! - `gen-assets`: regenerates `assets/crowd_character.glb` from our own code.
//! - `inspect MODEL`: prints a glTF model's skeleton tree, clips (with the runtime clip's rate, memory and error),
//!   skinned primitives and bounds; for a bake file, its header, clip, mesh and socket tables, formats and sizes.
//! - `bake MODEL --out FILE [--budget-mm X | --budget-relative F | --budget-px P --at-height PX] [--formats bat,vat]
//!   [--sockets NAMES] [--dry-run]`: bakes the model's clips with `anim-bake` from a vertex-error budget (by default
//!   1/1800 of the model's extent) and prints the report; `--dry-run` prints the plan.
//! - `skin MODEL --clip N --times LIST --out FILE [--path exact|runtime]`: world-space skinned vertex positions as
//!   JSON, through the exact evaluator or the runtime clip and jobs.
//! - `render MODEL --clip N --time T [--size PX] [--format f32|mat3x4-f16|qt-f16] --out FILE.png`: the model
//!   posed exactly and skinned on the GPU, as an RGBA8 PNG with the camera beside it as JSON.
//! - `bench [--quick] [--json FILE] [GROUP...]`: the headline measurements in a release build;
//!   `bench --criterion` runs the criterion benches.

mod bake;
mod character;
mod inspect;
mod render;
mod render_baked;
mod skin;
#[cfg(test)]
mod tidy;
#[cfg(test)]
mod world_reference;

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
    /// The demo application (`crates/crowd-demo`): a scene of `assets/scenes/` in a window, or rendered headless
    /// where there is no display. `cargo xtask demo --help` lists its options.
    Demo {
        #[command(flatten)]
        args: crowd_demo::Args,
    },
    /// Regenerate the default character, `assets/crowd_character.glb`.
    GenAssets {
        /// Only check that the committed file is up to date; exit non-zero if it is not.
        #[arg(long)]
        check: bool,
    },
    /// Print a glTF model's skeleton tree, clips, skinned primitives and bounds, or a bake file's tables and sizes.
    Inspect {
        /// The `.glb` or `.gltf` file, or a bake file.
        model: PathBuf,
    },
    /// Bake a model's clips (bone and vertex animation) from a vertex-error budget into a bake file.
    Bake {
        /// The `.glb` or `.gltf` file.
        model: PathBuf,
        /// The bake file written (not needed with `--dry-run`).
        #[arg(long)]
        out: Option<PathBuf>,
        /// The largest vertex error as an absolute distance, in thousandths of a model unit: millimetres for a
        /// model in metres (glTF's convention), hundredths of a millimetre for one in centimetres. Without any
        /// budget flag the budget is 1/1800 of the model's extent (1 mm on a 1.8 m character).
        #[arg(long, value_name = "MM", group = "budget")]
        budget_mm: Option<f32>,
        /// The largest vertex error as a fraction of the model's extent (the longest side of the box of its rest
        /// pose), written as a number or as `1/N`; the default is 1/1800.
        #[arg(long, value_name = "F", group = "budget", value_parser = bake::parse_fraction)]
        budget_relative: Option<f32>,
        /// The largest vertex error in pixels on screen where the model's extent covers `--at-height` pixels:
        /// budget = P / PX × extent.
        #[arg(long, value_name = "P", group = "budget", requires = "at_height")]
        budget_px: Option<f32>,
        /// With `--budget-px`: the pixels the model's extent (a standing character's height) covers on screen where
        /// the bake is seen largest, such as the distance where a crowd switches to the baked tier.
        #[arg(long, value_name = "PX", requires = "budget_px")]
        at_height: Option<f32>,
        /// The parts to bake: `bat`, `vat` or `bat,vat`.
        #[arg(long, default_value = "bat,vat")]
        formats: String,
        /// Joint names whose transforms are baked as sockets, comma-separated.
        #[arg(long, default_value = "")]
        sockets: String,
        /// Print the plan (frames, formats, sizes, predicted errors, device limits) without baking.
        #[arg(long)]
        dry_run: bool,
    },
    /// Write world-space skinned vertex positions of a model at given times of one animation, as JSON.
    Skin {
        /// The `.glb` or `.gltf` file.
        model: PathBuf,
        /// The glTF animation index.
        #[arg(long)]
        clip: usize,
        /// Comma-separated times in seconds, taken modulo the animation's duration.
        #[arg(long)]
        times: String,
        /// The JSON file written.
        #[arg(long)]
        out: PathBuf,
        /// How poses are evaluated.
        #[arg(long, value_enum, default_value = "exact")]
        path: skin::EvalPath,
    },
    /// Render every skinned primitive of a model at one time of one animation through the GPU path, to a PNG.
    Render {
        /// The `.glb` or `.gltf` file.
        model: PathBuf,
        /// The glTF animation index.
        #[arg(long)]
        clip: usize,
        /// The time in seconds, taken modulo the animation's duration.
        #[arg(long)]
        time: f32,
        /// The image's side in pixels.
        #[arg(long, default_value_t = 512)]
        size: u32,
        /// The palette format.
        #[arg(long, value_enum, default_value = "f32")]
        format: render::Format,
        /// The path drawn: the exact palette, or the bone-animation (`baked`) or vertex-animation (`vat`) bake.
        #[arg(long, value_enum, default_value = "palette")]
        tier: render::Tier,
        /// The bake file for `--tier baked|vat`; without it the model is baked with the default budget.
        #[arg(long)]
        bake: Option<PathBuf>,
        /// The PNG written; a `.json` with the camera is written beside it.
        #[arg(long)]
        out: PathBuf,
    },
    /// Run the headline measurements: `bench [--quick] [--json FILE] [GROUP...]`; `bench --criterion [ARGS]`
    /// runs the criterion benches instead.
    Bench {
        /// Arguments for the harness (`--quick`, `--json FILE`, groups), or `--criterion` and criterion's arguments.
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
        Cmd::Demo { args } => crowd_demo::run(&args),
        Cmd::GenAssets { check } => gen_assets(&root, check),
        Cmd::Inspect { model } => inspect::run(&model),
        Cmd::Bake {
            model,
            out,
            budget_mm,
            budget_relative,
            budget_px,
            at_height,
            formats,
            sockets,
            dry_run,
        } => bake::run(&bake::Args {
            model: &model,
            out: out.as_deref(),
            budget: bake::budget(budget_mm, budget_relative, budget_px.zip(at_height)),
            formats: &formats,
            sockets: &sockets,
            dry_run,
        }),
        Cmd::Skin {
            model,
            clip,
            times,
            out,
            path,
        } => skin::run(&model, clip, &times, &out, path),
        Cmd::Render {
            model,
            clip,
            time,
            size,
            format,
            tier,
            bake,
            out,
        } => render::run(&render::Request {
            model: &model,
            clip,
            time,
            size,
            format,
            tier,
            bake: bake.as_deref(),
            out: &out,
        }),
        Cmd::Bench { args } => bench(&root, &args),
    }
}

/// Runs the harness (`crowd-bench`, release build) or, with `--criterion`, the criterion benches.
fn bench(root: &std::path::Path, args: &[String]) -> Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root);
    if args.first().is_some_and(|a| a == "--criterion") {
        cmd.args(["bench", "-p", "crowd-benches", "--"]).args(&args[1..]);
    } else {
        cmd.args([
            "run",
            "--release",
            "--quiet",
            "-p",
            "crowd-benches",
            "--bin",
            "crowd-bench",
            "--",
        ])
        .args(args);
    }
    let status = cmd.status().context("cannot start cargo")?;
    if !status.success() {
        bail!("the benchmark run failed with {status}");
    }
    Ok(())
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
