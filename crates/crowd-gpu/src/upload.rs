//! [`Uploads`]: what a renderer, a resident buffer or a view writes to the device, written straight into mapped
//! staging memory (`wgpu::util::StagingBelt`) and copied into place by commands recorded in the caller's encoder, so
//! that the writes take effect in the engine's order of encoders, not when the call was made.
//!
//! `queue.write_buffer` would take effect at the next `queue.submit`, before every command buffer of that submit: a
//! `prepare` of the next packet made between a cull and its draw would change what the draw reads. The belt's
//! chunks return for reuse once the encoder that copies out of them has been submitted and the GPU is done with
//! them (`StagingBelt::finish_and_recall_on_submit`); an encoder dropped unsubmitted frees its chunks.

use std::num::NonZeroU64;

/// A staging belt, made on first use with chunks of a given size (a write larger than a chunk gets a chunk of its
/// own, which is then reused). Its staging memory stays at its peak: a full resend of a large crowd keeps that
/// much mapped memory for later frames.
#[derive(Debug)]
pub(crate) struct Uploads {
    belt: Option<wgpu::util::StagingBelt>,
    chunk: u64,
}

impl Uploads {
    /// A belt of `chunk`-byte chunks, made on first use.
    pub(crate) fn new(chunk: u64) -> Self {
        Self { belt: None, chunk }
    }

    /// Starts one call's writes into `encoder`.
    pub(crate) fn begin<'a>(&'a mut self, device: &wgpu::Device, encoder: &'a mut wgpu::CommandEncoder) -> Staging<'a> {
        let chunk = self.chunk;
        let belt = self
            .belt
            .get_or_insert_with(|| wgpu::util::StagingBelt::new(device.clone(), chunk));
        Staging {
            belt,
            encoder,
            bytes: 0,
        }
    }
}

/// One call's writes: each [`Staging::push`] writes its bytes into the belt and records their copy into the
/// encoder at once, so pushes and the caller's own commands ([`Staging::encoder`]) keep their order.
pub(crate) struct Staging<'a> {
    belt: &'a mut wgpu::util::StagingBelt,
    encoder: &'a mut wgpu::CommandEncoder,
    bytes: u64,
}

impl Staging<'_> {
    /// Writes `data` into `target` at byte `offset`. `offset` and `data.len()` are multiples of 4, and the range
    /// lies inside `target` (the callers size their buffers first); empty data writes nothing.
    pub(crate) fn push(&mut self, target: &wgpu::Buffer, offset: u64, data: &[u8]) {
        let Some(size) = NonZeroU64::new(data.len() as u64) else {
            return;
        };
        debug_assert!(
            offset.is_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT)
                && size.get().is_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT)
        );
        debug_assert!(offset + size.get() <= target.size());
        self.belt
            .write_buffer(self.encoder, target, offset, size)
            .copy_from_slice(data);
        self.bytes += size.get();
    }

    /// The encoder, for commands that must come between writes (a growth copy before the writes into the new
    /// buffer).
    pub(crate) fn encoder(&mut self) -> &mut wgpu::CommandEncoder {
        self.encoder
    }

    /// Closes the call's writes (their chunks come back once the encoder is submitted); returns the bytes written.
    pub(crate) fn finish(self) -> u64 {
        self.belt.finish_and_recall_on_submit(self.encoder);
        self.bytes
    }
}
