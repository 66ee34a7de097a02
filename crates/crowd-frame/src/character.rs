//! [`Character`]: one skeleton with its runtime clips, pool slot counts, animated bounds, skin binding and LOD
//! index ranges, built once and shared by every crowd of it.

use anim_pose::{Model, RuntimeClip, RuntimeClipOptions, Skeleton, SkinnedMesh};
use crowd_cull::Aabb;
use skin_pack::PaletteBinding;

use crate::{Error, Result};

/// A clip of a [`Character`]: its index in [`Character::clips`].
///
/// This is the crate's one clip id space. The same number is the clip's pose-pool track
/// (`anim_pose::PosePool` builds its clips in this order), its index in the crowd group's
/// `crowd_cull::GroupDesc::clip_bounds`, and `crowd_cull::AnimState::clip` of every instance playing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ClipId(pub u16);

/// How [`Character::from_model`] picks each clip's number of pose-pool slots `K`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SlotCount {
    /// The same `K` (at least 2) for every clip.
    Fixed(usize),
    /// The smallest `K` (up to `max_slots`) that keeps every vertex within `tolerance` of the exact pose, in the
    /// model's world units: `skin_pack::slots_for_tolerance`, a setup-time search that skins the meshes many times
    /// per clip, so keep the result rather than rebuilding at every load.
    Tolerance {
        /// The vertex displacement budget.
        tolerance: f32,
        /// The most slots a clip may get.
        max_slots: usize,
    },
}

/// Options of [`Character::from_model`].
#[derive(Clone, Copy, Debug)]
pub struct CharacterOptions {
    /// How clips are resampled into runtime clips. Crowds usually want in-place clips (the game moves instances),
    /// so consider extracting root motion.
    pub clip: RuntimeClipOptions,
    /// The pool slot counts. Default `Fixed(32)`.
    pub slots: SlotCount,
}

impl Default for CharacterOptions {
    fn default() -> Self {
        Self {
            clip: RuntimeClipOptions::default(),
            slots: SlotCount::Fixed(32),
        }
    }
}

/// Everything about one character that does not change per frame: the skeleton, its runtime clips in
/// [`ClipId`] order, each clip's pose-pool slot count and animated bounds, the palette binding of its skin, and
/// the index range of each LOD.
///
/// Crowds share a character through an `Arc` ([`CrowdFrame::new`](crate::CrowdFrame::new) takes a `Character` or
/// an `Arc<Character>`); the pose pool holds cheap clones of its clips, which share their tracks.
#[derive(Debug)]
pub struct Character {
    skeleton: Skeleton,
    clips: Vec<RuntimeClip>,
    slots: Vec<usize>,
    clip_bounds: Vec<Aabb>,
    lod_count: usize,
    binding: PaletteBinding,
}

impl Character {
    /// A character from its parts. `slots`, `clip_bounds` and `clips` are parallel (one entry per clip);
    /// `lod_count` LODs (1 to `crowd_cull::limits::MAX_LODS`) are drawn, whose index ranges the renderer's meshes own.
    ///
    /// # Errors
    ///
    /// - [`Error::ClipTables`] when the lengths differ, [`Error::ClipCount`] for no clips or more than
    ///   `u16::MAX - 1`, [`Error::LodCount`] for no LODs or too many, [`Error::ClipJoints`] for a clip built for
    ///   another joint count and [`Error::ClipBounds`] for a box that is not valid;
    /// - [`Error::Palette`] when the skeleton's skin does not bind ([`PaletteBinding::new`]).
    pub fn new(
        skeleton: Skeleton,
        clips: Vec<RuntimeClip>,
        slots: Vec<usize>,
        clip_bounds: Vec<Aabb>,
        lod_count: usize,
    ) -> Result<Self> {
        if clips.is_empty() || clips.len() >= usize::from(u16::MAX) {
            return Err(Error::ClipCount {
                clips: clips.len(),
                max: usize::from(u16::MAX - 1),
            });
        }
        if slots.len() != clips.len() || clip_bounds.len() != clips.len() {
            return Err(Error::ClipTables {
                clips: clips.len(),
                slots: slots.len(),
                bounds: clip_bounds.len(),
            });
        }
        for (i, clip) in clips.iter().enumerate() {
            if clip.joint_count() != skeleton.joint_count() {
                return Err(Error::ClipJoints {
                    clip: i,
                    name: clip.name().to_owned(),
                    joints: clip.joint_count(),
                    skeleton_joints: skeleton.joint_count(),
                });
            }
            if !clip_bounds[i].is_valid() {
                return Err(Error::ClipBounds {
                    clip: i,
                    name: clip.name().to_owned(),
                });
            }
        }
        check_lod_count(lod_count)?;
        let binding = PaletteBinding::new(&skeleton)?;
        Ok(Self {
            skeleton,
            clips,
            slots,
            clip_bounds,
            lod_count,
            binding,
        })
    }

    /// Builds skeleton `skeleton` of `model` with every clip that animates it (in model order), the meshes bound
    /// to it, their animated bounds per clip (`skin_pack::animated_bounds`, in instance space), the slot counts of
    /// `options`, and one LOD. A renderer whose meshes have simplified LODs sets their number with
    /// [`Character::with_lod_count`].
    ///
    /// Allocates and runs setup-time searches; call it at load.
    ///
    /// # Errors
    ///
    /// [`Error::SkeletonIndex`] when `skeleton` is out of range, [`Error::SkeletonUnused`] when no clip animates it
    /// or no mesh is bound to it, and the
    /// errors of runtime clip building, bounds, slot search and [`Character::new`], naming the clip or mesh.
    pub fn from_model(model: &Model, skeleton: usize, options: &CharacterOptions) -> Result<Self> {
        let sk = model.skeletons.get(skeleton).ok_or(Error::SkeletonIndex {
            skeleton,
            skeletons: model.skeletons.len(),
        })?;
        let mut mesh_indices: Vec<usize> = model
            .bindings
            .iter()
            .filter(|b| b.skeleton == skeleton)
            .flat_map(|b| b.meshes.clone())
            .collect();
        mesh_indices.sort_unstable();
        mesh_indices.dedup();
        let meshes: Vec<&SkinnedMesh> = mesh_indices.iter().map(|&m| &model.meshes[m]).collect();
        if meshes.is_empty() {
            return Err(Error::SkeletonUnused {
                skeleton,
                name: sk.name.clone(),
                missing: "mesh bound",
            });
        }
        let mut clips = Vec::new();
        for clip in model.clips_for(skeleton) {
            clips.push(RuntimeClip::build(clip, sk, &options.clip)?);
        }
        if clips.is_empty() {
            return Err(Error::SkeletonUnused {
                skeleton,
                name: sk.name.clone(),
                missing: "clip animating",
            });
        }
        let mut slots = Vec::with_capacity(clips.len());
        let mut clip_bounds = Vec::with_capacity(clips.len());
        for clip in &clips {
            let b = skin_pack::animated_bounds(sk, clip, &meshes)?;
            clip_bounds.push(Aabb::new(b.min, b.max));
            slots.push(match options.slots {
                SlotCount::Fixed(k) => k,
                SlotCount::Tolerance { tolerance, max_slots } => {
                    skin_pack::slots_for_tolerance(sk, clip, &meshes, tolerance, max_slots)?
                }
            });
        }
        Self::new(sk.clone(), clips, slots, clip_bounds, 1)
    }

    /// The same character drawn with `lod_count` LODs: as many as its meshes have (`crowd_mesh::PackedMesh::lods`);
    /// the meshes own the LODs' index ranges, the frame only picks a LOD per instance.
    ///
    /// # Errors
    ///
    /// [`Error::LodCount`] when `lod_count` is 0 or past `crowd_cull::limits::MAX_LODS`.
    pub fn with_lod_count(mut self, lod_count: usize) -> Result<Self> {
        check_lod_count(lod_count)?;
        self.lod_count = lod_count;
        Ok(self)
    }

    /// The skeleton.
    pub fn skeleton(&self) -> &Skeleton {
        &self.skeleton
    }

    /// The runtime clips, indexed by [`ClipId`].
    pub fn clips(&self) -> &[RuntimeClip] {
        &self.clips
    }

    /// Whether `clip` names one of the character's clips: the one clip-id check of every call that takes one.
    pub(crate) fn has_clip(&self, clip: ClipId) -> bool {
        usize::from(clip.0) < self.clips.len()
    }

    /// The clip named `name`, if any.
    pub fn clip_id(&self, name: &str) -> Option<ClipId> {
        self.clips
            .iter()
            .position(|c| c.name() == name)
            .map(|i| ClipId(i as u16))
    }

    /// Each clip's number of pose-pool slots.
    pub fn slots(&self) -> &[usize] {
        &self.slots
    }

    /// Each clip's animated bounds, in instance space.
    pub fn clip_bounds(&self) -> &[Aabb] {
        &self.clip_bounds
    }

    /// The number of LODs the frame picks among.
    pub fn lod_count(&self) -> usize {
        self.lod_count
    }

    /// The palette binding of the skin.
    pub fn binding(&self) -> &PaletteBinding {
        &self.binding
    }
}

/// Checks a LOD count: 1 to `crowd_cull::limits::MAX_LODS`.
fn check_lod_count(lod_count: usize) -> Result<()> {
    if lod_count == 0 || lod_count > crowd_cull::limits::MAX_LODS {
        return Err(Error::LodCount {
            lods: lod_count,
            max: crowd_cull::limits::MAX_LODS,
        });
    }
    Ok(())
}
