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
    /// A vertex names a joint that is not in the skinning palette.
    #[error(
        "vertex {vertex} influence {influence}: joint index {joint} is out of range for a palette of {palette_len} entries"
    )]
    JointOutOfRange {
        /// The vertex at fault.
        vertex: usize,
        /// Which of the vertex's four influences (0 to 3).
        influence: usize,
        /// The joint index it names.
        joint: u16,
        /// The palette length.
        palette_len: usize,
    },
    /// A skeleton's skin joint maps past the skeleton's joints, so the skeleton does not validate.
    #[error("skin joint {skin_joint} maps to joint {joint}, out of range for {joint_count} joints")]
    SkinJointOutOfRange {
        /// The skin joint at fault.
        skin_joint: usize,
        /// The skeleton joint it maps to.
        joint: u16,
        /// The number of skeleton joints.
        joint_count: usize,
    },
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
