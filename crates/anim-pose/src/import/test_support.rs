//! A small builder of glTF JSON documents with one `data:` URI buffer, for the importer's unit tests.

use base64::Engine as _;

/// Builds a glTF document: typed arrays become buffer views and accessors of one embedded buffer.
#[derive(Default)]
pub(super) struct DocBuilder {
    bin: Vec<u8>,
    views: Vec<String>,
    accessors: Vec<String>,
}

impl DocBuilder {
    /// Appends `bytes` as a new buffer view (4-byte aligned) and returns its index.
    fn view(&mut self, bytes: &[u8]) -> usize {
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        self.views.push(format!(
            r#"{{"buffer":0,"byteOffset":{},"byteLength":{}}}"#,
            self.bin.len(),
            bytes.len()
        ));
        self.bin.extend_from_slice(bytes);
        self.views.len() - 1
    }

    /// Adds an accessor over `values` (raw numbers, `components` per element) with computed min and max.
    fn accessor(
        &mut self,
        bytes: &[u8],
        ty: &str,
        component_type: u32,
        extra: &str,
        values: &[f64],
        components: usize,
    ) -> usize {
        let view = self.view(bytes);
        let count = values.len() / components;
        let bound = |pick: fn(f64, f64) -> f64, start: f64| {
            let list: Vec<String> = (0..components)
                .map(|c| {
                    values
                        .iter()
                        .skip(c)
                        .step_by(components)
                        .copied()
                        .fold(start, pick)
                        .to_string()
                })
                .collect();
            list.join(",")
        };
        self.accessors.push(format!(
            r#"{{"bufferView":{view},"componentType":{component_type},"type":"{ty}","count":{count},"min":[{}],"max":[{}]{extra}}}"#,
            bound(f64::min, f64::INFINITY),
            bound(f64::max, f64::NEG_INFINITY),
        ));
        self.accessors.len() - 1
    }

    /// Adds a FLOAT accessor of type `ty` with `components` per element.
    pub fn floats(&mut self, ty: &str, components: usize, values: &[f32]) -> usize {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let raw: Vec<f64> = values.iter().map(|&v| f64::from(v)).collect();
        self.accessor(&bytes, ty, 5126, "", &raw, components)
    }

    /// Adds an UNSIGNED_SHORT accessor (`extra` is appended to its JSON, for example `,"normalized":true`).
    pub fn u16s(&mut self, ty: &str, components: usize, values: &[u16], extra: &str) -> usize {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let raw: Vec<f64> = values.iter().map(|&v| f64::from(v)).collect();
        self.accessor(&bytes, ty, 5123, extra, &raw, components)
    }

    /// Adds an UNSIGNED_BYTE accessor (`extra` is appended to its JSON).
    pub fn u8s(&mut self, ty: &str, components: usize, values: &[u8], extra: &str) -> usize {
        let raw: Vec<f64> = values.iter().map(|&v| f64::from(v)).collect();
        self.accessor(values, ty, 5121, extra, &raw, components)
    }

    /// The document: `rest` holds the other top-level members (nodes, meshes, skins, animations), without
    /// surrounding braces or a trailing comma.
    pub fn finish(mut self, rest: &str) -> String {
        if self.bin.is_empty() {
            self.bin.push(0);
        }
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        let data = base64::engine::general_purpose::STANDARD.encode(&self.bin);
        format!(
            r#"{{"asset":{{"version":"2.0"}},"buffers":[{{"byteLength":{},"uri":"data:application/octet-stream;base64,{data}"}}],"bufferViews":[{}],"accessors":[{}],{rest}}}"#,
            self.bin.len(),
            self.views.join(","),
            self.accessors.join(","),
        )
    }
}
