//! The wgpu crowd renderer, and the registry of every WGSL shader in `shaders/`.
//!
//! The renderer itself (instanced skinned draws, baked playback, GPU culling, headless images) is
//! specified by later issues and not built yet. Today the crate holds [`shaders`], the single place that
//! loads WGSL source, and its tests validate every shader with naga and check the GPU layout of the
//! palette entry against `skin_pack::PaletteEntry`.

pub mod shaders;
