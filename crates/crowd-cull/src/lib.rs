//! Instance store, clusters, frustum culling and LOD tiers for crowds, with no GPU dependency.
//!
//! The crate's capabilities are specified by the crowd-cull issue and are not built yet; today it holds
//! only its error type, so that the workspace has its fixed shape and the crate's dependency rules
//! (no wgpu, no `anim-pose`) are enforced from the start.

mod error;

pub use error::{Error, Result};
