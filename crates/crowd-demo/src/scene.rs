//! Scene files (`assets/scenes/*.ron`): how many characters, where they stand, what they do, and where the camera
//! starts.
//!
//! Lengths are in the model's own units through two measures of the model, so that one scene suits a 1.8 m
//! soldier and a 100-unit fox alike: the *footprint* (the larger horizontal side of the model's bounds, at least a
//! quarter of its height) and the *height*.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Deserialize;

/// A scene, as its RON file gives it.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Scene {
    /// A line that says what the scene shows.
    pub description: String,
    /// Characters at the start (`--count` overrides it).
    pub count: usize,
    /// Where they stand.
    pub layout: Layout,
    /// What they do.
    pub behaviour: Behaviour,
    /// Each group's tint (a regiment, or every `len`-th pedestrian), mixed half-way with white; none means white.
    #[serde(default)]
    pub tints: Vec<[f32; 3]>,
    /// The hand joint that carries a spear (`hand_r` on the default character), if any.
    #[serde(default)]
    pub spear: Option<String>,
    /// Where the camera starts.
    pub camera: CameraStart,
    /// Seconds a windowed run lasts when `--seconds` is not given (0: until the window is closed).
    #[serde(default)]
    pub seconds: f32,
}

/// Where the characters stand.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub enum Layout {
    /// Rectangular regiments side by side, `files` wide and as many ranks deep as the count needs.
    Regiments {
        /// Soldiers side by side in one rank.
        files: usize,
        /// Soldiers per regiment (the last one may be short).
        per_regiment: usize,
        /// Distance between neighbours, in footprints.
        spacing: f32,
        /// Space between regiments, in footprints.
        gap: f32,
    },
    /// A disc filled at random, each character given `spacing²` square footprints on average.
    Scatter {
        /// Mean distance between neighbours, in footprints.
        spacing: f32,
    },
    /// A milling school of generated fish (a quarter of the model's height long) on the procedural tier: a torus
    /// of fish circling its vertical axis above the ground, sized for `count` fish (`--count` and the resize keys
    /// fill it more or less densely). `count` is the fish; the model only sets the scale.
    /// Needs [`Behaviour::Swim`].
    School {
        /// Mean distance between neighbours, in fish lengths.
        spacing: f32,
    },
}

impl Layout {
    /// The mean distance between neighbours, in footprints.
    pub fn spacing(&self) -> f32 {
        match *self {
            Self::Regiments { spacing, .. } | Self::Scatter { spacing } | Self::School { spacing } => spacing,
        }
    }
}

/// What the characters do.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub enum Behaviour {
    /// Every regiment runs through `cycle` in a loop; each rank starts a phase `rank_delay` seconds after the rank in
    /// front, so that the change runs through the regiment as a wave. Marching phases move the soldiers at their
    /// clip's ground speed, and each regiment turns about at the end of the cycle.
    Waves {
        /// The phases, in order.
        cycle: Vec<Phase>,
        /// Seconds between one rank's change and the next's.
        rank_delay: f32,
        /// Crossfade seconds.
        fade: f32,
    },
    /// Pedestrians: each picks a clip by weight, a phase and a speed; walkers go straight at their clip's ground speed
    /// and turn back at the edge of the plaza; every `retarget` seconds a few pick again.
    Wander {
        /// Clips and their weights.
        clips: Vec<(String, f32)>,
        /// Playback speeds are drawn from this range.
        speed: (f32, f32),
        /// Seconds between re-picks of one pedestrian, on average.
        retarget: f32,
        /// Crossfade seconds.
        fade: f32,
    },
    /// Fish of a [`Layout::School`] swim around the school's axis, each at its own speed, climbing and diving a
    /// little; faster fish beat their tails faster.
    Swim {
        /// Speeds, in fish lengths per second, are drawn from this range.
        speed: (f32, f32),
    },
}

/// One phase of [`Behaviour::Waves`].
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Phase {
    /// The clip, by name (matched without case; a model without it uses the clip at the same place in its list).
    pub clip: String,
    /// How long the phase lasts.
    pub seconds: f32,
    /// Whether the soldiers move at the clip's ground speed.
    pub march: bool,
}

/// Where the orbit camera starts, about the crowd's centre.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CameraStart {
    /// Degrees about +Y, 0 looking along -Z.
    pub yaw: f32,
    /// Degrees above the horizon.
    pub pitch: f32,
    /// Distance from the crowd's centre, in crowd radii.
    pub distance: f32,
    /// The vertical field of view, in degrees.
    pub fov: f32,
}

/// The folder of the named scenes.
pub fn scenes_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/scenes")
}

/// The scene file that `--scene` names: a path when it ends in `.ron`, otherwise `assets/scenes/NAME.ron`.
pub fn scene_path(name: &str) -> PathBuf {
    if name.ends_with(".ron") {
        PathBuf::from(name)
    } else {
        scenes_dir().join(format!("{name}.ron"))
    }
}

impl Scene {
    /// Reads and checks the scene at `path`.
    ///
    /// # Errors
    ///
    /// When the file cannot be read, does not parse (the message names the line, the column and what was
    /// expected), or holds a value out of range (the message names the field).
    pub fn load(path: &Path) -> Result<Self> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("cannot read the scene {}", path.display()))?;
        Self::parse(&text).with_context(|| format!("in the scene {}", path.display()))
    }

    /// Parses and checks a scene from RON text.
    ///
    /// # Errors
    ///
    /// As [`Scene::load`].
    pub fn parse(text: &str) -> Result<Self> {
        let scene: Scene = ron::from_str(text)
            .map_err(|e| anyhow::anyhow!("line {}, column {}: {}", e.span.start.line, e.span.start.col, e.code))?;
        scene.check()?;
        Ok(scene)
    }

    fn check(&self) -> Result<()> {
        let positive = |what: &str, v: f32| -> Result<()> {
            if !(v.is_finite() && v > 0.0) {
                bail!("`{what}` must be a positive number, got {v}");
            }
            Ok(())
        };
        if self.count > MAX_COUNT {
            bail!("`count` is {}, more than the demo's {MAX_COUNT}", self.count);
        }
        match &self.layout {
            Layout::Regiments {
                files,
                per_regiment,
                spacing,
                gap,
            } => {
                if *files == 0 || *per_regiment == 0 {
                    bail!("`Regiments`: `files` and `per_regiment` must be at least 1");
                }
                positive("Regiments.spacing", *spacing)?;
                if !(gap.is_finite() && *gap >= 0.0) {
                    bail!("`Regiments.gap` must be 0 or more, got {gap}");
                }
            }
            Layout::Scatter { spacing } => positive("Scatter.spacing", *spacing)?,
            Layout::School { spacing } => positive("School.spacing", *spacing)?,
        }
        if matches!(self.layout, Layout::School { .. }) != matches!(self.behaviour, Behaviour::Swim { .. }) {
            bail!("the `School` layout and the `Swim` behaviour go together");
        }
        match &self.behaviour {
            Behaviour::Waves {
                cycle,
                rank_delay,
                fade,
            } => {
                if cycle.is_empty() {
                    bail!("`Waves.cycle` needs at least one phase");
                }
                for (i, p) in cycle.iter().enumerate() {
                    positive(&format!("Waves.cycle[{i}].seconds"), p.seconds)?;
                }
                if !(rank_delay.is_finite() && *rank_delay >= 0.0) {
                    bail!("`Waves.rank_delay` must be 0 or more, got {rank_delay}");
                }
                if !(fade.is_finite() && *fade >= 0.0) {
                    bail!("`Waves.fade` must be 0 or more, got {fade}");
                }
            }
            Behaviour::Wander {
                clips,
                speed,
                retarget,
                fade,
            } => {
                if clips.is_empty() || clips.iter().any(|(_, w)| !(w.is_finite() && *w >= 0.0)) {
                    bail!("`Wander.clips` needs at least one clip, each with a weight of 0 or more");
                }
                if clips.iter().map(|(_, w)| w).sum::<f32>() <= 0.0 {
                    bail!("`Wander.clips`: the weights add up to 0");
                }
                positive("Wander.speed.0", speed.0)?;
                if !(speed.1.is_finite() && speed.1 >= speed.0) {
                    bail!("`Wander.speed` must be a range (low, high) with high >= low, got {speed:?}");
                }
                positive("Wander.retarget", *retarget)?;
                if !(fade.is_finite() && *fade >= 0.0) {
                    bail!("`Wander.fade` must be 0 or more, got {fade}");
                }
            }
            Behaviour::Swim { speed } => {
                positive("Swim.speed.0", speed.0)?;
                if !(speed.1.is_finite() && speed.1 >= speed.0) {
                    bail!("`Swim.speed` must be a range (low, high) with high >= low, got {speed:?}");
                }
            }
        }
        if self
            .tints
            .iter()
            .flatten()
            .any(|c| !(c.is_finite() && (0.0..=4.0).contains(c)))
        {
            bail!("`tints`: each channel must be in 0..=4");
        }
        positive("camera.distance", self.camera.distance)?;
        if !(self.camera.fov > 1.0 && self.camera.fov < 170.0) {
            bail!("`camera.fov` must be in (1, 170) degrees, got {}", self.camera.fov);
        }
        if !(self.camera.pitch.is_finite() && self.camera.yaw.is_finite()) {
            bail!("`camera.yaw` and `camera.pitch` must be finite");
        }
        if !(self.seconds.is_finite() && self.seconds >= 0.0) {
            bail!("`seconds` must be 0 or more, got {}", self.seconds);
        }
        Ok(())
    }
}

/// The most characters a scene or `--count` may ask for.
pub const MAX_COUNT: usize = 4_000_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scene_file_parses() {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(scenes_dir()).expect("assets/scenes") {
            let path = entry.expect("entry").path();
            if path.extension().is_some_and(|e| e == "ron") {
                Scene::load(&path).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
                names.push(path.file_stem().expect("stem").to_string_lossy().into_owned());
            }
        }
        names.sort();
        assert_eq!(names, ["army", "plaza", "school"], "the named scenes");
    }

    #[test]
    fn a_syntax_error_names_its_line_and_column() {
        let text = std::fs::read_to_string(scene_path("army")).expect("army.ron");
        // Break the value on the line that holds `rank_delay`.
        let line = text.lines().position(|l| l.contains("rank_delay")).expect("rank_delay") + 1;
        let broken = text.replacen("rank_delay:", "rank_delay: :", 1);
        let e = format!("{:#}", Scene::parse(&broken).expect_err("broken"));
        assert!(e.contains(&format!("line {line},")), "{e}");
    }

    #[test]
    fn an_unknown_field_and_a_bad_value_are_named() {
        let text = std::fs::read_to_string(scene_path("plaza")).expect("plaza.ron");
        let e = format!(
            "{:#}",
            Scene::parse(&text.replacen("count:", "cuont:", 1)).expect_err("typo")
        );
        assert!(e.contains("cuont") && e.contains("line "), "{e}");
        let line = text.lines().position(|l| l.contains("retarget")).expect("retarget") + 1;
        let bad = text.replacen("retarget: ", "retarget: -", 1);
        let e = format!("{:#}", Scene::parse(&bad).expect_err("negative"));
        assert!(e.contains("Wander.retarget"), "{e}");
        // A negative number parses; the range check names the field rather than a line.
        assert!(!e.contains(&format!("line {line},")), "{e}");
        let e = format!(
            "{:#}",
            Scene::load(Path::new("/nonexistent/x.ron")).expect_err("missing")
        );
        assert!(e.contains("/nonexistent/x.ron"), "{e}");
    }
}
