//! The frame pipeline that ties the CPU crates together and publishes each frame's packet, with no GPU
//! dependency.
//!
//! So far this crate holds the packet's per-instance contract: [`InstanceRecord`], the 32-byte record that the
//! renderer reads for every visible pooled or unique instance, declared identically in
//! `shaders/instance_record.wgsl`.
//!
//! # Example
//!
//! ```
//! use crowd_frame::{InstanceRecord, RecordAnim};
//! use glam::{Quat, Vec3, Vec4};
//!
//! // A pooled instance between slots 40 and 41 of its clip, 25% of the way to 41.
//! let record = InstanceRecord::new(
//!     Vec3::new(10.0, 0.0, -4.0),
//!     Quat::from_rotation_y(0.5),
//!     1.2,
//!     RecordAnim::Pooled { slots: [40, 41], fraction: 0.25 },
//!     Vec4::ONE,
//! )?;
//! let decoded = record.decode();
//! assert_eq!(decoded.position, Vec3::new(10.0, 0.0, -4.0));
//! assert!(decoded.rotation.abs_diff_eq(Quat::from_rotation_y(0.5), 1e-4));
//! # Ok::<(), crowd_frame::Error>(())
//! ```

mod error;
mod record;

pub use error::{Error, Result};
pub use record::{
    DecodedRecord, FRACTION_ERROR_BOUND, INSTANCE_RECORD_SIZE, InstanceRecord, ROTATION_ERROR_BOUND, RecordAnim,
    SCALE_MAX, SCALE_MIN, SCALE_RELATIVE_ERROR_BOUND,
};
