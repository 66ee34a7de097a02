//! [`Bake::validate`]: every rule a bake must keep so that playback needs no checks, in one place; the file loader
//! runs it on everything it reads, and the writer on everything it writes.

use crate::{Bake, BatData, ClipRecord, Error, Result, SocketData, VatData, VatLayout};

/// An [`Error::InvalidField`].
fn invalid(what: impl Into<String>, value: u64, rule: &'static str) -> Error {
    Error::InvalidField {
        what: what.into(),
        value,
        rule,
    }
}

impl Bake {
    /// Checks every rule of the in-memory bake:
    ///
    /// - every clip has a finite, non-negative duration and a name;
    /// - every part has one [`ClipRecord`] per clip, whose frames follow one another from frame 0 and cover the
    ///   part's frames exactly, with at least 2 frames each, the clip's duration and looping flag, a finite
    ///   non-negative rate (`(frame_count − 1) / duration` within a relative 1e-5, or 0 for a clip of zero
    ///   duration), segments inside the bounds and a zero `reserved`; the parts agree on each clip's segments;
    /// - the bounds have one finite box per clip and per segment (`min ≤ max`);
    /// - the BAT has at least one joint and exactly `frames × joints` entries, each decoding to finite rows;
    /// - the VAT's layout is the one [`VatLayout::new`] gives for its width limit (rows wrap before `width`), its
    ///   planes have exactly the layout's texels, its vertices are the meshes', and every quantization box is
    ///   finite with non-negative steps;
    /// - the meshes' vertices follow one another from vertex 0;
    /// - the sockets have names, and exactly `frames × sockets` finite transforms.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidField`] naming the first field that breaks a rule.
    pub fn validate(&self) -> Result<()> {
        let clips = self.clips.len();
        if !(self.budget_mm.is_finite() && self.budget_mm > 0.0) {
            return Err(invalid(
                "budget",
                u64::from(self.budget_mm.to_bits()),
                "must be finite and positive",
            ));
        }
        for (c, clip) in self.clips.iter().enumerate() {
            if !(clip.duration.is_finite() && clip.duration >= 0.0) {
                return Err(invalid(
                    format!("clip {c} duration"),
                    u64::from(clip.duration.to_bits()),
                    "must be finite and non-negative",
                ));
            }
        }
        let mut first = 0u64;
        for (m, mesh) in self.meshes.iter().enumerate() {
            if u64::from(mesh.first_vertex) != first {
                return Err(invalid(
                    format!("mesh {m} first vertex"),
                    u64::from(mesh.first_vertex),
                    "must follow the previous mesh's vertices",
                ));
            }
            first += u64::from(mesh.vertex_count);
        }
        let vertices = first;
        if self.bounds.clips.len() != clips {
            return Err(invalid(
                "clip bounds",
                self.bounds.clips.len() as u64,
                "must be one per clip",
            ));
        }
        for (what, boxes) in [
            ("clip bounds", &self.bounds.clips),
            ("segment bounds", &self.bounds.segments),
        ] {
            for (i, b) in boxes.iter().enumerate() {
                let ok = b.min.iter().chain(&b.max).all(|x| x.is_finite())
                    && (0..3).all(|k| b.min[k] <= b.max[k])
                    && b.min[3] == 0.0
                    && b.max[3] == 0.0;
                if !ok {
                    return Err(invalid(
                        format!("{what} {i}"),
                        i as u64,
                        "must be finite with min <= max and w = 0",
                    ));
                }
            }
        }
        let mut segments: Option<Vec<(u32, u32)>> = None;
        let mut check_records = |part: &str, records: &[ClipRecord], frames: u64| -> Result<()> {
            self.check_records(part, records, frames)?;
            let s: Vec<(u32, u32)> = records.iter().map(|r| (r.first_segment, r.segment_count)).collect();
            match &segments {
                Some(prev) if *prev != s => Err(invalid(
                    format!("{part} clip segments"),
                    0,
                    "must equal the other parts' segments",
                )),
                _ => {
                    segments = Some(s);
                    Ok(())
                }
            }
        };
        if let Some(bat) = &self.bat {
            let frames = validate_bat(bat)?;
            check_records("BAT", &bat.clips, frames)?;
        }
        if let Some(vat) = &self.vat {
            let frames = validate_vat(vat, vertices)?;
            check_records("VAT", &vat.clips, frames)?;
        }
        if let Some(sockets) = &self.sockets {
            let frames = validate_sockets(sockets)?;
            check_records("socket", &sockets.clips, frames)?;
        }
        Ok(())
    }

    /// The clip table rules of one part with `frames` frames.
    fn check_records(&self, part: &str, records: &[ClipRecord], frames: u64) -> Result<()> {
        if records.len() != self.clips.len() {
            return Err(invalid(
                format!("{part} clip table length"),
                records.len() as u64,
                "must equal the number of clips",
            ));
        }
        let mut next = 0u64;
        for (c, (r, clip)) in records.iter().zip(&self.clips).enumerate() {
            let field = |name: &str| format!("{part} clip {c} {name}");
            if u64::from(r.first_frame) != next {
                return Err(invalid(
                    field("first frame"),
                    u64::from(r.first_frame),
                    "must follow the previous clip's frames",
                ));
            }
            if r.frame_count < 2 {
                return Err(invalid(
                    field("frame count"),
                    u64::from(r.frame_count),
                    "must be at least 2",
                ));
            }
            next += u64::from(r.frame_count);
            if r.duration.to_bits() != clip.duration.to_bits() {
                return Err(invalid(
                    field("duration"),
                    u64::from(r.duration.to_bits()),
                    "must equal the clip's",
                ));
            }
            if r.flags != u32::from(clip.looping) {
                return Err(invalid(
                    field("flags"),
                    u64::from(r.flags),
                    "must be the clip's looping flag",
                ));
            }
            let expected = if clip.duration > 0.0 {
                f64::from(r.frame_count - 1) / f64::from(clip.duration)
            } else {
                0.0
            };
            let rate = f64::from(r.rate_hz);
            if !(r.rate_hz.is_finite() && r.rate_hz >= 0.0 && (rate - expected).abs() <= 1e-5 * expected.max(1.0)) {
                return Err(invalid(
                    field("rate"),
                    u64::from(r.rate_hz.to_bits()),
                    "must be (frame count - 1) / duration",
                ));
            }
            let end = u64::from(r.first_segment) + u64::from(r.segment_count);
            if r.segment_count == 0 || end > self.bounds.segments.len() as u64 {
                return Err(invalid(
                    field("segments"),
                    end,
                    "must be at least one, inside the segment bounds",
                ));
            }
            if r.reserved != 0 {
                return Err(invalid(field("reserved"), u64::from(r.reserved), "must be zero"));
            }
        }
        if next != frames {
            return Err(invalid(
                format!("{part} frames"),
                frames,
                "must equal the clips' frames",
            ));
        }
        Ok(())
    }
}

/// The BAT rules; returns its frames.
fn validate_bat(bat: &BatData) -> Result<u64> {
    if bat.joint_count == 0 {
        return Err(invalid("BAT joint count", 0, "must be at least 1"));
    }
    let words = bat.format.entry_words();
    let per_frame = bat.joint_count as usize * words;
    if !bat.entries.len().is_multiple_of(per_frame) {
        return Err(invalid(
            "BAT entry words",
            bat.entries.len() as u64,
            "must be whole frames of joint_count entries",
        ));
    }
    for (i, entry) in bat.entries.chunks_exact(words).enumerate() {
        let rows = bat.format.decode_rows(entry);
        if !rows.iter().all(|r| r.is_finite()) {
            return Err(invalid(
                format!("BAT entry {i}"),
                i as u64,
                "must decode to finite rows",
            ));
        }
    }
    Ok((bat.entries.len() / per_frame) as u64)
}

/// The VAT rules; returns its frames.
fn validate_vat(vat: &VatData, vertices: u64) -> Result<u64> {
    let l = vat.layout;
    if u64::from(l.vertex_count) != vertices {
        return Err(invalid(
            "VAT vertex count",
            u64::from(l.vertex_count),
            "must equal the meshes' vertices",
        ));
    }
    // The layout must be the one the formula gives for its own width and the rows of its layers.
    let max_height = l.frames_per_layer.checked_mul(l.rows_per_frame).unwrap_or(0);
    let expected = VatLayout::new(l.vertex_count, l.frame_count, l.width, max_height.max(1))
        .map_err(|_| invalid("VAT layout", u64::from(l.width), "must be a valid layout"))?;
    if expected != l {
        return Err(invalid(
            "VAT layout",
            u64::from(l.width),
            "must follow the layout formula",
        ));
    }
    let texels = l
        .texel_count()
        .ok_or_else(|| invalid("VAT texels", u64::from(l.width), "must fit in memory"))?;
    for (i, size) in vat.format.plane_texel_sizes().into_iter().enumerate() {
        let expected = texels.saturating_mul(size);
        if vat.planes[i].len() != expected {
            return Err(invalid(
                format!("VAT plane {i} bytes"),
                vat.planes[i].len() as u64,
                "must be the layout's texels times the texel size",
            ));
        }
    }
    if vat.quant.len() != vat.clips.len() {
        return Err(invalid(
            "VAT quantization boxes",
            vat.quant.len() as u64,
            "must be one per clip",
        ));
    }
    for (c, q) in vat.quant.iter().enumerate() {
        let ok = q.min.iter().chain(&q.step).all(|x| x.is_finite())
            && q.step.iter().all(|&s| s >= 0.0)
            && q.min[3] == 0.0
            && q.step[3] == 0.0;
        if !ok {
            return Err(invalid(
                format!("VAT clip {c} quantization"),
                c as u64,
                "must be finite with non-negative steps and w = 0",
            ));
        }
    }
    Ok(u64::from(l.frame_count))
}

/// The socket rules; returns their frames.
fn validate_sockets(sockets: &SocketData) -> Result<u64> {
    let n = sockets.names.len();
    if n == 0 || sockets.joints.len() != n {
        return Err(invalid(
            "sockets",
            n as u64,
            "must have at least one socket, each with a joint",
        ));
    }
    if !sockets.transforms.len().is_multiple_of(n) {
        return Err(invalid(
            "socket transforms",
            sockets.transforms.len() as u64,
            "must be whole frames of every socket",
        ));
    }
    if let Some(i) = sockets
        .transforms
        .iter()
        .position(|t| !t.rows.iter().flatten().all(|x| x.is_finite()))
    {
        return Err(invalid(format!("socket transform {i}"), i as u64, "must be finite"));
    }
    Ok((sockets.transforms.len() / n) as u64)
}
