//! Buffer loading: the GLB BIN chunk, `data:` URIs and external files, and buffer view range checks.
//!
//! External URIs are resolved relative to the glTF file's folder after percent-decoding.
//! Every buffer is checked against its declared `byteLength`, and every buffer view against its buffer,
//! whether or not anything uses it.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use gltf::json;

use crate::{Error, ImportWarning, Result};

/// Where external URIs are resolved.
#[derive(Clone, Copy, Debug)]
pub(super) struct UriResolver<'a> {
    /// The folder of the glTF file, when known.
    pub base_dir: Option<&'a Path>,
}

/// The bytes a URI refers to, and the MIME type a `data:` URI declares.
#[derive(Debug)]
pub(super) struct UriData {
    /// The decoded bytes.
    pub bytes: Vec<u8>,
    /// The MIME type of a `data:` URI, if it gives one.
    pub mime_type: Option<String>,
}

impl UriResolver<'_> {
    /// Reads the bytes that `uri` refers to; `object` names the glTF object for messages.
    ///
    /// # Errors
    ///
    /// [`Error::Invalid`] for malformed `data:` URIs or external files without a base folder,
    /// [`Error::Unsupported`] for URI schemes other than `data:` and relative paths, and [`Error::Io`]
    /// when a file cannot be read.
    pub fn read(&self, uri: &str, object: &str) -> Result<UriData> {
        if let Some(rest) = uri.strip_prefix("data:") {
            return decode_data_uri(rest, object);
        }
        if has_scheme(uri) {
            return Err(Error::Unsupported {
                object: object.to_owned(),
                message: format!(
                    "URI '{uri}' has a scheme other than 'data:'; only relative paths and data URIs are read"
                ),
            });
        }
        let Some(base) = self.base_dir else {
            return Err(Error::invalid(
                object,
                format!("refers to the external file '{uri}', but the glTF was given as bytes without a base folder"),
            ));
        };
        let relative =
            percent_decode(uri).map_err(|message| Error::invalid(object, format!("URI '{uri}': {message}")))?;
        let path: PathBuf = base.join(relative);
        let bytes = std::fs::read(&path).map_err(|source| Error::Io {
            path: path.display().to_string(),
            source,
        })?;
        Ok(UriData { bytes, mime_type: None })
    }
}

/// True when `uri` starts with a URI scheme (`letters:`), other than a Windows drive letter.
fn has_scheme(uri: &str) -> bool {
    match uri.split_once(':') {
        Some((scheme, _)) => {
            scheme.len() > 1
                && scheme.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        None => false,
    }
}

/// Decodes the part of a `data:` URI after `data:`.
fn decode_data_uri(rest: &str, object: &str) -> Result<UriData> {
    let Some((header, payload)) = rest.split_once(',') else {
        return Err(Error::invalid(object, "data URI has no ',' before its payload"));
    };
    let Some(mime) = header.strip_suffix(";base64") else {
        return Err(Error::Unsupported {
            object: object.to_owned(),
            message: "data URI is not base64-encoded".to_owned(),
        });
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(payload.trim())
        .map_err(|e| Error::invalid(object, format!("data URI is not valid base64: {e}")))?;
    let mime_type = (!mime.is_empty()).then(|| mime.to_owned());
    Ok(UriData { bytes, mime_type })
}

/// Decodes `%XX` escapes in a relative URI into a path string.
fn percent_decode(uri: &str) -> std::result::Result<String, String> {
    let bytes = uri.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("invalid percent escape at byte {i}"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "percent-decoded path is not UTF-8".to_owned())
}

/// The name of buffer `index` for messages.
pub(super) fn buffer_name(root: &json::Root, index: usize) -> String {
    match root.buffers.get(index).and_then(|b| b.name.as_deref()) {
        Some(name) => format!("buffer {index} ('{name}')"),
        None => format!("buffer {index}"),
    }
}

/// Loads every buffer of the document and checks it against its declared `byteLength`.
///
/// # Errors
///
/// [`Error::Invalid`] naming the buffer when its data is missing or its length does not match, or the
/// errors of [`UriResolver::read`].
pub(super) fn load_buffers<'a>(
    root: &json::Root,
    bin: Option<&'a [u8]>,
    resolver: UriResolver<'_>,
    warnings: &mut Vec<ImportWarning>,
) -> Result<Vec<Cow<'a, [u8]>>> {
    let mut out = Vec::with_capacity(root.buffers.len());
    for (index, buffer) in root.buffers.iter().enumerate() {
        let object = buffer_name(root, index);
        let declared = usize::try_from(buffer.byte_length.0)
            .map_err(|_| Error::invalid(&object, "byteLength does not fit in memory"))?;
        if declared == 0 {
            return Err(Error::invalid(
                &object,
                "byteLength is missing or zero; it must be at least 1",
            ));
        }
        let data: Cow<'a, [u8]> = match &buffer.uri {
            Some(uri) => {
                let data = resolver.read(uri, &object)?.bytes;
                if data.len() != declared {
                    return Err(Error::invalid(
                        &object,
                        format!("byteLength is {declared}, but its URI holds {} bytes", data.len()),
                    ));
                }
                Cow::Owned(data)
            }
            None => {
                let Some(bin) = bin else {
                    return Err(Error::invalid(
                        &object,
                        "has no URI, and there is no GLB BIN chunk to hold its data",
                    ));
                };
                if index != 0 {
                    return Err(Error::invalid(
                        &object,
                        "has no URI, but only buffer 0 may refer to the GLB BIN chunk",
                    ));
                }
                if bin.len() < declared {
                    return Err(Error::invalid(
                        &object,
                        format!(
                            "byteLength is {declared}, but the GLB BIN chunk holds only {} bytes",
                            bin.len()
                        ),
                    ));
                }
                if bin.len() - declared > 3 {
                    warnings.push(ImportWarning {
                        object: object.clone(),
                        message: format!(
                            "the GLB BIN chunk holds {} bytes, more than the byteLength of {declared} plus padding",
                            bin.len()
                        ),
                    });
                }
                Cow::Borrowed(bin.get(..declared).unwrap_or(bin))
            }
        };
        out.push(data);
    }
    Ok(out)
}

/// The name of buffer view `index` for messages.
pub(super) fn view_name(root: &json::Root, index: usize) -> String {
    match root.buffer_views.get(index).and_then(|v| v.name.as_deref()) {
        Some(name) => format!("bufferView {index} ('{name}')"),
        None => format!("bufferView {index}"),
    }
}

/// The bytes of buffer view `index`, checked against its buffer.
///
/// # Errors
///
/// [`Error::Invalid`] naming the view when it or its buffer does not exist, when it is empty, or when it
/// runs past the end of its buffer.
pub(super) fn view_bytes<'b>(root: &json::Root, buffers: &'b [Cow<'_, [u8]>], index: usize) -> Result<&'b [u8]> {
    let object = || view_name(root, index);
    let view = root
        .buffer_views
        .get(index)
        .ok_or_else(|| Error::invalid(object(), "does not exist"))?;
    let buffer_index = view.buffer.value();
    let buffer = buffers.get(buffer_index).ok_or_else(|| {
        Error::invalid(
            object(),
            format!("refers to buffer {buffer_index}, which does not exist"),
        )
    })?;
    let offset = view.byte_offset.map_or(0, |o| o.0);
    let length = view.byte_length.0;
    if length == 0 {
        return Err(Error::invalid(object(), "byteLength must be at least 1"));
    }
    let end = offset.checked_add(length);
    let range = end
        .and_then(|end| Some(usize::try_from(offset).ok()?..usize::try_from(end).ok()?))
        .filter(|r| r.end <= buffer.len());
    let Some(range) = range else {
        return Err(Error::invalid(
            object(),
            format!(
                "byteOffset {offset} + byteLength {length} runs past the end of {} ({} bytes)",
                buffer_name(root, buffer_index),
                buffer.len()
            ),
        ));
    };
    if let Some(stride) = view.byte_stride
        && (!(4..=252).contains(&stride.0) || stride.0 % 4 != 0)
    {
        return Err(Error::invalid(
            object(),
            format!("byteStride {} must be a multiple of 4 between 4 and 252", stride.0),
        ));
    }
    buffer
        .get(range)
        .ok_or_else(|| Error::invalid(object(), "is out of range"))
}

/// Checks every buffer view of the document.
///
/// # Errors
///
/// The errors of [`view_bytes`] for the first view at fault.
pub(super) fn check_views(root: &json::Root, buffers: &[Cow<'_, [u8]>]) -> Result<()> {
    for index in 0..root.buffer_views.len() {
        view_bytes(root, buffers, index)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_data_uris_and_percent_escapes() {
        let data = decode_data_uri("application/octet-stream;base64,AAEC", "buffer 0").expect("valid");
        assert_eq!(data.bytes, vec![0, 1, 2]);
        assert_eq!(data.mime_type.as_deref(), Some("application/octet-stream"));
        assert!(decode_data_uri("text/plain,hello", "buffer 0").is_err());
        assert!(decode_data_uri(";base64,!!!", "buffer 0").is_err());
        assert_eq!(percent_decode("a%20b%2Fc.bin").expect("valid"), "a b/c.bin");
        assert!(percent_decode("a%2").is_err());
        assert!(has_scheme("https://example.com/a.bin"));
        assert!(!has_scheme("C:/a.bin"));
        assert!(!has_scheme("a.bin"));
    }
}
