//! The crate's error type.

/// What went wrong, naming the object at fault.
#[derive(Debug, thiserror::Error)]
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
    /// A value of a resident instance cannot be packed: `field` names it, `reason` says why.
    #[error("resident instance {field}: {reason}")]
    Resident {
        /// The field, for example `"rotation"`.
        field: &'static str,
        /// Why it cannot be packed.
        reason: &'static str,
    },
    /// An argument of a crowd-frame call is invalid: `what` names it (with its index where there is one).
    #[error("{what}: {reason}")]
    Invalid {
        /// The argument at fault, for example `"spawn 12 scale"`.
        what: String,
        /// Why it is invalid.
        reason: String,
    },
    /// The animation crate rejected a model, clip, skeleton or pool operation.
    #[error(transparent)]
    Pose(#[from] anim_pose::Error),
    /// The palette crate rejected a binding, a flatten or the frame exchange.
    #[error(transparent)]
    Palette(#[from] skin_pack::Error),
    /// The culling crate rejected an instance, a group or the camera.
    #[error(transparent)]
    Cull(#[from] crowd_cull::Error),
}

impl Error {
    /// [`Error::Invalid`] for `what`.
    pub(crate) fn invalid(what: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::Invalid {
            what: what.into(),
            reason: reason.into(),
        }
    }
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
