//! The crate's error type.

/// What went wrong, naming the object at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A mesh cannot be packed or uploaded: `mesh` names it, `what` says where and why.
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
}

impl Error {
    /// [`Error::Texture`] for `name`.
    pub fn texture(name: &str, what: impl Into<String>) -> Self {
        Self::Texture {
            name: name.to_owned(),
            what: what.into(),
        }
    }

    /// [`Error::Scene`].
    pub fn scene(what: impl Into<String>) -> Self {
        Self::Scene { what: what.into() }
    }

    /// [`Error::Mesh`] for `mesh`.
    pub fn mesh(mesh: &str, what: impl Into<String>) -> Self {
        Self::Mesh {
            mesh: mesh.to_owned(),
            what: what.into(),
        }
    }
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
