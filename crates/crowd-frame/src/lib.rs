//! The frame pipeline over the CPU crates: one [`CrowdFrame`] per crowd turns instance changes and a camera into
//! a [`Packet`] per frame, which the render thread reads without any simulation type. No GPU dependency.
//!
//! Per [`CrowdFrame::step`] (the pipeline design's steps 1 to 6):
//! 1. the game's instance changes are in the store already (each call applies at once); crossfades progress and
//!    clusters are maintained;
//! 2. the clock advances; clip switches became crossfades when the game made them ([`CrowdFrame::play`]);
//! 3. `crowd_cull` tiers and culls;
//! 4. the pose pool updates its clip slots and the crossfade buckets that visible pooled instances requested, and
//!    maps every visible pooled instance to a slot pair;
//! 5. the unique instances (the first [`FrameSettings::max_unique`] of the unique tier) are sampled, blended and
//!    converted;
//! 6. the live slot palettes and the unique palettes are flattened in format `F` into the packet;
//! 7. one [`InstanceRecord`] per visible instance is packed, in visible-list order;
//! 8. the draws, dirty ranges and stats are written, and the packet is published through the
//!    [`FrameExchange`](skin_pack::FrameExchange).
//!
//! Baked and VAT instances have no GPU path yet: they are packed as pooled, through the pose pool, in their
//! tiers' draws ([`RecordKind::Pooled`]), so no visible instance is dropped.
//!
//! With [`FrameSettings::gpu_driven`] the step follows what changed instead: it culls nothing and packs records
//! only for the few unique instances nearest the camera, and hands over the changed [`ResidentInstance`]s
//! ([`Packet::resident`]) for a renderer that keeps the crowd on the GPU and culls it per view.
//!
//! One clip id space: a [`ClipId`] is the character's clip index, the pool track and the culling clip (see
//! [`anim`] for the animation state and its mapping onto the pool).
//!
//! # Example
//!
//! ```
//! use crowd_frame::{Character, CharacterOptions, ClipId, CrowdFrame, FrameCamera, FrameSettings, Spawn};
//! use glam::Vec3;
//!
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/crowd_character.glb");
//! let model = anim_pose::import_file(path)?;
//! let character = Character::from_model(&model, 0, &CharacterOptions::default())?;
//! let mut crowd: CrowdFrame = CrowdFrame::new(character, FrameSettings::default())?;
//! let walker = crowd.add(&Spawn::at(Vec3::new(0.0, 0.0, -8.0), ClipId(0)))?;
//! let camera = FrameCamera::perspective(Vec3::new(0.0, 1.6, 0.0), Vec3::new(0.0, 1.0, -8.0), Vec3::Y, 1.0, 1.5, 0.1, 500.0);
//! let exchange = crowd.exchange().clone();
//! crowd.step(1.0 / 60.0, &camera)?;
//! crowd.play(walker, ClipId(1), 0.25)?;
//! crowd.step(1.0 / 60.0, &camera)?;
//! // The render thread's side: every published frame, in order.
//! for frame in 0..2 {
//!     let packet = exchange.begin_read()?;
//!     assert_eq!(packet.frame(), frame);
//!     assert_eq!(packet.records().len(), 1);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod anim;
mod character;
mod error;
mod frame;
mod pack;
mod packet;
mod record;
/// The plain reference twin of the step, for the crate's property tests; not part of the API.
#[doc(hidden)]
pub mod reference;
mod resident;
mod stats;
mod unique;

pub use anim::{Spawn, clip_time};
pub use character::{Character, CharacterOptions, ClipId, SlotCount};
/// The camera of a frame; defined by crowd-cull, which derives its culling frustum from it.
pub use crowd_cull::FrameCamera;
pub use error::{Error, Result};
pub use frame::{CrowdFrame, FrameSettings, REBASE_AFTER, ResendRequest};
pub use packet::{DRAWS_PER_LOD, DirtyRanges, Packet, PacketDraw, PacketParts, RecordKind, ResidentChanges};
pub use record::{
    AMPLITUDE_ERROR_BOUND, DecodedRecord, FRACTION_ERROR_BOUND, INSTANCE_RECORD_SIZE, InstanceRecord,
    PHASE_ERROR_BOUND, ROTATION_ERROR_BOUND, RecordAnim, SCALE_MAX, SCALE_MIN, SCALE_RELATIVE_ERROR_BOUND,
};
pub use resident::{
    DecodedResident, RESIDENT_CPU_DRAWN, RESIDENT_EMPTY_CLIP, RESIDENT_INSTANCE_SIZE, RESIDENT_NO_FADE, ResidentAnim,
    ResidentClip, ResidentFade, ResidentInstance, ResidentOwner,
};
pub use stats::{FrameStats, StageTimes};
