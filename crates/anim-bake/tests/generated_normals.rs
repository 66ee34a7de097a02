//! A mesh without normals bakes the normals its packed GPU mesh draws with (`SkinnedMesh::normals_to_vec`, the
//! area-weighted normals of its triangles), skinned: never a constant. With the file's normals removed from the
//! default character, every VAT normal at a clip's first frame is within the format's normal bound (plus the
//! skinning's rounding) of the generated bind normal skinned by the exact palette there.

mod common;

use anim_bake::{BakeOptions, BatFormat, Parts, RateChoice, VatFormat};
use glam::{Affine3A, Vec3};
use skin_pack::{SkinInput, SkinOutput, skin_reference};

#[test]
fn a_mesh_without_normals_bakes_its_generated_normals() {
    let mut model = anim_pose::import_file(common::default_character()).expect("the default character imports");
    for mesh in &mut model.meshes {
        mesh.normals.clear();
    }
    let options = BakeOptions {
        parts: Parts { bat: true, vat: true },
        bat_format: Some(BatFormat::F32),
        vat_format: Some(VatFormat::Precise),
        rate: RateChoice::Fixed(30.0),
        ..BakeOptions::default()
    };
    let (bake, _) = anim_bake::bake(&model, &options, &|_| {}).expect("bakes without normals");
    let (bat, vat) = (bake.bat.as_ref().expect("a BAT"), bake.vat.as_ref().expect("a VAT"));
    // Clip 0's first frame: the BAT's f32 palette there is the exact pose's.
    let mut palette = vec![Affine3A::IDENTITY; bat.joint_count as usize];
    bat.sample_palette(0, 0.0, &mut palette).expect("a palette");
    let (mut compared, mut worst) = (0usize, 0f32);
    for baked in &bake.meshes {
        let mesh = &model.meshes[baked.mesh as usize];
        let normals = mesh.normals_to_vec();
        let n = mesh.vertex_count();
        let (mut positions, mut skinned) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
        skin_reference(
            &palette,
            &SkinInput {
                positions: &mesh.positions,
                normals: &normals,
                tangents: &[],
                joints: &mesh.joints,
                weights: &mesh.weights,
            },
            &mut SkinOutput {
                positions: &mut positions,
                normals: &mut skinned,
                tangents: &mut [],
            },
        )
        .expect("skins");
        for (v, want) in skinned.iter().enumerate() {
            let (_, got) = vat
                .vertex(0, baked.first_vertex + v as u32, vat.clips[0].first_frame)
                .expect("a baked vertex");
            let angle = anim_bake::quantize::angle_between(got, want.normalize());
            worst = worst.max(angle);
            compared += 1;
        }
    }
    let bound = VatFormat::Precise.normal_error_bound() + 1e-3;
    eprintln!("{compared} generated normals baked, worst angle {worst} rad (bound {bound})");
    assert!(compared > 1000, "the character's vertices were compared: {compared}");
    assert!(worst <= bound, "a baked normal is {worst} rad from the generated one");
}
