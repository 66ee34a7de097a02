//! `cargo xtask bake MODEL --out FILE [--budget-mm X] [--formats bat,vat] [--sockets NAMES] [--dry-run]`: bakes a
//! model's clips with `anim-bake` into a bake file, or (`--dry-run`) prints the plan, and prints the report.

use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use anim_bake::{BakeOptions, BakeReport, ClipCandidate, FormatPlan, Parts, Plan, Progress, Stage};
use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressStyle};

/// What `cargo xtask bake` was asked for.
pub struct Args<'a> {
    /// The glTF model.
    pub model: &'a Path,
    /// The bake file written (ignored with `dry_run`).
    pub out: Option<&'a Path>,
    /// The vertex-error budget in millimetres.
    pub budget_mm: f32,
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
            "warning: some clip misses the {} mm budget (see above)",
            report.budget_mm
        );
    }
    Ok(())
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
        budget_mm: args.budget_mm,
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
        "plan for skeleton '{}': {} clips, {} vertices, {} skin joints, budget {} mm",
        plan.skeleton,
        plan.clips.len(),
        plan.vertex_count,
        plan.skin_joint_count,
        plan.budget_mm
    );
    for c in &plan.clips {
        let _ = writeln!(
            s,
            "  clip '{}': {:.3} s, {}, seam distance {:.3} mm",
            c.name,
            c.duration,
            if c.looping { "loops" } else { "does not loop" },
            c.seam_distance * 1e3
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
        "{} frames at {:.2} Hz, {} bytes, error {} {:.4} mm",
        c.intervals + 1,
        c.rate_hz,
        c.bytes,
        if c.predicted.time == 0.0 && c.predicted.vertex == 0 {
            "<="
        } else {
            "="
        },
        c.predicted.distance * 1e3
    );
    if let Some(n) = c.predicted_normal {
        let _ = write!(t, ", normal {:.4} rad", n.distance);
    }
    if c.seam_jump > 0.0 {
        let _ = write!(t, ", seam jump {:.4} mm", c.seam_jump * 1e3);
    }
    if c.capped {
        t.push_str(", stopped where it costs more than a finer format");
    } else if !c.meets_budget {
        t.push_str(", MISSES the budget");
    }
    t
}

/// The report as text.
pub fn report_text(report: &BakeReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "bake report: budget {} mm, BAT {:?}, VAT {:?}, {} bytes of data",
        report.budget_mm, report.bat_format, report.vat_format, report.data_bytes
    );
    for c in &report.clips {
        let _ = writeln!(s, "  clip '{}'{}:", c.name, if c.looping { " (loops)" } else { "" });
        for (name, p) in [("BAT", c.bat), ("VAT", c.vat), ("sockets", c.sockets)] {
            let Some(p) = p else { continue };
            let _ = writeln!(
                s,
                "    {name}: {} frames at {:.2} Hz, largest error {:.4} mm at {:.4} s {} {}, seam jump {:.4} mm",
                p.frames,
                p.rate_hz,
                p.error.distance * 1e3,
                p.error.time,
                if name == "sockets" { "socket" } else { "vertex" },
                p.error.vertex,
                p.seam_jump * 1e3
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
        "largest error {:.4} mm: {}",
        report.largest_error_mm(),
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
    use super::*;

    fn args<'a>(formats: &'a str, sockets: &'a str, budget_mm: f32) -> Args<'a> {
        Args {
            model: Path::new("model.glb"),
            out: None,
            budget_mm,
            formats,
            sockets,
            dry_run: true,
        }
    }

    #[test]
    fn options_from_the_command_line() {
        let o = options(&args("bat", " head, hand_r ", 2.0)).unwrap();
        assert_eq!(o.parts, Parts { bat: true, vat: false });
        assert_eq!(o.sockets, vec!["head".to_owned(), "hand_r".to_owned()]);
        assert_eq!(o.budget_mm, 2.0);
        let o = options(&args("bat,vat", "", 1.0)).unwrap();
        assert_eq!(o.parts, Parts { bat: true, vat: true });
        assert!(o.sockets.is_empty());
        assert!(options(&args("bat,gif", "", 1.0)).is_err());
        assert!(options(&args("", "", 1.0)).is_err(), "nothing to bake");
        assert!(options(&args("vat", "", -1.0)).is_err());
    }
}
