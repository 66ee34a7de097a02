//! `PackedMesh` packs the default character and every skinned primitive of the sample models within the
//! quantizers' bounds, picks u8 or u16 joints and u16 or u32 indices by what fits, and names the vertex, influence
//! or index of bad input.

mod common;

use anim_pose::{Indices, SkinnedMesh};
use crowd_mesh::quantize::{
    OCT_NORMAL_ERROR_BOUND, UV_UNORM16_ERROR_BOUND, WEIGHT_ERROR_BOUND, decode_oct_normal, decode_uv_f16,
    decode_uv_unorm16, decode_weights, uv_f16_error_bound,
};
use crowd_mesh::{Error, PackedJoints, PackedMesh, UvFormat};
use glam::{Vec2, Vec3};

/// Checks `packed` against `mesh`: positions exact, normals, UVs and weights within their bounds, joints exact
/// where weighted, indices exact.
fn check(mesh: &SkinnedMesh, packed: &PackedMesh) {
    let n = mesh.vertex_count();
    assert_eq!(packed.vertex_count(), n);
    for v in 0..n {
        assert_eq!(packed.positions[v], mesh.positions[v].to_array());
        if !mesh.normals.is_empty() {
            let (a, b) = (mesh.normals[v].normalize(), decode_oct_normal(packed.normals[v]));
            assert!(
                a.cross(b).length().asin() <= OCT_NORMAL_ERROR_BOUND && a.dot(b) > 0.0,
                "{}: vertex {v}",
                mesh.name
            );
        }
        if !mesh.uvs.is_empty() {
            let uv = mesh.uvs[v];
            let (d, e) = match packed.uv_format {
                UvFormat::Unorm16 => (decode_uv_unorm16(packed.uvs[v]), Vec2::splat(UV_UNORM16_ERROR_BOUND)),
                UvFormat::F16 => (
                    decode_uv_f16(packed.uvs[v]),
                    Vec2::new(uv_f16_error_bound(uv.x), uv_f16_error_bound(uv.y)),
                ),
            };
            assert!(
                (d - uv).abs().cmple(e).all(),
                "{}: vertex {v} uv {uv} -> {d}",
                mesh.name
            );
        }
        let w = decode_weights(packed.weights[v]);
        let joints: [u32; 4] = match &packed.joints {
            PackedJoints::U8(j) => [0, 8, 16, 24].map(|s| (j[v] >> s) & 0xff),
            PackedJoints::U16(j) => [j[v][0] & 0xffff, j[v][0] >> 16, j[v][1] & 0xffff, j[v][1] >> 16],
        };
        for k in 0..4 {
            assert!(
                (w[k] - mesh.weights[v][k]).abs() < WEIGHT_ERROR_BOUND + 1e-5,
                "{}: vertex {v}",
                mesh.name
            );
            if w[k] > 0.0 {
                assert_eq!(
                    joints[k],
                    u32::from(mesh.joints[v][k]),
                    "{}: vertex {v} influence {k}",
                    mesh.name
                );
            }
        }
    }
    let indices = packed.indices.to_u32_vec();
    let full = packed.lods[0];
    assert_eq!(full.first_index, 0);
    assert_eq!(
        indices[..full.index_count as usize],
        mesh.indices.to_u32_vec()[..],
        "{}: LOD 0 is the mesh",
        mesh.name
    );
    assert_eq!(packed.lods.len(), crowd_mesh::DEFAULT_LOD_TARGETS.len());
    for pair in packed.lods.windows(2) {
        assert!(
            pair[1].index_count <= pair[0].index_count && pair[1].error >= pair[0].error,
            "{}",
            mesh.name
        );
    }
    // The coarsest level reaches its 6% target within a factor of two (sloppy simplification takes over where the
    // topology stops the regular one).
    let (t0, t2) = (packed.lods[0].triangles() as f32, packed.lods[2].triangles() as f32);
    assert!(
        t2 <= (0.12 * t0).ceil().max(1.0),
        "{}: {} of {} triangles at LOD 2",
        mesh.name,
        t2,
        t0
    );
    // The farthest level reaches its 0.4% target within a factor of two, or a few dozen triangles.
    let far = packed.lods[4].triangles() as f32;
    assert!(
        far <= (0.008 * t0).ceil().max(48.0),
        "{}: {} of {} triangles at LOD 4",
        mesh.name,
        far,
        t0
    );
    let end = packed.lods.last().map(|l| (l.first_index + l.index_count) as usize);
    assert_eq!(end, Some(indices.len()));
    assert_eq!(packed.colors.is_some(), !mesh.colors.is_empty());
}

#[test]
fn the_default_character_packs_into_28_bytes_a_vertex() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/crowd_character.glb");
    let model = anim_pose::import_file(path).expect("imports");
    let skin = model.skeletons[0].skin_joint_count();
    for mesh in &model.meshes {
        let packed = PackedMesh::new(mesh, skin).expect("packs");
        check(mesh, &packed);
        assert!(matches!(packed.joints, PackedJoints::U8(_)), "56 joints fit in u8");
        assert!(matches!(packed.indices, Indices::U16(_)));
        assert_eq!(packed.vertex_bytes(), if packed.colors.is_some() { 32 } else { 28 });
    }
}

#[test]
fn every_sample_model_packs_within_the_bounds() {
    let Some(dir) = common::sample_assets() else {
        return;
    };
    let mut packed_count = 0;
    for name in [
        "CesiumMan",
        "Fox",
        "RiggedFigure",
        "RiggedSimple",
        "SimpleSkin",
        "RecursiveSkeletons",
    ] {
        let folder = dir.join("gltf").join(name);
        let file = std::fs::read_dir(&folder)
            .unwrap_or_else(|e| panic!("{}: {e}", folder.display()))
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "glb" || x == "gltf"))
            .unwrap_or_else(|| panic!("{} holds no glTF file", folder.display()));
        let model = anim_pose::import_file(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for b in &model.bindings {
            let skin = model.skeletons[b.skeleton].skin_joint_count();
            for mesh in &model.meshes[b.meshes.clone()] {
                let packed = PackedMesh::new(mesh, skin).unwrap_or_else(|e| panic!("{name}: {e}"));
                check(mesh, &packed);
                packed_count += 1;
            }
        }
    }
    assert!(packed_count >= 6, "packed {packed_count} primitives");
}

/// A two-triangle quad bound to joints 0 and 1.
fn quad() -> SkinnedMesh {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/crowd_character.glb");
    let mut mesh = anim_pose::import_file(path).expect("imports").meshes.remove(0);
    mesh.name = "quad".into();
    mesh.positions = vec![Vec3::ZERO, Vec3::X, Vec3::new(1.0, 1.0, 0.0), Vec3::Y];
    mesh.normals = Vec::new();
    mesh.tangents = Vec::new();
    mesh.uvs = vec![
        Vec2::new(0.0, 0.0),
        Vec2::new(2.0, 0.0),
        Vec2::new(2.0, 2.0),
        Vec2::new(0.0, 2.0),
    ];
    mesh.colors = Vec::new();
    mesh.joints = vec![[0, 1, 0, 0]; 4];
    mesh.weights = vec![[0.75, 0.25, 0.0, 0.0]; 4];
    mesh.indices = Indices::U16(vec![0, 1, 2, 0, 2, 3]);
    mesh
}

#[test]
fn missing_normals_are_generated_and_tiling_uvs_use_f16() {
    let packed = PackedMesh::new(&quad(), 2).expect("packs");
    assert_eq!(packed.uv_format, UvFormat::F16);
    for &n in &packed.normals {
        assert!(decode_oct_normal(n).abs_diff_eq(Vec3::Z, 1e-4), "the quad faces +Z");
    }
    assert_eq!(decode_uv_f16(packed.uvs[2]), Vec2::splat(2.0));
}

#[test]
fn many_joints_use_u16() {
    let mut mesh = quad();
    mesh.joints = vec![[300, 1, 0, 0]; 4];
    let packed = PackedMesh::new(&mesh, 301).expect("packs");
    let PackedJoints::U16(j) = &packed.joints else {
        panic!("joint 300 needs u16");
    };
    assert_eq!(j[0], [300 | (1 << 16), 0]);
}

#[test]
fn bad_meshes_name_what_is_wrong() {
    let what = |mesh: &SkinnedMesh, skin: usize| match PackedMesh::new(mesh, skin) {
        Err(Error::Mesh { mesh, what }) => format!("{mesh}: {what}"),
        other => panic!("expected an error, got {other:?}"),
    };
    let mut m = quad();
    m.joints[2][1] = 9;
    assert_eq!(
        what(&m, 2),
        "quad: vertex 2 influence 1: joint 9 is past the skin's 2 joints"
    );
    // An unweighted influence may name any joint: it is dropped.
    let mut m = quad();
    m.joints[1][3] = 999;
    assert!(PackedMesh::new(&m, 2).is_ok());
    let mut m = quad();
    m.weights[3] = [0.0; 4];
    assert!(what(&m, 2).starts_with("quad: vertex 3: weights"));
    let mut m = quad();
    m.positions[1] = Vec3::NAN;
    assert_eq!(what(&m, 2), "quad: vertex 1: the position is not finite");
    let mut m = quad();
    m.indices = Indices::U16(vec![0, 1, 7]);
    assert_eq!(what(&m, 2), "quad: index 2 is 7, past the 4 vertices");
    let mut m = quad();
    m.indices = Indices::U16(vec![0, 1]);
    assert_eq!(what(&m, 2), "quad: has 2 indices, not whole triangles");
    let mut m = quad();
    m.uvs.pop();
    assert_eq!(what(&m, 2), "quad: has 3 UVs for 4 vertices");
    let mut m = quad();
    m.uvs[0] = Vec2::new(1e6, 0.0);
    assert_eq!(what(&m, 2), "quad: vertex 0: the UV is not finite or past ±65504");
    let mut m = quad();
    m.positions.clear();
    m.joints.clear();
    m.weights.clear();
    m.uvs.clear();
    m.indices = Indices::U16(Vec::new());
    assert_eq!(what(&m, 2), "quad: has no vertex");
}
