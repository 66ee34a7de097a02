//! Bad input reaches the game through Bevy's usual channels and never panics the app: a missing file and a model
//! without a skin fail their asset loads (`AssetLoadFailedEvent<CrowdCharacter>` and the load state, with an error
//! that names the file), and a clip out of range is refused by the crowd's call with crowd-frame's error.

#[path = "../examples/common/headless.rs"]
mod headless;

use std::time::Duration;

use bevy::asset::{AssetLoadFailedEvent, LoadState};
use bevy::ecs::message::MessageReader;
use bevy::prelude::*;
use crowd_bevy::{ClipId, Crowd, CrowdCharacter, CrowdPlugin, Spawn};

/// One triangle, no skin, no animation: a valid glTF that cannot make a crowd character.
const TRIANGLE: &str = r#"{"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}], "nodes": [{"mesh": 0}],
"meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
"buffers": [{"byteLength": 36, "uri": "data:application/octet-stream;base64,AAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAAAAAAAAgD8AAAAA"}],
"bufferViews": [{"buffer": 0, "byteLength": 36}],
"accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3", "min": [0, 0, 0], "max": [1, 1, 0]}]}"#;

#[derive(Resource, Default)]
struct Failures(Vec<String>);

fn collect(mut failed: MessageReader<AssetLoadFailedEvent<CrowdCharacter>>, mut out: ResMut<Failures>) {
    for e in failed.read() {
        out.0.push(format!("{}: {}", e.path, e.error));
    }
}

#[test]
fn bad_paths_unskinned_models_and_clips_out_of_range_are_errors_not_panics() {
    let Some(root) = headless::sample_assets() else {
        return;
    };
    // An asset folder with the Fox and a triangle without a skin.
    let dir = std::env::temp_dir().join(format!("crowd_bevy_bad_input_{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    std::fs::copy(
        std::path::Path::new(&root).join("gltf/Fox/Fox.glb"),
        dir.join("Fox.glb"),
    )
    .expect("the Fox");
    let unskinned = "Triangle.gltf";
    std::fs::write(dir.join(unskinned), TRIANGLE).expect("the triangle");
    let mut app = App::new();
    app.add_plugins((headless::minimal_plugins(&dir.to_string_lossy()), CrowdPlugin))
        .init_resource::<Failures>()
        .add_systems(Update, collect);
    let server = app.world().resource::<AssetServer>().clone();
    let missing: Handle<CrowdCharacter> = server.load("NoSuchModel/NoSuchModel.glb");
    let no_skin: Handle<CrowdCharacter> = server.load(unskinned);
    let fox: Handle<CrowdCharacter> = server.load("Fox.glb");
    let crowd = app.world_mut().spawn(Crowd::new(fox)).id();
    let mut waited = 0;
    loop {
        app.update();
        let failed = |h: &Handle<CrowdCharacter>| matches!(server.load_state(h), LoadState::Failed(_));
        if failed(&missing) && failed(&no_skin) && app.world().get::<Crowd>(crowd).expect("crowd").is_ready() {
            break;
        }
        waited += 1;
        assert!(waited < 2000, "the loads never settled");
        std::thread::sleep(Duration::from_millis(2));
    }
    app.update();
    let failures = &app.world().resource::<Failures>().0;
    println!("{failures:#?}");
    assert_eq!(failures.len(), 2, "two failed loads reported: {failures:?}");
    assert!(
        failures.iter().any(|f| f.contains("NoSuchModel")),
        "the missing file is named"
    );
    assert!(
        failures
            .iter()
            .any(|f| f.contains(unskinned) && f.contains("no mesh is bound to a skin")),
        "the unskinned model is named with the reason"
    );

    // A clip out of range, at spawn and at play: errors from the call, and the app goes on.
    let mut c = app.world_mut().get_mut::<Crowd>(crowd).expect("the crowd");
    let bad = Spawn::at(Vec3::ZERO, ClipId(99));
    let e = c.add(&bad).expect_err("clip 99 of 3");
    println!("{e}");
    let h = c.add(&Spawn::at(Vec3::ZERO, ClipId(0))).expect("clip 0");
    let e = c.play(h, ClipId(3), 0.1).expect_err("clip 3 of 3");
    println!("{e}");
    assert!(e.to_string().contains('3'), "the error names the clip: {e}");
    // Calls before a crowd is ready say so.
    let mut waiting = Crowd::new(Handle::default());
    assert!(matches!(waiting.add(&bad), Err(crowd_bevy::Error::NotReady)));
    app.update();
    assert_eq!(app.world().get::<Crowd>(crowd).expect("the crowd").len(), 1);
    std::fs::remove_dir_all(&dir).ok();
}
