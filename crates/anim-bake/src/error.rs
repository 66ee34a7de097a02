//! The crate's single error type.

/// Everything that can go wrong in `anim-bake`: bad input to a bake, a bake past a device limit, or an error of
/// `bake-format` (the records and the file format), wrapped.
///
/// Every variant names what is at fault, so that the message alone tells a user where to look.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The model has no skeleton (no glTF skin) at the requested index.
    #[error("the model has {count} skeletons (skins), so skeleton {skeleton} does not exist")]
    NoSkin {
        /// The requested skeleton.
        skeleton: usize,
        /// The model's skeletons.
        count: usize,
    },
    /// The skeleton has no clip to bake.
    #[error("skeleton '{skeleton}' has no animation clip to bake")]
    NoClips {
        /// The skeleton's name.
        skeleton: String,
    },
    /// No mesh is skinned by the skeleton, so there are no vertices to measure or bake.
    #[error("skeleton '{skeleton}' skins no mesh: a bake measures its error on the skinned vertices")]
    NoMeshes {
        /// The skeleton's name.
        skeleton: String,
    },
    /// A value that must be finite is not (a NaN or an infinity in the input, or a pose that overflows).
    #[error("{what} {index} is not finite")]
    NotFinite {
        /// What holds the value, for example `"vertex position"` or `"skinning matrix of skin joint"`.
        what: &'static str,
        /// Which element.
        index: usize,
    },
    /// A vertex names a joint outside the skin.
    #[error("mesh '{mesh}' vertex {vertex}: joint {joint} is outside the skin's {skin_joints} joints")]
    JointOutOfRange {
        /// The mesh at fault.
        mesh: String,
        /// The vertex at fault.
        vertex: usize,
        /// The joint index it names.
        joint: u16,
        /// The skin's joints.
        skin_joints: usize,
    },
    /// A socket names a joint the skeleton does not have.
    #[error("socket '{name}': skeleton '{skeleton}' has no joint of that name")]
    UnknownSocket {
        /// The socket's joint name.
        name: String,
        /// The skeleton's name.
        skeleton: String,
    },
    /// An option is out of its range.
    #[error("option {what} = {value} is out of range: {rule}")]
    InvalidOption {
        /// The option.
        what: &'static str,
        /// Its value.
        value: f64,
        /// The rule it breaks.
        rule: &'static str,
    },
    /// A budget resolves to no usable distance on this model: a relative or pixel budget on a model whose rest pose
    /// has no finite extent, or a product that underflows to zero.
    #[error(
        "budget {budget:?} resolves to {distance} model units on a model whose rest pose is {extent} units across: \
         a budget must be finite and positive (give an absolute budget)"
    )]
    BudgetResolution {
        /// The budget as the options gave it.
        budget: crate::Budget,
        /// The model's extent, in model units (the longest side of its rest pose's box).
        extent: f32,
        /// The distance it resolved to, in model units.
        distance: f32,
    },
    /// A size computation overflows, or a count does not fit the file's 32-bit fields.
    #[error("{what} is too large")]
    TooLarge {
        /// What was being sized.
        what: &'static str,
    },
    /// A bake does not fit a device limit.
    #[error("{what} needs {needed}, more than the device limit {limit}")]
    DeviceLimit {
        /// What does not fit, and which limit it breaks.
        what: &'static str,
        /// What it needs.
        needed: u64,
        /// The limit.
        limit: u64,
    },
    /// A caller-provided buffer has the wrong length.
    #[error("{what}: expected {expected} elements, got {actual}")]
    BufferSize {
        /// Which argument.
        what: &'static str,
        /// The length required.
        expected: usize,
        /// The length given.
        actual: usize,
    },
    /// `anim-pose` rejected the skeleton, a clip or a pose.
    #[error(transparent)]
    Pose(#[from] anim_pose::Error),
    /// `skin-pack` rejected a palette or a mesh.
    #[error(transparent)]
    Skin(#[from] skin_pack::Error),
    /// `bake-format` rejected a bake or a layout, or a bake file could not be read, written or loaded: a truncated
    /// or corrupt file, a bake that breaks a rule of `Bake::validate`, a VAT layout past a device limit, or a
    /// playback lookup outside the bake.
    #[error(transparent)]
    Format(#[from] bake_format::Error),
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
