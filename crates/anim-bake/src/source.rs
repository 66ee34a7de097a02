//! The exact reference a bake is measured against: a skeleton's clips evaluated by anim-pose's exact glTF
//! evaluator, converted to instance-space skinning palettes and skinned by skin-pack's CPU reference skinning.

use anim_pose::{Aabb, Clip, Model, Skeleton, SkinnedMesh, Transform};
use glam::{Affine3A, Mat4, Vec3};
use skin_pack::{SkinInput, SkinOutput, palette_from_model, skin_reference};

use crate::{Error, Result};

/// A skeleton of a model with the clips and meshes a bake takes from it, checked once.
#[derive(Debug)]
pub(crate) struct Source<'m> {
    /// The skeleton.
    pub skeleton: &'m Skeleton,
    /// Its clips, in the model's order.
    pub clips: Vec<&'m Clip>,
    /// The meshes it skins, in the model's order, each once.
    pub meshes: Vec<&'m SkinnedMesh>,
    /// Each mesh's index in `Model::meshes`.
    pub mesh_indices: Vec<usize>,
    /// Each mesh's first vertex in the concatenated vertex list, then the total.
    pub first_vertex: Vec<usize>,
    /// The skeleton's root transform.
    pub root: Affine3A,
    /// Every mesh's bind-space positions, concatenated.
    pub positions: Vec<Vec3>,
    /// Each mesh's bind-space normals: the file's, or generated as the packed GPU mesh generates them
    /// (`SkinnedMesh::normals_to_vec`), so that a VAT's normals light the mesh as its palette path does.
    pub normals: Vec<Vec<Vec3>>,
    /// Every mesh's joints, concatenated.
    pub joints: Vec<[u16; 4]>,
    /// Every mesh's weights, concatenated.
    pub weights: Vec<[f32; 4]>,
}

/// Scratch for one exact pose.
#[derive(Clone, Debug)]
pub(crate) struct PoseScratch {
    local: Vec<Transform>,
    model4: Vec<Mat4>,
    model: Vec<Affine3A>,
    /// The instance-space palette, one matrix per skin joint.
    pub palette: Vec<Affine3A>,
}

/// Skinned vertices of every mesh, concatenated.
#[derive(Clone, Debug)]
pub(crate) struct Skinned {
    /// Positions in instance space.
    pub positions: Vec<Vec3>,
    /// Unit normals.
    pub normals: Vec<Vec3>,
}

impl<'m> Source<'m> {
    /// Gathers and checks skeleton `skeleton` of `model`, its clips and the meshes its bindings draw.
    ///
    /// # Errors
    ///
    /// [`Error::NoSkin`], [`Error::NoClips`], [`Error::NoMeshes`]; the skeleton's or a clip's validation error;
    /// [`Error::NotFinite`] for a non-finite root transform, vertex position, normal or weight;
    /// [`Error::JointOutOfRange`] for a vertex naming a joint outside the skin.
    pub fn new(model: &'m Model, skeleton: usize) -> Result<Self> {
        let s = model.skeletons.get(skeleton).ok_or(Error::NoSkin {
            skeleton,
            count: model.skeletons.len(),
        })?;
        s.validate()?;
        let clips: Vec<&Clip> = model.clips_for(skeleton).collect();
        if clips.is_empty() {
            return Err(Error::NoClips {
                skeleton: s.name.clone(),
            });
        }
        for clip in &clips {
            clip.validate(s)?;
        }
        let mut mesh_indices: Vec<usize> = model
            .bindings
            .iter()
            .filter(|b| b.skeleton == skeleton)
            .flat_map(|b| b.meshes.clone())
            .filter(|&m| m < model.meshes.len())
            .collect();
        mesh_indices.sort_unstable();
        mesh_indices.dedup();
        let meshes: Vec<&SkinnedMesh> = mesh_indices.iter().map(|&m| &model.meshes[m]).collect();
        if meshes.iter().all(|m| m.positions.is_empty()) {
            return Err(Error::NoMeshes {
                skeleton: s.name.clone(),
            });
        }
        if !s.root_transform.is_finite() {
            return Err(Error::NotFinite {
                what: "root transform of skeleton",
                index: skeleton,
            });
        }
        let mut first_vertex = vec![0];
        for mesh in &meshes {
            check_mesh(mesh, s.skin_joint_count())?;
            let end = first_vertex[first_vertex.len() - 1] + mesh.positions.len();
            first_vertex.push(end);
        }
        Ok(Self {
            skeleton: s,
            clips,
            positions: meshes.iter().flat_map(|m| m.positions.iter().copied()).collect(),
            normals: meshes.iter().map(|m| m.normals_to_vec()).collect(),
            joints: meshes.iter().flat_map(|m| m.joints.iter().copied()).collect(),
            weights: meshes.iter().flat_map(|m| m.weights.iter().copied()).collect(),
            meshes,
            mesh_indices,
            first_vertex,
            root: Affine3A::from_mat4(s.root_transform),
        })
    }

    /// Every vertex of every mesh.
    pub fn vertex_count(&self) -> usize {
        self.first_vertex[self.first_vertex.len() - 1]
    }

    /// Scratch for [`Source::pose`].
    pub fn pose_scratch(&self) -> PoseScratch {
        let joints = self.skeleton.joint_count();
        PoseScratch {
            local: vec![Transform::IDENTITY; joints],
            model4: vec![Mat4::IDENTITY; joints],
            model: vec![Affine3A::IDENTITY; joints],
            palette: vec![Affine3A::IDENTITY; self.skeleton.skin_joint_count()],
        }
    }

    /// Scratch for [`Source::skin`].
    pub fn skinned(&self) -> Skinned {
        let n = self.vertex_count();
        Skinned {
            positions: vec![Vec3::ZERO; n],
            normals: vec![Vec3::ZERO; n],
        }
    }

    /// The exact pose of clip `clip` at time `t` (clamped to the clip): `scratch.palette` gets the instance-space
    /// skinning matrices, `root × model × inverse_bind`; the model-space joint matrices (without the root transform)
    /// are returned.
    ///
    /// # Errors
    ///
    /// [`Error::NotFinite`] when a skinning matrix is not finite; anim-pose's and skin-pack's errors.
    pub fn pose<'s>(&self, clip: usize, t: f32, scratch: &'s mut PoseScratch) -> Result<&'s [Affine3A]> {
        let c = self.clips[clip];
        c.sample_local_pose(self.skeleton, t.clamp(0.0, c.duration), &mut scratch.local)?;
        self.palette_of_local(scratch)?;
        Ok(&scratch.model)
    }

    /// The model's extent, in model units: the longest side of the axis-aligned box of every mesh's vertices skinned
    /// in the skeleton's rest pose, in instance space (root transform applied). Zero when the vertices coincide; not
    /// finite when the pose overflows.
    ///
    /// # Errors
    ///
    /// As [`Source::pose`].
    pub fn rest_extent(&self) -> Result<f32> {
        let mut scratch = self.pose_scratch();
        scratch.local.copy_from_slice(&self.skeleton.rest_pose);
        self.palette_of_local(&mut scratch)?;
        let mut skinned = self.skinned();
        self.skin(&scratch.palette, &mut skinned)?;
        Ok(Aabb::from_points(&skinned.positions).size().max_element())
    }

    /// Fills `scratch`'s model-space joints and instance-space palette from its local pose.
    fn palette_of_local(&self, scratch: &mut PoseScratch) -> Result<()> {
        self.skeleton.local_to_model(&scratch.local, &mut scratch.model4)?;
        for (a, m) in scratch.model.iter_mut().zip(&scratch.model4) {
            *a = Affine3A::from_mat4(*m);
        }
        palette_from_model(self.skeleton, &scratch.model, Some(&self.root), &mut scratch.palette)?;
        if let Some(j) = scratch.palette.iter().position(|m| !m.is_finite()) {
            return Err(Error::NotFinite {
                what: "skinning matrix of skin joint",
                index: j,
            });
        }
        Ok(())
    }

    /// Skins every mesh with `palette` into `out`.
    ///
    /// # Errors
    ///
    /// skin-pack's errors (lengths are right by construction).
    pub fn skin(&self, palette: &[Affine3A], out: &mut Skinned) -> Result<()> {
        for (i, mesh) in self.meshes.iter().enumerate() {
            let range = self.first_vertex[i]..self.first_vertex[i + 1];
            let input = SkinInput {
                positions: &mesh.positions,
                normals: &self.normals[i],
                tangents: &[],
                joints: &mesh.joints,
                weights: &mesh.weights,
            };
            let mut output = SkinOutput {
                positions: &mut out.positions[range.clone()],
                normals: &mut out.normals[range],
                tangents: &mut [],
            };
            skin_reference(palette, &input, &mut output)?;
        }
        Ok(())
    }
}

/// Checks a mesh's vertex data: finite positions, normals and weights, and joints inside the skin.
fn check_mesh(mesh: &SkinnedMesh, skin_joints: usize) -> Result<()> {
    let n = mesh.positions.len();
    for (what, len) in [
        ("joints", mesh.joints.len()),
        ("weights", mesh.weights.len()),
        ("normals", if mesh.normals.is_empty() { n } else { mesh.normals.len() }),
    ] {
        if len != n {
            return Err(Error::BufferSize {
                what: match what {
                    "joints" => "mesh joints (one per vertex)",
                    "weights" => "mesh weights (one per vertex)",
                    _ => "mesh normals (one per vertex)",
                },
                expected: n,
                actual: len,
            });
        }
    }
    if let Some(i) = mesh.positions.iter().position(|p| !p.is_finite()) {
        return Err(Error::NotFinite {
            what: "vertex position",
            index: i,
        });
    }
    if let Some(i) = mesh.normals.iter().position(|p| !p.is_finite()) {
        return Err(Error::NotFinite {
            what: "vertex normal",
            index: i,
        });
    }
    if let Some(i) = mesh.weights.iter().position(|w| w.iter().any(|x| !x.is_finite())) {
        return Err(Error::NotFinite {
            what: "vertex weight",
            index: i,
        });
    }
    for (vertex, joints) in mesh.joints.iter().enumerate() {
        if let Some(&joint) = joints.iter().find(|&&j| usize::from(j) >= skin_joints) {
            return Err(Error::JointOutOfRange {
                mesh: mesh.name.clone(),
                vertex,
                joint,
                skin_joints,
            });
        }
    }
    Ok(())
}
