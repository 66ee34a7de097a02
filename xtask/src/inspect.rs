//! `cargo xtask inspect MODEL`: a readable dump of what the importer produced.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use anim_pose::{Clip, FrameSpacing, Model, NO_PARENT, RuntimeClip, RuntimeClipOptions, Skeleton};
use anyhow::{Context, Result};

/// Imports `path` and prints the report; an import error becomes the command's error. A bake file (one that starts
/// with `anim_bake::MAGIC`, or any `.bake` file) is loaded and described instead; the loader's error becomes the
/// command's error.
pub fn run(path: &Path) -> Result<()> {
    if is_bake(path) {
        let baked = anim_bake::Bake::read_file(path).with_context(|| format!("cannot load bake {}", path.display()))?;
        print!("{}", bake_report(path, &baked));
        return Ok(());
    }
    let model = anim_pose::import_file(path).with_context(|| format!("cannot import {}", path.display()))?;
    print!("{}", report(path, &model));
    Ok(())
}

/// The text that `inspect` prints.
pub fn report(path: &Path, model: &Model) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{}", path.display());
    let _ = writeln!(
        s,
        "{} skeleton(s), {} clip(s), {} skinned primitive(s), {} binding(s), {} image(s)",
        model.skeletons.len(),
        model.clips.len(),
        model.meshes.len(),
        model.bindings.len(),
        model.images.len()
    );
    for (i, sk) in model.skeletons.iter().enumerate() {
        let _ = writeln!(
            s,
            "\nskeleton {i} '{}': {} joints ({} in the skin)",
            sk.name,
            sk.joint_count(),
            sk.skin_joint_count()
        );
        write_tree(&mut s, sk);
    }
    if !model.clips.is_empty() {
        let _ = writeln!(s, "\nclips:");
    }
    for clip in &model.clips {
        let mut kinds: BTreeMap<(&str, &str), usize> = BTreeMap::new();
        for c in &clip.channels {
            *kinds
                .entry((c.property.as_str(), c.interpolation.as_str()))
                .or_default() += 1;
        }
        let kinds: Vec<String> = kinds.iter().map(|((p, i), n)| format!("{n} {p} {i}")).collect();
        let keys: usize = clip.channels.iter().map(|c| c.key_count()).sum();
        let _ = writeln!(
            s,
            "  '{}' (skeleton {}): {:.3} s, {} channels, {} keys: {}",
            clip.name,
            clip.skeleton,
            clip.duration,
            clip.channels.len(),
            keys,
            kinds.join(", ")
        );
        let _ = writeln!(s, "    runtime: {}", runtime_summary(model, clip));
    }
    if !model.meshes.is_empty() {
        let _ = writeln!(s, "\nskinned primitives:");
    }
    for m in &model.meshes {
        let material = &m.material;
        let texture = match material.base_color_texture.and_then(|t| model.images.get(t)) {
            Some(img) => format!(
                ", texture '{}' ({} bytes{})",
                img.name,
                img.bytes.len(),
                img.mime_type.as_deref().map(|m| format!(", {m}")).unwrap_or_default()
            ),
            None => String::new(),
        };
        let c = material.base_color_factor;
        let _ = writeln!(
            s,
            "  {}: {} vertices, {} triangles, max {} influences (file: {}), material '{}' base colour ({:.3}, {:.3}, {:.3}, {:.3}){}{}",
            m.name,
            m.vertex_count(),
            m.triangle_count(),
            m.max_influences,
            m.source_max_influences,
            material.name,
            c.x,
            c.y,
            c.z,
            c.w,
            texture,
            if m.colors.is_empty() { "" } else { ", vertex colours" }
        );
        let _ = writeln!(s, "    {}", packed_summary(model, m));
    }
    let b = model.bounds();
    if b.is_empty() {
        let _ = writeln!(s, "\nbounds: empty");
    } else {
        let _ = writeln!(
            s,
            "\nbounds (bind space): min ({:.3}, {:.3}, {:.3}) max ({:.3}, {:.3}, {:.3}) size ({:.3}, {:.3}, {:.3})",
            b.min.x,
            b.min.y,
            b.min.z,
            b.max.x,
            b.max.y,
            b.max.z,
            b.size().x,
            b.size().y,
            b.size().z
        );
    }
    for w in &model.warnings {
        let _ = writeln!(s, "warning: {w}");
    }
    s
}

/// Writes the joint tree with two spaces of indent per level. Skin joints show their skin index.
fn write_tree(s: &mut String, sk: &Skeleton) {
    let mut depth = vec![0usize; sk.joint_count()];
    let mut skin_index = vec![None; sk.joint_count()];
    for (k, &j) in sk.skin_joints.iter().enumerate() {
        skin_index[usize::from(j)] = Some(k);
    }
    for (i, &p) in sk.parents.iter().enumerate() {
        if p != NO_PARENT {
            depth[i] = depth[usize::from(p)] + 1;
        }
        let tag = match skin_index[i] {
            Some(k) => format!("[skin {k}]"),
            None => "[not in skin]".to_owned(),
        };
        let _ = writeln!(
            s,
            "  {:indent$}{} {} {}",
            "",
            i,
            sk.joint_names[i],
            tag,
            indent = 2 * depth[i]
        );
    }
}

/// The runtime clip built with the default error budget: its frame layout and rate, memory, measured error and
/// looping, and on a second line the build's warning when no layout meets the budget.
fn runtime_summary(model: &Model, clip: &Clip) -> String {
    let Some(skeleton) = model.skeletons.get(clip.skeleton) else {
        return format!("no skeleton {}", clip.skeleton);
    };
    let options = RuntimeClipOptions::default();
    match RuntimeClip::build(clip, skeleton, &options) {
        Ok(rt) => {
            let e = rt.error();
            let mean = if matches!(rt.frame_spacing(), FrameSpacing::KeyTimes { .. }) {
                " mean"
            } else {
                ""
            };
            let rate = format!("{:.1} Hz{mean}", rt.rate_hz());
            let mut line = format!(
                "{} at {rate}, {} frames, {} bytes, error {:.4} mm / {:.5} rad / {:.5} scale (budget {:.2} mm / {:.4} rad / {:.4}), {}",
                rt.frame_spacing(),
                rt.frame_count(),
                rt.memory_bytes(),
                e.translation * 1e3,
                e.rotation,
                e.scale,
                options.budget.translation * 1e3,
                options.budget.rotation,
                options.scale_budget,
                if rt.is_looping() { "looping" } else { "clamped" }
            );
            if let Some(w) = rt.warning() {
                let _ = write!(line, "\n    warning: {w}");
            }
            line
        }
        Err(e) => format!("cannot build: {e}"),
    }
}

/// The renderer's packing of mesh `m` (bytes per vertex, formats) and its LOD levels: triangles, meshopt's
/// error in the model's units, and the screen-size thresholds that keep each level under a pixel at 1080 px.
fn packed_summary(model: &Model, m: &anim_pose::SkinnedMesh) -> String {
    let index = model.meshes.iter().position(|x| std::ptr::eq(x, m));
    let skeleton = model
        .bindings
        .iter()
        .find(|b| index.is_some_and(|i| b.meshes.contains(&i)))
        .map(|b| b.skeleton);
    let Some(skin) = skeleton.map(|k| model.skeletons[k].skin_joint_count()) else {
        return "packed: not bound to a skin".to_owned();
    };
    let packed = match crowd_mesh::PackedMesh::new(m, skin) {
        Ok(p) => p,
        Err(e) => return format!("packed: error: {e}"),
    };
    let joints = match packed.joints {
        crowd_mesh::PackedJoints::U8(_) => "u8",
        crowd_mesh::PackedJoints::U16(_) => "u16",
    };
    let uv = match packed.uv_format {
        crowd_mesh::UvFormat::Unorm16 => "unorm16",
        crowd_mesh::UvFormat::F16 => "f16",
    };
    let radius = (m.bounds.size() * 0.5).length();
    let thresholds = crowd_mesh::lod_thresholds(&packed.lods, radius, 1080.0, 1.0, 0.1);
    let levels: Vec<String> = packed
        .lods
        .iter()
        .map(|l| format!("{} tris (error {:.4})", l.triangles(), l.error))
        .collect();
    format!(
        "packed: {} B/vertex (joints {joints}, UV {uv}, {}-bit indices); LOD {}; thresholds for 1 px at 1080 px {:.4?}",
        packed.vertex_bytes(),
        8 * packed.index_size(),
        levels.join(", "),
        thresholds
    )
}

/// True for a `.bake` file or a file that starts with the bake magic.
fn is_bake(path: &Path) -> bool {
    if path.extension().is_some_and(|e| e == "bake") {
        return true;
    }
    let mut magic = [0u8; 8];
    std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic))
        .is_ok_and(|()| magic == anim_bake::MAGIC)
}

/// The text that `inspect` prints for a bake file: the header, the clip, mesh and socket tables, each part's format,
/// clip records and sizes, and the bounds.
pub fn bake_report(path: &Path, b: &anim_bake::Bake) -> String {
    let mut s = String::new();
    let file_len = std::fs::metadata(path).map_or(0, |m| m.len());
    let _ = writeln!(s, "{}", path.display());
    let _ = writeln!(
        s,
        "bake file version {}, {file_len} bytes: skeleton '{}', budget {} mm, {} clip(s), {} mesh(es), {} bytes of data",
        anim_bake::VERSION,
        b.skeleton,
        b.budget_mm,
        b.clips.len(),
        b.meshes.len(),
        b.data_bytes()
    );
    let _ = writeln!(s, "\nclips:");
    for (c, clip) in b.clips.iter().enumerate() {
        let bounds = b.bounds.clips[c].to_aabb();
        let _ = writeln!(
            s,
            "  {c} '{}': {:.3} s{}, bounds {:?} to {:?}",
            clip.name,
            clip.duration,
            if clip.looping { ", loops" } else { "" },
            bounds.min.to_array(),
            bounds.max.to_array()
        );
    }
    let _ = writeln!(s, "\nmeshes:");
    for m in &b.meshes {
        let _ = writeln!(
            s,
            "  '{}' (model mesh {}): vertices {}..{}",
            m.name,
            m.mesh,
            m.first_vertex,
            m.first_vertex + m.vertex_count
        );
    }
    let records = |s: &mut String, clips: &[anim_bake::ClipRecord]| {
        for (c, r) in clips.iter().enumerate() {
            let _ = writeln!(
                s,
                "    clip {c}: frames {}..{} ({} at {:.3} Hz), segments {}..{}",
                r.first_frame,
                r.first_frame + r.frame_count,
                r.frame_count,
                r.rate_hz,
                r.first_segment,
                r.first_segment + r.segment_count
            );
        }
    };
    if let Some(bat) = &b.bat {
        let _ = writeln!(
            s,
            "\nBAT: {:?} ({} B per entry), {} joints, {} frames, {} bytes",
            bat.format,
            bat.format.entry_size(),
            bat.joint_count,
            bat.frame_count(),
            bat.byte_len()
        );
        records(&mut s, &bat.clips);
    }
    if let Some(vat) = &b.vat {
        let l = vat.layout;
        let [t0, t1] = vat.format.plane_texture_formats();
        let _ = writeln!(
            s,
            "\nVAT: {}, planes {t0}{}{t1}, {} vertices, {} frames, {} x {} texels x {} layer(s) ({} rows per frame, {} \
             frames per layer), {} bytes",
            vat.format.name(),
            if t1.is_empty() { "" } else { " + " },
            l.vertex_count,
            l.frame_count,
            l.width,
            l.height,
            l.layers,
            l.rows_per_frame,
            l.frames_per_layer,
            vat.byte_len()
        );
        records(&mut s, &vat.clips);
    }
    if let Some(sockets) = &b.sockets {
        let _ = writeln!(
            s,
            "\nsockets: {} ({} frames, {} bytes)",
            sockets
                .names
                .iter()
                .zip(&sockets.joints)
                .map(|(n, j)| format!("'{n}' (joint {j})"))
                .collect::<Vec<_>>()
                .join(", "),
            sockets.frame_count(),
            sockets.byte_len()
        );
        records(&mut s, &sockets.clips);
    }
    let _ = writeln!(
        s,
        "\nbounds: {} clip box(es), {} segment box(es)",
        b.bounds.clips.len(),
        b.bounds.segments.len()
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bake_files_are_described_or_refused() {
        let root = crate::workspace_root();
        let model = anim_pose::import_file(root.join(crate::character::CHARACTER_PATH)).unwrap();
        let options = anim_bake::BakeOptions {
            parts: anim_bake::Parts { bat: true, vat: false },
            rate: anim_bake::RateChoice::Fixed(5.0),
            sockets: vec!["head".into()],
            ..anim_bake::BakeOptions::default()
        };
        let (baked, _) = anim_bake::bake(&model, &options, &|_| {}).unwrap();
        let dir = std::env::temp_dir().join(format!("xtask-inspect-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("character.bake");
        baked.write_file(&path).unwrap();
        run(&path).unwrap();
        let text = bake_report(&path, &anim_bake::Bake::read_file(&path).unwrap());
        for expected in [
            "bake file version 1",
            "skeleton 'crowd_skeleton'",
            "'walk'",
            "BAT: ",
            "frames 0..21",
            "'head'",
        ] {
            assert!(text.contains(expected), "{expected} missing from:\n{text}");
        }
        // A cut file is the loader's error, which `main` turns into a non-zero exit.
        let bytes = std::fs::read(&path).unwrap();
        let cut = dir.join("cut.bake");
        std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
        let e = run(&cut).unwrap_err();
        assert!(format!("{e:#}").contains("truncated"), "{e:#}");
        // A file with the magic but another name is recognised too.
        let renamed = dir.join("character.bin");
        std::fs::write(&renamed, &bytes).unwrap();
        assert!(is_bake(&renamed));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
