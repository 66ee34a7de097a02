//! Animation clips: checks of every glTF animation, and one [`Clip`] per (animation, skeleton it animates).
//!
//! Key times and values are kept exactly as the file stores them (after dequantization), each channel
//! with its own times; evaluation is [`Clip::sample_channel`]'s job. Morph target weight channels are
//! ignored with a warning.

use std::collections::{HashMap, HashSet};

use glam::Vec4;
use gltf::json;
use gltf::json::accessor::{ComponentType, Type};
use gltf::json::animation::{Interpolation as GltfInterpolation, Property as GltfProperty};
use gltf::json::validation::Checked;

use super::Source;
use super::accessor::AccessorData;
use super::hierarchy::node_name;
use super::validate::UNIT_QUATERNION_TOLERANCE;
use crate::{Channel, Clip, Error, Interpolation, Property, Result, Skeleton};

/// The name of animation `index` for messages: `animation 0 ('Walk')` or `animation 0`.
pub(super) fn animation_name(root: &json::Root, index: usize) -> String {
    match root.animations.get(index).and_then(|a| a.name.as_deref()) {
        Some(name) => format!("animation {index} ('{name}')"),
        None => format!("animation {index}"),
    }
}

/// The glTF name of a target path.
fn path_name(path: GltfProperty) -> &'static str {
    match path {
        GltfProperty::Translation => "translation",
        GltfProperty::Rotation => "rotation",
        GltfProperty::Scale => "scale",
        GltfProperty::MorphTargetWeights => "weights",
    }
}

/// A sampler's parts, resolved and checked.
struct Sampler<'s> {
    input: &'s AccessorData,
    output: &'s AccessorData,
    interpolation: GltfInterpolation,
}

/// Resolves and checks sampler `s` of animation `a`: input format, bounds and times, and interpolation.
fn sampler<'s>(src: &'s Source<'_>, a: usize, s: usize) -> Result<Sampler<'s>> {
    let root = &src.root;
    let object = || format!("{} sampler {s}", animation_name(root, a));
    let sampler = root
        .animations
        .get(a)
        .and_then(|anim| anim.samplers.get(s))
        .ok_or_else(|| Error::invalid(object(), "does not exist"))?;
    let Checked::Valid(interpolation) = sampler.interpolation else {
        return Err(Error::invalid(object(), "has an invalid interpolation"));
    };
    let input_index = sampler.input.value();
    let input = src
        .accessor(input_index)
        .map_err(|e| Error::invalid(object(), format!("input: {e}")))?;
    let output = src
        .accessor(sampler.output.value())
        .map_err(|e| Error::invalid(object(), format!("output: {e}")))?;
    let input_name = || src.accessor_name(input_index);
    if input.ty != Type::Scalar || input.component_type != ComponentType::F32 {
        return Err(Error::invalid(
            input_name(),
            format!("is {}, but animation inputs must be SCALAR FLOAT", input.format()),
        ));
    }
    let json = root
        .accessors
        .get(input_index)
        .ok_or_else(|| Error::invalid(input_name(), "does not exist"))?;
    if json.min.is_none() || json.max.is_none() {
        return Err(Error::invalid(
            input_name(),
            "is an animation input without min and max",
        ));
    }
    if interpolation == GltfInterpolation::CubicSpline && input.count < 2 {
        return Err(Error::invalid(
            object(),
            format!("is CUBICSPLINE with {} key, but needs at least 2", input.count),
        ));
    }
    if input.has_data {
        let times = input.raw();
        if let Some((i, t)) = times.iter().enumerate().find(|(_, t)| **t < 0.0) {
            return Err(Error::invalid(
                input_name(),
                format!("key time {i} is negative ({t} s)"),
            ));
        }
        for (i, pair) in times.windows(2).enumerate() {
            if let [before, after] = *pair
                && after <= before
            {
                return Err(Error::invalid(
                    input_name(),
                    format!(
                        "key times must strictly increase, but key {} at {after} s follows {before} s",
                        i + 1
                    ),
                ));
            }
        }
    }
    Ok(Sampler {
        input,
        output,
        interpolation,
    })
}

/// Checks the output of a sampler for a channel that animates `path`: format, count and unit quaternions.
fn check_output(src: &Source<'_>, object: &str, sampler: &Sampler<'_>, path: GltfProperty) -> Result<()> {
    use ComponentType::{F32, I8, I16, U8, U16};
    let out = sampler.output;
    let output_name = || src.accessor_name(out.index);
    let (valid, expected) = match path {
        GltfProperty::Translation | GltfProperty::Scale => {
            (out.ty == Type::Vec3 && out.component_type == F32, "VEC3 FLOAT")
        }
        GltfProperty::Rotation => (
            out.ty == Type::Vec4
                && (out.component_type == F32 || (out.normalized && matches!(out.component_type, I8 | U8 | I16 | U16))),
            "VEC4 FLOAT or normalized BYTE, UNSIGNED_BYTE, SHORT or UNSIGNED_SHORT",
        ),
        GltfProperty::MorphTargetWeights => (
            out.ty == Type::Scalar
                && (out.component_type == F32 || (out.normalized && matches!(out.component_type, I8 | U8 | I16 | U16))),
            "SCALAR FLOAT or normalized integers",
        ),
    };
    if !valid {
        return Err(Error::invalid(
            object,
            format!(
                "output {} is {}, but {} outputs must be {expected}",
                output_name(),
                out.format(),
                path_name(path)
            ),
        ));
    }
    let per_key = if sampler.interpolation == GltfInterpolation::CubicSpline {
        3
    } else {
        1
    };
    let keys = sampler.input.count;
    let count_ok = match path {
        GltfProperty::MorphTargetWeights => out.count.is_multiple_of(keys * per_key) && out.count > 0,
        _ => out.count == keys * per_key,
    };
    if !count_ok {
        return Err(Error::invalid(
            object,
            format!(
                "output {} has {} elements for {keys} {} keys (expected {})",
                output_name(),
                out.count,
                interpolation_name(sampler.interpolation),
                keys * per_key
            ),
        ));
    }
    if path == GltfProperty::Rotation && out.has_data {
        let values = out.elements_to_vec::<4>();
        for (k, q) in values.iter().enumerate().skip(per_key / 2).step_by(per_key) {
            let len = Vec4::from_array(*q).length();
            if !len.is_finite() || (len - 1.0).abs() > UNIT_QUATERNION_TOLERANCE {
                return Err(Error::invalid(
                    object,
                    format!(
                        "output {} rotation key {} has length {len}, not 1",
                        output_name(),
                        k / per_key
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The glTF name of an interpolation mode.
fn interpolation_name(i: GltfInterpolation) -> &'static str {
    match i {
        GltfInterpolation::Linear => "LINEAR",
        GltfInterpolation::Step => "STEP",
        GltfInterpolation::CubicSpline => "CUBICSPLINE",
    }
}

/// Checks every animation: samplers, channels, targets, duplicate targets and outputs.
///
/// # Errors
///
/// [`Error::Invalid`] naming the animation channel, sampler or accessor at fault.
pub(super) fn check_animations(src: &Source<'_>) -> Result<()> {
    let root = &src.root;
    for (a, animation) in root.animations.iter().enumerate() {
        let name = animation_name(root, a);
        if animation.channels.is_empty() || animation.samplers.is_empty() {
            return Err(Error::invalid(&name, "must have at least one channel and one sampler"));
        }
        let samplers = (0..animation.samplers.len())
            .map(|s| sampler(src, a, s))
            .collect::<Result<Vec<_>>>()?;
        let mut targets = HashSet::new();
        for (c, channel) in animation.channels.iter().enumerate() {
            let object = format!("{name} channel {c}");
            let s = channel.sampler.value();
            let sampler = samplers
                .get(s)
                .ok_or_else(|| Error::invalid(&object, format!("refers to sampler {s}, which does not exist")))?;
            let node = channel.target.node.value();
            if node >= root.nodes.len() {
                return Err(Error::invalid(
                    &object,
                    format!("targets node {node}, which does not exist"),
                ));
            }
            let Checked::Valid(path) = channel.target.path else {
                return Err(Error::invalid(&object, "has an invalid target path"));
            };
            if !targets.insert((node, path_name(path))) {
                return Err(Error::invalid(
                    &object,
                    format!(
                        "targets {} of {} again; each target may be animated once",
                        path_name(path),
                        node_name(root, node)
                    ),
                ));
            }
            check_output(src, &object, sampler, path)?;
        }
    }
    Ok(())
}

/// The nodes whose translation, rotation or scale some animation targets. Indices are not checked here:
/// [`check_animations`] reports a channel that targets a node that does not exist.
pub(super) fn animated_nodes(root: &json::Root) -> HashSet<usize> {
    root.animations
        .iter()
        .flat_map(|a| &a.channels)
        .filter(|c| {
            matches!(
                c.target.path,
                Checked::Valid(GltfProperty::Translation | GltfProperty::Rotation | GltfProperty::Scale)
            )
        })
        .map(|c| c.target.node.value())
        .collect()
}

/// Builds one clip per (animation, skeleton that it animates), in animation order, then skeleton order.
///
/// # Errors
///
/// [`Error::Invalid`] naming the animation when a clip fails [`Clip::validate`], for example when a
/// zero-filled input accessor gives a joint channel non-increasing key times.
pub(super) fn build_clips(src: &mut Source<'_>, skeletons: &[Skeleton]) -> Result<Vec<Clip>> {
    let joint_maps: Vec<HashMap<usize, u16>> = skeletons
        .iter()
        .map(|s| {
            s.joint_nodes
                .iter()
                .enumerate()
                .filter_map(|(j, &node)| Some((node, u16::try_from(j).ok()?)))
                .collect()
        })
        .collect();
    let mut clips = Vec::new();
    let mut warnings = Vec::new();
    for (a, animation) in src.root.animations.iter().enumerate() {
        let name = animation_name(&src.root, a);
        let mut duration = 0.0f32;
        let mut unused = 0usize;
        let mut channels = Vec::with_capacity(animation.channels.len());
        for (c, channel) in animation.channels.iter().enumerate() {
            let s = channel.sampler.value();
            let sampler = sampler(src, a, s)?;
            let times = sampler.input.floats_to_vec();
            duration = times.iter().copied().fold(duration, f32::max);
            let Checked::Valid(path) = channel.target.path else {
                continue;
            };
            let property = match path {
                GltfProperty::Translation => Property::Translation,
                GltfProperty::Rotation => Property::Rotation,
                GltfProperty::Scale => Property::Scale,
                GltfProperty::MorphTargetWeights => {
                    warnings.push((
                        format!("{name} channel {c}"),
                        "animates morph target weights, which are ignored".to_owned(),
                    ));
                    continue;
                }
            };
            let node = channel.target.node.value();
            if !joint_maps.iter().any(|m| m.contains_key(&node)) {
                unused += 1;
                continue;
            }
            let interpolation = match sampler.interpolation {
                GltfInterpolation::Linear => Interpolation::Linear,
                GltfInterpolation::Step => Interpolation::Step,
                GltfInterpolation::CubicSpline => Interpolation::CubicSpline,
            };
            let values: Vec<Vec4> = match property {
                Property::Rotation => sampler
                    .output
                    .elements_to_vec::<4>()
                    .into_iter()
                    .map(Vec4::from_array)
                    .collect(),
                Property::Translation | Property::Scale => sampler
                    .output
                    .elements_to_vec::<3>()
                    .into_iter()
                    .map(|v| glam::Vec3::from_array(v).extend(0.0))
                    .collect(),
            };
            channels.push((node, property, interpolation, times, values));
        }
        if unused > 0 {
            warnings.push((
                name.clone(),
                format!("{unused} channels target nodes that are not joints of any skin and are ignored"),
            ));
        }
        for (s, skeleton) in skeletons.iter().enumerate() {
            let Some(joints) = joint_maps.get(s) else { continue };
            let clip_channels: Vec<Channel> = channels
                .iter()
                .filter_map(|(node, property, interpolation, times, values)| {
                    Some(Channel {
                        joint: *joints.get(node)?,
                        property: *property,
                        interpolation: *interpolation,
                        times: times.clone(),
                        values: values.clone(),
                    })
                })
                .collect();
            if clip_channels.is_empty() {
                continue;
            }
            let clip = Clip {
                name: animation.name.clone().unwrap_or_else(|| format!("animation {a}")),
                animation: a,
                skeleton: s,
                duration,
                channels: clip_channels,
            };
            clip.validate(skeleton)
                .map_err(|e| Error::invalid(format!("{name} for skeleton '{}'", skeleton.name), e.to_string()))?;
            clips.push(clip);
        }
    }
    for (object, message) in warnings {
        src.warn(object, message);
    }
    Ok(clips)
}

#[cfg(test)]
mod tests {
    use glam::Vec4;

    use super::super::import_slice;
    use super::super::test_support::DocBuilder;
    use crate::{Interpolation, Model, Property, Result};

    /// Joint node 0 with child 1, a skin of both, a mesh-less scene, and `animations`.
    fn animated(doc: DocBuilder, animations: &str) -> Result<Model> {
        let text = doc.finish(&format!(
            r#""nodes":[{{"children":[1]}},{{}},{{}}],"skins":[{{"joints":[0,1]}}],"animations":[{animations}]"#
        ));
        import_slice(text.as_bytes(), None)
    }

    #[test]
    fn rejects_non_unit_normalized_rotations() {
        let mut doc = DocBuilder::default();
        let times = doc.floats("SCALAR", 1, &[0.0, 1.0]);
        // As normalized unsigned shorts, 32767 is about 0.5, so the first key has length 0.5.
        let rotations = doc.u16s("VEC4", 4, &[0, 0, 0, 32767, 0, 0, 0, 65535], r#","normalized":true"#);
        let animations = format!(
            r#"{{"samplers":[{{"input":{times},"output":{rotations}}}],"channels":[{{"sampler":0,"target":{{"node":0,"path":"rotation"}}}}]}}"#
        );
        let e = animated(doc, &animations).expect_err("a non-unit key").to_string();
        assert!(e.contains("rotation key 0 has length 0.49"), "{e}");
    }

    #[test]
    fn keeps_keys_exactly_with_their_interpolation() {
        let mut doc = DocBuilder::default();
        let times = doc.floats("SCALAR", 1, &[0.5, 1.5]);
        let cubic = doc.floats(
            "VEC3",
            3,
            &[
                0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 4.0, 5.0, 6.0, 0.0, 0.0, 0.0,
            ],
        );
        let step_times = doc.floats("SCALAR", 1, &[0.0, 2.5]);
        let rotations = doc.u16s(
            "VEC4",
            4,
            &[0, 0, 0, 65535, 0, 0, 46341, 46341],
            r#","normalized":true"#,
        );
        let animations = format!(
            r#"{{"name":"Wave","samplers":[{{"input":{times},"output":{cubic},"interpolation":"CUBICSPLINE"}},
                {{"input":{step_times},"output":{rotations},"interpolation":"STEP"}}],
               "channels":[{{"sampler":0,"target":{{"node":1,"path":"translation"}}}},
                           {{"sampler":1,"target":{{"node":0,"path":"rotation"}}}},
                           {{"sampler":1,"target":{{"node":2,"path":"rotation"}}}}]}}"#
        );
        let model = animated(doc, &animations).expect("valid document");
        assert_eq!(model.clips.len(), 1);
        let clip = &model.clips[0];
        assert_eq!(clip.name, "Wave");
        assert!(
            (clip.duration - 2.5).abs() < 1e-6,
            "the duration covers every channel, joint or not"
        );
        assert_eq!(clip.channels.len(), 2);
        let translation = &clip.channels[0];
        assert_eq!((translation.joint, translation.property), (1, Property::Translation));
        assert_eq!(translation.interpolation, Interpolation::CubicSpline);
        assert_eq!(translation.times, vec![0.5, 1.5]);
        assert_eq!(translation.values.len(), 6);
        assert_eq!(translation.values[1], Vec4::new(1.0, 2.0, 3.0, 0.0));
        assert_eq!(translation.values[4], Vec4::new(4.0, 5.0, 6.0, 0.0));
        let rotation = &clip.channels[1];
        assert_eq!((rotation.joint, rotation.interpolation), (0, Interpolation::Step));
        assert_eq!(rotation.values[0], Vec4::new(0.0, 0.0, 0.0, 1.0));
        assert!((rotation.values[1].z - 46341.0 / 65535.0).abs() < 1e-7);
        assert!(
            model.warnings.iter().any(|w| w.message.contains("not joints")),
            "{:?}",
            model.warnings
        );
    }

    #[test]
    fn rejects_bad_samplers_and_channels() {
        /// Key times, scale values, interpolation, channels, and a part of the expected message.
        type Case<'a> = (&'a [f32], &'a [f32], &'a str, &'a str, &'a str);
        let cases: [Case<'_>; 6] = [
            (
                &[0.0, 1.0],
                &[1.0; 6],
                "LINEAR",
                r#"{"sampler":0,"target":{"node":0,"path":"scale"}},{"sampler":0,"target":{"node":0,"path":"scale"}}"#,
                "again",
            ),
            (
                &[0.0, 1.0],
                &[1.0; 9],
                "LINEAR",
                r#"{"sampler":0,"target":{"node":0,"path":"scale"}}"#,
                "expected 2",
            ),
            (
                &[0.0, 1.0],
                &[1.0; 6],
                "CUBICSPLINE",
                r#"{"sampler":0,"target":{"node":0,"path":"scale"}}"#,
                "expected 6",
            ),
            (
                &[1.0, 0.5],
                &[1.0; 6],
                "LINEAR",
                r#"{"sampler":0,"target":{"node":0,"path":"scale"}}"#,
                "strictly increase",
            ),
            (
                &[-1.0, 0.5],
                &[1.0; 6],
                "LINEAR",
                r#"{"sampler":0,"target":{"node":0,"path":"scale"}}"#,
                "negative",
            ),
            (
                &[0.0, 1.0],
                &[1.0; 6],
                "LINEAR",
                r#"{"sampler":0,"target":{"node":0,"path":"bogus"}}"#,
                "invalid target path",
            ),
        ];
        for (times, values, interpolation, channels, expected) in cases {
            let mut doc = DocBuilder::default();
            let input = doc.floats("SCALAR", 1, times);
            let output = doc.floats("VEC3", 3, values);
            let animations = format!(
                r#"{{"samplers":[{{"input":{input},"output":{output},"interpolation":"{interpolation}"}}],"channels":[{channels}]}}"#
            );
            let e = animated(doc, &animations).expect_err(expected).to_string();
            assert!(e.contains(expected), "expected '{expected}' in: {e}");
        }
    }

    #[test]
    fn weights_channels_are_ignored_with_a_warning() {
        let mut doc = DocBuilder::default();
        let input = doc.floats("SCALAR", 1, &[0.0, 1.0]);
        let output = doc.floats("SCALAR", 1, &[0.0, 1.0]);
        let animations = format!(
            r#"{{"samplers":[{{"input":{input},"output":{output}}}],"channels":[{{"sampler":0,"target":{{"node":1,"path":"weights"}}}}]}}"#
        );
        let model = animated(doc, &animations).expect("valid document");
        assert!(model.clips.is_empty());
        assert!(
            model
                .warnings
                .iter()
                .any(|w| w.message.contains("morph target weights")),
            "{:?}",
            model.warnings
        );
    }
}
