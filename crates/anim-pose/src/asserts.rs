//! `strict_assert!`: a `debug_assert!` that the `strict-asserts` feature keeps in release builds.
//!
//! Builders and importers guarantee per-element validity, so loops only check it in debug builds.
//! Users who feed hand-built data to the runtime can turn the checks on everywhere with the feature.

/// Asserts `$cond` in debug builds, and in release builds when the `strict-asserts` feature is on.
macro_rules! strict_assert {
    ($($arg:tt)*) => {
        if cfg!(any(debug_assertions, feature = "strict-asserts")) {
            assert!($($arg)*);
        }
    };
}

pub(crate) use strict_assert;
