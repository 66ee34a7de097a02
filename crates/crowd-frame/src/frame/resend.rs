//! Full resends of a GPU-driven crowd: what makes the next packet carry every slot ([`CrowdFrame::resend_all`],
//! a [`ResendRequest`] from the render thread, a moved clock epoch, a step that failed after taking the store's
//! changes), the resend epoch, and the frame each packet's changes build on.
//!
//! A renderer holds the crowd as deltas. It applies a packet only on top of the state the packet's changes start
//! from ([`ResidentChanges::since`](crate::ResidentChanges::since) within the same
//! [`epoch`](crate::ResidentChanges::epoch)), or any full packet; anything else (a packet that was not prepared,
//! a `prepare` that failed, a renderer made after the crowd) is reported and repaired by a full resend.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use skin_pack::PaletteFormat;

use super::CrowdFrame;

/// Asks a crowd for a full resend from another thread: the next GPU-driven packet after [`ResendRequest::request`]
/// carries every slot. The render thread keeps one ([`CrowdFrame::resend_requester`]) and calls it when its
/// renderer reports that it is out of step with the crowd. Cloning it shares the request.
#[derive(Clone, Debug, Default)]
pub struct ResendRequest(Arc<AtomicBool>);

impl ResendRequest {
    /// Asks for a full resend in the crowd's next step.
    pub fn request(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// Takes the request, if one was made.
    fn take(&self) -> bool {
        self.0.swap(false, Ordering::AcqRel)
    }
}

/// The resend state of a crowd.
#[derive(Debug, Default)]
pub(super) struct Resend {
    /// Requests from the render thread.
    requested: ResendRequest,
    /// A full resend is owed: asked for by the game, the clock or a step that failed after taking the changes.
    owed: bool,
    /// Bumped by every full resend.
    epoch: u32,
    /// The frame number of the last published GPU-driven packet.
    last_frame: Option<u64>,
}

/// What the step that takes the changes hands over: whether the packet is full, its epoch and the frame its changes
/// build on.
#[derive(Clone, Copy, Debug)]
pub(super) struct ResendTicket {
    pub(super) full: bool,
    pub(super) epoch: u32,
    pub(super) since: u64,
}

impl Resend {
    /// Whether this step's packet is full, with its epoch and base frame (`frame` is the packet's own number). From
    /// here until [`Resend::published`] a full resend is owed, so that a step that fails after taking the store's
    /// changes makes the next packet full.
    pub(super) fn begin(&mut self, frame: u64) -> ResendTicket {
        let full = self.requested.take() | self.owed | self.last_frame.is_none();
        if full {
            self.epoch = self.epoch.wrapping_add(1);
        }
        self.owed = true;
        ResendTicket {
            full,
            epoch: self.epoch,
            since: self.last_frame.unwrap_or(frame),
        }
    }

    /// The packet of `frame` was published.
    pub(super) fn published(&mut self, frame: u64) {
        self.owed = false;
        self.last_frame = Some(frame);
    }

    /// The clock's epoch moved: every start time changed.
    pub(super) fn rebased(&mut self) {
        self.owed = true;
    }
}

impl<F: PaletteFormat> CrowdFrame<F> {
    /// Makes the next GPU-driven packet a full resend: every slot's state, whatever changed. A renderer that missed
    /// changes (a packet that was not prepared, a failed `prepare`, a renderer made after the crowd or after a lost
    /// device) takes it whatever it held before. O(1) here; the packet costs O(slots).
    pub fn resend_all(&mut self) {
        self.resend.owed = true;
    }

    /// A handle the render thread can ask for a full resend with (see [`ResendRequest`]).
    pub fn resend_requester(&self) -> ResendRequest {
        self.resend.requested.clone()
    }
}
