//! The searches of each part of a plan: the BAT in every format the skeleton may use, the VAT searched as the f32
//! BAT against the budget less each format's quantization bound, and the sockets; each chosen format then gets the
//! full measurement.

use anim_pose::{Aabb, VirtualVertices};
use glam::{Affine3A, Vec3};
use rayon::prelude::*;
use skin_pack::{F16Kind, QT_F16_SCALE_TOLERANCE, choose_f16_format};

use super::count_search::{Outcome, Verdict};
use super::search::{Search, lerp_affine};
use super::{FormatPlan, Miss, PartPlan, SocketFormat, best_meeting, choose_part, format_plan, unusable};
use crate::bake::skin_frames;
use crate::measure::{ErrorAt, FrameVertices, Measured, check_times, largest_distance, playback_error};
use crate::{BatFormat, Error, Result, VatFormat, VatQuant, vat_position_error_bound};

impl Search<'_> {
    /// The BAT part: every format the skeleton may use, finest first; then the cheapest that meets the budget, whose
    /// counts get the full skinned measurement.
    pub(super) fn bat(&self, step: &(dyn Fn() + Sync)) -> Result<PartPlan<BatFormat>> {
        let source = self.source;
        let formats: Vec<BatFormat> = match self.options.bat_format {
            Some(f) => vec![f],
            None => vec![BatFormat::F32, BatFormat::Mat3x4F16, BatFormat::QtF16],
        };
        let uniform = choose_f16_format(source.skeleton, source.clips.iter().copied(), QT_F16_SCALE_TOLERANCE);
        let joints = source.skeleton.skin_joint_count() as u64;
        let thresholds = vec![self.budget; source.clips.len()];
        let mut plans: Vec<FormatPlan<BatFormat>> = Vec::new();
        for format in formats {
            if format == BatFormat::QtF16 && uniform != F16Kind::QtF16 {
                plans.push(unusable(format, "the skeleton's scale is not uniform"));
                continue;
            }
            let previous = best_meeting(&plans).map(|p| p.clips.as_slice());
            let frame_bytes = joints * format.entry_size() as u64;
            match self.format(format, frame_bytes, &thresholds, previous, |c, n| {
                self.probe(c, n, format, thresholds[c])
            }) {
                Ok(p) => plans.push(p),
                Err(Error::Skin(e)) => plans.push(unusable(format, &e.to_string())),
                Err(e) => return Err(e),
            }
        }
        let mut part = choose_part(plans);
        let chosen = &mut part.formats[part.chosen];
        if chosen.unusable.is_none() {
            let (format, frame_bytes) = (chosen.format, joints * chosen.format.entry_size() as u64);
            for (c, cand) in chosen.clips.iter_mut().enumerate() {
                self.verify(c, cand, frame_bytes, false, |n| self.measure_bat(c, n, format))?;
                step();
            }
            *chosen = format_plan(chosen.format, std::mem::take(&mut chosen.clips));
        }
        Ok(part)
    }

    /// The full skinned measurement of the BAT of clip `c` at `n` intervals: playback mixes the decoded rows of two
    /// frames, and skinning is linear in the matrices, so it mixes the two frames' skinned vertices (the same up to
    /// f32 rounding).
    fn measure_bat(&self, c: usize, n: u32, format: BatFormat) -> Result<(Measured, f32)> {
        let record = self.record(c, n);
        let source = self.source;
        let frames = self.frames(c, n, format)?;
        let positions: Vec<Vec<Vec3>> = frames
            .par_iter()
            .map_init(
                || source.skinned(),
                |skinned, palette| -> Result<Vec<Vec3>> {
                    source.skin(palette, skinned)?;
                    Ok(skinned.positions.clone())
                },
            )
            .collect::<Result<_>>()?;
        let seam_jump = if record.is_looping() {
            largest_distance(&positions[0], &positions[positions.len() - 1])?.0
        } else {
            0.0
        };
        let fv = FrameVertices {
            positions,
            normals: Vec::new(),
        };
        let times = check_times(source, c, &record);
        Ok((playback_error(source, c, &record, &fv, &times)?, seam_jump))
    }

    /// The VAT part: every format, finest first, searched as the f32 BAT with the budget less the format's position
    /// bound on the clip's box; then the cheapest that meets the budget, whose counts get the full measurement.
    ///
    /// A candidate's predicted error is the f32 playback's bound plus the quantization bound. Where the quantization
    /// bound alone is at least the budget, no rate helps ([`Miss::Quantization`]): the f32 playback is still bounded,
    /// pruned at the budget, so that the format's error is a finite bound too.
    pub(super) fn vat(&self, step: &(dyn Fn() + Sync)) -> Result<PartPlan<VatFormat>> {
        let formats: Vec<VatFormat> = match self.options.vat_format {
            Some(f) => vec![f],
            None => vec![VatFormat::Precise, VatFormat::Standard, VatFormat::Compact],
        };
        let boxes = (0..self.source.clips.len())
            .map(|c| self.clip_box(c))
            .collect::<Result<Vec<_>>>()?;
        let vertices = self.source.vertex_count() as u64;
        let mut plans: Vec<FormatPlan<VatFormat>> = Vec::new();
        for format in formats {
            let previous = best_meeting(&plans).map(|p| p.clips.as_slice());
            let frame_bytes = vertices * format.bytes_per_vertex() as u64;
            let quantization: Vec<f32> = boxes
                .iter()
                .map(|b| vat_position_error_bound(format, b.min, b.max))
                .collect();
            let thresholds: Vec<f32> = quantization.iter().map(|q| self.budget - q).collect();
            let mut p = self.format(format, frame_bytes, &thresholds, previous, |c, n| {
                if thresholds[c] > 0.0 {
                    return self.probe(c, n, BatFormat::F32, thresholds[c]);
                }
                let o = self.probe(c, n, BatFormat::F32, self.budget)?;
                Ok(Outcome {
                    verdict: Verdict::Hopeless,
                    why: Some(Miss::Quantization { bound: quantization[c] }),
                    ..o
                })
            })?;
            for (cand, q) in p.clips.iter_mut().zip(&quantization) {
                cand.predicted.distance += q;
            }
            plans.push(p);
        }
        let mut part = choose_part(plans);
        let chosen = &mut part.formats[part.chosen];
        let (format, frame_bytes) = (chosen.format, vertices * chosen.format.bytes_per_vertex() as u64);
        for (c, cand) in chosen.clips.iter_mut().enumerate() {
            self.verify(c, cand, frame_bytes, true, |n| self.measure_vat(c, n, format))?;
            step();
        }
        *chosen = format_plan(chosen.format, std::mem::take(&mut chosen.clips));
        Ok(part)
    }

    /// The box of clip `c`'s exactly skinned vertices at its frames at the first guess's rate and its key times.
    fn clip_box(&self, c: usize) -> Result<Aabb> {
        let (_, _, guess) = self.range(c);
        let record = self.record(c, guess);
        let times = check_times(self.source, c, &record);
        let source = self.source;
        times
            .par_iter()
            .map_init(
                || (source.pose_scratch(), source.skinned()),
                |(pose, skinned), &t| -> Result<Aabb> {
                    source.pose(c, t, pose)?;
                    source.skin(&pose.palette, skinned)?;
                    Ok(Aabb::from_points(&skinned.positions))
                },
            )
            .try_reduce(|| Aabb::EMPTY, |a, b| Ok(a.union(b)))
    }

    /// The full measurement of the VAT of clip `c` at `n` intervals in `format`: the exactly skinned frames,
    /// quantized in their box, decoded and mixed, positions and normals.
    fn measure_vat(&self, c: usize, n: u32, format: VatFormat) -> Result<(Measured, f32)> {
        let record = self.record(c, n);
        let exact = skin_frames(self.source, c, &record)?;
        let b = crate::bake::frames_box(&exact);
        let quant = VatQuant::new(b.min, b.max, format);
        let [s0, s1] = format.plane_texel_sizes();
        let (mut t0, mut t1) = (vec![0u8; s0], vec![0u8; s1]);
        let mut fv = FrameVertices {
            positions: Vec::with_capacity(exact.len()),
            normals: Vec::with_capacity(exact.len()),
        };
        for frame in &exact {
            let mut ps = Vec::with_capacity(frame.positions.len());
            let mut ns = Vec::with_capacity(frame.positions.len());
            for (p, nrm) in frame.positions.iter().zip(&frame.normals) {
                crate::quantize::encode_texel(format, *p, *nrm, &quant, &mut [&mut t0, &mut t1]);
                let (dp, dn) = format.decode(&t0, &t1, &quant);
                ps.push(dp);
                ns.push(dn);
            }
            fv.positions.push(ps);
            fv.normals.push(ns);
        }
        let seam_jump = if record.is_looping() {
            largest_distance(&fv.positions[0], &fv.positions[fv.positions.len() - 1])?.0
        } else {
            0.0
        };
        let times = check_times(self.source, c, &record);
        Ok((playback_error(self.source, c, &record, &fv, &times)?, seam_jump))
    }

    /// The sockets: f32 transforms at the fewest frames that keep points at the socket reach within the budget.
    pub(super) fn sockets(&self, joints: &[u16], step: &(dyn Fn() + Sync)) -> Result<PartPlan<SocketFormat>> {
        let frame_bytes = joints.len() as u64 * 48;
        let cubes = VirtualVertices::cubes(joints.len(), self.options.socket_reach_m);
        let thresholds = vec![self.budget; self.source.clips.len()];
        let p = self.format(SocketFormat::F32, frame_bytes, &thresholds, None, |c, n| {
            self.measure_sockets(c, n, joints, &cubes)
        })?;
        (0..self.source.clips.len()).for_each(|_| step());
        Ok(PartPlan {
            chosen: 0,
            formats: vec![p],
        })
    }

    /// Measures socket transforms of clip `c` at `n` intervals on cubes at the socket reach.
    fn measure_sockets(&self, c: usize, n: u32, joints: &[u16], cubes: &VirtualVertices) -> Result<Outcome> {
        let record = self.record(c, n);
        let source = self.source;
        let socket = |model: &[Affine3A], out: &mut Vec<Affine3A>| {
            out.clear();
            out.extend(joints.iter().map(|&j| source.root * model[usize::from(j)]));
        };
        let frames: Vec<Vec<Affine3A>> = (0..record.frame_count)
            .into_par_iter()
            .map_init(
                || source.pose_scratch(),
                |pose, k| -> Result<Vec<Affine3A>> {
                    let model = source.pose(c, record.frame_time(k), pose)?;
                    let mut out = Vec::new();
                    socket(model, &mut out);
                    Ok(out)
                },
            )
            .collect::<Result<_>>()?;
        let times = check_times(source, c, &record);
        let error = times
            .par_iter()
            .map_init(
                || (source.pose_scratch(), Vec::new(), Vec::new()),
                |(pose, exact, played), &t| -> Result<ErrorAt> {
                    let local = record.local_time(t);
                    let model = source.pose(c, local, pose)?;
                    socket(model, exact);
                    let pair = record.frame_at(t);
                    let (a, b) = (&frames[pair.frame as usize], &frames[pair.frame as usize + 1]);
                    played.clear();
                    played.extend(a.iter().zip(b).map(|(a, b)| lerp_affine(a, b, pair.fraction)));
                    let e = cubes.largest_distance(played, exact)?;
                    Ok(ErrorAt {
                        distance: e.distance,
                        time: local,
                        vertex: e.skin_joint as u32,
                    })
                },
            )
            .try_reduce(ErrorAt::default, |a, b| Ok(a.max(b)))?;
        Ok(Outcome {
            verdict: if error.distance <= self.budget {
                Verdict::Meets
            } else {
                Verdict::Misses
            },
            why: None,
            bound: error.distance,
            seam_jump: 0.0,
        })
    }
}
