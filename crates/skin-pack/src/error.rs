//! The crate's single error type.

/// Everything that can go wrong in `skin-pack`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A caller-provided buffer has the wrong size.
    #[error("{what}: expected {expected} elements, got {actual}")]
    BufferSize {
        /// Which argument.
        what: &'static str,
        /// The number of elements required.
        expected: usize,
        /// The number of elements given.
        actual: usize,
    },
    /// A matrix is not affine or not finite.
    #[error("{what} {index}: the matrix is not a finite affine transform")]
    NotAffine {
        /// Which argument.
        what: &'static str,
        /// The element at fault.
        index: usize,
    },
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
