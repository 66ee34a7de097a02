//! A loaded character lives as long as its asset and the crowds built from it, shared and never copied: reloading the
//! file and then dropping the asset and its crowds frees every character the loads made (the loader once leaked one
//! per load).

#[path = "../examples/common/headless.rs"]
mod headless;

use std::sync::{Arc, Weak};
use std::time::Duration;

use bevy::prelude::*;
use crowd_bevy::{Crowd, CrowdCharacter, CrowdPlugin};
use crowd_frame::Character;

/// Updates `app` until `done` holds, failing after `what` took 2,000 updates.
fn update_until(app: &mut App, what: &str, done: impl Fn(&App) -> bool) {
    let mut updates = 0;
    while !done(app) {
        app.update();
        updates += 1;
        assert!(updates < 2000, "{what} never happened");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// The character of the asset behind `handle`, if it is loaded.
fn asset_character(app: &App, handle: &Handle<CrowdCharacter>) -> Option<Arc<Character>> {
    let assets = app.world().resource::<Assets<CrowdCharacter>>();
    assets.get(handle).map(|c| c.character().clone())
}

#[test]
fn reloaded_and_dropped_characters_are_freed_with_their_crowds() {
    let Some(root) = headless::sample_assets() else {
        return;
    };
    let root = root.join("gltf/Fox");
    let mut app = App::new();
    app.add_plugins((headless::minimal_plugins(&root.to_string_lossy()), CrowdPlugin));
    let server = app.world().resource::<AssetServer>().clone();
    let handle: Handle<CrowdCharacter> = server.load("Fox.glb");
    let crowds = [
        app.world_mut().spawn(Crowd::new(handle.clone())).id(),
        app.world_mut().spawn(Crowd::new(handle.clone())).id(),
    ];
    update_until(&mut app, "the crowds' build", |app| {
        crowds
            .iter()
            .all(|&e| app.world().get::<Crowd>(e).is_some_and(Crowd::is_ready))
    });
    let crowd_character = |app: &App, e: Entity| -> Arc<Character> {
        let crowd = app.world().get::<Crowd>(e).expect("the crowd");
        crowd.frame().expect("ready").character().clone()
    };
    let loaded = asset_character(&app, &handle).expect("the first load");
    for &e in &crowds {
        assert!(
            Arc::ptr_eq(&crowd_character(&app, e), &loaded),
            "the crowd shares the asset's character"
        );
    }
    let first: Weak<Character> = Arc::downgrade(&loaded);
    drop(loaded);
    assert_eq!(
        first.strong_count(),
        3,
        "the asset and the two crowds hold one character"
    );

    // Loading the file again makes a new character; the crowds keep the one they were built with.
    server.reload("Fox.glb");
    update_until(&mut app, "the reload", |app| {
        asset_character(app, &handle).is_some_and(|c| !Weak::ptr_eq(&Arc::downgrade(&c), &first))
    });
    let second = Arc::downgrade(&asset_character(&app, &handle).expect("the second load"));
    assert!(first.upgrade().is_some(), "the crowds still hold the first character");

    // Drop the crowds and the last handle: the asset goes, and both characters with it.
    for e in crowds {
        app.world_mut().despawn(e);
    }
    drop(handle);
    update_until(&mut app, "the asset's removal", |app| {
        app.world().resource::<Assets<CrowdCharacter>>().is_empty()
    });
    app.update();
    assert!(
        first.upgrade().is_none(),
        "the first load's character is freed ({} holders left)",
        first.strong_count()
    );
    assert!(
        second.upgrade().is_none(),
        "the reload's character is freed ({} holders left)",
        second.strong_count()
    );
}
