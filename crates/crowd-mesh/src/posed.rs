//! A glTF model at one exact pose, drawn as unique-tier instances: what `cargo xtask render` and the image tests
//! draw. Each skin of the model (a skeleton and the meshes bound to it) becomes one [`PosedSkin`], whose palette is
//! in the file's world space, so that one instance with the identity transform draws the model where it stands.

use anim_pose::{Aabb, Model};
use crowd_cull::Tier;
use crowd_frame::{FrameCamera, InstanceRecord, Packet, PacketDraw, PacketParts, RecordKind};
use glam::{Affine3A, Mat4, Vec3, Vec3A};
use skin_pack::{Mat3x4F16, PaletteFormat, QtF16, SkinInput, SkinOutput};

use crate::material::Material;
use crate::mesh_pack::PackedMesh;
use crate::palette_kind::PaletteKind;
use crate::texture::TextureData;
use crate::{Error, Result};

/// One skin of a model at one pose.
#[derive(Clone, Debug)]
pub struct PosedSkin {
    /// The binding's name.
    pub name: String,
    /// The model's meshes bound to it (indices into `Model::meshes`).
    pub meshes: Vec<usize>,
    /// Their packed forms, in the same order.
    pub packed: Vec<PackedMesh>,
    /// Their materials.
    pub materials: Vec<Material>,
    /// The world-space skinning palette, one matrix per skin joint.
    pub palette: Vec<Affine3A>,
}

/// Every skin of `model` posed exactly at time `t` of glTF animation `animation` (the exact evaluator, then
/// local-to-model, then the palette with the skeleton's root transform); a skeleton that the animation does not
/// animate stands in its rest pose. Textures are decoded once each.
///
/// # Errors
///
/// [`Error::Scene`] when `t` is not finite, the model has no skinned mesh or posing fails; [`Error::Mesh`] or
/// [`Error::Texture`] when a mesh or texture cannot be packed.
pub fn pose_exact(model: &Model, animation: usize, t: f32) -> Result<Vec<PosedSkin>> {
    if !t.is_finite() {
        return Err(Error::scene(format!("time {t} is not finite")));
    }
    if model.bindings.is_empty() {
        return Err(Error::scene("the model has no skinned mesh"));
    }
    let mut textures: Vec<Option<TextureData>> = vec![None; model.images.len()];
    let mut skins = Vec::with_capacity(model.bindings.len());
    for binding in &model.bindings {
        let skeleton = &model.skeletons[binding.skeleton];
        let mut local = skeleton.rest_pose.clone();
        if let Some(clip) = model
            .clips
            .iter()
            .find(|c| c.animation == animation && c.skeleton == binding.skeleton)
        {
            clip.sample_local_pose(skeleton, t, &mut local)
                .map_err(|e| Error::scene(format!("sampling '{}': {e}", clip.name)))?;
        }
        let mut model_mats = vec![Mat4::IDENTITY; skeleton.joint_count()];
        skeleton
            .local_to_model(&local, &mut model_mats)
            .map_err(|e| Error::scene(format!("skin '{}': {e}", binding.name)))?;
        let model_affine: Vec<Affine3A> = model_mats.iter().map(|m| Affine3A::from_mat4(*m)).collect();
        let mut palette = vec![Affine3A::IDENTITY; skeleton.skin_joint_count()];
        let root = Affine3A::from_mat4(skeleton.root_transform);
        skin_pack::palette_from_model(skeleton, &model_affine, Some(&root), &mut palette)
            .map_err(|e| Error::scene(format!("skin '{}': {e}", binding.name)))?;
        let mut packed = Vec::new();
        let mut materials = Vec::new();
        for m in binding.meshes.clone() {
            let mesh = &model.meshes[m];
            packed.push(PackedMesh::new(mesh, skeleton.skin_joint_count())?);
            let texture = match mesh.material.base_color_texture {
                Some(i) => {
                    let image = model.images.get(i).ok_or_else(|| {
                        Error::scene(format!("mesh '{}' names image {i}, past the model's images", mesh.name))
                    })?;
                    if textures[i].is_none() {
                        textures[i] = Some(TextureData::decode(&image.name, &image.bytes)?);
                    }
                    textures[i].clone()
                }
                None => None,
            };
            materials.push(Material {
                base_color_factor: mesh.material.base_color_factor.to_array(),
                base_color_texture: texture,
            });
        }
        skins.push(PosedSkin {
            name: binding.name.clone(),
            meshes: binding.meshes.clone().collect(),
            packed,
            materials,
            palette,
        });
    }
    Ok(skins)
}

/// The world-space positions and normals of mesh `m` (an index into `Model::meshes`) skinned by `palette` with
/// skin-pack's CPU reference.
///
/// # Errors
///
/// [`Error::Scene`] when the reference rejects the mesh (a joint past the palette).
pub fn skin_on_cpu(model: &Model, m: usize, palette: &[Affine3A]) -> Result<(Vec<Vec3>, Vec<Vec3>)> {
    let mesh = &model.meshes[m];
    let mut positions = vec![Vec3::ZERO; mesh.vertex_count()];
    let mut normals = vec![Vec3::ZERO; mesh.normals.len()];
    skin_pack::skin_reference(
        palette,
        &SkinInput {
            positions: &mesh.positions,
            normals: &mesh.normals,
            tangents: &[],
            joints: &mesh.joints,
            weights: &mesh.weights,
        },
        &mut SkinOutput {
            positions: &mut positions,
            normals: &mut normals,
            tangents: &mut [],
        },
    )
    .map_err(|e| Error::scene(format!("skinning '{}' on the CPU: {e}", mesh.name)))?;
    Ok((positions, normals))
}

/// The box around every skinned vertex of `skins` (skinned on the CPU); the empty box when there is none.
///
/// # Errors
///
/// As [`skin_on_cpu`].
pub fn posed_bounds(model: &Model, skins: &[PosedSkin]) -> Result<Aabb> {
    let mut bounds = Aabb::EMPTY;
    for skin in skins {
        for &m in &skin.meshes {
            for p in skin_on_cpu(model, m, &skin.palette)?.0 {
                bounds.min = bounds.min.min(p);
                bounds.max = bounds.max.max(p);
            }
        }
    }
    Ok(bounds)
}

/// A camera on +Z looking down −Z at the centre of `bounds` (glTF's front), 30° high, far enough that the whole
/// box fits an image of `aspect` = width / height.
pub fn front_camera(bounds: &Aabb, aspect: f32) -> FrameCamera {
    let center = (bounds.min + bounds.max) * 0.5;
    let half = ((bounds.max - bounds.min) * 0.5).max(Vec3::splat(1e-6));
    let fov = 30f32.to_radians();
    let tan = (fov * 0.5).tan();
    // Fit the front face of the box (nearer than its centre by half its depth), with a 10% margin.
    let distance = (half.y / tan).max(half.x / (tan * aspect)) * 1.1 + half.z;
    let radius = half.length();
    let eye = center + Vec3::Z * distance;
    let near = (distance - radius * 1.5).max(distance * 1e-3);
    FrameCamera::perspective(eye, center, Vec3::Y, fov, aspect, near, distance + radius * 2.0)
}

/// `palette` encoded in format `F` with translation origin zero, as the renderer reads it.
///
/// # Errors
///
/// [`Error::Scene`] when an entry is not finite, or for the f16 formats when an element is past ±65504 (or, for
/// `QtF16`, the entry is not a similarity), naming the entry.
pub fn encode_palette<F: PaletteFormat + 'static>(palette: &[Affine3A]) -> Result<Vec<F>> {
    if let Some(i) = palette.iter().position(|m| !m.is_finite()) {
        return Err(Error::scene(format!("palette entry {i} is not finite")));
    }
    let checked = match PaletteKind::of::<F>() {
        PaletteKind::F32 => Ok(()),
        PaletteKind::Mat3x4F16 => skin_pack::check_palette::<Mat3x4F16>(palette, Vec3A::ZERO),
        PaletteKind::QtF16 => skin_pack::check_palette::<QtF16>(palette, Vec3A::ZERO),
    };
    checked.map_err(|e| Error::scene(format!("the palette does not fit {}: {e}", F::NAME)))?;
    Ok(palette.iter().map(|m| F::encode(m, Vec3A::ZERO)).collect())
}

/// A unique-tier record at `position` with the identity rotation, scale 1 and a white tint, whose palette starts
/// at entry `palette`.
///
/// # Errors
///
/// [`Error::Scene`] when `position` is not finite.
pub fn unique_record(position: Vec3, palette: u32) -> Result<InstanceRecord> {
    InstanceRecord::new(
        position,
        glam::Quat::IDENTITY,
        1.0,
        crowd_frame::RecordAnim::Unique { palette },
        glam::Vec4::ONE,
    )
    .map_err(|e| Error::scene(format!("a record at {position}: {e}")))
}

/// A packet of unique-tier instances at LOD 0, one per record of `records`, with `camera`: `palettes` holds
/// their palettes of `skin_joint_count` entries one after another, and each record's `anim` names its first entry.
///
/// # Errors
///
/// As [`encode_palette`], and as `Packet::from_parts` (as [`Error::Scene`]).
pub fn unique_packet<F: PaletteFormat + 'static>(
    skin_joint_count: usize,
    palettes: &[Affine3A],
    records: &[InstanceRecord],
    camera: FrameCamera,
) -> Result<Packet<F>> {
    let unique = encode_palette::<F>(palettes)?;
    let draws = [PacketDraw {
        lod: 0,
        tier: Tier::Unique,
        kind: RecordKind::Unique,
        first_instance: 0,
        instance_count: records.len() as u32,
    }];
    Packet::from_parts(&PacketParts {
        time: 0.0,
        camera,
        skin_joint_count,
        pool_palettes: &[],
        unique_palettes: &unique,
        records,
        draws: if records.is_empty() { &[] } else { &draws },
    })
    .map_err(|e| Error::scene(format!("building the packet: {e}")))
}
