//! Figure groups of `cargo xtask bench` that live outside the `crowd-bench` binary, one file per owner.
//! Each exposes `run(quick, &mut figures)`; the binary selects them by group name.

pub mod baked;
pub mod bevy;
pub mod crowd_cull;
pub mod crowd_gpu;
pub mod frame;
pub mod gpu_driven;
pub mod gpu_work;
pub mod skin_pack_exchange;
pub mod skin_pack_f16;
pub mod skin_pack_flatten;
