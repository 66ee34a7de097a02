//! The crate's error type.

/// What went wrong, naming the object at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A mesh cannot be packed: `mesh` names it, `what` says where and why.
    #[error("{mesh}: {what}")]
    Mesh {
        /// The mesh's name (`mesh 'Name' primitive P`).
        mesh: String,
        /// What is wrong, naming the vertex, index or attribute.
        what: String,
    },
    /// A texture cannot be used: `name` names it, `what` says why.
    #[error("texture '{name}' {what}")]
    Texture {
        /// The texture's name.
        name: String,
        /// What is wrong.
        what: String,
    },
    /// A scene cannot be built from a model or its pose: `what` names the skin, clip, entry or time at fault.
    #[error("scene: {what}")]
    Scene {
        /// What is wrong.
        what: String,
    },
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
    /// A packet's palettes are in another format than the renderer was configured for.
    #[error("the packet's palettes are {packet}, the renderer was configured for {renderer}")]
    PaletteFormat {
        /// The packet's format name (skin-pack's `PaletteFormat::NAME`).
        packet: &'static str,
        /// The renderer's.
        renderer: &'static str,
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
    /// The GPU side failed: no device, a limit, a readback.
    #[error("gpu: {what}")]
    Gpu {
        /// What failed and why.
        what: String,
    },
}

impl Error {
    /// [`Error::Texture`] for `name`.
    pub(crate) fn texture(name: &str, what: impl Into<String>) -> Self {
        Self::Texture {
            name: name.to_owned(),
            what: what.into(),
        }
    }

    /// [`Error::Gpu`].
    pub(crate) fn gpu(what: impl Into<String>) -> Self {
        Self::Gpu { what: what.into() }
    }

    /// [`Error::Scene`].
    pub(crate) fn scene(what: impl Into<String>) -> Self {
        Self::Scene { what: what.into() }
    }

    /// [`Error::Mesh`] for `mesh`.
    pub(crate) fn mesh(mesh: &str, what: impl Into<String>) -> Self {
        Self::Mesh {
            mesh: mesh.to_owned(),
            what: what.into(),
        }
    }
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
