//! Figures of `cargo xtask bench` for `crowd-bevy` (group `bevy`, run when named or with `--gpu`): the same scene of
//! N sample Foxes with random clips and phases, drawn by Bevy's own glTF scenes and `AnimationPlayer`s and then by
//! crowd-bevy, by `crowd-bevy`'s `foxes_bench` example (its own workspace, built with `--ignore-rust-version` in
//! the dev profile: dependencies, Bevy included, at opt-level 2). Both modes alternate, `runs` times each, and each
//! figure is the median of the runs' medians.
//!
//! - `bevy.cpu_ms_foxes_{1k,10k}_{ours,bevy}`: CPU milliseconds per frame of the app's own threads (the main
//!   thread, which runs both worlds with pipelined rendering off, and Bevy's task pools; not the driver's threads,
//!   which on a software adapter do the GPU's work);
//! - `bevy.cpu_ms_empty_scene`: the same for the scene without Foxes, Bevy's own cost per frame;
//! - `bevy.frame_ms_foxes_{1k,10k}_{ours,bevy}`: the whole update;
//! - with `--gpu` on a real GPU, the same at 100k;
//! - `bevy.example_lines`: the lines of `crates/crowd-bevy/examples/bevy_crowd.rs`.
//!
//! It needs `CROWD_SAMPLE_ASSETS` (the Fox) and a Vulkan adapter.

use std::process::Command;

use crate::harness::Figure;

/// Runs the bench example once; returns `(cpu_ms, frame_ms)`.
fn run_once(mode: &str, count: usize, frames: usize, gpu: bool) -> Result<(f64, f64), Box<dyn std::error::Error>> {
    let root = crate::workspace_root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root.join("crates/crowd-bevy")).args([
        "run",
        "--quiet",
        "--ignore-rust-version",
        "--example",
        "foxes_bench",
        "--",
        "--mode",
        mode,
        "--count",
        &count.to_string(),
        "--frames",
        &frames.to_string(),
    ]);
    if gpu {
        cmd.arg("--gpu");
    }
    let out = cmd.output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!(
            "foxes_bench --mode {mode} --count {count} failed: {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    let line = text
        .lines()
        .find(|l| l.starts_with("foxes_bench "))
        .ok_or("foxes_bench printed no figures")?;
    println!("{line}");
    let field = |key: &str| -> Result<f64, Box<dyn std::error::Error>> {
        let v = line
            .split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .ok_or_else(|| format!("no {key} in '{line}'"))?;
        Ok(v.parse()?)
    };
    Ok((field("cpu_ms=")?, field("frame_ms=")?))
}

/// The group: 1k and 10k (and 100k with `gpu`), each mode `runs` times (3, or 1 with `quick`), alternating.
pub fn run(quick: bool, gpu: bool, figures: &mut Vec<Figure>) -> Result<(), Box<dyn std::error::Error>> {
    let runs = if quick { 1 } else { 3 };
    let mut counts = vec![(1_000, "1k", 30), (10_000, "10k", 10)];
    if gpu {
        counts.push((100_000, "100k", 10));
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    for (count, label, frames) in counts {
        let (mut ours, mut bevy) = ((Vec::new(), Vec::new()), (Vec::new(), Vec::new()));
        for _ in 0..runs {
            let (c, f) = run_once("crowd", count, frames, gpu)?;
            ours.0.push(c);
            ours.1.push(f);
            let (c, f) = run_once("bevy", count, frames, gpu)?;
            bevy.0.push(c);
            bevy.1.push(f);
        }
        let (ours_cpu, bevy_cpu) = (median(&mut ours.0), median(&mut bevy.0));
        let small = count == 1_000;
        figures.push(Figure {
            name: format!("bevy.cpu_ms_foxes_{label}_ours"),
            value: ours_cpu,
            target: if small { "<= 0.2 x bevy" } else { "report" },
            met: !small || ours_cpu <= 0.2 * bevy_cpu,
        });
        figures.push(Figure {
            name: format!("bevy.cpu_ms_foxes_{label}_bevy"),
            value: bevy_cpu,
            target: "report",
            met: true,
        });
        for (who, v) in [("ours", &mut ours.1), ("bevy", &mut bevy.1)] {
            figures.push(Figure {
                name: format!("bevy.frame_ms_foxes_{label}_{who}"),
                value: median(v),
                target: "report",
                met: true,
            });
        }
    }
    // Bevy's own cost per frame for the scene without Foxes (camera, light, ground).
    let mut empty: Vec<f64> = (0..runs)
        .map(|_| run_once("empty", 0, 30, gpu).map(|(c, _)| c))
        .collect::<Result<_, _>>()?;
    figures.push(Figure {
        name: "bevy.cpu_ms_empty_scene".into(),
        value: median(&mut empty),
        target: "report",
        met: true,
    });
    let example = std::fs::read_to_string(crate::workspace_root().join("crates/crowd-bevy/examples/bevy_crowd.rs"))?;
    figures.push(Figure {
        name: "bevy.example_lines".into(),
        value: example.lines().count() as f64,
        target: "report",
        met: true,
    });
    Ok(())
}
