//! The in-process measurement harness behind `cargo xtask bench`: warm-up, repeated runs, medians, and the
//! JSON report `{"figures": {...}, "machine": {...}}`.

use std::time::Instant;

/// How long to measure.
#[derive(Clone, Copy, Debug)]
pub struct Effort {
    /// Warm-up runs before measuring.
    pub warmup: usize,
    /// Measured runs; the median is reported.
    pub runs: usize,
    /// Iterations of the operation per run.
    pub iterations: usize,
}

impl Effort {
    /// The effort for `--quick` (the whole harness in under a minute) or a full run.
    pub fn new(quick: bool, iterations: usize) -> Self {
        if quick {
            Self {
                warmup: 2,
                runs: 7,
                iterations: iterations.div_ceil(4).max(1),
            }
        } else {
            Self {
                warmup: 5,
                runs: 31,
                iterations,
            }
        }
    }
}

/// Runs `op` `effort.iterations` times per run and returns the median seconds per iteration.
pub fn median_seconds_per_iteration(effort: Effort, mut op: impl FnMut()) -> f64 {
    for _ in 0..effort.warmup {
        for _ in 0..effort.iterations {
            op();
        }
    }
    let mut samples: Vec<f64> = (0..effort.runs)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..effort.iterations {
                op();
            }
            start.elapsed().as_secs_f64() / effort.iterations as f64
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// Two operations measured in alternation by [`median_paired`]: the median seconds per iteration of each, and
/// the median of the per-run ratios `b / a`.
#[derive(Clone, Copy, Debug)]
pub struct Paired {
    /// The median seconds per iteration of the first operation.
    pub a: f64,
    /// The median seconds per iteration of the second operation.
    pub b: f64,
    /// The median over runs of `b`'s time over `a`'s in the same run.
    pub ratio: f64,
}

/// Runs `a` and `b` in alternation, `effort.iterations` times each per run, and returns their medians and the
/// median of the per-run ratios `b / a`. A ratio figure ("the job against a copy of its bytes") then compares two
/// times taken moments apart, so a change of the machine's speed between runs moves both sides of each ratio
/// alike instead of landing on one side only.
pub fn median_paired(effort: Effort, mut a: impl FnMut(), mut b: impl FnMut()) -> Paired {
    for _ in 0..effort.warmup {
        for _ in 0..effort.iterations {
            a();
            b();
        }
    }
    let time = |op: &mut dyn FnMut()| {
        let start = Instant::now();
        for _ in 0..effort.iterations {
            op();
        }
        start.elapsed().as_secs_f64() / effort.iterations as f64
    };
    let runs: Vec<(f64, f64)> = (0..effort.runs).map(|_| (time(&mut a), time(&mut b))).collect();
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    Paired {
        a: median(runs.iter().map(|r| r.0).collect()),
        b: median(runs.iter().map(|r| r.1).collect()),
        ratio: median(runs.iter().map(|r| r.1 / r.0).collect()),
    }
}

/// One reported figure.
#[derive(Clone, Debug)]
pub struct Figure {
    /// The name, `crate.figure_unit`, for example `anim_pose.sample_ltm_ns_per_joint`.
    pub name: String,
    /// The measured value.
    pub value: f64,
    /// The target, as text for the table, for example `<= 10`.
    pub target: &'static str,
    /// True when the value meets the target.
    pub met: bool,
}

/// Facts about the machine the figures were measured on.
pub fn machine_json() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".to_owned());
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    format!(
        "{{\"cpu\": {}, \"logical_cores\": {cores}, \"os\": {}, \"arch\": {}, \"profile\": {}}}",
        json_string(&cpu),
        json_string(std::env::consts::OS),
        json_string(std::env::consts::ARCH),
        json_string(if cfg!(debug_assertions) { "debug" } else { "release" })
    )
}

/// The JSON report.
pub fn report_json(figures: &[Figure]) -> String {
    let body: Vec<String> = figures
        .iter()
        .map(|f| format!("    {}: {}", json_string(&f.name), json_number(f.value)))
        .collect();
    format!(
        "{{\n  \"figures\": {{\n{}\n  }},\n  \"machine\": {}\n}}\n",
        body.join(",\n"),
        machine_json()
    )
}

/// The text table.
pub fn report_table(figures: &[Figure]) -> String {
    let mut s = format!("{:<44} {:>12} {:>10} {:>6}\n", "figure", "value", "target", "met");
    for f in figures {
        s += &format!(
            "{:<44} {:>12.4} {:>10} {:>6}\n",
            f.name,
            f.value,
            f.target,
            if f.met { "yes" } else { "NO" }
        );
    }
    s
}

fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out += "\\\"",
            '\\' => out += "\\\\",
            c if (c as u32) < 0x20 => out += &format!("\\u{:04x}", c as u32),
            c => out.push(c),
        }
    }
    out + "\""
}

fn json_number(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        "null".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_well_formed() {
        let figures = [Figure {
            name: "a.b_ns".into(),
            value: 1.5,
            target: "<= 2",
            met: true,
        }];
        let j = report_json(&figures);
        assert!(j.contains("\"a.b_ns\": 1.5"));
        assert!(j.contains("\"machine\": {\"cpu\""));
        assert_eq!(json_string("x\"y\\\n"), "\"x\\\"y\\\\\\u000a\"");
        assert_eq!(json_number(f64::NAN), "null");
    }

    #[test]
    fn paired_runs_alternate_and_the_ratio_is_per_run() {
        let order = std::cell::RefCell::new(Vec::new());
        let p = median_paired(
            Effort {
                warmup: 1,
                runs: 3,
                iterations: 2,
            },
            || order.borrow_mut().push('a'),
            || {
                order.borrow_mut().push('b');
                std::thread::sleep(std::time::Duration::from_millis(1));
            },
        );
        // Warm-up: a, b per iteration; then per run all of a's iterations, then all of b's.
        assert_eq!(order.into_inner().iter().collect::<String>(), "ababaabbaabbaabb");
        // `b` sleeps and `a` does next to nothing, so each run's ratio is large.
        assert!(p.b >= 0.001 && p.a < p.b && p.ratio > 1.0, "{p:?}");
    }

    #[test]
    fn median_is_the_middle_run() {
        let mut n = 0u64;
        let s = median_seconds_per_iteration(
            Effort {
                warmup: 0,
                runs: 3,
                iterations: 10,
            },
            || n += 1,
        );
        assert_eq!(n, 30);
        assert!(s >= 0.0);
    }
}
