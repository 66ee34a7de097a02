//! Headless rendering: open a wgpu device without a window, and render into an offscreen RGBA8 target that reads
//! back as tightly packed rows. Tests, `xtask` and engines without a window use it.

mod device;
mod offscreen_target;
mod readback;

pub use device::Gpu;
pub use offscreen_target::{OFFSCREEN_COLOR_FORMAT, OFFSCREEN_DEPTH_FORMAT, OffscreenTarget};
pub(crate) use readback::map_for_reading;
pub use readback::read_texture_rgba8;
