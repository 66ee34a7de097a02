//! Ground speed: how fast an in-place clip would carry its character over the ground, so that the game can move
//! the instance at that speed and the feet stay planted.

use anyhow::Result;
use crowd_frame::Character;
use glam::{Mat4, Vec3};

/// Samples per second of clip time when measuring.
const RATE: f32 = 60.0;

/// Per clip of `character` (in [`crowd_frame::ClipId`] order), the horizontal velocity at playback speed 1 that
/// keeps the feet planted, in the character's own space (`y` = 0).
///
/// At each sample the lowest joint is taken to be the foot on the ground; its mean horizontal velocity over the
/// cycle, negated, is the ground's velocity under the character. A clip whose root travels by itself (root motion
/// left in) moves its feet little in model space and so gets a small speed. Speeds under 2% of the model's height per
/// second count as standing (0), so that an idle's sway does not make it drift.
///
/// # Errors
///
/// When a clip cannot be sampled (a skeleton and clip that do not match).
pub fn ground_velocities(character: &Character, height: f32) -> Result<Vec<Vec3>> {
    let skeleton = character.skeleton();
    let joints = skeleton.joint_count();
    let mut local = vec![anim_pose::Transform::IDENTITY; joints];
    let mut model = vec![Mat4::IDENTITY; joints];
    let mut out = Vec::with_capacity(character.clips().len());
    for clip in character.clips() {
        let duration = clip.duration();
        if duration.is_nan() || duration <= 0.0 || joints == 0 {
            out.push(Vec3::ZERO);
            continue;
        }
        let samples = ((duration * RATE).ceil() as usize).max(16);
        let dt = duration / samples as f32;
        let mut positions = |t: f32| -> Result<Vec<Vec3>> {
            clip.sample_reference(t, &mut local)?;
            skeleton.local_to_model(&local, &mut model)?;
            Ok(model.iter().map(|m| m.w_axis.truncate()).collect())
        };
        let mut travel = Vec3::ZERO;
        let mut here = positions(0.0)?;
        for k in 0..samples {
            let next = positions((k + 1) as f32 * dt)?;
            let (foot, _) =
                here.iter().enumerate().fold(
                    (0, f32::INFINITY),
                    |best, (j, p)| if p.y < best.1 { (j, p.y) } else { best },
                );
            travel += next[foot] - here[foot];
            here = next;
        }
        let velocity = -Vec3::new(travel.x, 0.0, travel.z) / duration;
        out.push(if velocity.length() < 0.02 * height {
            Vec3::ZERO
        } else {
            velocity
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crowd_frame::CharacterOptions;

    /// The default character walks and runs in place: its walk must carry it forward (+Z, the way it faces) at a
    /// walking pace, its run faster, and its idle not at all.
    #[test]
    fn the_default_characters_walk_and_run_move_it_forward() {
        let model = anim_pose::import_file(crate::assets::default_model()).expect("the default character");
        let character = Character::from_model(&model, 0, &CharacterOptions::default()).expect("character");
        let height = model.bounds().size().y;
        let v = ground_velocities(&character, height).expect("velocities");
        let speed = |name: &str| v[usize::from(character.clip_id(name).expect(name).0)];
        let (idle, walk, run) = (speed("idle"), speed("walk"), speed("run"));
        assert_eq!(idle, Vec3::ZERO, "idle stands");
        assert!(
            walk.z > 0.8 && walk.z < 2.0 && walk.x.abs() < 0.2 * walk.z,
            "walk {walk}"
        );
        assert!(run.z > 1.3 * walk.z && run.z < 6.0, "run {run}, walk {walk}");
    }
}
