//! The plugin's error type.

/// What went wrong in the plugin: each variant names the file or the crowd call.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The asset source could not be read.
    #[error("{path}: cannot read the file: {message}")]
    Read {
        /// The asset path.
        path: String,
        /// The reader's error.
        message: String,
    },
    /// The file is not a glTF model anim-pose imports.
    #[error("{path}: cannot import the glTF model")]
    Import {
        /// The asset path.
        path: String,
        /// The importer's error.
        #[source]
        source: anim_pose::Error,
    },
    /// The model has no mesh bound to a skin of that skeleton.
    #[error("{path}: no mesh is bound to a skin of skeleton {skeleton} (a crowd character needs a skinned mesh)")]
    NoSkin {
        /// The asset path.
        path: String,
        /// The skeleton asked for.
        skeleton: usize,
    },
    /// The skeleton has no animation clip.
    #[error("{path}: the skeleton has no animation clip")]
    NoClip {
        /// The asset path.
        path: String,
    },
    /// The clips' animated bounds are empty or not finite.
    #[error("{path}: the animated bounds are empty or not finite")]
    Bounds {
        /// The asset path.
        path: String,
    },
    /// A mesh could not be packed, or its texture decoded.
    #[error("{path}: a mesh cannot be packed")]
    Mesh {
        /// The asset path.
        path: String,
        /// crowd-mesh's error.
        #[source]
        source: crowd_mesh::Error,
    },
    /// crowd-frame refused the character.
    #[error("{path}: the skeleton cannot make a crowd character")]
    Frame {
        /// The asset path.
        path: String,
        /// crowd-frame's error.
        #[source]
        source: crowd_frame::Error,
    },
    /// crowd-gpu refused the model for another reason than the ones above.
    #[error("{path}: the model cannot make a crowd character")]
    Asset {
        /// The asset path.
        path: String,
        /// crowd-gpu's error.
        #[source]
        source: crowd_gpu::Error,
    },
    /// A crowd call before the crowd's character has loaded.
    #[error("the crowd's character has not loaded yet (or failed to load)")]
    NotReady,
    /// A crowd call crowd-frame refused (a stale handle, a clip out of range, a bad position or scale...).
    #[error(transparent)]
    Crowd(#[from] crowd_frame::Error),
}
