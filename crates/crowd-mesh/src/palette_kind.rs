//! [`PaletteKind`]: which of skin-pack's three palette formats a packet carries, as a value (a renderer's
//! configuration) rather than a type parameter.

use std::any::TypeId;

use skin_pack::{Mat3x4F16, PaletteEntry, PaletteFormat, QtF16};

/// The palette format a renderer reads: one of skin-pack's three.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PaletteKind {
    /// [`PaletteEntry`], f32 3×4, 48 bytes.
    #[default]
    F32,
    /// [`Mat3x4F16`], 24 bytes.
    Mat3x4F16,
    /// [`QtF16`], 16 bytes (similarity transforms only).
    QtF16,
}

impl PaletteKind {
    /// The kind of palette type `F`.
    pub fn of<F: PaletteFormat + 'static>() -> Self {
        let t = TypeId::of::<F>();
        if t == TypeId::of::<Mat3x4F16>() {
            Self::Mat3x4F16
        } else if t == TypeId::of::<QtF16>() {
            Self::QtF16
        } else {
            debug_assert_eq!(t, TypeId::of::<PaletteEntry>(), "skin-pack has three palette formats");
            Self::F32
        }
    }

    /// The name skin-pack gives the format.
    pub fn name(self) -> &'static str {
        match self {
            Self::F32 => PaletteEntry::NAME,
            Self::Mat3x4F16 => Mat3x4F16::NAME,
            Self::QtF16 => QtF16::NAME,
        }
    }
}
