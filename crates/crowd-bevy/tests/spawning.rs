//! The game's API through Bevy: over 100 frames a system adds, moves, re-animates and removes Foxes through
//! [`Crowd`], the plugin steps the crowd each frame, and the store stays consistent with a plain model of what the
//! game did (crowd-cull's invariant checker, every live handle's position and clip, the live count).

#[path = "../examples/common/headless.rs"]
mod headless;

use std::collections::HashMap;
use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use crowd_bevy::{ClipId, Crowd, CrowdCamera, CrowdCharacter, CrowdPlugin, Spawn, frame_camera};
use crowd_cull::Handle as InstanceHandle;

/// What the game believes: each live handle's position and clip.
#[derive(Resource, Default)]
struct Model {
    live: HashMap<InstanceHandle, (Vec3, u32)>,
    /// The live handles in the order they were added (swap-removed).
    order: Vec<InstanceHandle>,
    frame: u32,
    seed: u32,
}

impl Model {
    fn next(&mut self) -> u32 {
        self.seed = self.seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        self.seed >> 8
    }
}

/// Each frame: add 1–8 Foxes, move a few, replay a clip on some, remove a few; then check the previous frame's
/// results against the store.
fn churn(mut crowds: Query<&mut Crowd>, mut model: ResMut<Model>) {
    let Ok(mut crowd) = crowds.single_mut() else { return };
    if !crowd.is_ready() {
        return;
    }
    model.frame += 1;
    let clips = 3;
    for _ in 0..1 + model.next() % 8 {
        let p = Vec3::new(
            (model.next() % 2000) as f32 * 0.5,
            0.0,
            (model.next() % 2000) as f32 * 0.5,
        );
        let clip = model.next() % clips;
        let h = crowd.add(&Spawn::at(p, ClipId(clip as u16))).expect("a valid spawn");
        model.live.insert(h, (p, clip));
        model.order.push(h);
    }
    for _ in 0..3 {
        let i = model.next() as usize % model.order.len();
        let h = model.order[i];
        let p = Vec3::new(model.next() as f32 % 997.0, 1.0, model.next() as f32 % 991.0);
        crowd.set_position(h, p).expect("a live handle");
        model.live.get_mut(&h).expect("live").0 = p;
        let clip = model.next() % clips;
        crowd.play(h, ClipId(clip as u16), 0.2).expect("a clip in range");
        model.live.get_mut(&h).expect("live").1 = clip;
    }
    if model.order.len() > 20 {
        for _ in 0..model.next() % 5 {
            let i = model.next() as usize % model.order.len();
            let h = model.order.swap_remove(i);
            crowd.remove(h).expect("a live handle");
            model.live.remove(&h);
            assert!(crowd.remove(h).is_err(), "a removed handle is stale");
        }
    }
}

#[test]
fn spawning_moving_and_despawning_over_100_frames_keeps_the_store_consistent() {
    let Some(root) = headless::sample_assets() else {
        return;
    };
    let root = std::path::Path::new(&root).join("gltf/Fox");
    let mut app = App::new();
    app.add_plugins((headless::minimal_plugins(&root.to_string_lossy()), CrowdPlugin))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_millis(16)))
        .init_resource::<Model>()
        .add_systems(Update, churn);
    // No camera in this app: the simulation steps with one the game sets.
    let eye = GlobalTransform::from(
        Transform::from_xyz(500.0, 800.0, 1500.0).looking_at(Vec3::new(500.0, 0.0, 500.0), Vec3::Y),
    );
    let proj = glam::camera::rh::proj::directx::perspective_infinite_reverse(0.8, 1.6, 0.1);
    app.insert_resource(CrowdCamera(Some(frame_camera(&eye, proj))));
    let handle: Handle<CrowdCharacter> = app.world().resource::<AssetServer>().load("Fox.glb");
    let crowd = app.world_mut().spawn(Crowd::new(handle)).id();
    let mut waited = 0;
    while !app.world().get::<Crowd>(crowd).expect("the crowd").is_ready() {
        app.update();
        waited += 1;
        assert!(waited < 2000, "the Fox never loaded");
        std::thread::sleep(Duration::from_millis(2));
    }
    for _ in 0..100 {
        app.update();
    }
    let model = app.world().resource::<Model>();
    assert_eq!(model.frame, 100);
    let c = app.world().get::<Crowd>(crowd).expect("the crowd");
    let frame = c.frame().expect("ready");
    assert!(frame.time() > 1.5, "the plugin stepped the crowd ({} s)", frame.time());
    let store = frame.store();
    store.check_invariants().expect("the store's invariants");
    assert_eq!(c.len(), model.live.len());
    assert!(model.live.len() > 100, "{} live", model.live.len());
    for (h, (p, clip)) in &model.live {
        let i = store.get(*h).expect("a live handle");
        assert_eq!(i.desc.position, *p, "{h:?}'s position");
        // The clip playing, or the one a crossfade is going to.
        let target = i.desc.anim.fade_target.unwrap_or(i.desc.anim.clip);
        assert_eq!(target, *clip, "{h:?}'s clip");
    }
}
