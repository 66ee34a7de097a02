//! Property tests of `LocalToModelJob` against a naive recursive reference.
//!
//! - On random hierarchies (1 joint, joint counts that are not multiples of four, more than 256 joints), the
//!   job's output equals `world(j) = world(parent(j)) * local(j)`, written recursively, with and without a
//!   `root` transform.
//! - A partial update from joint `j`, after changing only `j`'s subtree, equals a full update.
//!
//! Tolerances are relative to the magnitude of the matrices compared.

use anim_pose::{LocalToModelJob, NO_PARENT, Skeleton, SoaTransform, Transform, num_soa_joints, pack_soa};
use glam::{Affine3A, Mat4, Quat, Vec3};
use proptest::prelude::*;

/// The relative tolerance: the reference multiplies in a different order (recursively, in `Mat4`), so results
/// differ by rounding that grows with the depth of the hierarchy.
const REL_TOL: f32 = 1e-4;

fn vec3_strategy(lo: f32, hi: f32) -> impl Strategy<Value = Vec3> {
    (lo..hi, lo..hi, lo..hi).prop_map(|(x, y, z)| Vec3::new(x, y, z))
}

fn quat_strategy() -> impl Strategy<Value = Quat> {
    (-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0)
        .prop_filter("non-degenerate", |(x, y, z, w)| x * x + y * y + z * z + w * w > 0.01)
        .prop_map(|(x, y, z, w)| Quat::from_xyzw(x, y, z, w).normalize())
}

fn transform_strategy() -> impl Strategy<Value = Transform> {
    // Scales stay near one so that deep chains neither blow up nor vanish.
    (vec3_strategy(-2.0, 2.0), quat_strategy(), vec3_strategy(0.8, 1.25)).prop_map(|(translation, rotation, scale)| {
        Transform {
            translation,
            rotation,
            scale,
        }
    })
}

fn affine_strategy() -> impl Strategy<Value = Affine3A> {
    transform_strategy().prop_map(|t| Affine3A::from_scale_rotation_translation(t.scale, t.rotation, t.translation))
}

/// A random hierarchy of `n` joints in parent-before-child order, biased towards recent parents so that
/// some chains are deep, and a local pose for it.
fn hierarchy_strategy(counts: std::ops::RangeInclusive<usize>) -> impl Strategy<Value = (Vec<u16>, Vec<Transform>)> {
    counts.prop_flat_map(|n| {
        let parents = prop::collection::vec((any::<bool>(), 0.0f64..1.0), n).prop_map(|picks| {
            picks
                .iter()
                .enumerate()
                .map(|(i, &(near, r))| {
                    if i == 0 {
                        NO_PARENT
                    } else if near {
                        // One of the last four joints: deep chains.
                        (i - 1 - ((r * 4.0) as usize).min(i - 1)) as u16
                    } else {
                        ((r * i as f64) as usize).min(i - 1) as u16
                    }
                })
                .collect::<Vec<u16>>()
        });
        (parents, prop::collection::vec(transform_strategy(), n))
    })
}

fn skeleton(parents: &[u16], rest_pose: &[Transform]) -> Skeleton {
    Skeleton::from_parents("random", parents.to_vec(), rest_pose.to_vec()).expect("valid random skeleton")
}

/// The naive recursive reference: `world(j) = world(parent(j)) * local(j)`, with `root` above root joints.
fn world(parents: &[u16], local: &[Transform], root: &Mat4, j: usize) -> Mat4 {
    let parent = parents[j];
    let above = if parent == NO_PARENT {
        *root
    } else {
        world(parents, local, root, usize::from(parent))
    };
    above * local[j].to_mat4()
}

fn run_job(
    skeleton: &Skeleton,
    local: &[Transform],
    output: &mut [Affine3A],
    from: Option<usize>,
    root: Option<&Affine3A>,
) {
    let mut soa = vec![SoaTransform::IDENTITY; num_soa_joints(local.len())];
    pack_soa(local, &mut soa).expect("sized");
    LocalToModelJob {
        skeleton,
        input: &soa,
        output,
        from,
        root,
    }
    .run()
    .expect("valid job");
}

/// Checks `got` against `want`, with a tolerance relative to the larger matrix's largest element.
fn assert_close(got: &Affine3A, want: &Mat4, what: &str) -> Result<(), TestCaseError> {
    let got = Mat4::from(*got);
    let scale = got
        .abs()
        .to_cols_array()
        .iter()
        .chain(want.abs().to_cols_array().iter())
        .fold(1.0f32, |a, &b| a.max(b));
    let diff = (got - *want)
        .abs()
        .to_cols_array()
        .iter()
        .fold(0.0f32, |a, &b| a.max(b));
    prop_assert!(
        diff <= REL_TOL * scale,
        "{what}: got {got:?}, want {want:?}, diff {diff}, scale {scale}"
    );
    Ok(())
}

fn check_against_reference(parents: &[u16], local: &[Transform], root: Option<Affine3A>) -> Result<(), TestCaseError> {
    let skeleton = skeleton(parents, local);
    let mut output = vec![Affine3A::IDENTITY; local.len()];
    run_job(&skeleton, local, &mut output, None, root.as_ref());
    let root_m = root.map_or(Mat4::IDENTITY, Mat4::from);
    for (j, got) in output.iter().enumerate() {
        assert_close(
            got,
            &world(parents, local, &root_m, j),
            &format!("joint {j} of {}", local.len()),
        )?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn small_hierarchies_match_recursive_reference(
        (parents, local) in hierarchy_strategy(1..=23),
        root in prop::option::of(affine_strategy()),
    ) {
        check_against_reference(&parents, &local, root)?;
    }

    #[test]
    fn one_joint_matches_recursive_reference(
        (parents, local) in hierarchy_strategy(1..=1),
        root in prop::option::of(affine_strategy()),
    ) {
        check_against_reference(&parents, &local, root)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn large_hierarchies_match_recursive_reference(
        (parents, local) in hierarchy_strategy(257..=1000),
        root in prop::option::of(affine_strategy()),
    ) {
        check_against_reference(&parents, &local, root)?;
    }

    #[test]
    fn partial_update_equals_full_update(
        (parents, local) in hierarchy_strategy(1..=600),
        pick in 0.0f64..1.0,
        changes in prop::collection::vec(transform_strategy(), 1000),
        root in prop::option::of(affine_strategy()),
    ) {
        let n = parents.len();
        let from = ((pick * n as f64) as usize).min(n - 1);
        let skeleton = skeleton(&parents, &local);
        let mut partial = vec![Affine3A::IDENTITY; n];
        run_job(&skeleton, &local, &mut partial, None, root.as_ref());

        // Change only the subtree of `from`: `from` and its descendants.
        let mut in_subtree = vec![false; n];
        let mut changed = local.clone();
        for j in from..n {
            let p = parents[j];
            in_subtree[j] = j == from || (p != NO_PARENT && in_subtree[usize::from(p)]);
            if in_subtree[j] {
                changed[j] = changes[j];
            }
        }
        run_job(&skeleton, &changed, &mut partial, Some(from), root.as_ref());

        let mut full = vec![Affine3A::IDENTITY; n];
        run_job(&skeleton, &changed, &mut full, None, root.as_ref());
        for j in 0..n {
            // The same operations in the same order: the results are bit-identical.
            prop_assert_eq!(partial[j], full[j], "joint {} of {}, from {}", j, n, from);
        }
    }
}
