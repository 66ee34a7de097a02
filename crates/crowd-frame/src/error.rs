//! The crate's error type.

/// What went wrong, naming the object at fault.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A value of an instance record cannot be packed: `field` names it, `reason` says why.
    #[error("instance record {field}: {reason}")]
    Record {
        /// The record field, for example `"scale"`.
        field: &'static str,
        /// Why it cannot be packed.
        reason: &'static str,
    },
    /// A value of a resident instance cannot be packed: `field` names it, `reason` says why.
    #[error("resident instance {field}: {reason}")]
    Resident {
        /// The field, for example `"rotation"`.
        field: &'static str,
        /// Why it cannot be packed.
        reason: &'static str,
    },
    /// [`Character::new`](crate::Character::new): there are no clips or more than `max`.
    #[error("character clips: there are {clips}; a crowd needs 1 to {max}")]
    ClipCount {
        /// The clips given.
        clips: usize,
        /// The most a crowd takes.
        max: usize,
    },
    /// [`Character::new`](crate::Character::new): the per-clip slot counts and boxes are not one per clip.
    #[error(
        "character slots and clip bounds: {slots} slot counts and {bounds} boxes for {clips} clips; give one of each per clip"
    )]
    ClipTables {
        /// The clips.
        clips: usize,
        /// The slot counts given.
        slots: usize,
        /// The boxes given.
        bounds: usize,
    },
    /// A character's clip is built for another joint count than its skeleton's.
    #[error("character clip {clip} ('{name}'): animates {joints} joints; the skeleton has {skeleton_joints}")]
    ClipJoints {
        /// The clip's index.
        clip: usize,
        /// The clip's name.
        name: String,
        /// The joints the clip animates.
        joints: usize,
        /// The skeleton's joints.
        skeleton_joints: usize,
    },
    /// A character's clip box is not a finite box with `min <= max`.
    #[error("character clip {clip} ('{name}') bounds: not a finite box with min <= max")]
    ClipBounds {
        /// The clip's index.
        clip: usize,
        /// The clip's name.
        name: String,
    },
    /// [`Character::from_model`](crate::Character::from_model): the skeleton index is past the model's skeletons.
    #[error("character skeleton: index {skeleton} is past the model's {skeletons} skeletons")]
    SkeletonIndex {
        /// The index given.
        skeleton: usize,
        /// The model's skeletons.
        skeletons: usize,
    },
    /// [`Character::from_model`](crate::Character::from_model): the skeleton cannot make a character because
    /// `missing` (a mesh bound to it, or a clip animating it) does not exist.
    #[error("character skeleton {skeleton} ('{name}'): no {missing} exists for it")]
    SkeletonUnused {
        /// The skeleton's index.
        skeleton: usize,
        /// The skeleton's name.
        name: String,
        /// `"mesh bound"` or `"clip animating"`.
        missing: &'static str,
    },
    /// A character's LOD count is 0 or past `max` (`crowd_cull::limits::MAX_LODS`).
    #[error("character LODs: there are {lods}; give 1 to {max}")]
    LodCount {
        /// The LODs given.
        lods: usize,
        /// The most a group draws.
        max: usize,
    },
    /// [`FrameSettings::lod_thresholds`](crate::FrameSettings::lod_thresholds) is not one shorter than the
    /// character's LODs.
    #[error(
        "FrameSettings::lod_thresholds: has {thresholds} thresholds for a character of {lods} LODs; give one fewer than the LODs"
    )]
    LodThresholds {
        /// The thresholds given.
        thresholds: usize,
        /// The character's LODs.
        lods: usize,
    },
    /// [`FrameSettings::max_unique`](crate::FrameSettings::max_unique) is 0, or its palettes pass `u32` entries.
    #[error("FrameSettings::max_unique: is {max_unique}; it must be at least 1, and its palettes index with u32")]
    MaxUnique {
        /// The value given.
        max_unique: usize,
    },
    /// [`FrameSettings::pose_pool`](crate::FrameSettings::pose_pool) is `false` on the CPU-culled path, which draws
    /// every tier but the unique one from the pool.
    #[error("FrameSettings::pose_pool: is false; a crowd without a pose pool needs gpu_driven")]
    PosePool,
    /// A spawn's clip is not one of the character's.
    #[error("spawn {spawn} clip: is {clip}; the character has {clips} clips")]
    SpawnClip {
        /// The spawn's index in the call.
        spawn: usize,
        /// The clip given.
        clip: u16,
        /// The character's clips.
        clips: usize,
    },
    /// A spawn's scale is outside `SCALE_MIN..=SCALE_MAX` or not a number.
    #[error(
        "spawn {spawn} scale: is {scale}; it must be within {}..={}",
        crate::SCALE_MIN,
        crate::SCALE_MAX
    )]
    SpawnScale {
        /// The spawn's index in the call.
        spawn: usize,
        /// The scale given.
        scale: f32,
    },
    /// A spawn's clip time or speed is not finite.
    #[error("spawn {spawn} time and speed: {time} and {speed} must be finite")]
    SpawnTime {
        /// The spawn's index in the call.
        spawn: usize,
        /// The time given.
        time: f32,
        /// The speed given.
        speed: f32,
    },
    /// A tint component is outside `[0, 1]`: a spawn's (`spawn` is its index) or [`set_tint`]'s (`spawn` is
    /// `None`).
    ///
    /// [`set_tint`]: crate::CrowdFrame::set_tint
    #[error("{}tint: is {tint:?}; every component must be within [0, 1]", spawn.map_or(String::new(), |i| format!("spawn {i} ")))]
    Tint {
        /// The spawn's index, or `None` for `set_tint`.
        spawn: Option<usize>,
        /// The tint given.
        tint: [f32; 4],
    },
    /// [`CrowdFrame::add_many`](crate::CrowdFrame::add_many): the handle and spawn slices differ in length.
    #[error("add_many handles: {handles} handles for {spawns} spawns")]
    HandleCount {
        /// The handles' length.
        handles: usize,
        /// The spawns' length.
        spawns: usize,
    },
    /// [`CrowdFrame::set_speed`](crate::CrowdFrame::set_speed): the speed is not finite.
    #[error("speed: is {speed}; it must be finite")]
    Speed {
        /// The speed given.
        speed: f32,
    },
    /// [`CrowdFrame::play`](crate::CrowdFrame::play): the clip is not one of the character's.
    #[error("play clip: is {clip}; the character has {clips} clips")]
    PlayClip {
        /// The clip given.
        clip: u16,
        /// The character's clips.
        clips: usize,
    },
    /// [`CrowdFrame::play`](crate::CrowdFrame::play): the fade length is not finite.
    #[error("play fade: is {fade}; it must be finite")]
    PlayFade {
        /// The fade given.
        fade: f32,
    },
    /// [`CrowdFrame::step`](crate::CrowdFrame::step): `dt` is negative or not finite.
    #[error("step dt: is {dt}; it must be finite and non-negative")]
    StepDt {
        /// The time step given.
        dt: f32,
    },
    /// A camera (of a step or a packet) has a non-finite matrix or eye.
    #[error("{what} camera: has a non-finite matrix or eye")]
    Camera {
        /// `"step"` or `"packet"`.
        what: &'static str,
    },
    /// A slot index past the `slots` there are: of the store (`what` is `"resident_state"`) or of the pose pool.
    #[error("{what} slot {slot}: past the {slots} slots")]
    Slot {
        /// The call or table, for example `"resident_state"`.
        what: &'static str,
        /// The slot given.
        slot: u32,
        /// The slots there are.
        slots: usize,
    },
    /// [`Packet::from_parts`](crate::Packet::from_parts): the skin joint count is 0 or past `u32::MAX`.
    #[error("packet skin_joint_count: is {count}; it must be 1 to u32::MAX")]
    PacketJoints {
        /// The count given.
        count: usize,
    },
    /// [`Packet::from_parts`](crate::Packet::from_parts): a palette buffer is not a whole number of palettes.
    #[error("packet {buffer}: holds {entries} entries, not a whole number of {skin_joints}-entry palettes")]
    PacketPalettes {
        /// `"pool_palettes"` or `"unique_palettes"`.
        buffer: &'static str,
        /// Its entries.
        entries: usize,
        /// Entries per palette.
        skin_joints: usize,
    },
    /// [`Packet::from_parts`](crate::Packet::from_parts): a draw's records lie past the records.
    #[error("packet draw {draw}: records {first}.. ({count} of them) lie past the {records} records")]
    PacketDraw {
        /// The draw's index.
        draw: usize,
        /// Its first record.
        first: u32,
        /// Its record count.
        count: u32,
        /// The records there are.
        records: usize,
    },
    /// [`Packet::from_parts`](crate::Packet::from_parts): a record is drawn by `draws` draws (0, or a second).
    #[error("packet record {record}: is drawn by {} draws", if *draws == 0 { "no" } else { "two" })]
    PacketRecordDraws {
        /// The record's index.
        record: usize,
        /// 0 for no draw, 2 for a second one.
        draws: u32,
    },
    /// [`Packet::from_parts`](crate::Packet::from_parts): a record's position is not finite.
    #[error("packet record {record}: position {position:?} is not finite")]
    PacketRecordPosition {
        /// The record's index.
        record: usize,
        /// The position found.
        position: [f32; 3],
    },
    /// [`Packet::from_parts`](crate::Packet::from_parts): a record's scale is not a normal positive f16.
    #[error("packet record {record}: scale bits {bits:#06x} are not a normal positive f16")]
    PacketRecordScale {
        /// The record's index.
        record: usize,
        /// The f16 bits found.
        bits: u32,
    },
    /// [`Packet::from_parts`](crate::Packet::from_parts): a pooled record's slot lies past the pooled palettes.
    #[error("packet record {record}: slot {slot} lies past the {slots} pooled palettes")]
    PacketRecordSlot {
        /// The record's index.
        record: usize,
        /// The slot found.
        slot: u32,
        /// The pooled palettes there are.
        slots: usize,
    },
    /// [`Packet::from_parts`](crate::Packet::from_parts): a unique record's palette runs past the unique palettes
    /// (`end` is `None` where `start` plus the joint count overflows).
    #[error("packet record {record}: palette entries {start}..{} lie past the {entries} unique palette entries", end.map_or("(overflow)".to_owned(), |e| e.to_string()))]
    PacketRecordPalette {
        /// The record's index.
        record: usize,
        /// The palette's first entry.
        start: u32,
        /// One past its last entry.
        end: Option<usize>,
        /// The unique palette entries there are.
        entries: usize,
    },
    /// The animation crate rejected a model, clip, skeleton or pool operation.
    #[error(transparent)]
    Pose(#[from] anim_pose::Error),
    /// The palette crate rejected a binding, a flatten or the frame exchange.
    #[error(transparent)]
    Palette(#[from] skin_pack::Error),
    /// The culling crate rejected an instance, a group or the camera.
    #[error(transparent)]
    Cull(#[from] crowd_cull::Error),
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
