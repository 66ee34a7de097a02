//! The crate's single error type.

/// Everything that can go wrong in `anim-pose`.
///
/// Every variant names the object at fault: a file, an accessor, a node, a skin, a channel or a
/// job argument, so that the message alone tells a user where to look.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be read.
    #[error("cannot read {path}")]
    Io {
        /// The file that could not be read.
        path: String,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The glTF container or JSON could not be parsed.
    #[error("{context}: {message}")]
    Parse {
        /// What was being parsed, for example "GLB header" or "glTF JSON".
        context: String,
        /// What the parser reported.
        message: String,
    },
    /// A glTF object is invalid. `object` names it, for example
    /// "accessor 12 (WEIGHTS_0 of mesh 'Body' primitive 0)".
    #[error("{object}: {message}")]
    Invalid {
        /// The object at fault.
        object: String,
        /// What is wrong with it.
        message: String,
    },
    /// A glTF feature this importer does not support and cannot safely ignore.
    #[error("{object}: unsupported: {message}")]
    Unsupported {
        /// The object that uses the feature.
        object: String,
        /// The feature.
        message: String,
    },
    /// A caller-provided buffer has the wrong size.
    #[error("{what}: expected {expected} elements, got {actual}")]
    BufferSize {
        /// Which argument, for example "output pose".
        what: &'static str,
        /// The number of elements required.
        expected: usize,
        /// The number of elements given.
        actual: usize,
    },
    /// A job's inputs break one of its validity rules. Building this error never allocates, so a job's
    /// `validate()` can run on the hot path.
    #[error("{job}: {field}{}: {reason}", match index { Some(i) => format!(" {i}"), None => String::new() })]
    Job {
        /// The job, for example "SamplingJob".
        job: &'static str,
        /// The field at fault, for example "output" or "layers".
        field: &'static str,
        /// The element of the field at fault, for example a layer index.
        index: Option<usize>,
        /// The rule broken, for example "is shorter than the clip's SoA joint count".
        reason: &'static str,
    },
    /// A numeric argument is out of its valid range, for example a NaN sample time.
    #[error("{what}: {message}")]
    InvalidArgument {
        /// Which argument.
        what: &'static str,
        /// What is wrong with it.
        message: String,
    },
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Builds an [`Error::Job`] without allocating.
    pub const fn job(job: &'static str, field: &'static str, index: Option<usize>, reason: &'static str) -> Self {
        Self::Job {
            job,
            field,
            index,
            reason,
        }
    }

    /// Builds an [`Error::Invalid`] for `object`.
    pub fn invalid(object: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Invalid {
            object: object.into(),
            message: message.into(),
        }
    }
}
