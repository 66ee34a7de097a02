//! The vertex-error budget: an absolute distance, a fraction of the model's extent or pixels on screen, and the
//! distance it resolves to for one model.
//!
//! # Units
//!
//! Every distance of a bake is in the model's units, in instance space: glTF units after the skeleton's root
//! transform, which are metres for a file that follows glTF's convention but centimetres or arbitrary units in many
//! exported files (the Fox sample is about 155 units long). An absolute budget therefore means different things on
//! different models, while a relative or pixel budget means the same share of the model, and so the same share of
//! the screen, whatever its size or units.
//!
//! # The extent
//!
//! Relative and pixel budgets are resolved against the model's *extent*: the longest side of the axis-aligned box of
//! the skeleton's skinned vertices in its rest pose (the file's node transforms, no clip applied), in instance space.
//! For a standing character that is its height (the default character's is 1.798 m). [`ResolvedBudget`] keeps the
//! extent next to the distance, and [`crate::Plan`] and [`crate::BakeReport`] report it.

use crate::options::positive;
use crate::{Error, Result};

/// The default relative budget, 1/1800 of the model's extent: 1 mm on a character 1.8 m tall (0.999 mm on the
/// default character), and about 0.09 units on the Fox sample, whatever units a file uses.
pub const DEFAULT_RELATIVE_BUDGET: f32 = 1.0 / 1800.0;

/// The largest distance a played-back vertex may be from the same vertex skinned exactly: what [`crate::plan`] holds
/// every clip, part and format to, and what [`crate::bake`] measures against.
///
/// [`Budget::validate`] (which `BakeOptions::validate` calls) requires every value finite and positive; a plan
/// resolves the budget once for its model ([`Budget::resolve`]) and fails when the distance is not finite and
/// positive. Default `Relative(DEFAULT_RELATIVE_BUDGET)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Budget {
    /// A distance in model units: `Absolute(0.001)` is 1 mm for a model in metres (`cargo xtask bake --budget-mm 1`),
    /// but a hundredth of a millimetre for a model in centimetres.
    Absolute(f32),
    /// A fraction of the model's extent: the distance is `fraction · extent`.
    Relative(f32),
    /// Pixels on screen where the bake is seen largest, for example where a crowd switches to the baked tier: the
    /// distance is `error_px / extent_px · extent`, so that a vertex error of that distance covers `error_px` pixels
    /// when the model's extent covers `extent_px` pixels. (An error seen side-on covers that many pixels; one along
    /// the line of sight covers fewer.)
    ///
    /// With a tier threshold given as a screen size `s` (crowd-cull's: the projected diameter of the culling sphere
    /// as a fraction of the viewport's height) and a viewport `H` pixels tall, `extent_px = s · H`: the culling
    /// sphere holds the animated model, so its diameter is usually more than the rest pose's extent, and the budget
    /// errs on the safe side.
    Pixels {
        /// The largest error on screen, in pixels.
        error_px: f32,
        /// The pixels the model's extent covers on screen there.
        extent_px: f32,
    },
}

impl Default for Budget {
    fn default() -> Self {
        Self::Relative(DEFAULT_RELATIVE_BUDGET)
    }
}

impl Budget {
    /// Checks every value of the budget: finite and positive.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidOption`] whose `what` names the field: `"budget (Absolute distance)"`,
    /// `"budget (Relative fraction)"`, `"budget (Pixels error_px)"` or `"budget (Pixels extent_px)"`.
    pub fn validate(self) -> Result<()> {
        match self {
            Self::Absolute(d) => positive("budget (Absolute distance)", d),
            Self::Relative(f) => positive("budget (Relative fraction)", f),
            Self::Pixels { error_px, extent_px } => {
                positive("budget (Pixels error_px)", error_px)?;
                positive("budget (Pixels extent_px)", extent_px)
            }
        }
    }

    /// The distance in model units that this budget stands for on a model whose extent is `extent` model units:
    /// `d`, `fraction · extent` or `error_px / extent_px · extent`. Unchecked; see [`Budget::resolve`].
    pub fn distance(self, extent: f32) -> f32 {
        match self {
            Self::Absolute(d) => d,
            Self::Relative(f) => f * extent,
            Self::Pixels { error_px, extent_px } => error_px / extent_px * extent,
        }
    }

    /// This budget resolved for a model whose extent is `extent` model units.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidOption`] as [`Budget::validate`]; [`Error::BudgetResolution`] when the distance is not finite
    /// and positive: a relative or pixel budget on a model whose rest pose has no extent (every skinned vertex in one
    /// point) or no finite one, or a product that underflows to zero.
    pub fn resolve(self, extent: f32) -> Result<ResolvedBudget> {
        self.validate()?;
        let distance = self.distance(extent);
        if distance.is_finite() && distance > 0.0 {
            Ok(ResolvedBudget {
                distance,
                extent,
                budget: self,
            })
        } else {
            Err(Error::BudgetResolution {
                budget: self,
                extent,
                distance,
            })
        }
    }
}

/// A budget resolved for one model: the distance in model units that every vertex is held to, and what it came from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ResolvedBudget {
    /// The largest vertex error, in model units: finite and positive.
    pub distance: f32,
    /// The model's extent in model units (see the module docs), which relative and pixel budgets scale with.
    pub extent: f32,
    /// The budget as the options gave it.
    pub budget: Budget,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_resolve_to_distances_in_model_units() {
        let extent = 1.8;
        let rows = [
            (Budget::Absolute(0.001), 0.001),
            (Budget::Relative(DEFAULT_RELATIVE_BUDGET), 0.001),
            (Budget::default(), 0.001),
            (
                Budget::Pixels {
                    error_px: 0.5,
                    extent_px: 900.0,
                },
                0.001,
            ),
        ];
        for (budget, expected) in rows {
            let r = budget.resolve(extent).unwrap();
            assert!((r.distance - expected).abs() < 1e-9, "{budget:?}: {}", r.distance);
            assert_eq!((r.extent, r.budget), (extent, budget));
        }
        // Relative and pixel budgets follow the extent; an absolute one does not.
        for budget in [
            Budget::Relative(0.01),
            Budget::Pixels {
                error_px: 1.0,
                extent_px: 100.0,
            },
        ] {
            assert_eq!(budget.distance(256.0), 256.0 * budget.distance(1.0));
        }
        assert_eq!(Budget::Absolute(0.25).distance(1e6), 0.25);
    }

    #[test]
    fn bad_budgets_name_their_field() {
        let rows = [
            (Budget::Absolute(0.0), "budget (Absolute distance)"),
            (Budget::Absolute(f32::INFINITY), "budget (Absolute distance)"),
            (Budget::Relative(f32::NAN), "budget (Relative fraction)"),
            (Budget::Relative(-0.1), "budget (Relative fraction)"),
            (
                Budget::Pixels {
                    error_px: 0.0,
                    extent_px: 100.0,
                },
                "budget (Pixels error_px)",
            ),
            (
                Budget::Pixels {
                    error_px: 1.0,
                    extent_px: f32::NAN,
                },
                "budget (Pixels extent_px)",
            ),
        ];
        for (budget, field) in rows {
            match budget.resolve(1.0) {
                Err(Error::InvalidOption { what, .. }) => assert_eq!(what, field, "{budget:?}"),
                other => panic!("{budget:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_model_without_extent_has_no_relative_budget() {
        for extent in [0.0, f32::INFINITY, f32::NAN] {
            let e = Budget::default().resolve(extent).unwrap_err();
            assert!(matches!(e, Error::BudgetResolution { .. }), "{e}");
            assert!(e.to_string().contains("absolute"), "{e}");
        }
        assert!(Budget::Relative(1e-30).resolve(1e-20).is_err(), "underflows to zero");
        assert_eq!(Budget::Absolute(0.002).resolve(0.0).unwrap().distance, 0.002);
    }
}
