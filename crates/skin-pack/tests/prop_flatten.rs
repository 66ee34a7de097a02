//! Property and validity tests of `FlattenJob`.
//!
//! - For random skins, poses, pose maps and instance transforms, the parallel job equals the plain reference
//!   `palette_from_model` (which multiplies in glam's column form) within f32 rounding, in every mode: one palette
//!   per pose, shared poses through the cache, with and without folded instance transforms, across chunk sizes.
//! - Through the f16 formats, the decoded output equals the reference within the formats' own bounds, with the
//!   translation origin at the instance position.
//! - Every validity rule has a row in a table test, and a non-finite input is reported with its pose and joint.
//! - The order in which the job encodes a window of palettes (`group_by_pose`, a counting sort) equals its plain
//!   twin, a stable sort by pose bucket.

use anim_pose::{NO_PARENT, Skeleton, Transform};
use glam::{Affine3A, Mat4, Quat, Vec3, Vec3A};
use proptest::prelude::*;
use skin_pack::{
    Error, F16Format, FLATTEN_CHUNK, FLATTEN_WINDOW, FlattenCache, FlattenJob, Mat3x4F16, POSE_BUCKETS, PaletteBinding,
    PaletteEntry, PaletteFormat, QtF16, group_by_pose, palette_from_model,
};

fn affine(scale: Vec3, axis: Vec3, angle: f32, t: Vec3) -> Affine3A {
    Affine3A::from_scale_rotation_translation(scale, Quat::from_axis_angle(axis.normalize(), angle), t)
}

fn affine_strategy(max_t: f32, uniform: bool) -> impl Strategy<Value = Affine3A> {
    (
        (0.5f32..2.0, 0.5f32..2.0, 0.5f32..2.0),
        (-1.0f32..1.0, -1.0f32..1.0, 0.1f32..1.0),
        -3.1f32..3.1,
        (-max_t..max_t, -max_t..max_t, -max_t..max_t),
    )
        .prop_map(move |((sx, sy, sz), (ax, ay, az), angle, (tx, ty, tz))| {
            let scale = if uniform {
                Vec3::splat(sx)
            } else {
                Vec3::new(sx, sy, sz)
            };
            affine(scale, Vec3::new(ax, ay, az), angle, Vec3::new(tx, ty, tz))
        })
}

/// An instance transform: [`affine_strategy`]'s, or one turned about +Y only (a character on the ground, which
/// QtF16 folds without the zero products).
fn instance_strategy(max_t: f32, uniform: bool) -> impl Strategy<Value = Affine3A> {
    prop_oneof![
        affine_strategy(max_t, uniform),
        (0.5f32..2.0, -3.1f32..3.1, (-max_t..max_t, -max_t..max_t, -max_t..max_t))
            .prop_map(|(s, angle, (tx, ty, tz))| affine(Vec3::splat(s), Vec3::Y, angle, Vec3::new(tx, ty, tz))),
    ]
}

/// A skeleton of `joints` joints whose skin uses `skin` of them, in a scrambled order, with random IBMs.
fn skeleton(joints: usize, skin: &[u16], ibms: &[Affine3A]) -> Skeleton {
    let parents = (0..joints)
        .map(|j| if j == 0 { NO_PARENT } else { (j as u16 - 1) / 2 })
        .collect();
    let mut s = Skeleton::from_parents("flatten", parents, vec![Transform::IDENTITY; joints]).expect("valid");
    s.skin_joints = skin.to_vec();
    s.inverse_bind_matrices = ibms.iter().map(|m| Mat4::from(*m)).collect();
    s
}

/// The reference palette of `pose` with transform `t`, as f32 rows.
fn reference(s: &Skeleton, pose: &[Affine3A], t: Option<&Affine3A>) -> Vec<Affine3A> {
    let mut out = vec![Affine3A::IDENTITY; s.skin_joints.len()];
    palette_from_model(s, pose, t, &mut out).expect("reference");
    out
}

fn close(a: &Affine3A, b: &Affine3A, tol: f32) -> bool {
    let (a, b) = (Mat4::from(*a), Mat4::from(*b));
    let scale = b.abs().to_cols_array().iter().fold(1.0f32, |m, &x| m.max(x));
    a.abs_diff_eq(b, tol * scale)
}

#[derive(Debug, Clone)]
struct Case {
    joints: usize,
    skin: Vec<u16>,
    ibms: Vec<Affine3A>,
    poses: Vec<Affine3A>,
    pose_of: Vec<u32>,
    transforms: Vec<Affine3A>,
    /// The skeleton's root transform, folded in front of every palette.
    root: Affine3A,
}

fn case_strategy(uniform: bool, max_world: f32) -> impl Strategy<Value = Case> {
    (
        1usize..20,
        1usize..5,
        0usize..3 * FLATTEN_CHUNK,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_flat_map(move |(joints, pose_count, palettes, shared, folded)| {
            let skin = prop::collection::vec(0..joints as u16, 1..=joints);
            let ibms = prop::collection::vec(affine_strategy(2.0, uniform), joints);
            let poses = prop::collection::vec(affine_strategy(2.0, uniform), joints * pose_count);
            let pose_of = if shared {
                prop::collection::vec(0..pose_count as u32, palettes).boxed()
            } else {
                Just(Vec::new()).boxed()
            };
            let n = if shared { palettes } else { pose_count };
            let transforms = if folded {
                prop::collection::vec(instance_strategy(max_world, uniform), n).boxed()
            } else {
                Just(Vec::new()).boxed()
            };
            let root = prop_oneof![Just(Affine3A::IDENTITY), affine_strategy(2.0, uniform)];
            (Just(joints), skin, ibms, poses, pose_of, transforms, root).prop_map(
                |(joints, skin, ibms, poses, pose_of, transforms, root)| {
                    let ibms = ibms[..skin.len()].to_vec();
                    Case {
                        joints,
                        skin,
                        ibms,
                        poses,
                        pose_of,
                        transforms,
                        root,
                    }
                },
            )
        })
}

/// Runs the job for `case` into a fresh output of format `F` and returns it with the reference palettes.
fn run_case<F: PaletteFormat>(case: &Case) -> (Vec<F>, Vec<Vec<Affine3A>>) {
    let mut s = skeleton(case.joints, &case.skin, &case.ibms);
    s.root_transform = Mat4::from(case.root);
    let binding = PaletteBinding::new(&s).expect("binds");
    let pose_count = case.poses.len() / case.joints;
    let palettes = if case.pose_of.is_empty() {
        pose_count
    } else {
        case.pose_of.len()
    };
    let mut cache = FlattenCache::new(&binding, pose_count);
    let mut out = vec![F::zeroed(); palettes * case.skin.len()];
    let mut streamed = vec![F::zeroed(); palettes * case.skin.len()];
    for (output, streaming) in [(&mut out, false), (&mut streamed, true)] {
        FlattenJob {
            binding: &binding,
            poses: &case.poses,
            pose_of: &case.pose_of,
            transforms: &case.transforms,
            cache: &mut cache,
            output,
            streaming,
        }
        .run()
        .expect("a valid job runs");
    }
    // Streaming stores change how the bytes are written, never which.
    assert!(bytemuck::cast_slice::<F, u8>(&out) == bytemuck::cast_slice::<F, u8>(&streamed));
    let expected = (0..palettes)
        .map(|i| {
            let p = case.pose_of.get(i).map_or(i, |&p| p as usize);
            // Palettes are `T × root × model × inverse bind`.
            let world = case.transforms.get(i).map_or(case.root, |t| *t * case.root);
            reference(&s, &case.poses[p * case.joints..][..case.joints], Some(&world))
        })
        .collect();
    (out, expected)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn f32_equals_reference(case in case_strategy(false, 100.0)) {
        let (out, expected) = run_case::<PaletteEntry>(&case);
        let s = case.skin.len();
        for (i, palette) in expected.iter().enumerate() {
            for (k, want) in palette.iter().enumerate() {
                let got = out[i * s + k].to_mat4();
                prop_assert!(close(&Affine3A::from_mat4(got), want, 1e-5), "palette {i} joint {k}: {got} vs {want}");
            }
        }
    }

    #[test]
    fn f16_formats_decode_to_reference(case in case_strategy(true, 1000.0)) {
        let s = case.skin.len();
        let (m34, expected) = run_case::<Mat3x4F16>(&case);
        let (qt, _) = run_case::<QtF16>(&case);
        for (i, palette) in expected.iter().enumerate() {
            // The origin is the instance position when transforms are folded in, zero otherwise.
            let origin = case.transforms.get(i).map_or(Vec3A::ZERO, |t| t.translation);
            for (k, want) in palette.iter().enumerate() {
                // The job's f32 product may differ from the reference by f32 rounding before encoding.
                let slack = 1e-4 * (1.0 + (want.translation - origin).abs().max_element());
                let got = m34[i * s + k].decode(origin);
                let bound = Mat3x4F16::vertex_error_bound(want, origin, 1.0);
                let d = (got.transform_point3a(Vec3A::X) - want.transform_point3a(Vec3A::X)).length();
                prop_assert!(d <= bound + slack, "Mat3x4F16 palette {i} joint {k}: {d} > {bound}");
                let got = qt[i * s + k].decode(origin);
                let bound = QtF16::vertex_error_bound(want, origin, 1.0);
                let d = (got.transform_point3a(Vec3A::X) - want.transform_point3a(Vec3A::X)).length();
                prop_assert!(d <= bound + slack, "QtF16 palette {i} joint {k}: {d} > {bound}");
            }
        }
    }
}

proptest! {
    /// `group_by_pose` lists every palette of the window once, by pose bucket, each bucket in index order: the
    /// order of a stable sort by `pose mod POSE_BUCKETS`, for few poses (each pose's palettes then adjacent) and
    /// for more poses than buckets.
    #[test]
    fn grouping_equals_a_stable_sort_by_bucket(
        pose_of in (1u32..2000).prop_flat_map(|poses| prop::collection::vec(0..poses, 0..=FLATTEN_WINDOW)),
    ) {
        let mut order = [0u16; FLATTEN_WINDOW];
        let fast = group_by_pose(&pose_of, &mut order);
        let mut plain: Vec<u16> = (0..pose_of.len()).map(|i| u16::try_from(i).expect("one window")).collect();
        plain.sort_by_key(|&i| pose_of[usize::from(i)] as usize % POSE_BUCKETS);
        prop_assert_eq!(fast, &plain[..]);
        if pose_of.iter().all(|&p| (p as usize) < POSE_BUCKETS) {
            // Each pose's palettes form one run.
            let runs = fast.windows(2).filter(|w| pose_of[usize::from(w[0])] != pose_of[usize::from(w[1])]).count();
            let mut poses = pose_of.clone();
            poses.sort_unstable();
            poses.dedup();
            prop_assert_eq!(runs + 1, poses.len().max(1));
        }
    }
}

/// A 3-joint skeleton whose skin uses joints 2 and 0, and one valid pose of it.
fn small() -> (Skeleton, Vec<Affine3A>) {
    let ibm = affine(Vec3::ONE, Vec3::Y, 0.3, Vec3::new(0.0, -1.0, 0.0));
    let s = skeleton(3, &[2, 0], &[ibm, Affine3A::IDENTITY]);
    let pose = vec![affine(Vec3::ONE, Vec3::Z, 0.2, Vec3::X); 3];
    (s, pose)
}

#[test]
fn validity_rules() {
    let (s, pose) = small();
    let binding = PaletteBinding::new(&s).expect("binds");
    let two_poses: Vec<Affine3A> = pose.iter().chain(&pose).copied().collect();
    let mut cache = FlattenCache::new(&binding, 2);
    let mut small_cache = FlattenCache::new(&binding, 1);
    let t = [Affine3A::IDENTITY; 3];
    let mut out = [PaletteEntry::IDENTITY; 8];
    // (what, poses, pose_of, transforms, output length, small cache, expected error)
    type Row<'a> = (
        &'a str,
        &'a [Affine3A],
        &'a [u32],
        &'a [Affine3A],
        usize,
        bool,
        Option<Error>,
    );
    let rows: [Row<'_>; 8] = [
        ("valid, one palette per pose", &two_poses, &[], &[], 4, false, None),
        ("valid, shared poses", &two_poses, &[1, 0, 1], &t, 6, false, None),
        ("empty crowd", &[], &[], &[], 0, false, None),
        (
            "a partial pose",
            &two_poses[..4],
            &[],
            &[],
            8,
            false,
            Some(Error::BufferSize {
                what: "model-space poses (a whole number of poses of the skeleton's joints)",
                expected: 6,
                actual: 4,
            }),
        ),
        (
            "output too small",
            &two_poses,
            &[],
            &[],
            3,
            false,
            Some(Error::BufferSize {
                what: "flatten output (palettes × skin joints)",
                expected: 4,
                actual: 3,
            }),
        ),
        (
            "transforms of the wrong count",
            &two_poses,
            &[],
            &t,
            4,
            false,
            Some(Error::BufferSize {
                what: "instance transforms (one per palette, or none)",
                expected: 2,
                actual: 3,
            }),
        ),
        (
            "a pose out of range",
            &two_poses,
            &[0, 2],
            &[],
            4,
            false,
            Some(Error::PoseOutOfRange {
                palette: 1,
                pose: 2,
                pose_count: 2,
            }),
        ),
        (
            "a cache too small",
            &two_poses,
            &[0, 1],
            &[],
            4,
            true,
            Some(Error::BufferSize {
                what: "flatten cache (poses it holds; make it with FlattenCache::new for this skin)",
                expected: 2,
                actual: 1,
            }),
        ),
    ];
    for (what, poses, pose_of, transforms, len, small, expected) in rows {
        let result = FlattenJob {
            binding: &binding,
            poses,
            pose_of,
            transforms,
            cache: if small { &mut small_cache } else { &mut cache },
            output: &mut out[..len],
            streaming: false,
        }
        .run();
        assert_eq!(result.err(), expected, "{what}");
    }
    // Surplus output entries are untouched.
    let mut out = [PaletteEntry { rows: [[7.0; 4]; 3] }; 5];
    FlattenJob {
        binding: &binding,
        poses: &two_poses,
        pose_of: &[],
        transforms: &[],
        cache: &mut cache,
        output: &mut out,
        streaming: true,
    }
    .run()
    .expect("runs");
    assert_eq!(out[4], PaletteEntry { rows: [[7.0; 4]; 3] });
}

#[test]
fn non_finite_inputs_name_the_pose_and_joint() {
    let (s, pose) = small();
    let binding = PaletteBinding::new(&s).expect("binds");
    let mut poses: Vec<Affine3A> = pose.iter().chain(&pose).copied().collect();
    poses[3 + 2].translation.y = f32::NAN; // pose 1, joint 2 (skin joint 0)
    let mut cache = FlattenCache::new(&binding, 2);
    let mut out = [PaletteEntry::IDENTITY; 6];
    for pose_of in [&[][..], &[0, 1, 0][..]] {
        let result = FlattenJob {
            binding: &binding,
            poses: &poses,
            pose_of,
            transforms: &[],
            cache: &mut cache,
            output: &mut out,
            streaming: true,
        }
        .run();
        assert_eq!(
            result,
            Err(Error::NonFinite {
                what: "model-space pose",
                index: 1,
                joint: Some(2)
            }),
            "pose_of {pose_of:?}"
        );
    }
    let poses: Vec<Affine3A> = pose.iter().chain(&pose).copied().collect();
    let mut transforms = [Affine3A::IDENTITY; 2];
    transforms[1].matrix3.x_axis.x = f32::INFINITY;
    let result = FlattenJob {
        binding: &binding,
        poses: &poses,
        pose_of: &[],
        transforms: &transforms,
        cache: &mut cache,
        output: &mut out[..4],
        streaming: true,
    }
    .run();
    assert_eq!(
        result,
        Err(Error::NonFinite {
            what: "instance transform of palette",
            index: 1,
            joint: None
        })
    );
    // Finite inputs whose product overflows are reported too.
    let huge = Affine3A::from_scale(Vec3::splat(1e30));
    let result = FlattenJob {
        binding: &binding,
        poses: &[huge; 3],
        pose_of: &[],
        transforms: &[huge],
        cache: &mut cache,
        output: &mut out[..2],
        streaming: true,
    }
    .run();
    assert!(
        matches!(result, Err(Error::NonFinite { what, index: 0, joint: Some(0) }) if what.contains("overflowed")),
        "{result:?}"
    );
    let e = Error::NonFinite {
        what: "model-space pose",
        index: 1,
        joint: Some(2),
    };
    assert_eq!(e.to_string(), "model-space pose 1, joint 2: not finite");
}

/// The f16 formats' cached paths (SIMD kernels where the CPU has them) report a non-finite instance transform,
/// linear part or translation, and a product that overflows; and finite values past the f16 range are clamped to
/// ±65504 as `encode` does, never written as infinity.
fn f16_cached_edges<F: F16Format + std::fmt::Debug>() {
    let (s, pose) = small();
    let binding = PaletteBinding::new(&s).expect("binds");
    let mut cache = FlattenCache::new(&binding, 1);
    let mut out = vec![F::zeroed(); 6];
    let good = affine(Vec3::splat(2.0), Vec3::Y, 0.7, Vec3::new(5.0, 0.0, -3.0));
    let mut run = |pose: &[Affine3A], transforms: &[Affine3A], out: &mut [F]| {
        FlattenJob {
            binding: &binding,
            poses: pose,
            pose_of: &[0, 0, 0],
            transforms,
            cache: &mut cache,
            output: out,
            streaming: true,
        }
        .run()
    };
    let mut nan_linear = good;
    nan_linear.matrix3.y_axis.z = f32::NAN;
    let mut inf_translation = good;
    inf_translation.translation.x = f32::INFINITY;
    for bad in [nan_linear, inf_translation] {
        let result = run(&pose, &[good, bad, good], &mut out);
        assert_eq!(
            result,
            Err(Error::NonFinite {
                what: "instance transform of palette",
                index: 1,
                joint: None
            }),
            "{} {bad:?}",
            F::NAME
        );
    }
    let huge = Affine3A::from_scale(Vec3::splat(1e30));
    let result = run(&[huge; 3], &[good, huge, good], &mut out);
    assert!(
        matches!(result, Err(Error::NonFinite { what, index: 1, joint: Some(_) }) if what.contains("overflowed")),
        "{} {result:?}",
        F::NAME
    );
    // A NaN in the shared pose, and finite pose values whose skinning matrix overflows (skin joint 0 reads joint 2,
    // whose inverse bind matrix moves by -1 along y: `-f32::MAX − f32::MAX`), are reported by the cache's
    // preparation (QtF16's one pass from the pose included), named.
    let mut nan_pose = pose.clone();
    nan_pose[2].translation.y = f32::NAN;
    assert_eq!(
        run(&nan_pose, &[good; 3], &mut out),
        Err(Error::NonFinite {
            what: "model-space pose",
            index: 0,
            joint: Some(2)
        }),
        "{}",
        F::NAME
    );
    let mut overflowing = pose.clone();
    overflowing[2].matrix3.y_axis.x = f32::MAX;
    overflowing[2].translation.x = -f32::MAX;
    let result = run(&overflowing, &[good; 3], &mut out);
    assert!(
        matches!(result, Err(Error::NonFinite { what, index: 0, joint: Some(0) }) if what.contains("overflowed")),
        "{} {result:?}",
        F::NAME
    );
    // An offset of 1e5 from the instance origin is past f16's range: clamped, not infinite, not an error.
    let far = [Affine3A::from_translation(Vec3::new(1e5, -1e5, 3.0)); 3];
    run(&far, &[Affine3A::IDENTITY; 3], &mut out).expect("finite values are clamped");
    for (i, e) in out.iter().enumerate() {
        let m = e.decode(Vec3A::ZERO);
        let want = skin_pack::F16_MAX;
        assert!(m.is_finite(), "{} entry {i}: {m:?}", F::NAME);
        assert_eq!(
            (m.translation.x, m.translation.y),
            (want, -want),
            "{} entry {i}",
            F::NAME
        );
    }
}

#[test]
fn f16_cached_paths_report_non_finite_and_clamp() {
    f16_cached_edges::<Mat3x4F16>();
    f16_cached_edges::<QtF16>();
}

#[test]
fn binding_rejects_bad_skins() {
    let (mut s, _) = small();
    s.inverse_bind_matrices.pop();
    assert_eq!(
        PaletteBinding::new(&s),
        Err(Error::BufferSize {
            what: "inverse bind matrices (one per skin joint)",
            expected: 2,
            actual: 1
        })
    );
    let (mut s, _) = small();
    s.skin_joints[1] = 3;
    assert_eq!(
        PaletteBinding::new(&s),
        Err(Error::SkinJointOutOfRange {
            skin_joint: 1,
            joint: 3,
            joint_count: 3
        })
    );
    let (mut s, _) = small();
    s.inverse_bind_matrices[1].w_axis.x = f32::NAN;
    assert_eq!(
        PaletteBinding::new(&s),
        Err(Error::NotAffine {
            what: "inverse bind matrix of skin joint",
            index: 1
        })
    );
    for bad in [f32::NAN, 0.5] {
        let (mut s, _) = small();
        // A non-finite element, or a projective last row.
        s.root_transform.x_axis.w = bad;
        assert_eq!(
            PaletteBinding::new(&s),
            Err(Error::NotAffine {
                what: "root transform of the skeleton",
                index: 0
            })
        );
    }
}
