//! Sockets: chosen joints' transforms at every frame, so that attachments (a sword in the hand, a hat on the head)
//! follow baked playback on the GPU.

use glam::{Affine3A, Vec4};
use skin_pack::PaletteEntry;

use crate::bat::{affine_from_rows, mix_rows};
use crate::{ClipRecord, Error, Result};

/// The transforms of a bake's sockets at every frame of every clip.
///
/// A socket is a skeleton joint chosen by name. Its transform is the joint's model-space matrix in instance space,
/// `root_transform × model[joint]` (not a skinning matrix: no inverse bind matrix), so an attachment modelled in the
/// joint's space is placed by `instance × socket × attachment`.
///
/// # Layout
///
/// `transforms` holds `socket_count` [`PaletteEntry`]s (f32 3×4, three row `vec4<f32>`, 48 B) per frame: socket `s`
/// at the part's frame `f` is `transforms[f · socket_count + s]`; clip `c`'s frame `k` is the part's frame
/// `clips[c].first_frame + k`. Playback mixes the rows of the two frames around a time, as [`SocketData::sample`]
/// does.
#[derive(Clone, Debug, PartialEq)]
pub struct SocketData {
    /// The joint name of each socket.
    pub names: Vec<String>,
    /// The skeleton joint of each socket.
    pub joints: Vec<u16>,
    /// One record per clip, in the bake's clip order.
    pub clips: Vec<ClipRecord>,
    /// Frame-major transforms (see the layout above).
    pub transforms: Vec<PaletteEntry>,
}

impl SocketData {
    /// The sockets.
    pub fn socket_count(&self) -> usize {
        self.names.len()
    }

    /// The frames stored, over all clips.
    pub fn frame_count(&self) -> usize {
        self.transforms.len().checked_div(self.socket_count()).unwrap_or(0)
    }

    /// The size of `transforms` in bytes.
    pub fn byte_len(&self) -> usize {
        self.transforms.len() * size_of::<PaletteEntry>()
    }

    /// The transform of socket `socket` of clip `clip` at clip time `t`, as the GPU plays it back.
    ///
    /// # Errors
    ///
    /// [`Error::ClipOutOfRange`] for a clip past the table, [`Error::InvalidField`] for a socket or frame past the
    /// transforms.
    pub fn sample(&self, clip: usize, t: f32, socket: usize) -> Result<Affine3A> {
        let record = self.clips.get(clip).ok_or(Error::ClipOutOfRange {
            clip,
            count: self.clips.len(),
        })?;
        let pair = record.frame_at(t);
        let rows = |frame: u32| -> Result<[Vec4; 3]> {
            let n = self.socket_count();
            let entry = (socket < n)
                .then(|| (frame as usize).checked_mul(n)?.checked_add(socket))
                .flatten()
                .and_then(|i| self.transforms.get(i));
            entry
                .map(|e| e.rows.map(Vec4::from))
                .ok_or_else(|| Error::InvalidField {
                    what: format!("socket {socket} at frame {frame}"),
                    value: u64::from(frame),
                    rule: "is past the end of the socket transforms",
                })
        };
        let (a, b) = (rows(pair.frame)?, rows(pair.frame + 1)?);
        Ok(affine_from_rows(&mix_rows(&a, &b, pair.fraction)))
    }
}
