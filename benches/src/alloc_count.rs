//! A counting global allocator for every bench binary, so that figures such as
//! `skin_pack.exchange_allocs_per_frame` are measured in the same process as the timings.
//!
//! Counting costs one relaxed atomic add per allocation; the measured hot paths do not allocate.

use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};
use std::alloc::System;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Heap allocations (including reallocations) made by the whole process so far.
pub fn allocations() -> usize {
    let stats = GLOBAL.stats();
    stats.allocations + stats.reallocations
}
