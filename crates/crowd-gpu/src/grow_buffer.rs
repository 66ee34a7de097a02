//! [`GrowBuffer`]: a device buffer that grows by doubling and is written only where the packet says it changed.

use skin_pack::ByteRange;

use crate::upload::Staging;

/// The smallest buffer: 256 bytes, so that a binding of an empty buffer is valid and sub-allocations stay aligned.
pub(crate) const MIN_BUFFER_BYTES: u64 = 256;

/// A device buffer of `usage | COPY_DST`: [`MIN_BUFFER_BYTES`] doubled as often as needed, and past `window`
/// bytes rounded up to a multiple of `window` (a multiple of 256), so that every window at a multiple of `window`
/// lies inside it.
#[derive(Debug)]
pub(crate) struct GrowBuffer {
    label: &'static str,
    usage: wgpu::BufferUsages,
    window: u64,
    pub buffer: wgpu::Buffer,
    /// Bumped whenever `buffer` is recreated: bind groups made before hold the old one.
    pub generation: u64,
}

impl GrowBuffer {
    pub fn new(device: &wgpu::Device, label: &'static str, usage: wgpu::BufferUsages, window: u64) -> Self {
        Self {
            label,
            usage,
            window: window.max(MIN_BUFFER_BYTES),
            buffer: create(device, label, usage, MIN_BUFFER_BYTES),
            generation: 0,
        }
    }

    /// The buffer's size in bytes.
    pub fn size(&self) -> u64 {
        self.buffer.size()
    }

    /// The bytes a binding of the buffer covers: the whole buffer, at most `window`.
    pub fn window(&self) -> u64 {
        self.size().min(self.window)
    }

    /// Makes the buffer hold at least `bytes`, doubling; returns true when it was recreated (its bind groups must
    /// be too, and its old contents are gone: the packet rewrites every range a draw reads each frame). The caller
    /// checked that [`GrowBuffer::size_for`] is within its limits.
    pub fn reserve(&mut self, device: &wgpu::Device, bytes: u64, max_size: u64) -> bool {
        if bytes <= self.size() {
            return false;
        }
        self.buffer = create(device, self.label, self.usage, self.size_for(bytes, max_size));
        self.generation += 1;
        true
    }

    /// The size [`GrowBuffer::reserve`] gives a buffer for `bytes`: [`buffer_size`], or when that is past
    /// `max_size` the smallest size that holds `bytes` in whole windows (which the caller checks against
    /// `max_size`).
    pub fn size_for(&self, bytes: u64, max_size: u64) -> u64 {
        size_within(self.window, bytes, max_size)
    }

    /// Stages the ranges `dirty` of `data` at the same offsets; returns the bytes staged. Ranges must lie within
    /// `data` and the buffer (the caller reserved `data.len()`), and start and end on multiples of 4.
    pub fn stage_ranges(&self, staging: &mut Staging<'_>, data: &[u8], dirty: &[ByteRange]) -> u64 {
        let mut written = 0;
        for r in dirty {
            if r.is_empty() {
                continue;
            }
            staging.push(&self.buffer, r.start as u64, &data[r.as_range()]);
            written += r.len() as u64;
        }
        written
    }
}

/// The size of a buffer holding `bytes` with windows of `window` bytes: 256 doubled until it holds them, and
/// past `window` rounded up to whole windows.
pub(crate) fn buffer_size(window: u64, bytes: u64) -> u64 {
    let mut size = MIN_BUFFER_BYTES;
    while size < bytes {
        size *= 2;
    }
    if size > window {
        size.next_multiple_of(window)
    } else {
        size
    }
}

/// [`buffer_size`], or when that is past `max_size` the smallest size holding `bytes` in 256-byte steps (or
/// `max_size` rounded down to 4 when that holds them and the step does not), in whole windows past one window
/// (which may itself be past `max_size`: the caller checks).
pub(crate) fn size_within(window: u64, bytes: u64, max_size: u64) -> u64 {
    let size = buffer_size(window, bytes);
    if size <= max_size {
        return size;
    }
    let tight = bytes.next_multiple_of(MIN_BUFFER_BYTES);
    if tight > window {
        bytes.next_multiple_of(window)
    } else if tight > max_size && bytes <= max_size / 4 * 4 {
        // A limit that is not a multiple of 256: the largest whole-word size within it still holds the bytes.
        max_size / 4 * 4
    } else {
        tight
    }
}

fn create(device: &wgpu::Device, label: &'static str, usage: wgpu::BufferUsages, size: u64) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size,
        usage: usage | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

#[cfg(test)]
mod tests {
    use super::{buffer_size as size_for, size_within};

    #[test]
    fn sizes_past_the_largest_buffer_fit_tightly() {
        // Doubling 600 MB would give 1 GiB, past a 700 MB limit: the buffer holds the bytes in whole windows.
        let window = 128 << 20;
        assert_eq!(size_within(window, 600 << 20, 700 << 20), 640 << 20);
        assert_eq!(
            size_within(window, 300 << 20, 1 << 30),
            512 << 20,
            "doubling where it fits"
        );
        // Without windows (u64::MAX / 2), 256-byte steps.
        assert_eq!(size_within(u64::MAX / 2, 3000, 3500), 3072);
        // A limit that is not a multiple of 256: the buffer stops at the limit (in whole words).
        assert_eq!(size_within(u64::MAX / 2, 60_000, 60_003), 60_000);
        assert_eq!(
            size_within(u64::MAX / 2, 33_280, 32_768),
            33_280,
            "past the limit: the caller refuses"
        );
        // Whole windows past the limit are reported as they are, for the caller to refuse.
        assert_eq!(size_within(window, 700 << 20, 700 << 20), 768 << 20);
    }

    #[test]
    fn sizes_double_and_hold_whole_windows() {
        assert_eq!(size_for(1 << 27, 0), 256);
        assert_eq!(size_for(1 << 27, 257), 512);
        assert_eq!(size_for(1 << 27, 3 << 20), 4 << 20);
        // A window that is not a power of two: sizes past it are whole windows.
        assert_eq!(size_for(9984, 9000), 9984 * 2);
        assert_eq!(size_for(9984, 30_000), 9984 * 4);
        for bytes in [1, 255, 256, 9983, 9984, 9985, 100_000] {
            let s = size_for(9984, bytes);
            assert!(s >= bytes && (s <= 9984 || s.is_multiple_of(9984)), "{bytes} -> {s}");
        }
    }
}
