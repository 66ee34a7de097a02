//! The crate's error type.

/// What went wrong, naming the object at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A mesh, texture or scene cannot be used: crowd-mesh's error, from packing or posing (in crowd-mesh) or from
    /// the upload checks against the device's limits (a buffer or texture past them, a broken mip chain).
    #[error(transparent)]
    Mesh(#[from] crowd_mesh::Error),
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
    /// A packet draw is at a LOD a mesh lacks.
    #[error("a packet draw of {instances} instances is at LOD {lod}; {mesh} has {levels} levels")]
    MissingLod {
        /// The mesh's name.
        mesh: String,
        /// The draw's LOD.
        lod: u8,
        /// The mesh's LOD count.
        levels: usize,
        /// The draw's instance count.
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
    /// The GPU side failed: no device, a limit, a readback.
    #[error("gpu: {what}")]
    Gpu {
        /// What failed and why.
        what: String,
    },
}

impl Error {
    /// [`Error::Gpu`].
    pub(crate) fn gpu(what: impl Into<String>) -> Self {
        Self::Gpu { what: what.into() }
    }
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
