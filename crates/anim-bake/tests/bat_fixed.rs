//! The bone-animation bake at a fixed rate on the default character: the clip table, the entry layout, playback
//! against the exact palettes, and the loop seam.

mod common;

use anim_bake::{BakeOptions, BatFormat, CLIP_LOOPING, Parts, RateChoice, bake};
use anim_pose::{Model, Transform};
use glam::{Affine3A, Mat4};
use skin_pack::palette_from_model;

fn default_model() -> Model {
    anim_pose::import_file(common::default_character()).expect("the default character imports")
}

/// The exact instance-space palette of clip `clip` at `t`, through anim-pose's plain reference path.
fn exact_palette(model: &Model, clip: usize, t: f32) -> Vec<Affine3A> {
    let skeleton = &model.skeletons[0];
    let mut local = vec![Transform::IDENTITY; skeleton.joint_count()];
    let mut m4 = vec![Mat4::IDENTITY; skeleton.joint_count()];
    model.clips[clip].sample_local_pose(skeleton, t, &mut local).unwrap();
    skeleton.local_to_model(&local, &mut m4).unwrap();
    let model_space: Vec<Affine3A> = m4.iter().map(|m| Affine3A::from_mat4(*m)).collect();
    let mut palette = vec![Affine3A::IDENTITY; skeleton.skin_joint_count()];
    let root = Affine3A::from_mat4(skeleton.root_transform);
    palette_from_model(skeleton, &model_space, Some(&root), &mut palette).unwrap();
    palette
}

fn bat_options(format: BatFormat) -> BakeOptions {
    BakeOptions {
        parts: Parts { bat: true, vat: false },
        bat_format: Some(format),
        rate: RateChoice::Fixed(30.0),
        ..BakeOptions::default()
    }
}

#[test]
fn clip_table_and_entries_are_contiguous() {
    let model = default_model();
    let (baked, report) = bake(&model, &bat_options(BatFormat::F32), &|_| {}).unwrap();
    let bat = baked.bat.as_ref().unwrap();
    assert_eq!(bat.clips.len(), model.clips.len());
    assert_eq!(bat.joint_count as usize, model.skeletons[0].skin_joint_count());
    let mut first = 0;
    for (record, clip) in bat.clips.iter().zip(&model.clips) {
        assert_eq!(record.first_frame, first);
        let intervals = (clip.duration * 30.0).ceil() as u32;
        assert_eq!(record.frame_count, intervals + 1, "{}", clip.name);
        assert!((record.rate_hz * clip.duration - intervals as f32).abs() < 1e-3);
        assert_eq!(record.duration, clip.duration);
        assert_eq!(record.segment_count, 8);
        first += record.frame_count;
    }
    assert_eq!(bat.frame_count(), first as usize);
    assert_eq!(bat.entries.len(), first as usize * bat.joint_count as usize * 12);
    assert_eq!(bat.byte_len(), bat.bytes().len());
    assert_eq!(report.clips.len(), model.clips.len());
    assert_eq!(report.data_bytes, bat.byte_len() as u64);
}

#[test]
fn stored_frames_are_the_exact_palettes() {
    let model = default_model();
    let (baked, _) = bake(&model, &bat_options(BatFormat::F32), &|_| {}).unwrap();
    let bat = baked.bat.as_ref().unwrap();
    let mut played = vec![Affine3A::IDENTITY; bat.joint_count as usize];
    for (c, record) in bat.clips.iter().enumerate() {
        for k in [0, 1, record.frame_count / 2, record.frame_count - 1] {
            let t = record.frame_time(k);
            let exact = exact_palette(&model, c, t);
            for (j, m) in exact.iter().enumerate() {
                let rows = bat.rows(record.first_frame + k, j as u32).unwrap();
                let stored = anim_bake::affine_from_rows(&rows);
                assert!(stored.abs_diff_eq(*m, 1e-6), "clip {c} frame {k} joint {j}");
            }
            // Playback at a frame's own time reads that frame (or the end of the interval before it).
            bat.sample_palette(c, t.min(record.duration.next_down()), &mut played)
                .unwrap();
            for (p, m) in played.iter().zip(&exact) {
                assert!(p.abs_diff_eq(*m, 1e-4), "clip {c} frame {k}");
            }
        }
    }
}

#[test]
fn every_format_plays_back_close_to_the_exact_clip() {
    let model = default_model();
    for format in BatFormat::ALL {
        let (baked, report) = bake(&model, &bat_options(format), &|_| {}).unwrap();
        assert_eq!(baked.bat.as_ref().unwrap().format, format);
        assert_eq!(report.bat_format, Some(format));
        for clip in &report.clips {
            let bat = clip.bat.unwrap();
            eprintln!(
                "{}: {} at 30 Hz: {:.3} mm at {:.3} s vertex {}, seam jump {:.3} mm",
                clip.name,
                format.name(),
                bat.error.distance * 1e3,
                bat.error.time,
                bat.error.vertex,
                bat.seam_jump * 1e3
            );
            // 30 Hz is no budget choice; it keeps a walking character within a few centimetres.
            assert!(bat.error.distance < 0.05, "{}: {:?}", clip.name, bat.error);
            assert!(bat.error.distance > 0.0);
        }
    }
}

#[test]
fn looping_clips_store_the_seam_frame() {
    let model = default_model();
    let (baked, report) = bake(&model, &bat_options(BatFormat::F32), &|_| {}).unwrap();
    let bat = baked.bat.as_ref().unwrap();
    assert!(
        report.clips.iter().any(|c| c.looping),
        "the default character has looping clips"
    );
    for (c, (record, clip)) in bat.clips.iter().zip(&report.clips).enumerate() {
        assert_eq!(record.flags & CLIP_LOOPING != 0, clip.looping);
        assert_eq!(baked.clips[c].looping, clip.looping);
        // The last frame is the pose at the duration, not a copy of frame 0; for a looping clip it is within the
        // budget of frame 0.
        let last = exact_palette(&model, c, record.duration);
        let j = bat.joint_count - 1;
        let stored = anim_bake::affine_from_rows(&bat.rows(record.first_frame + record.frame_count - 1, j).unwrap());
        assert!(stored.abs_diff_eq(last[j as usize], 1e-6));
        let part = clip.bat.unwrap();
        if clip.looping {
            assert!(part.seam_jump <= clip.budget, "{}: seam {}", clip.name, part.seam_jump);
        } else {
            assert_eq!(part.seam_jump, 0.0);
        }
    }
}
