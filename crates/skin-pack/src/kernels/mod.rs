//! The two tiers of code behind [`crate::FlattenJob`]'s hot loops, and the fence for their streaming stores.
//!
//! - [`Tier::Portable`]: the plain Rust twins in the format files, on any CPU. They are the reference that the SIMD
//!   tier is tested against, bit for bit.
//! - `Tier::Avx2` (x86-64 with AVX2, FMA and F16C, detected at run time): the kernels of `avx2.rs`.
//!
//! The `portable` feature leaves the SIMD tier out of the build, so that CI runs every test on the portable paths
//! as a CPU without the features, or another architecture, would.
//!
//! Streaming (non-temporal) stores must be followed by a fence before anyone reads the memory. Every kernel that
//! issues them calls [`note_streaming`]; [`stream_fence`] fences; and in debug builds [`assert_fenced`], which the
//! job calls at the end of each task, panics when a task streamed and did not fence.

#[cfg(all(target_arch = "x86_64", not(feature = "portable")))]
pub(crate) mod avx2;
#[cfg(test)]
mod tests;

/// The code tier a job runs on, detected once per [`crate::FlattenJob::run`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    /// The portable twins.
    Portable,
    /// AVX2, FMA and F16C.
    #[cfg(all(target_arch = "x86_64", not(feature = "portable")))]
    Avx2(avx2::Avx2),
}

impl Tier {
    /// The fastest tier this CPU has.
    #[inline]
    pub fn detect() -> Self {
        #[cfg(all(target_arch = "x86_64", not(feature = "portable")))]
        if let Some(token) = avx2::Avx2::detect() {
            return Self::Avx2(token);
        }
        Self::Portable
    }

    /// Every tier this CPU runs, and the names of the built tiers it cannot run or that the build left out, for the
    /// tests that compare each tier with the portable one.
    #[cfg(test)]
    pub fn all() -> (Vec<Self>, Vec<&'static str>) {
        let (mut run, mut skipped) = (vec![Self::Portable], Vec::new());
        #[cfg(all(target_arch = "x86_64", not(feature = "portable")))]
        match avx2::Avx2::detect() {
            Some(token) => run.push(Self::Avx2(token)),
            None => skipped.push("avx2 (the CPU lacks AVX2, FMA or F16C)"),
        }
        #[cfg(not(all(target_arch = "x86_64", not(feature = "portable"))))]
        skipped.push("avx2 (not built: another architecture or the `portable` feature)");
        let _ = &mut run;
        (run, skipped)
    }
}

#[cfg(debug_assertions)]
thread_local! {
    /// Whether this thread issued streaming stores since its last [`stream_fence`].
    static UNFENCED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Records that this thread issued streaming stores (debug builds only; nothing in release builds).
#[inline(always)]
#[cfg_attr(
    not(all(target_arch = "x86_64", not(feature = "portable"))),
    allow(dead_code, reason = "only the SIMD tier streams")
)]
pub(crate) fn note_streaming() {
    #[cfg(debug_assertions)]
    UNFENCED.set(true);
}

/// Orders this thread's streaming stores before its later stores (`sfence` on x86-64), so that whoever joins the
/// task sees them.
#[inline(always)]
#[allow(unsafe_code, reason = "`_mm_sfence` is a target-feature function")]
pub(crate) fn stream_fence() {
    // SAFETY: `_mm_sfence` needs SSE, which is part of the x86-64 baseline; it has no other precondition.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
    #[cfg(debug_assertions)]
    UNFENCED.set(false);
}

/// Panics in debug builds when this thread issued streaming stores after its last [`stream_fence`].
#[inline(always)]
pub(crate) fn assert_fenced() {
    #[cfg(debug_assertions)]
    assert!(!UNFENCED.get(), "streaming stores without a fence");
}

/// Whether this thread has streaming stores that no fence has ordered yet (always false in release builds).
#[cfg(test)]
pub(crate) fn unfenced() -> bool {
    #[cfg(debug_assertions)]
    return UNFENCED.get();
    #[cfg(not(debug_assertions))]
    false
}
