//! The accessor reader: bounds-checked reads of glTF accessors, with `normalized` dequantization,
//! sparse substitution and zero-filled accessors without a buffer view.
//!
//! Every byte is read through `slice::get`, so a malformed accessor is an [`Error`], never a panic.
//! Values are kept as `f64`, which holds every `f32`, `u32` and smaller integer exactly; callers take
//! raw integers (joint and vertex indices) or dequantized floats from the same data.

use std::borrow::Cow;

use gltf::json;
use gltf::json::accessor::{ComponentType, Type};
use gltf::json::validation::Checked;

use super::buffers::{view_bytes, view_name};
use crate::{Error, Result};

/// The most components (`count` times the component count) of an accessor without a buffer view.
///
/// Such an accessor is all zeros plus its sparse values, so no buffer bounds its size; 2^24 components
/// (128 MiB decoded) is far more than any real zero-filled or sparse accessor needs.
const MAX_ZERO_FILLED_COMPONENTS: usize = 1 << 24;

/// The number of components of an accessor type.
pub(super) fn component_count(ty: Type) -> usize {
    match ty {
        Type::Scalar => 1,
        Type::Vec2 => 2,
        Type::Vec3 => 3,
        Type::Vec4 | Type::Mat2 => 4,
        Type::Mat3 => 9,
        Type::Mat4 => 16,
    }
}

/// The glTF name of an accessor type.
pub(super) fn type_name(ty: Type) -> &'static str {
    match ty {
        Type::Scalar => "SCALAR",
        Type::Vec2 => "VEC2",
        Type::Vec3 => "VEC3",
        Type::Vec4 => "VEC4",
        Type::Mat2 => "MAT2",
        Type::Mat3 => "MAT3",
        Type::Mat4 => "MAT4",
    }
}

/// The glTF name of a component type.
pub(super) fn component_name(ct: ComponentType) -> &'static str {
    match ct {
        ComponentType::I8 => "BYTE",
        ComponentType::U8 => "UNSIGNED_BYTE",
        ComponentType::I16 => "SHORT",
        ComponentType::U16 => "UNSIGNED_SHORT",
        ComponentType::U32 => "UNSIGNED_INT",
        ComponentType::F32 => "FLOAT",
    }
}

/// The byte layout of one element: matrix columns of 1- and 2-byte components are padded to 4 bytes.
#[derive(Clone, Copy, Debug)]
struct Layout {
    /// Bytes per component.
    size: usize,
    /// Rows per column (the component count for scalars and vectors).
    rows: usize,
    /// Columns (1 for scalars and vectors).
    columns: usize,
    /// Bytes from one column to the next.
    column_stride: usize,
}

impl Layout {
    fn new(ty: Type, ct: ComponentType) -> Self {
        let size = ct.size();
        let (rows, columns) = match ty {
            Type::Mat2 => (2, 2),
            Type::Mat3 => (3, 3),
            Type::Mat4 => (4, 4),
            other => (component_count(other), 1),
        };
        let column_stride = if columns > 1 {
            (rows * size).next_multiple_of(4)
        } else {
            rows * size
        };
        Self {
            size,
            rows,
            columns,
            column_stride,
        }
    }

    /// The size of one element in bytes.
    fn element_size(self) -> usize {
        self.column_stride * self.columns
    }

    /// The byte offset of component `k` within an element.
    fn component_offset(self, k: usize) -> usize {
        (k / self.rows) * self.column_stride + (k % self.rows) * self.size
    }
}

/// Reads one component of type `ct` at `pos` in `bytes`.
fn read_component(bytes: &[u8], pos: usize, ct: ComponentType) -> Option<f64> {
    let end = pos.checked_add(ct.size())?;
    let b = bytes.get(pos..end)?;
    Some(match ct {
        ComponentType::I8 => f64::from(i8::from_le_bytes([*b.first()?])),
        ComponentType::U8 => f64::from(*b.first()?),
        ComponentType::I16 => f64::from(i16::from_le_bytes(b.try_into().ok()?)),
        ComponentType::U16 => f64::from(u16::from_le_bytes(b.try_into().ok()?)),
        ComponentType::U32 => f64::from(u32::from_le_bytes(b.try_into().ok()?)),
        ComponentType::F32 => f64::from(f32::from_le_bytes(b.try_into().ok()?)),
    })
}

/// Dequantizes a raw component as the glTF specification (section 3.11) prescribes for normalized integers.
fn dequantize(raw: f64, ct: ComponentType, normalized: bool) -> f32 {
    #[expect(
        clippy::cast_possible_truncation,
        reason = "every raw accessor value is an exact f32 or an integer"
    )]
    let v = raw as f32;
    if !normalized {
        return v;
    }
    match ct {
        ComponentType::I8 => (v / 127.0).max(-1.0),
        ComponentType::U8 => v / 255.0,
        ComponentType::I16 => (v / 32767.0).max(-1.0),
        ComponentType::U16 => v / 65535.0,
        ComponentType::U32 | ComponentType::F32 => v,
    }
}

/// The decoded contents of one accessor.
#[derive(Clone, Debug)]
pub(super) struct AccessorData {
    /// The accessor index.
    pub index: usize,
    /// The component type.
    pub component_type: ComponentType,
    /// The element type.
    pub ty: Type,
    /// Whether integer components are normalized.
    pub normalized: bool,
    /// The number of elements.
    pub count: usize,
    /// True when the accessor has data (a buffer view or sparse values); false when it is all zeros.
    pub has_data: bool,
    /// Raw component values, `count * component_count(ty)` of them.
    values: Vec<f64>,
}

impl AccessorData {
    /// The number of components per element.
    pub fn components(&self) -> usize {
        component_count(self.ty)
    }

    /// The raw values of all components, element after element.
    pub fn raw(&self) -> &[f64] {
        &self.values
    }

    /// The dequantized values of all components, element after element.
    pub fn floats_to_vec(&self) -> Vec<f32> {
        self.values
            .iter()
            .map(|&v| dequantize(v, self.component_type, self.normalized))
            .collect()
    }

    /// The dequantized elements as fixed-size arrays; `N` must equal the component count.
    pub fn elements_to_vec<const N: usize>(&self) -> Vec<[f32; N]> {
        debug_assert_eq!(N, self.components(), "element size mismatch");
        self.values
            .chunks_exact(N)
            .map(|c| {
                let mut out = [0.0; N];
                for (o, &v) in out.iter_mut().zip(c) {
                    *o = dequantize(v, self.component_type, self.normalized);
                }
                out
            })
            .collect()
    }

    /// The raw values as unsigned integers, for index and joint accessors of integer type.
    pub fn integers_to_vec(&self) -> Vec<u32> {
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "callers only use this on unsigned integer accessors, whose values are exact u32"
        )]
        self.values.iter().map(|&v| v as u32).collect()
    }

    /// The short description `SCALAR FLOAT` (with `normalized` when set), for messages.
    pub fn format(&self) -> String {
        format!(
            "{} {}{}",
            type_name(self.ty),
            if self.normalized { "normalized " } else { "" },
            component_name(self.component_type)
        )
    }
}

/// The name of accessor `index` with what uses it, for example `accessor 12 (WEIGHTS_0 of mesh 'Body' primitive 0)`.
pub(super) fn accessor_name(root: &json::Root, labels: &[Option<String>], index: usize) -> String {
    let name = root.accessors.get(index).and_then(|a| a.name.as_deref());
    let label = labels.get(index).and_then(Option::as_deref);
    match (name, label) {
        (Some(name), Some(label)) => format!("accessor {index} '{name}' ({label})"),
        (None, Some(label)) => format!("accessor {index} ({label})"),
        (Some(name), None) => format!("accessor {index} '{name}'"),
        (None, None) => format!("accessor {index}"),
    }
}

/// Reads accessor `index`. Returns `Ok(None)` when its `type` is not a glTF type (the caller decides
/// whether that is an error: it is only a warning for an unused accessor).
///
/// # Errors
///
/// [`Error::Invalid`] naming the accessor (as `object`) when it does not exist, its component type is
/// invalid, `normalized` is set on a float or `UNSIGNED_INT` accessor, `byteOffset` is given without a
/// buffer view, the data is misaligned or runs past its buffer view, or its sparse part is malformed.
pub(super) fn read_accessor(
    root: &json::Root,
    buffers: &[Cow<'_, [u8]>],
    index: usize,
    object: &str,
) -> Result<Option<AccessorData>> {
    let err = |message: String| Error::invalid(object, message);
    let accessor = root
        .accessors
        .get(index)
        .ok_or_else(|| err("does not exist".to_owned()))?;
    let Checked::Valid(ty) = accessor.type_ else {
        return Ok(None);
    };
    let Checked::Valid(json::accessor::GenericComponentType(ct)) = accessor.component_type else {
        return Err(err("has an invalid componentType".to_owned()));
    };
    if accessor.normalized && matches!(ct, ComponentType::F32 | ComponentType::U32) {
        return Err(err(format!(
            "is normalized, which is not allowed for {} components",
            component_name(ct)
        )));
    }
    let count = usize::try_from(accessor.count.0).map_err(|_| err("count does not fit in memory".to_owned()))?;
    if count == 0 {
        return Err(err("count must be at least 1".to_owned()));
    }
    let layout = Layout::new(ty, ct);
    let components = component_count(ty);
    let total = count
        .checked_mul(components)
        .ok_or_else(|| err(format!("count {count} is too large")))?;
    let mut values;
    match accessor.buffer_view {
        None => {
            if accessor.byte_offset.is_some() {
                return Err(err("has a byteOffset but no bufferView".to_owned()));
            }
            // An accessor without a buffer view starts as zeros, so no buffer bounds its count; cap it so
            // that a huge count cannot exhaust memory.
            if total > MAX_ZERO_FILLED_COMPONENTS {
                return Err(err(format!(
                    "count {count} is too large for an accessor without a bufferView (at most {MAX_ZERO_FILLED_COMPONENTS} components)"
                )));
            }
            values = Vec::new();
            values
                .try_reserve_exact(total)
                .map_err(|_| err(format!("count {count} is too large")))?;
            values.resize(total, 0.0);
        }
        Some(view_index) => {
            let view_index = view_index.value();
            let view_object = view_name(root, view_index);
            let bytes = view_bytes(root, buffers, view_index).map_err(|e| err(e.to_string()))?;
            let view = root
                .buffer_views
                .get(view_index)
                .ok_or_else(|| err(format!("{view_object} does not exist")))?;
            let offset = usize::try_from(accessor.byte_offset.map_or(0, |o| o.0))
                .map_err(|_| err("byteOffset does not fit in memory".to_owned()))?;
            let view_offset = usize::try_from(view.byte_offset.map_or(0, |o| o.0)).unwrap_or(usize::MAX);
            if offset % layout.size != 0 || view_offset.checked_add(offset).is_none_or(|o| o % layout.size != 0) {
                return Err(err(format!(
                    "byteOffset {offset} (plus the {view_object} offset {view_offset}) is not a multiple of the component size {}",
                    layout.size
                )));
            }
            let element_size = layout.element_size();
            let stride = match view.byte_stride {
                Some(s) => {
                    if s.0 < element_size || s.0 % layout.size != 0 {
                        return Err(err(format!(
                            "{view_object} has byteStride {}, which is smaller than the element size {element_size} or not a multiple of the component size",
                            s.0
                        )));
                    }
                    s.0
                }
                None => element_size,
            };
            let needed = (count - 1)
                .checked_mul(stride)
                .and_then(|n| n.checked_add(element_size))
                .and_then(|n| n.checked_add(offset));
            if needed.is_none_or(|n| n > bytes.len()) {
                return Err(err(format!(
                    "{count} elements of {element_size} bytes with stride {stride} from byteOffset {offset} run past the end of {view_object} ({} bytes)",
                    bytes.len()
                )));
            }
            values = Vec::with_capacity(total);
            for e in 0..count {
                let base = offset + e * stride;
                for k in 0..components {
                    let v = read_component(bytes, base + layout.component_offset(k), ct)
                        .ok_or_else(|| err(format!("element {e} is out of range of {view_object}")))?;
                    values.push(v);
                }
            }
        }
    }
    if let Some(sparse) = &accessor.sparse {
        apply_sparse(root, buffers, sparse, layout, ct, count, &mut values, &err)?;
    }
    Ok(Some(AccessorData {
        index,
        component_type: ct,
        ty,
        normalized: accessor.normalized,
        count,
        has_data: accessor.buffer_view.is_some() || accessor.sparse.is_some(),
        values,
    }))
}

/// Substitutes the sparse values of an accessor into `values`.
#[expect(
    clippy::too_many_arguments,
    reason = "a private helper of read_accessor with its already-checked parts"
)]
fn apply_sparse(
    root: &json::Root,
    buffers: &[Cow<'_, [u8]>],
    sparse: &json::accessor::sparse::Sparse,
    layout: Layout,
    ct: ComponentType,
    count: usize,
    values: &mut [f64],
    err: &dyn Fn(String) -> Error,
) -> Result<()> {
    let sparse_count =
        usize::try_from(sparse.count.0).map_err(|_| err("sparse count does not fit in memory".to_owned()))?;
    if sparse_count == 0 || sparse_count > count {
        return Err(err(format!(
            "sparse count {sparse_count} must be between 1 and the accessor count {count}"
        )));
    }
    let Checked::Valid(json::accessor::IndexComponentType(index_ct)) = sparse.indices.component_type else {
        return Err(err("sparse indices have an invalid componentType".to_owned()));
    };
    let index_view = sparse.indices.buffer_view.value();
    let index_bytes = view_bytes(root, buffers, index_view).map_err(|e| err(format!("sparse indices: {e}")))?;
    let index_offset = usize::try_from(sparse.indices.byte_offset.0)
        .map_err(|_| err("sparse indices byteOffset does not fit in memory".to_owned()))?;
    let value_view = sparse.values.buffer_view.value();
    let value_bytes = view_bytes(root, buffers, value_view).map_err(|e| err(format!("sparse values: {e}")))?;
    let value_offset = usize::try_from(sparse.values.byte_offset.0)
        .map_err(|_| err("sparse values byteOffset does not fit in memory".to_owned()))?;
    let components = layout.rows * layout.columns;
    let element_size = layout.element_size();
    let index_end = sparse_count
        .checked_mul(index_ct.size())
        .and_then(|n| n.checked_add(index_offset));
    if index_end.is_none_or(|end| end > index_bytes.len()) {
        return Err(err(format!(
            "{sparse_count} sparse indices from byteOffset {index_offset} run past the end of {}",
            view_name(root, index_view)
        )));
    }
    let value_end = sparse_count
        .checked_mul(element_size)
        .and_then(|n| n.checked_add(value_offset));
    if value_end.is_none_or(|end| end > value_bytes.len()) {
        return Err(err(format!(
            "{sparse_count} sparse values from byteOffset {value_offset} run past the end of {}",
            view_name(root, value_view)
        )));
    }
    let mut previous: Option<usize> = None;
    for s in 0..sparse_count {
        let raw = read_component(index_bytes, index_offset + s * index_ct.size(), index_ct)
            .ok_or_else(|| err(format!("sparse index {s} is out of range")))?;
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "raw is an exact u32"
        )]
        let target = raw as usize;
        if target >= count {
            return Err(err(format!(
                "sparse index {s} is {target}, out of range for {count} elements"
            )));
        }
        if previous.is_some_and(|p| target <= p) {
            return Err(err(format!(
                "sparse indices must strictly increase, but index {s} is {target}"
            )));
        }
        previous = Some(target);
        for k in 0..components {
            let v = read_component(
                value_bytes,
                value_offset + s * element_size + layout.component_offset(k),
                ct,
            )
            .ok_or_else(|| err(format!("sparse value {s} is out of range")))?;
            let slot = values
                .get_mut(target * components + k)
                .ok_or_else(|| err(format!("sparse index {s} is out of range")))?;
            *slot = v;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses a glTF JSON document for the reader tests.
    fn root(text: &str) -> json::Root {
        json::deserialize::from_str(text).expect("valid test JSON")
    }

    /// Reads accessor `index` of `text` with one buffer holding `data`.
    fn read(text: &str, data: &[u8], index: usize) -> Result<Option<AccessorData>> {
        let root = root(text);
        let buffers = vec![Cow::Borrowed(data)];
        read_accessor(&root, &buffers, index, &format!("accessor {index}"))
    }

    fn doc(views: &str, accessors: &str) -> String {
        format!(
            r#"{{"asset":{{"version":"2.0"}},"buffers":[{{"byteLength":64}}],"bufferViews":{views},"accessors":{accessors}}}"#
        )
    }

    #[test]
    fn reads_with_offset_and_stride() {
        let mut data = vec![0u8; 64];
        for (i, b) in data.iter_mut().enumerate() {
            *b = u8::try_from(i).expect("small");
        }
        let text = doc(
            r#"[{"buffer":0,"byteOffset":4,"byteLength":20,"byteStride":8}]"#,
            r#"[{"bufferView":0,"byteOffset":2,"componentType":5121,"type":"VEC2","count":3}]"#,
        );
        let a = read(&text, &data, 0).expect("in range").expect("known type");
        assert_eq!(a.raw(), &[6.0, 7.0, 14.0, 15.0, 22.0, 23.0]);
        // One more element needs bytes 4 + 2 + 3 * 8 + 2 = 32 > 24.
        let text = doc(
            r#"[{"buffer":0,"byteOffset":4,"byteLength":20,"byteStride":8}]"#,
            r#"[{"bufferView":0,"byteOffset":2,"componentType":5121,"type":"VEC2","count":4}]"#,
        );
        let e = read(&text, &data, 0).expect_err("out of range").to_string();
        assert!(e.contains("run past the end of bufferView 0"), "{e}");
    }

    #[test]
    fn rejects_views_and_offsets_out_of_range_without_panicking() {
        let data = vec![0u8; 64];
        for (views, accessors) in [
            (
                r#"[{"buffer":0,"byteLength":65}]"#,
                r#"[{"bufferView":0,"componentType":5126,"type":"SCALAR","count":1}]"#,
            ),
            (
                r#"[{"buffer":1,"byteLength":4}]"#,
                r#"[{"bufferView":0,"componentType":5126,"type":"SCALAR","count":1}]"#,
            ),
            (
                r#"[{"buffer":0,"byteLength":16}]"#,
                r#"[{"bufferView":0,"byteOffset":4294967295,"componentType":5126,"type":"SCALAR","count":1}]"#,
            ),
            (
                r#"[{"buffer":0,"byteLength":16}]"#,
                r#"[{"bufferView":0,"componentType":5126,"type":"SCALAR","count":4294967295}]"#,
            ),
            (
                r#"[{"buffer":0,"byteLength":16}]"#,
                r#"[{"bufferView":0,"byteOffset":2,"componentType":5126,"type":"SCALAR","count":1}]"#,
            ),
            (
                r#"[{"buffer":0,"byteLength":16}]"#,
                r#"[{"bufferView":3,"componentType":5126,"type":"SCALAR","count":1}]"#,
            ),
            (
                r#"[{"buffer":0,"byteLength":16}]"#,
                r#"[{"byteOffset":0,"componentType":5126,"type":"SCALAR","count":1}]"#,
            ),
            (
                r#"[{"buffer":0,"byteLength":16}]"#,
                r#"[{"bufferView":0,"componentType":5126,"type":"SCALAR","count":0}]"#,
            ),
            (
                r#"[{"buffer":0,"byteLength":16}]"#,
                r#"[{"bufferView":0,"componentType":5126,"normalized":true,"type":"SCALAR","count":1}]"#,
            ),
        ] {
            assert!(read(&doc(views, accessors), &data, 0).is_err(), "{views} {accessors}");
        }
    }

    #[test]
    fn dequantizes_normalized_integers() {
        let data: Vec<u8> = [0x81u8, 0x7F, 0x80, 0xFF].iter().copied().chain([0u8; 60]).collect();
        let text = doc(
            r#"[{"buffer":0,"byteLength":4}]"#,
            r#"[{"bufferView":0,"componentType":5120,"normalized":true,"type":"VEC4","count":1},
                {"bufferView":0,"componentType":5121,"normalized":true,"type":"VEC4","count":1},
                {"bufferView":0,"componentType":5121,"type":"VEC4","count":1}]"#,
        );
        let signed = read(&text, &data, 0).expect("ok").expect("typed").floats_to_vec();
        assert_eq!(signed, vec![-1.0, 1.0, -1.0, -1.0 / 127.0]);
        let unsigned = read(&text, &data, 1).expect("ok").expect("typed").floats_to_vec();
        assert_eq!(unsigned, vec![129.0 / 255.0, 127.0 / 255.0, 128.0 / 255.0, 1.0]);
        let raw = read(&text, &data, 2).expect("ok").expect("typed").integers_to_vec();
        assert_eq!(raw, vec![0x81, 0x7F, 0x80, 0xFF]);
    }

    #[test]
    fn pads_matrix_columns_of_small_components() {
        // MAT2 of bytes: each 2-byte column is padded to 4 bytes.
        let data: Vec<u8> = [1u8, 2, 0, 0, 3, 4, 0, 0].iter().copied().chain([0u8; 56]).collect();
        let text = doc(
            r#"[{"buffer":0,"byteLength":8}]"#,
            r#"[{"bufferView":0,"componentType":5121,"type":"MAT2","count":1}]"#,
        );
        let a = read(&text, &data, 0).expect("ok").expect("typed");
        assert_eq!(a.raw(), &[1.0, 2.0, 3.0, 4.0]);
    }

    #[test]
    fn applies_sparse_values_and_zero_fills() {
        let mut data = vec![0u8; 64];
        // Sparse indices (u16) 1 and 3, then values 5.0 and 7.0 (f32).
        data[0..2].copy_from_slice(&1u16.to_le_bytes());
        data[2..4].copy_from_slice(&3u16.to_le_bytes());
        data[4..8].copy_from_slice(&5.0f32.to_le_bytes());
        data[8..12].copy_from_slice(&7.0f32.to_le_bytes());
        let sparse = r#"[{"componentType":5126,"type":"SCALAR","count":4,
            "sparse":{"count":2,"indices":{"bufferView":0,"componentType":5123},"values":{"bufferView":1}}}]"#;
        let views = r#"[{"buffer":0,"byteLength":4},{"buffer":0,"byteOffset":4,"byteLength":8}]"#;
        let a = read(&doc(views, sparse), &data, 0).expect("ok").expect("typed");
        assert_eq!(a.raw(), &[0.0, 5.0, 0.0, 7.0]);
        assert!(a.has_data);
        // Decreasing indices are rejected.
        data[0..2].copy_from_slice(&3u16.to_le_bytes());
        assert!(read(&doc(views, sparse), &data, 0).is_err());
        // An index past the accessor's count is rejected.
        data[0..2].copy_from_slice(&1u16.to_le_bytes());
        data[2..4].copy_from_slice(&4u16.to_le_bytes());
        assert!(read(&doc(views, sparse), &data, 0).is_err());
        // Sparse values past their view are rejected.
        let short = r#"[{"buffer":0,"byteLength":4},{"buffer":0,"byteOffset":4,"byteLength":4}]"#;
        data[2..4].copy_from_slice(&3u16.to_le_bytes());
        assert!(read(&doc(short, sparse), &data, 0).is_err());
        // Without a buffer view or sparse part, the accessor is all zeros and has no data.
        let zeros = read(
            &doc(views, r#"[{"componentType":5126,"type":"VEC3","count":2}]"#),
            &data,
            0,
        )
        .expect("ok")
        .expect("typed");
        assert_eq!(zeros.raw(), &[0.0; 6]);
        assert!(!zeros.has_data);
    }

    #[test]
    fn unknown_type_is_reported_to_the_caller() {
        let data = vec![0u8; 64];
        let text = doc("[]", r#"[{"componentType":5126,"type":"NotaVEC3","count":2}]"#);
        assert!(read(&text, &data, 0).expect("not an error here").is_none());
    }
}
