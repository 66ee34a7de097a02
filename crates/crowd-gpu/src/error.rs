//! The crate's error type.

use crate::renderer::RenderPath;

/// What went wrong, naming the object at fault.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A mesh, texture or scene cannot be used: crowd-mesh's error, from packing or posing (in crowd-mesh) or from
    /// the upload checks against the device's limits (a buffer or texture past them, a broken mip chain).
    #[error(transparent)]
    Mesh(#[from] crowd_mesh::Error),
    /// A character or crowd that crowd-frame refuses.
    #[error(transparent)]
    Frame(#[from] crowd_frame::Error),
    /// A model's skeleton with no bound mesh (or no such skeleton).
    #[error("the model's skeleton {skeleton} has no bound mesh")]
    NoMeshes {
        /// The skeleton asked for.
        skeleton: usize,
    },
    /// A draw group or a camera that crowd-cull refuses (`GroupDesc::validate`, `CullCamera::validate`).
    #[error(transparent)]
    Cull(#[from] crowd_cull::Error),
    /// A bake file that cannot be read or used.
    #[error(transparent)]
    BakeFile(#[from] bake_format::Error),
    /// A buffer the renderer needs would pass a device limit; nothing was uploaded. `buffer` names it, `bytes` is
    /// what the frame needs, `limit` names the limit and `max` is its value.
    #[error("{buffer}: the frame needs {bytes} bytes, past {limit} ({max} bytes)")]
    Limit {
        /// The buffer, for example `"pooled palettes"`.
        buffer: &'static str,
        /// The bytes the frame needs: the buffer's contents, or the buffer size that holds them in whole windows.
        bytes: u64,
        /// The limit's name in `wgpu::Limits`.
        limit: &'static str,
        /// The limit's value, the smaller of the configured and the device's.
        max: u64,
    },
    /// The device's limits leave no room for the renderer: `limit` is `have`, the renderer needs `needs`.
    #[error("the device's {limit} is {have}; the renderer needs at least {needs}")]
    DeviceLimit {
        /// The limit's name in `wgpu::Limits`.
        limit: &'static str,
        /// The limit's value, the smaller of the configured and the device's.
        have: u64,
        /// What the renderer needs.
        needs: u64,
    },
    /// The device lacks a feature that a call needs.
    #[error("{for_what} needs the device feature {feature}")]
    MissingFeature {
        /// The feature's name in `wgpu::Features`.
        feature: &'static str,
        /// What needs it.
        for_what: &'static str,
    },
    /// A query set of no queries, or of more than wgpu allows.
    #[error("{count} {what} queries: a query set holds 1 to {max}")]
    QueryCount {
        /// Which queries.
        what: &'static str,
        /// How many were asked for.
        count: u32,
        /// wgpu's limit.
        max: u32,
    },
    /// A mesh reads a joint at or past the packet's palette size.
    #[error("{mesh} reads joint {joint}, past the packet's {palette_entries}-entry palettes")]
    MeshJoint {
        /// The mesh's name.
        mesh: String,
        /// The largest joint it reads.
        joint: u32,
        /// Entries per palette in the packet.
        palette_entries: usize,
    },
    /// A packet draw, or the GPU-driven draw group, is at a LOD a mesh lacks.
    #[error("a draw of {instances} instances is at LOD {lod}; {mesh} has {levels} levels")]
    MissingLod {
        /// The mesh's name.
        mesh: String,
        /// The draw's LOD.
        lod: u8,
        /// The mesh's LOD count.
        levels: usize,
        /// The draw's instance count (0 for the GPU-driven draw group).
        instances: u32,
    },
    /// A bone-animation bake's entry format is not the renderer's palette format.
    #[error("the bake's entries are {bake}; the renderer's palettes are {renderer}")]
    BakeFormat {
        /// The bake's format name.
        bake: &'static str,
        /// The renderer's format name.
        renderer: &'static str,
    },
    /// A bone-animation bake cannot be played for this crowd: `clip` names its clip at fault, if one is.
    #[error("the bake{}: {what}", clip.map_or(String::new(), |c| format!("'s clip {c}")))]
    Bake {
        /// The bake's clip at fault.
        clip: Option<usize>,
        /// What is wrong.
        what: &'static str,
    },
    /// A camera (of a packet or a view) is not finite.
    #[error("the camera of {what} is not finite")]
    Camera {
        /// Whose camera: `"the view"`, `"the packet"`.
        what: &'static str,
    },
    /// The animation clock given to a cull is not finite.
    #[error("the cull clock is {now}")]
    Clock {
        /// The clock.
        now: f32,
    },
    /// `call` needs the GPU-driven path; the renderer (or the device) is on `path`.
    #[error("{call} needs the GPU-driven path; the renderer is on the {} path", path.name())]
    Path {
        /// The call, for example `"set_bat"`.
        call: &'static str,
        /// The renderer's path.
        path: RenderPath,
    },
    /// `call` cannot be made now: `why` says what it conflicts with. Nothing changed.
    #[error("{call}: {why}")]
    Order {
        /// The call, for example `"add_mesh"`.
        call: &'static str,
        /// Why it is refused.
        why: &'static str,
    },
    /// A packet's resident changes are malformed: `what` says how, at change `index` (a range, a state or an
    /// owner, counted from the packet's first).
    #[error("resident change {index}: {what}")]
    ResidentChange {
        /// The change at fault.
        index: usize,
        /// What is wrong.
        what: &'static str,
    },
    /// A packet's resident changes do not build on what the renderer holds (a packet was not prepared, a `prepare`
    /// failed, or the renderer was made after the crowd): nothing changed. Ask the crowd for a full resend
    /// (`CrowdFrame::resend_all`, or `ResendRequest::request` from the render thread); a full packet is taken
    /// whatever the renderer holds.
    #[error(
        "the packet's resident changes build on frame {since} of resend epoch {epoch}; the renderer holds {}: a full resend is needed",
        held.map_or("nothing yet".to_string(), |(e, f)| format!("frame {f} of epoch {e}"))
    )]
    OutOfStep {
        /// The epoch and frame the renderer's resident state is at, if any.
        held: Option<(u32, u64)>,
        /// The packet's epoch.
        epoch: u32,
        /// The frame the packet's changes build on.
        since: u64,
    },
    /// A view that another renderer created.
    #[error("the view belongs to another renderer")]
    ForeignView,
    /// An offscreen target of `width × height` pixels: each side must be 1 to `max`.
    #[error("an offscreen target of {width} x {height} pixels: each side must be 1 to {max}")]
    TargetSize {
        /// The width asked for.
        width: u32,
        /// The height asked for.
        height: u32,
        /// `max_texture_dimension_2d`.
        max: u32,
    },
    /// A texture to read back is not of a 4-bytes-per-texel format.
    #[error("reading back a {format:?} texture: only formats of 4 bytes per texel are read")]
    ReadbackFormat {
        /// The texture's format.
        format: wgpu::TextureFormat,
    },
    /// A buffer read back past its end, or not in whole words.
    #[error("reading {bytes} bytes of a {size}-byte buffer (whole words only)")]
    ReadbackRange {
        /// The bytes asked for.
        bytes: u64,
        /// The buffer's size.
        size: u64,
    },
    /// The adapter refused a device.
    #[error("the adapter '{adapter}' refused a device")]
    RequestDevice {
        /// The adapter's name.
        adapter: String,
        /// wgpu's error.
        #[source]
        source: wgpu::RequestDeviceError,
    },
    /// Mapping a buffer (`what`) failed.
    #[error("mapping {what} failed")]
    Map {
        /// The buffer.
        what: &'static str,
        /// wgpu's error.
        #[source]
        source: wgpu::BufferAsyncError,
    },
    /// Reading a mapped range of a buffer (`what`) failed.
    #[error("the mapped range of {what}")]
    MapRange {
        /// The buffer.
        what: &'static str,
        /// wgpu's error.
        #[source]
        source: wgpu::MapRangeError,
    },
    /// Waiting for the device failed.
    #[error("waiting for the device")]
    Poll(#[from] wgpu::PollError),
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
