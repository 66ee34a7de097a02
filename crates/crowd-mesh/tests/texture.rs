//! Base colour textures decode with their whole mip chain, averaged in linear light; the sample models' textures
//! and materials decode; bytes that are not an image are an error naming the texture.

mod common;

use crowd_mesh::{Error, TextureData};

/// A PNG of `w × h` texels from `texel(x, y)`.
fn png(w: u32, h: u32, texel: impl Fn(u32, u32) -> [u8; 4]) -> Vec<u8> {
    let img = image::RgbaImage::from_fn(w, h, |x, y| image::Rgba(texel(x, y)));
    let mut bytes = std::io::Cursor::new(Vec::new());
    img.write_to(&mut bytes, image::ImageFormat::Png).expect("encodes");
    bytes.into_inner()
}

#[test]
fn mips_go_down_to_one_texel_and_average_in_linear_light() {
    // A black and white checkerboard: every mip below level 0 is linear 0.5, sRGB 188.
    let t = TextureData::decode(
        "checker",
        &png(8, 4, |x, y| if (x + y) % 2 == 0 { [255; 4] } else { [0, 0, 0, 255] }),
    )
    .expect("decodes");
    assert_eq!((t.width, t.height, t.mips.len()), (8, 4, 4));
    for (level, mip) in t.mips.iter().enumerate() {
        let (w, h) = t.level_size(level);
        assert_eq!(mip.len(), (4 * w * h) as usize, "level {level}");
        if level > 0 {
            for p in mip.chunks_exact(4) {
                assert_eq!(p, [188, 188, 188, 255], "level {level}");
            }
        }
    }
    // Odd sizes fold the last row and column in: a 5 x 3 uniform texture stays uniform.
    let t = TextureData::decode("odd", &png(5, 3, |_, _| [10, 200, 30, 128])).expect("decodes");
    assert_eq!(t.mips.len(), 3);
    assert_eq!(t.level_size(1), (2, 1));
    for mip in &t.mips {
        for p in mip.chunks_exact(4) {
            assert!(p[0].abs_diff(10) <= 1 && p[1].abs_diff(200) <= 1 && p[2].abs_diff(30) <= 1 && p[3] == 128);
        }
    }
}

#[test]
fn bytes_that_are_not_an_image_are_named() {
    match TextureData::decode("broken.png", b"\x89PNG not really") {
        Err(Error::Texture { name, what }) => {
            assert_eq!(name, "broken.png");
            assert!(what.starts_with("does not decode"), "{what}");
        }
        other => panic!("expected a texture error, got {other:?}"),
    }
}

#[test]
fn the_sample_models_textures_decode() {
    let Some(dir) = common::sample_assets() else {
        return;
    };
    let mut decoded = 0;
    for name in ["CesiumMan", "Fox"] {
        let folder = dir.join("gltf").join(name);
        let file = std::fs::read_dir(&folder)
            .expect("the model folder")
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "glb" || x == "gltf"))
            .expect("a glTF file");
        let model = anim_pose::import_file(&file).expect("imports");
        // Each mesh's material takes its factor and decodes its texture; a mesh past the model's is an error.
        for (i, mesh) in model.meshes.iter().enumerate() {
            let m = crowd_mesh::Material::of_mesh(&model, i).unwrap_or_else(|e| panic!("{name} mesh {i}: {e}"));
            assert_eq!(m.base_color_factor, mesh.material.base_color_factor.to_array());
            assert_eq!(
                m.base_color_texture.is_some(),
                mesh.material.base_color_texture.is_some()
            );
        }
        let past = crowd_mesh::Material::of_mesh(&model, model.meshes.len()).expect_err("past the meshes");
        assert!(past.to_string().contains("past the model's"), "{past}");
        for img in &model.images {
            let t = TextureData::decode(&img.name, &img.bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(t.level_size(t.mips.len() - 1), (1, 1));
            decoded += 1;
        }
    }
    assert!(decoded >= 2, "decoded {decoded} textures");
}
