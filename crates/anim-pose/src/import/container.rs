//! The GLB container: header and chunk parsing, before any JSON is read.
//!
//! The parser follows the glTF 2.0 specification, section 4.4 ("Binary glTF layout"), and rejects every
//! malformed container that the Khronos validator reports as an error: a truncated header or chunk,
//! a wrong magic, version or length, an unaligned or oversized chunk, an empty or misplaced JSON chunk,
//! a BIN chunk that is not the second chunk, and duplicate chunks. Unknown chunk types are skipped with
//! a warning, as the specification requires.
//!
//! The `gltf` crate's own `Glb::from_slice` (1.4.1) is not used because it computes
//! `header.length as usize - 12` before checking the declared length, which panics on overflow
//! (in builds with overflow checks, such as tests) for a declared length under 12.

use crate::{Error, ImportWarning, Result};

/// The GLB magic, `glTF` in ASCII.
const MAGIC: &[u8; 4] = b"glTF";
/// The size of the GLB header: magic, version and length.
const HEADER_SIZE: usize = 12;
/// The size of a chunk header: length and type.
const CHUNK_HEADER_SIZE: usize = 8;
/// The chunk type of the JSON chunk, `JSON` in ASCII, little-endian.
const CHUNK_JSON: u32 = 0x4E4F_534A;
/// The chunk type of the binary chunk, `BIN\0` in ASCII, little-endian.
const CHUNK_BIN: u32 = 0x004E_4942;

/// The two chunks of a GLB file that the importer uses.
#[derive(Debug)]
pub(super) struct Glb<'a> {
    /// The JSON chunk, without padding removed (trailing spaces are valid JSON whitespace).
    pub json: &'a [u8],
    /// The BIN chunk, when there is one (its length includes up to three bytes of padding).
    pub bin: Option<&'a [u8]>,
}

/// True when `bytes` starts with the GLB magic.
pub(super) fn is_glb(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

/// Reads a little-endian `u32` at `offset`, or fails with `what` when the input ends first.
fn read_u32(bytes: &[u8], offset: usize, what: &str) -> Result<u32> {
    let end = offset
        .checked_add(4)
        .ok_or_else(|| parse_error(format!("{what}: offset overflows")))?;
    let slice = bytes
        .get(offset..end)
        .ok_or_else(|| parse_error(format!("unexpected end of file in the {what} at byte {offset}")))?;
    let mut word = [0u8; 4];
    word.copy_from_slice(slice);
    Ok(u32::from_le_bytes(word))
}

/// An [`Error::Parse`] in the GLB container.
fn parse_error(message: impl Into<String>) -> Error {
    Error::Parse {
        context: "GLB container".to_owned(),
        message: message.into(),
    }
}

/// Splits a GLB file into its JSON and BIN chunks, checking the whole container.
///
/// # Errors
///
/// [`Error::Parse`] with context "GLB container" for any structural error.
pub(super) fn parse_glb<'a>(bytes: &'a [u8], warnings: &mut Vec<ImportWarning>) -> Result<Glb<'a>> {
    if bytes.len() < HEADER_SIZE {
        return Err(parse_error(format!(
            "unexpected end of header: the file has {} bytes, a GLB header needs {HEADER_SIZE}",
            bytes.len()
        )));
    }
    if !is_glb(bytes) {
        return Err(parse_error("invalid magic: the file does not start with 'glTF'"));
    }
    let version = read_u32(bytes, 4, "GLB header")?;
    if version != 2 {
        return Err(parse_error(format!("unsupported GLB version {version}, expected 2")));
    }
    let length = usize::try_from(read_u32(bytes, 8, "GLB header")?)
        .map_err(|_| parse_error("declared length does not fit in memory"))?;
    if length < HEADER_SIZE + CHUNK_HEADER_SIZE {
        return Err(parse_error(format!(
            "declared length {length} is too small to hold a JSON chunk"
        )));
    }
    if length != bytes.len() {
        return Err(parse_error(format!(
            "declared length {length} does not match the file length {}",
            bytes.len()
        )));
    }
    let mut json = None;
    let mut bin = None;
    let mut offset = HEADER_SIZE;
    let mut chunk_index = 0usize;
    while offset < length {
        if length - offset < CHUNK_HEADER_SIZE {
            return Err(parse_error(format!("unexpected end of chunk header at byte {offset}")));
        }
        let chunk_length = usize::try_from(read_u32(bytes, offset, "chunk header")?)
            .map_err(|_| parse_error("chunk length does not fit in memory"))?;
        let chunk_type = read_u32(bytes, offset + 4, "chunk header")?;
        let start = offset + CHUNK_HEADER_SIZE;
        let end = start
            .checked_add(chunk_length)
            .filter(|&end| end <= length)
            .ok_or_else(|| {
                parse_error(format!(
                    "chunk {chunk_index} at byte {offset} declares {chunk_length} bytes, past the end of the file ({length} bytes)"
                ))
            })?;
        if chunk_length % 4 != 0 {
            return Err(parse_error(format!(
                "chunk {chunk_index} has length {chunk_length}, which is not a multiple of 4"
            )));
        }
        let data = bytes
            .get(start..end)
            .ok_or_else(|| parse_error(format!("chunk {chunk_index} is out of range")))?;
        match (chunk_index, chunk_type) {
            (0, CHUNK_JSON) => {
                if data.is_empty() {
                    return Err(parse_error("the JSON chunk is empty"));
                }
                json = Some(data);
            }
            (0, _) => {
                return Err(parse_error(format!(
                    "the first chunk has type 0x{chunk_type:08x}, but it must be the JSON chunk"
                )));
            }
            (_, CHUNK_JSON) => return Err(parse_error(format!("chunk {chunk_index} is a second JSON chunk"))),
            (1, CHUNK_BIN) => bin = Some(data),
            (_, CHUNK_BIN) => {
                return Err(parse_error(format!(
                    "chunk {chunk_index} is a BIN chunk, but the BIN chunk must be the second chunk and appear once"
                )));
            }
            (_, other) => warnings.push(ImportWarning {
                object: "GLB container".to_owned(),
                message: format!("chunk {chunk_index} has the unknown type 0x{other:08x} and was ignored"),
            }),
        }
        offset = end;
        chunk_index += 1;
    }
    let json = json.ok_or_else(|| parse_error("the file has no JSON chunk"))?;
    Ok(Glb { json, bin })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds a GLB file from chunks given as (type, data).
    fn glb(chunks: &[(u32, &[u8])]) -> Vec<u8> {
        let mut body = Vec::new();
        for (ty, data) in chunks {
            body.extend_from_slice(&u32::try_from(data.len()).expect("small").to_le_bytes());
            body.extend_from_slice(&ty.to_le_bytes());
            body.extend_from_slice(data);
        }
        let mut out = b"glTF".to_vec();
        out.extend_from_slice(&2u32.to_le_bytes());
        out.extend_from_slice(&u32::try_from(body.len() + 12).expect("small").to_le_bytes());
        out.extend_from_slice(&body);
        out
    }

    #[test]
    fn splits_json_and_bin() {
        let bytes = glb(&[(CHUNK_JSON, b"{}  "), (CHUNK_BIN, &[1, 2, 3, 4])]);
        let mut warnings = Vec::new();
        let glb = parse_glb(&bytes, &mut warnings).expect("valid GLB");
        assert_eq!(glb.json, b"{}  ");
        assert_eq!(glb.bin, Some(&[1u8, 2, 3, 4][..]));
        assert!(warnings.is_empty());
    }

    #[test]
    fn rejects_every_truncation_and_a_short_declared_length() {
        let bytes = glb(&[(CHUNK_JSON, b"{}  "), (CHUNK_BIN, &[1, 2, 3, 4])]);
        for n in 0..bytes.len() {
            assert!(parse_glb(&bytes[..n], &mut Vec::new()).is_err(), "prefix of {n} bytes");
        }
        let mut short = bytes.clone();
        short[8..12].copy_from_slice(&4u32.to_le_bytes());
        assert!(parse_glb(&short, &mut Vec::new()).is_err());
    }

    #[test]
    fn skips_unknown_chunks_but_rejects_a_late_bin_chunk() {
        let mut warnings = Vec::new();
        let bytes = glb(&[(CHUNK_JSON, b"{}  "), (0x1234_5678, &[0; 4])]);
        assert!(parse_glb(&bytes, &mut warnings).is_ok());
        assert_eq!(warnings.len(), 1);
        let bytes = glb(&[(CHUNK_JSON, b"{}  "), (0x1234_5678, &[0; 4]), (CHUNK_BIN, &[0; 4])]);
        assert!(parse_glb(&bytes, &mut Vec::new()).is_err());
    }
}
