//! [`DebugView`]: what the fragment shader shows (shaded, or a flat colour per instance, LOD, tier or normal),
//! and the instance-id colour rule the image tests check.

/// What the fragment shader shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DebugView {
    /// Base colour texture × factor × vertex colour × tint, under the sun and the hemisphere light.
    #[default]
    Shaded,
    /// Each instance in its own flat colour, unlit: from its record index, three bits per channel, each level `l`
    /// the sRGB byte `round(255 · l / 7)`, red from the lowest bits (so indices below 512 have distinct colours).
    InstanceId,
    /// Each LOD in its own colour (green, yellow, red, blue), lit.
    Lod,
    /// Each culling tier in its own colour (unique green, pooled yellow, baked red, VAT blue), lit.
    Tier,
    /// The world normal as colour.
    Normals,
}

impl DebugView {
    pub(crate) fn code(self) -> u32 {
        match self {
            Self::Shaded => 0,
            Self::InstanceId => 1,
            Self::Lod => 2,
            Self::Tier => 3,
            Self::Normals => 4,
        }
    }
}

/// The sRGB bytes that [`DebugView::InstanceId`] writes for record `index`: three bits per channel, each level
/// `l` the byte `round(255 · l / 7)`, red from the lowest bits (so indices below 512 have distinct colours).
/// Public only for the image tests of this and other crates: not part of the API.
#[doc(hidden)]
pub fn instance_id_color(index: u32) -> [u8; 3] {
    [index & 7, (index >> 3) & 7, (index >> 6) & 7].map(|l| ((255 * l + 3) / 7) as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_id_colors_are_distinct_below_512() {
        let colors: std::collections::HashSet<[u8; 3]> = (0..512).map(instance_id_color).collect();
        assert_eq!(colors.len(), 512);
        assert_eq!(instance_id_color(0), [0, 0, 0]);
        assert_eq!(instance_id_color(7), [255, 0, 0]);
        assert_eq!(instance_id_color(1), [36, 0, 0]);
    }
}
