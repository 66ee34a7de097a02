//! `cargo xtask bake MODEL --out FILE [--budget-mm X | --budget-relative F | --budget-px P --at-height PX]
//! [--formats bat,vat] [--sockets NAMES] [--dry-run]`: bakes a model's clips with `anim-bake` into a bake file, or
//! (`--dry-run`) prints the plan, and prints the report.
//!
//! Distances are printed in model units (metres for a model that follows glTF's convention), with the budget the
//! options resolved to and what it was derived from.

use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use anim_bake::{
    BakeOptions, BakeReport, Budget, ClipCandidate, FormatPlan, Miss, Parts, Plan, Progress, ResolvedBudget, Stage,
};
use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressStyle};

/// What `cargo xtask bake` was asked for.
pub struct Args<'a> {
    /// The glTF model.
    pub model: &'a Path,
    /// The bake file written (ignored with `dry_run`).
    pub out: Option<&'a Path>,
    /// The vertex-error budget.
    pub budget: Budget,
    /// The parts, as `bat`, `vat` or both, comma-separated.
    pub formats: &'a str,
    /// Socket joint names, comma-separated (may be empty).
    pub sockets: &'a str,
    /// Print the plan only.
    pub dry_run: bool,
}

/// Parses the options, then plans (with `--dry-run`) or bakes, writes the file and prints the report.
pub fn run(args: &Args<'_>) -> Result<()> {
    let options = options(args)?;
    let model =
        anim_pose::import_file(args.model).with_context(|| format!("cannot import {}", args.model.display()))?;
    let bar = Bar::new();
    let progress = |p: Progress| bar.update(p);
    if args.dry_run {
        let plan = anim_bake::plan(&model, &options, &progress).context("cannot plan the bake")?;
        bar.finish();
        print!("{}", plan_text(&plan));
        if !plan.fits() {
            bail!("the plan does not fit the device limits");
        }
        return Ok(());
    }
    let Some(out) = args.out else {
        bail!("--out FILE is required unless --dry-run is given");
    };
    let start = Instant::now();
    let (baked, report) = anim_bake::bake(&model, &options, &progress).context("cannot bake")?;
    bar.finish();
    baked
        .write_file(out)
        .with_context(|| format!("cannot write {}", out.display()))?;
    print!("{}", report_text(&report));
    println!(
        "wrote {} ({} bytes of data) in {:.2} s",
        out.display(),
        baked.data_bytes(),
        start.elapsed().as_secs_f64()
    );
    if !report.within_budget() {
        eprintln!(
            "warning: some clip misses the budget of {} (see above)",
            budget_text(&report.budget)
        );
    }
    Ok(())
}

/// The budget of the command line's flags (at most one is given, as clap checks): `--budget-mm` in thousandths of
/// a model unit, `--budget-relative` a fraction of the model's extent, `--budget-px` with `--at-height` as
/// `(pixels, extent pixels)`; none gives the default, `Budget::Relative(1/1800)`.
pub fn budget(mm: Option<f32>, relative: Option<f32>, pixels: Option<(f32, f32)>) -> Budget {
    match (mm, relative, pixels) {
        (Some(mm), _, _) => Budget::Absolute(mm * 1e-3),
        (_, Some(f), _) => Budget::Relative(f),
        (_, _, Some((error_px, extent_px))) => Budget::Pixels { error_px, extent_px },
        _ => Budget::default(),
    }
}

/// Parses `--budget-relative`: a number (`0.00055`) or a fraction `1/N` (`1/1800`).
pub fn parse_fraction(s: &str) -> Result<f32, String> {
    let value = match s.split_once('/') {
        Some((a, b)) => {
            let (a, b): (f32, f32) = (
                a.trim().parse().map_err(|e| format!("'{a}': {e}"))?,
                b.trim().parse().map_err(|e| format!("'{b}': {e}"))?,
            );
            a / b
        }
        None => s.trim().parse().map_err(|e| format!("'{s}': {e}"))?,
    };
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(format!("'{s}' is not a positive fraction of the model's extent"))
    }
}

/// A distance in model units with four significant digits.
fn units(x: f32) -> String {
    if !(x.is_finite() && x > 0.0) {
        return format!("{x}");
    }
    let decimals = (3 - x.log10().floor() as i32).clamp(0, 12) as usize;
    format!("{x:.decimals$}")
}

/// A fraction as `1/N` when it is one, else as a number.
fn fraction(f: f32) -> String {
    let n = (1.0 / f).round();
    if n >= 1.0 && (1.0 / f - n).abs() <= 1e-4 * n {
        format!("1/{n}")
    } else {
        format!("{f}")
    }
}

/// The budget in model units and what it was derived from.
pub fn budget_text(b: &ResolvedBudget) -> String {
    let from = match b.budget {
        Budget::Absolute(_) => "absolute".to_owned(),
        Budget::Relative(f) => format!("{} of the model's extent, {} units", fraction(f), units(b.extent)),
        Budget::Pixels { error_px, extent_px } => format!(
            "{error_px} px where the model's extent, {} units, covers {extent_px} px",
            units(b.extent)
        ),
    };
    format!(
        "{} model units ({from}; {} mm for a model in metres)",
        units(b.distance),
        units(b.distance * 1e3)
    )
}

/// The bake options of the command line.
fn options(args: &Args<'_>) -> Result<BakeOptions> {
    let mut parts = Parts { bat: false, vat: false };
    for f in args.formats.split(',').map(str::trim).filter(|f| !f.is_empty()) {
        match f {
            "bat" => parts.bat = true,
            "vat" => parts.vat = true,
            other => bail!("unknown format '{other}' in --formats (use bat, vat or bat,vat)"),
        }
    }
    let sockets: Vec<String> = args
        .sockets
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    let options = BakeOptions {
        budget: args.budget,
        parts,
        sockets,
        ..BakeOptions::default()
    };
    options.validate().context("invalid bake options")?;
    Ok(options)
}

/// A progress bar that appears only when the work runs for more than a moment.
struct Bar {
    bar: ProgressBar,
    start: Instant,
}

impl Bar {
    fn new() -> Self {
        let bar = ProgressBar::hidden();
        bar.set_style(
            ProgressStyle::with_template("{prefix:>9} [{bar:30}] {pos}/{len} {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        Self {
            bar,
            start: Instant::now(),
        }
    }

    fn update(&self, p: Progress) {
        if self.bar.is_hidden() && self.start.elapsed() > Duration::from_millis(500) {
            self.bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        }
        self.bar.set_prefix(match p.stage {
            Stage::Planning => "planning",
            Stage::Encoding => "encoding",
            Stage::Measuring => "measuring",
            _ => "baking",
        });
        self.bar.set_length(p.total);
        self.bar.set_position(p.done);
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// The plan as text.
pub fn plan_text(plan: &Plan) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "plan for skeleton '{}': {} clips, {} vertices, {} skin joints",
        plan.skeleton,
        plan.clips.len(),
        plan.vertex_count,
        plan.skin_joint_count,
    );
    let _ = writeln!(
        s,
        "budget {}; distances below are in model units",
        budget_text(&plan.budget)
    );
    for c in &plan.clips {
        let _ = writeln!(
            s,
            "  clip '{}': {:.3} s, {}, seam distance {}",
            c.name,
            c.duration,
            if c.looping { "loops" } else { "does not loop" },
            units(c.seam_distance)
        );
    }
    fn part<F: std::fmt::Debug>(s: &mut String, name: &str, p: &anim_bake::PartPlan<F>, clips: &[String]) {
        let _ = writeln!(s, "{name}: chosen {:?}, {} bytes", p.chosen().format, p.chosen().bytes);
        for (i, f) in p.formats.iter().enumerate() {
            format_lines(s, f, i == p.chosen, clips);
        }
    }
    let names: Vec<String> = plan.clips.iter().map(|c| c.name.clone()).collect();
    if let Some(p) = &plan.bat {
        part(&mut s, "BAT", p, &names);
    }
    if let Some(p) = &plan.vat {
        part(&mut s, "VAT", p, &names);
        if let Some(l) = &plan.vat_layout {
            let _ = writeln!(
                s,
                "  layout: {} x {} texels x {} layers ({} rows per frame, {} frames per layer)",
                l.width, l.height, l.layers, l.rows_per_frame, l.frames_per_layer
            );
        }
    }
    if let Some(p) = &plan.sockets {
        part(&mut s, "sockets", p, &names);
    }
    let _ = writeln!(s, "total: {} bytes", plan.total_bytes());
    for l in &plan.limits {
        let _ = writeln!(
            s,
            "  {}: needs {}, limit {} {}",
            l.what,
            l.needed,
            l.limit,
            if l.fits() { "ok" } else { "DOES NOT FIT" }
        );
    }
    let _ = writeln!(
        s,
        "fits the device limits: {}; meets the budget: {}",
        if plan.fits() { "yes" } else { "no" },
        if plan.meets_budget() { "yes" } else { "no" }
    );
    s
}

/// One format of a part's plan, with a line per clip.
fn format_lines<F: std::fmt::Debug>(s: &mut String, f: &FormatPlan<F>, chosen: bool, clips: &[String]) {
    let mark = if chosen { "*" } else { " " };
    if let Some(why) = &f.unusable {
        let _ = writeln!(s, " {mark} {:?}: unusable: {why}", f.format);
        return;
    }
    let _ = writeln!(
        s,
        " {mark} {:?}: {} bytes, {}",
        f.format,
        f.bytes,
        if f.meets_budget {
            "meets the budget"
        } else {
            "misses the budget"
        }
    );
    for (c, name) in f.clips.iter().zip(clips) {
        let _ = writeln!(s, "      {name}: {}", candidate(c));
    }
}

fn candidate(c: &ClipCandidate) -> String {
    let mut t = format!(
        "{} frames at {:.2} Hz, {} bytes, error {} {}",
        c.intervals + 1,
        c.rate_hz,
        c.bytes,
        if c.predicted.time == 0.0 && c.predicted.vertex == 0 {
            "<="
        } else {
            "="
        },
        units(c.predicted.distance)
    );
    if let Some(n) = c.predicted_normal {
        let _ = write!(t, ", normal {:.4} rad", n.distance);
    }
    if c.seam_jump > 0.0 {
        let _ = write!(t, ", seam jump {}", units(c.seam_jump));
    }
    if c.capped {
        t.push_str(", stopped where it costs more than a finer format");
    } else if !c.meets_budget {
        t.push_str(", MISSES the budget");
        match c.miss {
            Some(Miss::Rounding) => t.push_str(": the format's rounding at the stored frames exceeds it at any rate"),
            Some(Miss::Quantization { bound }) => {
                let _ = write!(
                    t,
                    ": the format's quantization alone may err {} at any rate",
                    units(bound)
                );
            }
            Some(Miss::Seam) => t.push_str(": the stored frames jump at the loop seam by more at any rate"),
            Some(Miss::Rate) => t.push_str(" at the highest rate allowed"),
            _ => {}
        }
    }
    t
}

/// The report as text.
pub fn report_text(report: &BakeReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "bake report: budget {}, BAT {:?}, VAT {:?}, {} bytes of data; distances in model units",
        budget_text(&report.budget),
        report.bat_format,
        report.vat_format,
        report.data_bytes
    );
    for c in &report.clips {
        let _ = writeln!(s, "  clip '{}'{}:", c.name, if c.looping { " (loops)" } else { "" });
        for (name, p) in [("BAT", c.bat), ("VAT", c.vat), ("sockets", c.sockets)] {
            let Some(p) = p else { continue };
            let _ = writeln!(
                s,
                "    {name}: {} frames at {:.2} Hz, largest error {} at {:.4} s {} {}, seam jump {}",
                p.frames,
                p.rate_hz,
                units(p.error.distance),
                p.error.time,
                if name == "sockets" { "socket" } else { "vertex" },
                p.error.vertex,
                units(p.seam_jump)
            );
        }
        if let Some(n) = c.vat_normal {
            let _ = writeln!(
                s,
                "    VAT normals: largest angle {:.4} rad at {:.4} s vertex {}",
                n.distance, n.time, n.vertex
            );
        }
    }
    let _ = writeln!(
        s,
        "largest error {} of {}: {}",
        units(report.largest_error()),
        units(report.budget.distance),
        if report.within_budget() {
            "within the budget"
        } else {
            "MISSES the budget"
        }
    );
    s
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    fn args<'a>(formats: &'a str, sockets: &'a str, budget: Budget) -> Args<'a> {
        Args {
            model: Path::new("model.glb"),
            out: None,
            budget,
            formats,
            sockets,
            dry_run: true,
        }
    }

    #[test]
    fn options_from_the_command_line() {
        let o = options(&args("bat", " head, hand_r ", Budget::Absolute(0.002))).unwrap();
        assert_eq!(o.parts, Parts { bat: true, vat: false });
        assert_eq!(o.sockets, vec!["head".to_owned(), "hand_r".to_owned()]);
        assert_eq!(o.budget, Budget::Absolute(0.002));
        let o = options(&args("bat,vat", "", Budget::default())).unwrap();
        assert_eq!(o.parts, Parts { bat: true, vat: true });
        assert!(o.sockets.is_empty());
        assert!(options(&args("bat,gif", "", Budget::default())).is_err());
        assert!(options(&args("", "", Budget::default())).is_err(), "nothing to bake");
        let e = options(&args("vat", "", Budget::Absolute(-1e-3))).unwrap_err();
        assert!(format!("{e:#}").contains("budget (Absolute distance)"), "{e:#}");
    }

    /// The budget of `cargo xtask bake model.glb` with `flags`, or clap's refusal.
    fn budget_of(flags: &[&str]) -> Result<Budget, clap::Error> {
        let cli = crate::Cli::try_parse_from(["cargo xtask", "bake", "model.glb"].iter().chain(flags))?;
        let crate::Cmd::Bake {
            budget_mm,
            budget_relative,
            budget_px,
            at_height,
            ..
        } = cli.command
        else {
            panic!("not the bake command");
        };
        Ok(budget(budget_mm, budget_relative, budget_px.zip(at_height)))
    }

    #[test]
    fn budget_flags() {
        assert_eq!(
            budget_of(&[]).unwrap(),
            Budget::Relative(anim_bake::DEFAULT_RELATIVE_BUDGET)
        );
        assert_eq!(budget_of(&["--budget-mm", "2"]).unwrap(), Budget::Absolute(2e-3));
        assert_eq!(
            budget_of(&["--budget-relative", "1/1000"]).unwrap(),
            Budget::Relative(1e-3)
        );
        assert_eq!(
            budget_of(&["--budget-relative", "0.002"]).unwrap(),
            Budget::Relative(0.002)
        );
        assert_eq!(
            budget_of(&["--budget-px", "0.5", "--at-height", "400"]).unwrap(),
            Budget::Pixels {
                error_px: 0.5,
                extent_px: 400.0
            }
        );
        for refused in [
            &["--budget-mm", "1", "--budget-relative", "1/1800"][..],
            &["--budget-px", "1"],
            &["--at-height", "400"],
            &["--budget-relative", "0"],
            &["--budget-relative", "1/0"],
            &["--budget-relative", "a/b"],
        ] {
            assert!(budget_of(refused).is_err(), "{refused:?}");
        }
    }

    #[test]
    fn budgets_are_printed_in_model_units_with_their_origin() {
        let b = Budget::default().resolve(173.0).unwrap();
        assert_eq!(
            budget_text(&b),
            "0.09611 model units (1/1800 of the model's extent, 173.0 units; 96.11 mm for a model in metres)"
        );
        let b = Budget::Absolute(1e-3).resolve(1.8).unwrap();
        assert_eq!(
            budget_text(&b),
            "0.001000 model units (absolute; 1.000 mm for a model in metres)"
        );
        let b = Budget::Pixels {
            error_px: 1.0,
            extent_px: 500.0,
        }
        .resolve(2.0)
        .unwrap();
        assert!(
            budget_text(&b)
                .starts_with("0.004000 model units (1 px where the model's extent, 2.000 units, covers 500 px")
        );
    }
}
