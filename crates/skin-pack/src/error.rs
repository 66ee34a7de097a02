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
    /// A dirty tracker's (or chunk split's) element size is zero, or its byte size overflows `usize`.
    #[error("dirty tracker of {len} elements of {stride} bytes: the stride is zero or the byte size overflows")]
    DirtyLayout {
        /// The number of elements (ranges, for a chunk split).
        len: usize,
        /// Bytes per element (the chunk size, for a chunk split).
        stride: usize,
    },
    /// An element index is past the end.
    #[error("{what}: element {index} is out of range for {len} elements")]
    ElementOutOfRange {
        /// Which operation.
        what: &'static str,
        /// The index at fault.
        index: usize,
        /// The number of elements.
        len: usize,
    },
    /// A range is reversed (`start > end`) or ends past the end.
    #[error("{what}: range {start}..{end} is reversed or ends past {len}")]
    InvalidRange {
        /// Which operation.
        what: &'static str,
        /// The range's start.
        start: usize,
        /// The range's end.
        end: usize,
        /// The number of elements the range must fit in (`usize::MAX` when only the order is checked).
        len: usize,
    },
    /// A frame exchange was given a packet count its overrun policy does not support.
    #[error("frame exchange ({policy}): {count} packets, expected {min} to {max}")]
    ExchangePacketCount {
        /// The overrun policy.
        policy: &'static str,
        /// The number of packets given.
        count: usize,
        /// The fewest packets the policy supports.
        min: usize,
        /// The most packets the policy supports.
        max: usize,
    },
    /// The frame exchange was closed: no more frames are written, and none is left to read.
    #[error("the frame exchange is closed")]
    ExchangeClosed,
    /// A frame exchange wait ran out of time.
    #[error("frame exchange: timed out waiting for {what}")]
    ExchangeTimeout {
        /// What the caller waited for.
        what: &'static str,
    },
    /// A frame exchange already has a writer (or a reader): it has one producer and one consumer.
    #[error("frame exchange: {what} is already held")]
    ExchangeBusy {
        /// Which guard.
        what: &'static str,
    },
    /// A value is too large for an f16 palette format: the largest finite f16 is 65504.
    #[error("{what} {index}: {format} cannot hold a value of magnitude {magnitude} (the largest finite f16 is 65504)")]
    F16Overflow {
        /// The format, for example `"Mat3x4F16"`.
        format: &'static str,
        /// Which argument.
        what: &'static str,
        /// The element at fault.
        index: usize,
        /// The offending magnitude, rounded up (saturating at `u32::MAX`).
        magnitude: u32,
    },
    /// `QtF16` was requested for a transform whose scale is not uniform; use `Mat3x4F16` instead.
    #[error(
        "{what} {index} (joint {joint}): scale is not uniform (deviation {deviation_ppm} ppm, tolerance {tolerance_ppm} ppm); QtF16 cannot hold it, use Mat3x4F16"
    )]
    NonUniformScale {
        /// Which object: a rest pose, an inverse bind matrix, a clip, a palette entry.
        what: &'static str,
        /// The element at fault (a joint, a clip or a palette index, as `what` says).
        index: usize,
        /// The skeleton joint (or palette entry) concerned.
        joint: usize,
        /// The relative deviation from a uniform scale, in parts per million (saturating).
        deviation_ppm: u32,
        /// The tolerance it was checked against, in parts per million.
        tolerance_ppm: u32,
    },
    /// A flatten job's palette names a pose that the pose slice does not hold.
    #[error("palette {palette} reads pose {pose}, but there are {pose_count} poses")]
    PoseOutOfRange {
        /// The palette at fault.
        palette: usize,
        /// The pose it names.
        pose: usize,
        /// The number of poses given.
        pose_count: usize,
    },
    /// An input matrix (or the product made from it) is not finite.
    #[error("{what} {index}{}: not finite", match joint { Some(j) => format!(", joint {j}"), None => String::new() })]
    NonFinite {
        /// Which input, for example `model-space pose`.
        what: &'static str,
        /// The pose or palette at fault.
        index: usize,
        /// The joint at fault, when there is one.
        joint: Option<usize>,
    },
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
