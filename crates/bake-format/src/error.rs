//! The crate's single error type.

/// Everything that can go wrong in `bake-format`: a bake file that cannot be read or written, is truncated or is
/// corrupt, a bake that breaks a rule of [`crate::Bake::validate`], a layout past a device limit, or a playback
/// lookup outside a bake.
///
/// Every variant names what is at fault, so that the message alone tells a user where to look.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An argument is out of its range.
    #[error("option {what} = {value} is out of range: {rule}")]
    InvalidOption {
        /// The argument, for example `"VAT max texture width"`.
        what: &'static str,
        /// Its value.
        value: f64,
        /// The rule it breaks.
        rule: &'static str,
    },
    /// A count does not fit the file's 32-bit fields, or a size computation overflows.
    #[error("{what} is too large")]
    TooLarge {
        /// What was being sized.
        what: &'static str,
    },
    /// A layout does not fit a device limit.
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
    /// A field of a bake (in memory or in a file) holds a value the format does not allow.
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
