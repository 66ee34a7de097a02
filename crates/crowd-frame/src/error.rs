//! The crate's error type.

/// What went wrong, naming the object at fault.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A value of an instance record cannot be packed: `field` names it, `reason` says why.
    #[error("instance record {field}: {reason}")]
    Record {
        /// The record field, for example `"scale"`.
        field: &'static str,
        /// Why it cannot be packed.
        reason: &'static str,
    },
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
