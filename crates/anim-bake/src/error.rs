//! The crate's single error type.

/// Everything that can go wrong in `anim-bake`: bad input to a bake, a bake past a device limit, or a bake file that
/// is truncated or corrupt.
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
    /// A clip index is out of range (a lookup in an in-memory bake).
    #[error("clip {clip} is out of range for {count} clips")]
    ClipOutOfRange {
        /// The clip.
        clip: usize,
        /// The clips of the bake.
        count: usize,
    },
    /// `anim-pose` rejected the skeleton, a clip or a pose.
    #[error(transparent)]
    Pose(#[from] anim_pose::Error),
    /// `skin-pack` rejected a palette or a mesh.
    #[error(transparent)]
    Skin(#[from] skin_pack::Error),
    /// A bake file could not be read or written.
    #[error("cannot access {path}")]
    Io {
        /// The file.
        path: String,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A bake file ends before a part that its header or tables promise.
    #[error("bake file truncated: {what} needs bytes {start}..{end}, but the file has {len}")]
    Truncated {
        /// The part that is cut off.
        what: &'static str,
        /// Where the part starts.
        start: u64,
        /// Where it ends.
        end: u64,
        /// The file's length.
        len: u64,
    },
    /// A bake file does not start with the magic bytes.
    #[error("not a bake file: the magic bytes are {found:02x?}")]
    BadMagic {
        /// The first eight bytes.
        found: [u8; 8],
    },
    /// A bake file has a version this loader does not read.
    #[error("bake file version {found} is not supported (this loader reads version {supported})")]
    UnsupportedVersion {
        /// The file's version.
        found: u32,
        /// The version this loader reads.
        supported: u32,
    },
    /// A bake file's checksum does not match its bytes.
    #[error("bake file checksum mismatch: stored {stored:#010x}, computed {computed:#010x}")]
    Checksum {
        /// The CRC-32 in the header.
        stored: u32,
        /// The CRC-32 of the bytes.
        computed: u32,
    },
    /// A field of a bake file holds a value the format does not allow.
    #[error("bake file: {what} is {value}, {rule}")]
    InvalidField {
        /// The field, for example `"BAT format code"` or `"clip 3 frame count"`.
        what: String,
        /// Its value.
        value: u64,
        /// The rule it breaks.
        rule: &'static str,
    },
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
