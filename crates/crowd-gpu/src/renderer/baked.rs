//! The baked tier of the GPU-driven path: a bone-animation bake ([`bake_format::BatData`]) on the device.
//!
//! Baked draws (`vs_baked_*` in `shaders/crowd_skin.wgsl`) bind the bake's entries where other draws bind the
//! pooled palettes, so the bake's frames are read as the pool's slots are, in the renderer's palette format; its
//! clip table (one `bake_format::ClipRecord` per clip) maps an instance's clip time to two frames and a fraction.
//! The CPU does nothing per instance: an instance in the baked tier is posed from its resident state and the clock.
//!
//! Without a bake, the baked tier draws from the pose pool, as the pooled tier does.

use bake_format::{BatData, ClipRecord};
use crowd_frame::ResidentClip;
use skin_pack::PaletteFormat;

use super::{CrowdRenderer, RenderPath};
use crate::{Error, Result};

/// A bone-animation bake on the device.
#[derive(Debug)]
pub(crate) struct DeviceBat {
    /// The entries, bound whole as the pooled palettes of baked draws.
    pub(crate) entries: wgpu::Buffer,
    /// One `ClipRecord` per clip.
    pub(crate) clips: wgpu::Buffer,
    /// The bake's clip table, to check each packet's clips against.
    records: Vec<ClipRecord>,
    /// Entries per frame.
    joint_count: u32,
}

/// How far a bake's clip duration may differ from the crowd's, relative to the duration: both are the glTF clip's,
/// one through f32 sums of the runtime clip's keys.
const DURATION_TOLERANCE: f32 = 1e-4;

impl<F: PaletteFormat + 'static> CrowdRenderer<F> {
    /// Draws the baked tier of the GPU-driven path from `bat`, a bake of the crowd's character: the same clips in
    /// the same order (`anim_bake::bake` of the skeleton the `Character` was made from), in the renderer's palette
    /// format. Uploads the entries and the clip table once; each `prepare` then checks the packet's clips against
    /// the bake's in O(clips).
    ///
    /// # Errors
    ///
    /// - [`Error::Path`] when the GPU-driven path is not enabled;
    /// - [`Error::BakeFormat`] when the bake's entry format is not the renderer's;
    /// - [`Error::Bake`] when the bake has no clip or a clip with fewer than two frames, or its entries are not
    ///   whole frames of `joint_count` entries or do not cover its clips' frames;
    /// - [`Error::Limit`] when the entries or the clip table pass `max_buffer_size` or the storage binding limit (a
    ///   baked draw binds them whole).
    ///
    /// Nothing changes on error.
    pub fn set_bat(&mut self, device: &wgpu::Device, bat: &BatData) -> Result<()> {
        let Some(g) = self.gpu_driven.as_mut() else {
            return Err(Error::Path {
                call: "set_bat",
                path: RenderPath::CpuCulled,
            });
        };
        if bat.format.name() != F::NAME {
            return Err(Error::BakeFormat {
                bake: bat.format.name(),
                renderer: F::NAME,
            });
        }
        if bat.clips.is_empty() {
            return Err(Error::Bake {
                clip: None,
                what: "has no clip",
            });
        }
        let per_frame = (bat.joint_count as usize).saturating_mul(bat.format.entry_words());
        if per_frame == 0 || !bat.entries.len().is_multiple_of(per_frame) {
            return Err(Error::Bake {
                clip: None,
                what: "entries are not whole frames of joint_count entries",
            });
        }
        let frames = bat.frame_count() as u64;
        for (c, r) in bat.clips.iter().enumerate() {
            if r.frame_count < 2 || u64::from(r.first_frame) + u64::from(r.frame_count) > frames {
                return Err(Error::Bake {
                    clip: Some(c),
                    what: "has fewer than two frames or frames past the entries",
                });
            }
        }
        let bytes = bat.byte_len() as u64;
        let max = self.limits.whole();
        if bytes > max {
            return Err(Error::Limit {
                buffer: "baked palettes",
                bytes,
                limit: "max_buffer_size or max_storage_buffer_binding_size",
                max,
            });
        }
        let entries = wgpu::util::DeviceExt::create_buffer_init(
            device,
            &wgpu::util::BufferInitDescriptor {
                label: Some("crowd baked palettes"),
                contents: bat.bytes(),
                usage: wgpu::BufferUsages::STORAGE,
            },
        );
        let clip_bytes = size_of_val(bat.clips.as_slice()) as u64;
        if clip_bytes > max {
            return Err(Error::Limit {
                buffer: "baked clips",
                bytes: clip_bytes,
                limit: "max_buffer_size or max_storage_buffer_binding_size",
                max,
            });
        }
        let clips = wgpu::util::DeviceExt::create_buffer_init(
            device,
            &wgpu::util::BufferInitDescriptor {
                label: Some("crowd baked clips"),
                contents: bytemuck::cast_slice(&bat.clips),
                usage: wgpu::BufferUsages::STORAGE,
            },
        );
        g.bat = Some(DeviceBat {
            entries,
            clips,
            records: bat.clips.clone(),
            joint_count: bat.joint_count,
        });
        g.generation += 1;
        Ok(())
    }

    /// Culls the GPU-driven path with a bake's time-segment bounds (`bake_format::BakedBounds`) from here on: an
    /// instance in view by its clip's bounds is drawn only when the box of the time segment its clip time falls
    /// in is in view too (crossfading instances are not refined). `clips` are the bake's clip records of any part
    /// (they agree in durations, looping and segments), one per clip of the crowd.
    ///
    /// # Errors
    ///
    /// [`Error::Path`] when the GPU-driven path is not enabled; [`Error::Bake`] and [`Error::Limit`] as
    /// `GpuCuller::set_segments`.
    pub fn set_segment_bounds(
        &mut self,
        device: &wgpu::Device,
        clips: &[ClipRecord],
        bounds: &bake_format::BakedBounds,
    ) -> Result<()> {
        let Some(g) = self.gpu_driven.as_mut() else {
            return Err(Error::Path {
                call: "set_segment_bounds",
                path: RenderPath::CpuCulled,
            });
        };
        g.culler.set_segments(device, clips, &bounds.segments)
    }

    /// Stops drawing the baked tier from a bake: it draws from the pose pool again.
    pub fn clear_bat(&mut self) {
        if let Some(g) = self.gpu_driven.as_mut()
            && g.bat.take().is_some()
        {
            g.generation += 1;
        }
    }

    /// True when the baked tier draws from a bake ([`CrowdRenderer::set_bat`]).
    pub fn has_bat(&self) -> bool {
        self.gpu_driven.as_ref().is_some_and(|g| g.bat.is_some())
    }
}

impl DeviceBat {
    /// Checks a packet's clips and palette size against the bake: entries per palette, then [`check_clips`].
    pub(crate) fn check(&self, clips: &[ResidentClip], skin_joints: usize) -> Result<()> {
        if skin_joints != self.joint_count as usize {
            return Err(Error::Bake {
                clip: None,
                what: "has another joint count than the packet's palettes",
            });
        }
        check_clips(&self.records, clips)
    }
}

/// Checks a packet's clips against a bake's clip table: the same count, durations (within
/// [`DURATION_TOLERANCE`]) and looping. O(clips).
pub(super) fn check_clips(records: &[ClipRecord], clips: &[ResidentClip]) -> Result<()> {
    if clips.len() != records.len() {
        return Err(Error::Bake {
            clip: None,
            what: "has another clip count than the crowd",
        });
    }
    for (c, (mine, theirs)) in records.iter().zip(clips).enumerate() {
        let tolerance = DURATION_TOLERANCE * theirs.duration.abs().max(1.0);
        if (mine.duration - theirs.duration).abs() > tolerance {
            return Err(Error::Bake {
                clip: Some(c),
                what: "lasts another duration than the crowd's clip",
            });
        }
        if mine.is_looping() != (theirs.looping != 0) {
            return Err(Error::Bake {
                clip: Some(c),
                what: "loops where the crowd's clip clamps, or the reverse",
            });
        }
    }
    Ok(())
}
