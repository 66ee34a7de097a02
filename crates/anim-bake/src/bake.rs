//! The bake: encode every part at the planned rates and formats, measure it against the exact clips, and report.

use anim_pose::{Aabb, Looping, Model};
use glam::{Affine3A, Vec3, Vec3A};
use rayon::prelude::*;
use skin_pack::{F16Format, Mat3x4F16, PaletteEntry, QtF16};

use crate::measure::{ErrorAt, check_times, largest_distance};
use crate::plan::{chosen_intervals, plan_source};
use crate::report::{BakeReport, ClipReport, PartReport};
use crate::source::{Skinned, Source};
use crate::{
    BakeOptions, BakedBounds, BakedClip, BakedMesh, BatData, BatFormat, BoundsRecord, CLIP_LOOPING, ClipRecord, Error,
    Progress, ResolvedBudget, Result, SocketData, Stage, VatData, VatFormat, VatLayout, VatQuant,
};

/// The rates and formats of a bake: per part, the format and each clip's intervals.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Choice {
    /// Per clip, whether it loops.
    pub looping: Vec<bool>,
    /// The BAT's format and each clip's intervals.
    pub bat: Option<(BatFormat, Vec<u32>)>,
    /// The VAT's format and each clip's intervals.
    pub vat: Option<(VatFormat, Vec<u32>)>,
    /// The sockets' skeleton joints and each clip's intervals.
    pub sockets: Option<(Vec<u16>, Vec<u32>)>,
}

/// Bakes skeleton `options.skeleton` of `model`: plans each clip's rate and each part's format ([`crate::plan`]),
/// encodes every part, measures it against the exact clips (literally as the GPU plays it back:
/// [`BatData::sample_palette`], [`VatData::sample`], [`SocketData::sample`]) and returns the bake with its report.
///
/// `progress` is called from the calling thread and from rayon's workers as steps finish. The work runs on the
/// current rayon pool (call it inside `ThreadPool::install` to choose the threads).
///
/// The report's distances are in model units, measured against the budget the plan resolved
/// (`BakeReport::budget`); the bake file records it in thousandths of a model unit (`Bake::budget_mm`: millimetres
/// for a model in metres).
///
/// # Errors
///
/// - [`Error::InvalidOption`] for an option out of range, naming it.
/// - [`Error::BudgetResolution`] for a relative or pixel budget on a model whose rest pose has no extent.
/// - [`Error::NoSkin`], [`Error::NoClips`], [`Error::NoMeshes`], [`Error::NotFinite`], [`Error::JointOutOfRange`]
///   and anim-pose's validation errors for bad input.
/// - [`Error::UnknownSocket`] for a socket name the skeleton lacks.
/// - [`Error::Skin`] when a forced f16 format cannot hold a palette (`F16Format::check`).
/// - [`Error::TooLarge`] or [`Error::DeviceLimit`] when a part does not fit.
pub fn bake(
    model: &Model,
    options: &BakeOptions,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<(crate::Bake, BakeReport)> {
    options.validate()?;
    let source = Source::new(model, options.skeleton)?;
    let plan = plan_source(&source, options, progress)?;
    if let Some(l) = plan.limits.iter().find(|l| !l.fits()) {
        return Err(Error::DeviceLimit {
            what: l.what,
            needed: l.needed,
            limit: l.limit,
        });
    }
    if let Some(p) = &plan.bat
        && p.chosen().unusable.is_some()
    {
        // A forced format that cannot hold the palettes: encoding it names the entry at fault.
        let intervals: Vec<u32> = source.clips.iter().map(|c| fixed_intervals(c.duration, 1.0)).collect();
        let looping: Vec<bool> = plan.clips.iter().map(|c| c.looping).collect();
        let records = clip_records(&source, &intervals, &looping, options.segments)?;
        encode_bat(&source, p.chosen().format, &records)?;
        return Err(Error::InvalidOption {
            what: "bat_format",
            value: f64::from(p.chosen().format as u32),
            rule: "the format cannot hold this skeleton's palettes",
        });
    }
    let choice = Choice {
        looping: plan.clips.iter().map(|c| c.looping).collect(),
        bat: plan.bat.as_ref().map(|p| (p.chosen().format, chosen_intervals(p))),
        vat: plan.vat.as_ref().map(|p| (p.chosen().format, chosen_intervals(p))),
        sockets: plan
            .sockets
            .as_ref()
            .map(|p| Ok::<_, Error>((socket_joints(&source, options)?, chosen_intervals(p))))
            .transpose()?,
    };
    encode(&source, options, plan.budget, &choice, progress)
}

/// The intervals of a clip of `duration` seconds at `hz`: `⌈duration · hz⌉`, at least 1, ignoring a relative excess
/// of 1e-6 (a 1.1 s clip, which f32 stores as 1.10000002 s, gets 33 intervals at 30 Hz, not 34).
pub(crate) fn fixed_intervals(duration: f32, hz: f32) -> u32 {
    let n = (f64::from(duration) * f64::from(hz) * (1.0 - 1e-6)).ceil();
    if n.is_finite() && n >= 1.0 {
        n.min(f64::from(u32::MAX - 1)) as u32
    } else {
        1
    }
}

/// Whether clip `c` loops: as forced by the options, or (`Looping::Auto`) when every vertex at the clip's duration
/// is within `budget` (model units) of itself at time 0.
pub(crate) fn loops(source: &Source<'_>, c: usize, options: &BakeOptions, budget: f32) -> Result<bool> {
    let clip = source.clips[c];
    if clip.duration <= 0.0 {
        return Ok(false);
    }
    match options.looping {
        Looping::Yes => Ok(true),
        Looping::No => Ok(false),
        Looping::Auto => Ok(seam_distance(source, c)? <= budget),
    }
}

/// The largest distance between a vertex exactly skinned at clip `c`'s start and at its duration.
pub(crate) fn seam_distance(source: &Source<'_>, c: usize) -> Result<f32> {
    let mut pose = source.pose_scratch();
    let (mut a, mut b) = (source.skinned(), source.skinned());
    source.pose(c, 0.0, &mut pose)?;
    source.skin(&pose.palette, &mut a)?;
    source.pose(c, source.clips[c].duration, &mut pose)?;
    source.skin(&pose.palette, &mut b)?;
    Ok(largest_distance(&a.positions, &b.positions)?.0)
}

/// The skeleton joints of the options' sockets.
pub(crate) fn socket_joints(source: &Source<'_>, options: &BakeOptions) -> Result<Vec<u16>> {
    options
        .sockets
        .iter()
        .map(|name| {
            source
                .skeleton
                .find_joint(name)
                .map(|j| j as u16)
                .ok_or_else(|| Error::UnknownSocket {
                    name: name.clone(),
                    skeleton: source.skeleton.name.clone(),
                })
        })
        .collect()
}

/// The clip table of a part: each clip's frames one after another.
pub(crate) fn clip_records(
    source: &Source<'_>,
    intervals: &[u32],
    looping: &[bool],
    segments: u32,
) -> Result<Vec<ClipRecord>> {
    let mut first = 0u32;
    let too_large = || Error::TooLarge {
        what: "frames of a part (over all clips)",
    };
    source
        .clips
        .iter()
        .zip(intervals)
        .zip(looping)
        .enumerate()
        .map(|(c, ((clip, &n), &looping))| {
            let frame_count = n.checked_add(1).ok_or_else(too_large)?;
            let record = ClipRecord {
                first_frame: first,
                frame_count,
                rate_hz: if clip.duration > 0.0 {
                    (f64::from(n) / f64::from(clip.duration)) as f32
                } else {
                    0.0
                },
                duration: clip.duration,
                flags: if looping { CLIP_LOOPING } else { 0 },
                first_segment: u32::try_from(c)
                    .ok()
                    .and_then(|c| c.checked_mul(segments))
                    .ok_or_else(too_large)?,
                segment_count: segments,
                reserved: 0,
            };
            first = first.checked_add(frame_count).ok_or_else(too_large)?;
            Ok(record)
        })
        .collect()
}

/// `a · b` as `usize`, or [`Error::TooLarge`].
fn mul(a: usize, b: usize, what: &'static str) -> Result<usize> {
    a.checked_mul(b).ok_or(Error::TooLarge { what })
}

/// Checks that `m`, the skinning matrix of skin joint `index`, can be encoded in `format` within its range and
/// bounds (skin-pack's `F16Format::check`, translation origin zero; the f32 entry only needs `m` finite), before
/// [`BatFormat::encode_into`] encodes it.
pub(crate) fn check_bat_entry(format: BatFormat, m: &Affine3A, index: usize) -> Result<()> {
    match format {
        BatFormat::F32 if m.is_finite() => Ok(()),
        BatFormat::F32 => Err(Error::NotFinite {
            what: "skinning matrix of skin joint",
            index,
        }),
        BatFormat::Mat3x4F16 => Ok(Mat3x4F16::check(m, Vec3A::ZERO, index)?),
        BatFormat::QtF16 => Ok(QtF16::check(m, Vec3A::ZERO, index)?),
    }
}

/// Encodes the BAT of `format` for the clip table `records`.
pub(crate) fn encode_bat(source: &Source<'_>, format: BatFormat, records: &[ClipRecord]) -> Result<BatData> {
    let joints = source.skeleton.skin_joint_count();
    let frames: usize = records.iter().map(|r| r.frame_count as usize).sum();
    let words = mul(mul(frames, joints, "BAT entries")?, format.entry_words(), "BAT words")?;
    let mut entries = Vec::with_capacity(words);
    for (c, record) in records.iter().enumerate() {
        let chunks: Vec<Vec<u32>> = (0..record.frame_count)
            .into_par_iter()
            .map_init(
                || source.pose_scratch(),
                |pose, k| -> Result<Vec<u32>> {
                    source.pose(c, record.frame_time(k), pose)?;
                    let mut out = Vec::with_capacity(joints * format.entry_words());
                    for (j, m) in pose.palette.iter().enumerate() {
                        check_bat_entry(format, m, j)?;
                        format.encode_into(m, &mut out);
                    }
                    Ok(out)
                },
            )
            .collect::<Result<_>>()?;
        for chunk in chunks {
            entries.extend_from_slice(&chunk);
        }
    }
    Ok(BatData {
        format,
        joint_count: u32::try_from(joints).map_err(|_| Error::TooLarge { what: "skin joints" })?,
        clips: records.to_vec(),
        entries,
    })
}

/// The exactly skinned vertices of clip `c` at each of `record`'s frames, in parallel.
pub(crate) fn skin_frames(source: &Source<'_>, c: usize, record: &ClipRecord) -> Result<Vec<Skinned>> {
    (0..record.frame_count)
        .into_par_iter()
        .map_init(
            || source.pose_scratch(),
            |pose, k| -> Result<Skinned> {
                source.pose(c, record.frame_time(k), pose)?;
                let mut s = source.skinned();
                source.skin(&pose.palette, &mut s)?;
                Ok(s)
            },
        )
        .collect()
}

/// The box around every position of `frames`.
pub(crate) fn frames_box(frames: &[Skinned]) -> Aabb {
    frames
        .iter()
        .flat_map(|f| &f.positions)
        .fold(Aabb::EMPTY, |b, &p| b.including(p))
}

/// Encodes the VAT of `format` for the clip table `records`, rows at most `max_width` texels wide and layers at most
/// `max_height` rows.
pub(crate) fn encode_vat(
    source: &Source<'_>,
    format: VatFormat,
    records: &[ClipRecord],
    max_width: u32,
    max_height: u32,
) -> Result<VatData> {
    let vertices = u32::try_from(source.vertex_count()).map_err(|_| Error::TooLarge { what: "VAT vertices" })?;
    let frames = records
        .iter()
        .try_fold(0u32, |a, r| a.checked_add(r.frame_count))
        .ok_or(Error::TooLarge { what: "VAT frames" })?;
    let layout = VatLayout::new(vertices, frames, max_width, max_height)?;
    let texels = layout.texel_count().ok_or(Error::TooLarge { what: "VAT texels" })?;
    let [s0, s1] = format.plane_texel_sizes();
    let mut planes = [
        vec![0u8; mul(texels, s0, "VAT plane 0 bytes")?],
        vec![0u8; mul(texels, s1, "VAT plane 1 bytes")?],
    ];
    let mut quant = Vec::with_capacity(records.len());
    for (c, record) in records.iter().enumerate() {
        let skinned = skin_frames(source, c, record)?;
        let b = frames_box(&skinned);
        let q = VatQuant::new(b.min, b.max, format);
        for (k, frame) in skinned.iter().enumerate() {
            let f = record.first_frame + k as u32;
            for v in 0..vertices {
                let i = layout.texel_index(layout.texel(v, f));
                let [p0, p1] = &mut planes;
                let t1: &mut [u8] = if s1 == 0 {
                    &mut []
                } else {
                    &mut p1[i * s1..(i + 1) * s1]
                };
                crate::quantize::encode_texel(
                    format,
                    frame.positions[v as usize],
                    frame.normals[v as usize],
                    &q,
                    &mut [&mut p0[i * s0..(i + 1) * s0], t1],
                );
            }
        }
        quant.push(q);
    }
    Ok(VatData {
        format,
        layout,
        clips: records.to_vec(),
        quant,
        planes,
    })
}

/// Encodes the socket transforms of `joints` for the clip table `records`.
pub(crate) fn encode_sockets(source: &Source<'_>, joints: &[u16], records: &[ClipRecord]) -> Result<SocketData> {
    let mut transforms = Vec::new();
    for (c, record) in records.iter().enumerate() {
        let chunks: Vec<Vec<PaletteEntry>> = (0..record.frame_count)
            .into_par_iter()
            .map_init(
                || source.pose_scratch(),
                |pose, k| -> Result<Vec<PaletteEntry>> {
                    let model = source.pose(c, record.frame_time(k), pose)?;
                    Ok(joints
                        .iter()
                        .map(|&j| socket_entry(&(source.root * model[usize::from(j)])))
                        .collect())
                },
            )
            .collect::<Result<_>>()?;
        transforms.extend(chunks.into_iter().flatten());
    }
    Ok(SocketData {
        names: joints
            .iter()
            .map(|&j| source.skeleton.joint_names[usize::from(j)].clone())
            .collect(),
        joints: joints.to_vec(),
        clips: records.to_vec(),
        transforms,
    })
}

/// The f32 3×4 rows of an affine matrix.
fn socket_entry(m: &Affine3A) -> PaletteEntry {
    let c = m.to_cols_array();
    PaletteEntry {
        rows: [
            [c[0], c[3], c[6], c[9]],
            [c[1], c[4], c[7], c[10]],
            [c[2], c[5], c[8], c[11]],
        ],
    }
}

/// Encodes every part of `choice`, measures it against `budget` and computes the bounds.
pub(crate) fn encode(
    source: &Source<'_>,
    options: &BakeOptions,
    budget: ResolvedBudget,
    choice: &Choice,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<(crate::Bake, BakeReport)> {
    let segments = options.segments;
    let parts = [choice.bat.is_some(), choice.vat.is_some(), choice.sockets.is_some()];
    let steps = (source.clips.len() * parts.iter().filter(|&&p| p).count()) as u64;
    let report = |stage, done| {
        progress(Progress {
            stage,
            done,
            total: steps,
        })
    };
    let mut done = 0;
    let mut step = |stage| {
        done += 1;
        report(stage, done);
    };
    let bat = match &choice.bat {
        Some((format, intervals)) => {
            let records = clip_records(source, intervals, &choice.looping, segments)?;
            let data = encode_bat(source, *format, &records)?;
            (0..source.clips.len()).for_each(|_| step(Stage::Encoding));
            Some(data)
        }
        None => None,
    };
    let vat = match &choice.vat {
        Some((format, intervals)) => {
            let records = clip_records(source, intervals, &choice.looping, segments)?;
            let d = options.limits.max_texture_dimension_2d;
            let data = encode_vat(source, *format, &records, options.vat_max_width.min(d), d)?;
            (0..source.clips.len()).for_each(|_| step(Stage::Encoding));
            Some(data)
        }
        None => None,
    };
    let sockets = match &choice.sockets {
        Some((joints, intervals)) => {
            let records = clip_records(source, intervals, &choice.looping, segments)?;
            let data = encode_sockets(source, joints, &records)?;
            (0..source.clips.len()).for_each(|_| step(Stage::Encoding));
            Some(data)
        }
        None => None,
    };
    let mut done = 0;
    let mut step = |stage| {
        done += 1;
        report(stage, done);
    };
    let mut clips = Vec::with_capacity(source.clips.len());
    for (c, clip) in source.clips.iter().enumerate() {
        let bat_report = match &bat {
            Some(b) => {
                step(Stage::Measuring);
                Some(measure_bat(source, c, b)?)
            }
            None => None,
        };
        let (vat_report, vat_normal) = match &vat {
            Some(v) => {
                step(Stage::Measuring);
                let (p, n) = measure_vat(source, c, v)?;
                (Some(p), Some(n))
            }
            None => (None, None),
        };
        let socket_report = match &sockets {
            Some(s) => {
                step(Stage::Measuring);
                Some(measure_sockets(source, c, s, options.socket_reach_m)?)
            }
            None => None,
        };
        clips.push(ClipReport {
            name: clip.name.clone(),
            looping: choice.looping[c],
            budget: budget.distance,
            bat: bat_report,
            vat: vat_report,
            sockets: socket_report,
            vat_normal,
        });
    }
    let records: Vec<&[ClipRecord]> = [
        bat.as_ref().map(|b| b.clips.as_slice()),
        vat.as_ref().map(|v| v.clips.as_slice()),
        sockets.as_ref().map(|s| s.clips.as_slice()),
    ]
    .into_iter()
    .flatten()
    .collect();
    let grow = clips
        .iter()
        .flat_map(|c| [c.bat, c.vat])
        .flatten()
        .map(|p| p.error.distance)
        .fold(0.0, f32::max);
    let bounds = compute_bounds(source, &records, segments, grow)?;
    let report = BakeReport {
        budget,
        bat_format: bat.as_ref().map(|b| b.format),
        vat_format: vat.as_ref().map(|v| v.format),
        clips,
        data_bytes: 0,
    };
    let baked = crate::Bake {
        skeleton: source.skeleton.name.clone(),
        budget_mm: budget.distance * 1e3,
        clips: source
            .clips
            .iter()
            .zip(&choice.looping)
            .map(|(c, &looping)| BakedClip {
                name: c.name.clone(),
                duration: c.duration,
                looping,
            })
            .collect(),
        meshes: source
            .meshes
            .iter()
            .enumerate()
            .map(|(i, m)| BakedMesh {
                name: m.name.clone(),
                mesh: source.mesh_indices[i] as u32,
                first_vertex: source.first_vertex[i] as u32,
                vertex_count: m.positions.len() as u32,
            })
            .collect(),
        bat,
        vat,
        sockets,
        bounds,
    };
    let report = BakeReport {
        data_bytes: baked.data_bytes(),
        ..report
    };
    Ok((baked, report))
}

/// The BAT of clip `c` measured literally as the GPU plays it: the mixed decoded rows of two frames, skinned.
fn measure_bat(source: &Source<'_>, c: usize, bat: &BatData) -> Result<PartReport> {
    let record = bat.clips[c];
    let times = check_times(source, c, &record);
    let error = times
        .par_iter()
        .map_init(
            || {
                (
                    source.pose_scratch(),
                    source.skinned(),
                    source.skinned(),
                    vec![Affine3A::IDENTITY; bat.joint_count as usize],
                )
            },
            |(pose, exact, played, palette), &t| -> Result<ErrorAt> {
                let local = record.local_time(t);
                source.pose(c, local, pose)?;
                source.skin(&pose.palette, exact)?;
                bat.sample_palette(c, t, palette)?;
                source.skin(palette, played)?;
                let (d, v) = largest_distance(&played.positions, &exact.positions)?;
                Ok(ErrorAt {
                    distance: d,
                    time: local,
                    vertex: v,
                })
            },
        )
        .try_reduce(ErrorAt::default, |a, b| Ok(a.max(b)))?;
    let seam_jump = if record.is_looping() {
        let mut palette = vec![Affine3A::IDENTITY; bat.joint_count as usize];
        let (mut first, mut last) = (source.skinned(), source.skinned());
        let end = record.first_frame + record.frame_count - 1;
        for (frame, out) in [(record.first_frame, &mut first), (end, &mut last)] {
            for (j, m) in palette.iter_mut().enumerate() {
                *m = crate::affine_from_rows(&bat.rows(frame, j as u32)?);
            }
            source.skin(&palette, out)?;
        }
        largest_distance(&first.positions, &last.positions)?.0
    } else {
        0.0
    };
    Ok(PartReport {
        frames: record.frame_count,
        rate_hz: record.rate_hz,
        error,
        seam_jump,
    })
}

/// The VAT of clip `c` measured literally as the GPU plays it: positions and normals of two frames decoded and
/// mixed. Returns the position report and the largest normal angle.
fn measure_vat(source: &Source<'_>, c: usize, vat: &VatData) -> Result<(PartReport, ErrorAt)> {
    let record = vat.clips[c];
    let times = check_times(source, c, &record);
    let n = source.vertex_count() as u32;
    let (position, normal) = times
        .par_iter()
        .map_init(
            || (source.pose_scratch(), source.skinned()),
            |(pose, exact), &t| -> Result<(ErrorAt, ErrorAt)> {
                let local = record.local_time(t);
                source.pose(c, local, pose)?;
                source.skin(&pose.palette, exact)?;
                let (mut p_err, mut n_err) = (ErrorAt::default(), ErrorAt::default());
                for v in 0..n {
                    let (p, normal) = vat.sample(c, t, v)?;
                    let d = p.distance(exact.positions[v as usize]);
                    if !d.is_finite() {
                        return Err(Error::NotFinite {
                            what: "played-back vertex",
                            index: v as usize,
                        });
                    }
                    p_err = p_err.max(ErrorAt {
                        distance: d,
                        time: local,
                        vertex: v,
                    });
                    let en = exact.normals[v as usize];
                    if en != Vec3::ZERO {
                        n_err = n_err.max(ErrorAt {
                            distance: crate::quantize::angle_between(normal, en),
                            time: local,
                            vertex: v,
                        });
                    }
                }
                Ok((p_err, n_err))
            },
        )
        .try_reduce(
            || (ErrorAt::default(), ErrorAt::default()),
            |a, b| Ok((a.0.max(b.0), a.1.max(b.1))),
        )?;
    let seam_jump = if record.is_looping() {
        let end = record.first_frame + record.frame_count - 1;
        let mut jump = 0.0f32;
        for v in 0..n {
            let (a, _) = vat.vertex(c, v, record.first_frame)?;
            let (b, _) = vat.vertex(c, v, end)?;
            jump = jump.max(a.distance(b));
        }
        jump
    } else {
        0.0
    };
    Ok((
        PartReport {
            frames: record.frame_count,
            rate_hz: record.rate_hz,
            error: position,
            seam_jump,
        },
        normal,
    ))
}

/// The corners of a cube of half-size `reach` around the origin: the points of an attachment a socket carries.
fn reach_corners(reach: f32) -> [Vec3; 8] {
    std::array::from_fn(|i| {
        Vec3::new(
            if i & 1 == 0 { -reach } else { reach },
            if i & 2 == 0 { -reach } else { reach },
            if i & 4 == 0 { -reach } else { reach },
        )
    })
}

/// The sockets of clip `c` measured as played back: the largest distance of points within `reach` of each socket's
/// joint (a cube's corners, where the largest distance of the box's points is) from their exact places. The
/// report's vertex is the socket.
fn measure_sockets(source: &Source<'_>, c: usize, sockets: &SocketData, reach: f32) -> Result<PartReport> {
    let record = sockets.clips[c];
    let times = check_times(source, c, &record);
    let corners = reach_corners(reach);
    let error = times
        .par_iter()
        .map_init(
            || source.pose_scratch(),
            |pose, &t| -> Result<ErrorAt> {
                let local = record.local_time(t);
                let model = source.pose(c, local, pose)?;
                let mut e = ErrorAt::default();
                for (s, &j) in sockets.joints.iter().enumerate() {
                    let exact = source.root * model[usize::from(j)];
                    let played = sockets.sample(c, t, s)?;
                    for p in corners {
                        e = e.max(ErrorAt {
                            distance: played.transform_point3(p).distance(exact.transform_point3(p)),
                            time: local,
                            vertex: s as u32,
                        });
                    }
                }
                Ok(e)
            },
        )
        .try_reduce(ErrorAt::default, |a, b| Ok(a.max(b)))?;
    Ok(PartReport {
        frames: record.frame_count,
        rate_hz: record.rate_hz,
        error,
        seam_jump: 0.0,
    })
}

/// The bounds of every clip and its segments: exact skinned positions at every stored frame of every part and at
/// the check times, grown by `grow` (see [`BakedBounds`]).
fn compute_bounds(source: &Source<'_>, parts: &[&[ClipRecord]], segments: u32, grow: f32) -> Result<BakedBounds> {
    let mut bounds = BakedBounds::default();
    for c in 0..source.clips.len() {
        let duration = source.clips[c].duration;
        // Every sample time, with the range of segments it must be in: a stored frame belongs to every segment
        // that an interval next to it overlaps; a check time to its own segment.
        let mut samples: Vec<(f32, u32, u32)> = Vec::new();
        for records in parts {
            let r = records[c];
            let n = r.frame_count - 1;
            for k in 0..=n {
                // `r.duration` is the clip's `duration`, as the clip table is built.
                let lo = r.frame_time(k.saturating_sub(1));
                let hi = r.frame_time((k + 1).min(n));
                samples.push((
                    r.frame_time(k),
                    segment_of(lo, duration, segments),
                    segment_of(hi, duration, segments),
                ));
            }
            for t in check_times(source, c, &r) {
                let s = segment_of(t, duration, segments);
                samples.push((t, s, s));
            }
        }
        let boxes: Vec<(Aabb, u32, u32)> = samples
            .par_iter()
            .map_init(
                || (source.pose_scratch(), source.skinned()),
                |(pose, skinned), &(t, lo, hi)| -> Result<(Aabb, u32, u32)> {
                    source.pose(c, t, pose)?;
                    source.skin(&pose.palette, skinned)?;
                    Ok((Aabb::from_points(&skinned.positions), lo, hi))
                },
            )
            .collect::<Result<_>>()?;
        let mut clip = Aabb::EMPTY;
        let mut segs = vec![Aabb::EMPTY; segments as usize];
        for (b, lo, hi) in boxes {
            clip = clip.union(b);
            for s in &mut segs[lo as usize..=hi as usize] {
                *s = s.union(b);
            }
        }
        let g = |b: Aabb| {
            BoundsRecord::from_aabb(Aabb {
                min: b.min - Vec3::splat(grow),
                max: b.max + Vec3::splat(grow),
            })
        };
        bounds.clips.push(g(clip));
        bounds.segments.extend(segs.into_iter().map(g));
    }
    Ok(bounds)
}

/// The index of the time segment of `[0, duration]` that holds `t ∈ [0, duration]`, as
/// [`ClipRecord::segment_at`] computes it.
fn segment_of(t: f32, duration: f32, segments: u32) -> u32 {
    if duration <= 0.0 {
        return 0;
    }
    let s = (t.clamp(0.0, duration) / duration * segments as f32).floor().max(0.0) as u32;
    s.min(segments.saturating_sub(1))
}
