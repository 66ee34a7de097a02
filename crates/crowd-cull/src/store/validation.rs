//! Input checks of the store's writes: transforms, animation states, whole descriptions, moves and room for
//! more instances. Each reports the first bad item by its index in the batch and changes nothing.

use glam::{Quat, Vec3};

use super::InstanceStore;
use crate::error::{Error, Result};
use crate::group::Group;
use crate::instance::{AnimState, GroupId, Handle, InstanceDesc};
use crate::limits::MAX_SLOTS;

fn finite_quat(q: Quat) -> bool {
    q.is_finite()
}

impl InstanceStore {
    pub(super) fn check_anim(g: &Group, group: u32, anim: &AnimState, index: usize) -> Result<()> {
        let clip_count = g.desc.clip_bounds.len() as u32;
        let unknown = |clip| Error::UnknownClip {
            index,
            clip,
            group,
            clip_count,
        };
        if anim.clip >= clip_count {
            return Err(unknown(anim.clip));
        }
        if let Some(t) = anim.fade_target
            && t >= clip_count
        {
            return Err(unknown(t));
        }
        if !(anim.start_time.is_finite() && anim.speed.is_finite() && anim.fade_weight.is_finite()) {
            return Err(Error::NonFinite {
                what: "animation state",
                index,
            });
        }
        if !(0.0..=1.0).contains(&anim.fade_weight) {
            return Err(Error::OutOfRange {
                what: "fade weight (0 to 1)",
                index,
            });
        }
        Ok(())
    }

    pub(super) fn check_transform(position: Vec3, rotation: Quat, scale: f32, index: usize) -> Result<()> {
        if !position.is_finite() {
            return Err(Error::NonFinite {
                what: "position",
                index,
            });
        }
        if !finite_quat(rotation) {
            return Err(Error::NonFinite {
                what: "rotation",
                index,
            });
        }
        if (rotation.length() - 1.0).abs() > 1e-3 {
            return Err(Error::OutOfRange {
                what: "rotation (must be unit length)",
                index,
            });
        }
        if !scale.is_finite() {
            return Err(Error::NonFinite { what: "scale", index });
        }
        if scale <= 0.0 {
            return Err(Error::OutOfRange {
                what: "scale (must be > 0)",
                index,
            });
        }
        Ok(())
    }

    pub(super) fn check_desc(&self, g: GroupId, desc: &InstanceDesc, index: usize) -> Result<()> {
        let grp = self.group(g, index)?;
        Self::check_transform(desc.position, desc.rotation, desc.scale, index)?;
        Self::check_anim(grp, g.0, &desc.anim, index)?;
        if !desc.custom.is_finite() {
            return Err(Error::NonFinite {
                what: "custom data",
                index,
            });
        }
        Ok(())
    }

    /// Checks that `extra` more instances and handles fit the `u32` slot and handle indices. Whether their
    /// clusters fit the slot limit is checked as they go in ([`InstanceStore::fits_worst_case`] first).
    pub(super) fn check_room(&self, extra: usize) -> Result<()> {
        if self.live + extra > MAX_SLOTS / 2 || self.handles.len() + extra > MAX_SLOTS / 2 {
            return Err(Error::Limit {
                what: "instance slots per store",
                limit: MAX_SLOTS,
            });
        }
        Ok(())
    }

    /// True when `extra` more instances fit the slot limit even if each started a new cluster: the cheap bound
    /// under which a batch cannot fail half-way.
    pub(super) fn fits_worst_case(&self, extra: usize) -> bool {
        let cap = self.settings.capacity as usize;
        self.slots.saturating_add(extra.saturating_mul(cap)) <= self.max_slots
    }

    /// Checks move `i` of a batch: a live handle and a finite position.
    pub(super) fn check_move(&self, i: usize, h: &Handle, p: &Vec3) -> Result<()> {
        self.entry(*h, i)?;
        if !p.is_finite() {
            return Err(Error::NonFinite {
                what: "position",
                index: i,
            });
        }
        Ok(())
    }
}
