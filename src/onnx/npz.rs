//! `.npz` archives of tensors: read with `zip` and a bounded NPY parser (stored or
//! deflated entries, as NumPy writes them), written here deterministically (NPY 1.0 entries in a stored ZIP with a
//! fixed 1980-01-01 timestamp) so that the same tensors always give the same bytes.

use super::refusal::{Refusal, RefusalCode};
pub use super::tensor::{Dtype, Tensor, TensorFacts};

fn bad(m: impl Into<String>) -> Refusal {
    Refusal::new(RefusalCode::TensorArchiveInvalid, m)
}

/// At most this many members in one archive (graphs take at most 64 inputs).
pub const MAX_MEMBERS: usize = 256;
/// An NPY header longer than this is refused before it is read.
const MAX_HEADER: usize = 65_536;

/// Read every array of an `.npz` archive (stored or deflated entries). Bounded: at most
/// `MAX_MEMBERS` members, names checked (`NAME.npy`, no duplicates) before anything is
/// inflated, and each member inflated no further than its NPY header plus the bytes its declared
/// shape needs (at most `max_tensor_bytes`). Refuses Fortran order, big-endian and unsupported
/// dtypes, and data shorter or longer than the shape.
pub fn read(bytes: &[u8], max_tensor_bytes: u64) -> Result<Vec<Tensor>, Refusal> {
    read_bounded(bytes, |_| Ok(max_tensor_bytes))
}

/// Read a model's input archive: `read`, and before anything is inflated every member must
/// name an input of `inputs` (a member the model does not name is refused, never inflated), and
/// each member inflates no further than its input's declared shape allows (the elements times
/// the element size when every dimension is fixed; `max_tensor_bytes` otherwise), so the total
/// inflated is bounded by the declared shapes.
pub fn read_inputs(
    bytes: &[u8],
    inputs: &[super::types::ValueType],
    max_tensor_bytes: u64,
) -> Result<Vec<Tensor>, Refusal> {
    read_bounded(bytes, |name| {
        let Some(input) = inputs.iter().find(|i| i.name == name) else {
            return Err(bad(format!(
                "{name}: the model has no input of that name (refused before it is inflated)"
            )));
        };
        let size = input
            .elem_type
            .and_then(Dtype::from_onnx)
            .map(|d| d.size() as u64);
        let declared = input.static_dims().and_then(|dims| {
            dims.iter()
                .try_fold(1u64, |a, &d| a.checked_mul(u64::try_from(d).ok()?))?
                .checked_mul(size?)
        });
        Ok(declared.map_or(max_tensor_bytes, |b| b.min(max_tensor_bytes)))
    })
}

/// `read` with a per-member bound on the data bytes, decided from the member's name before
/// any member is inflated (a name `bound` refuses is never inflated).
pub fn read_bounded(
    bytes: &[u8],
    bound: impl Fn(&str) -> Result<u64, Refusal>,
) -> Result<Vec<Tensor>, Refusal> {
    let declared = end_of_central_directory(bytes)?;
    let mut archive =
        zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| bad(e.to_string()))?;
    // The zip reader keeps one entry per name: a count below the declared one means a name
    // appears twice.
    if archive.len() != declared {
        return Err(bad(format!(
            "the directory declares {declared} members, {} distinct names: a member name repeats",
            archive.len()
        )));
    }
    if archive.len() > MAX_MEMBERS {
        return Err(bad(format!(
            "{} members (at most {MAX_MEMBERS})",
            archive.len()
        )));
    }
    let mut names = Vec::with_capacity(archive.len());
    for i in 0..archive.len() {
        let entry = archive.by_index_raw(i).map_err(|e| bad(e.to_string()))?;
        // A non-ASCII name must be marked UTF-8: a legacy (CP437) name decodes to other
        // characters than its bytes say, and would not survive being written back.
        if std::str::from_utf8(entry.name_raw()) != Ok(entry.name()) {
            return Err(bad(format!(
                "{:?}: a non-ASCII member name not marked UTF-8 (general-purpose bit 11)",
                entry.name()
            )));
        }
        let Some(name) = entry.name().strip_suffix(".npy").map(str::to_string) else {
            return Err(bad(format!("{}: not an .npy entry", entry.name())));
        };
        if names.iter().any(|(n, _)| n == &name) {
            return Err(bad(format!("{name}: the archive holds it twice")));
        }
        let max = bound(&name)?;
        if entry.size() > max.saturating_add(MAX_HEADER as u64 + 16) {
            return Err(too_large(&name, max));
        }
        names.push((name, max));
    }
    let mut out = Vec::with_capacity(names.len());
    for (i, (name, max)) in names.into_iter().enumerate() {
        let entry = archive.by_index(i).map_err(|e| bad(e.to_string()))?;
        out.push(member(name, entry, max)?);
    }
    Ok(out)
}

/// The member count of the end-of-central-directory record, which must end the archive exactly
/// (its comment included): no trailing bytes.
fn end_of_central_directory(bytes: &[u8]) -> Result<usize, Refusal> {
    const EOCD: usize = 22;
    // Shorter than the record itself: the scan below would read past the end.
    if bytes.len() < EOCD {
        return Err(bad(
            "not a zip archive (shorter than an end of central directory)",
        ));
    }
    let lowest = bytes.len().saturating_sub(EOCD + 65_535);
    let at = (lowest..=bytes.len().saturating_sub(EOCD))
        .rev()
        .find(|&i| bytes[i..].starts_with(&0x0605_4b50u32.to_le_bytes()))
        .ok_or_else(|| bad("not a zip archive (no end of central directory)"))?;
    let u16_at = |o: usize| usize::from(u16::from_le_bytes([bytes[at + o], bytes[at + o + 1]]));
    let comment = u16_at(20);
    if at + EOCD + comment != bytes.len() {
        return Err(bad(format!(
            "{} bytes follow the end of the archive",
            bytes.len() as i64 - (at + EOCD + comment) as i64
        )));
    }
    match u16_at(10) {
        0xffff => Err(bad("ZIP64 archives are refused")),
        n => Ok(n),
    }
}

fn too_large(name: &str, max: u64) -> Refusal {
    Refusal::new(
        RefusalCode::TensorTooLarge,
        format!("{name}: more than {max} bytes"),
    )
}

/// One NPY member, read through a bounded reader.
fn member(name: String, entry: impl std::io::Read, max: u64) -> Result<Tensor, Refusal> {
    use std::io::Read;
    let mut r = entry.take(MAX_HEADER as u64 + 12);
    let mut head = [0u8; 8];
    r.read_exact(&mut head)
        .map_err(|e| bad(format!("{name}: {e}")))?;
    if &head[..6] != b"\x93NUMPY" {
        return Err(bad(format!("{name}: not an NPY array")));
    }
    let header_len = match head[6] {
        1 => {
            let mut l = [0u8; 2];
            r.read_exact(&mut l)
                .map_err(|e| bad(format!("{name}: {e}")))?;
            u16::from_le_bytes(l) as usize
        }
        2 | 3 => {
            let mut l = [0u8; 4];
            r.read_exact(&mut l)
                .map_err(|e| bad(format!("{name}: {e}")))?;
            u32::from_le_bytes(l) as usize
        }
        v => return Err(bad(format!("{name}: NPY version {v}"))),
    };
    if header_len > MAX_HEADER {
        return Err(bad(format!("{name}: NPY header of {header_len} bytes")));
    }
    let mut header = vec![0u8; header_len];
    r.read_exact(&mut header)
        .map_err(|e| bad(format!("{name}: {e}")))?;
    let header = String::from_utf8(header).map_err(|_| bad(format!("{name}: header not UTF-8")))?;
    let (descr, fortran, shape) = parse_header(&name, &header)?;
    if fortran {
        return Err(bad(format!(
            "{name}: Fortran-order (non-contiguous) arrays are refused"
        )));
    }
    let dtype = Dtype::from_descr(&descr)
        .ok_or_else(|| bad(format!("{name}: unsupported dtype {descr}")))?;
    let elements = shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
    let want = match elements.and_then(|e| e.checked_mul(dtype.size() as u64)) {
        Some(b) if b <= max => b,
        _ => return Err(too_large(&name, max)),
    };
    let mut data = Vec::with_capacity(want as usize);
    let mut rest = r.into_inner().take(want + 1);
    rest.read_to_end(&mut data)
        .map_err(|e| bad(format!("{name}: {e}")))?;
    if data.len() as u64 != want {
        return Err(bad(format!(
            "{name}: {} data bytes where the shape needs {want}",
            if data.len() as u64 > want {
                "more".to_string()
            } else {
                data.len().to_string()
            }
        )));
    }
    if dtype == Dtype::Bool && data.iter().any(|&b| b > 1) {
        return Err(bad(format!("{name}: a bool byte other than 0 or 1")));
    }
    let t = Tensor {
        name,
        dtype,
        shape,
        data,
    };
    if matches!(dtype, Dtype::Str(_)) && t.strings().is_none() {
        return Err(bad(format!(
            "{}: a string holds an invalid code point",
            t.name
        )));
    }
    Ok(t)
}

/// The NPY header dict: `{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }`. A
/// malformed one is refused as `{name}: NPY header: ...`.
fn parse_header(name: &str, h: &str) -> Result<(String, bool, Vec<u64>), Refusal> {
    let refuse = |m: &str| bad(format!("{name}: NPY header: {m}"));
    let h = h.trim_end_matches(['\n', ' ']).trim();
    let body = h
        .strip_prefix('{')
        .and_then(|x| x.strip_suffix('}'))
        .ok_or_else(|| refuse("not a dict"))?;
    let value_of = |key: &str| -> Result<&str, Refusal> {
        let k = format!("'{key}':");
        let at = body.find(&k).ok_or_else(|| refuse(&format!("no {key}")))?;
        Ok(body[at + k.len()..].trim_start())
    };
    let d = value_of("descr")?;
    let d = d
        .strip_prefix('\'')
        .ok_or_else(|| refuse("descr is not a string"))?;
    let descr = d[..d.find('\'').ok_or_else(|| refuse("descr unterminated"))?].to_string();
    let f = value_of("fortran_order")?;
    let fortran = if f.starts_with("False") {
        false
    } else if f.starts_with("True") {
        true
    } else {
        return Err(refuse("fortran_order is not a bool"));
    };
    let s = value_of("shape")?;
    let s = s
        .strip_prefix('(')
        .ok_or_else(|| refuse("shape is not a tuple"))?;
    let s = &s[..s.find(')').ok_or_else(|| refuse("shape unterminated"))?];
    let shape = s
        .split(',')
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(|x| {
            x.trim_end_matches('L')
                .parse::<u64>()
                .map_err(|_| refuse(&format!("dimension {x:?}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if shape.len() > 32 {
        return Err(refuse("more than 32 dimensions"));
    }
    Ok((descr, fortran, shape))
}

/// A deterministic `.npz`: one stored `NAME.npy` entry per tensor, in the given order.
pub fn write(tensors: &[Tensor]) -> Vec<u8> {
    let mut zip = Vec::new();
    let mut central = Vec::new();
    for t in tensors {
        let entry = npy(t);
        let name = format!("{}.npy", t.name);
        let crc = crc32fast::hash(&entry);
        let offset = zip.len() as u32;
        zip.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        common_header(&mut zip, crc, entry.len() as u32, &name);
        zip.extend_from_slice(name.as_bytes());
        zip.extend_from_slice(&entry);
        central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        central.extend_from_slice(&20u16.to_le_bytes()); // made by
        common_header(&mut central, crc, entry.len() as u32, &name);
        central.extend_from_slice(&[0; 8]); // comment len, disk, internal and external attrs
        central.extend_from_slice(&[0; 2]);
        central.extend_from_slice(&offset.to_le_bytes());
        central.extend_from_slice(name.as_bytes());
    }
    let cd_offset = zip.len() as u32;
    zip.extend_from_slice(&central);
    zip.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    zip.extend_from_slice(&[0; 4]); // disk numbers
    zip.extend_from_slice(&(tensors.len() as u16).to_le_bytes());
    zip.extend_from_slice(&(tensors.len() as u16).to_le_bytes());
    zip.extend_from_slice(&(central.len() as u32).to_le_bytes());
    zip.extend_from_slice(&cd_offset.to_le_bytes());
    zip.extend_from_slice(&0u16.to_le_bytes());
    zip
}

/// Version needed, flags, method (stored), time, date (1980-01-01), CRC, sizes, name length,
/// extra length: the part local and central headers share.
fn common_header(out: &mut Vec<u8>, crc: u32, size: u32, name: &str) {
    out.extend_from_slice(&20u16.to_le_bytes());
    // General-purpose bit 11: the name is UTF-8. Set for non-ASCII names only, as Python's
    // zipfile (and so NumPy) does; without it a reader decodes the name as CP437.
    let flags: u16 = if name.is_ascii() { 0 } else { 0x0800 };
    out.extend_from_slice(&flags.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&0x0021u16.to_le_bytes());
    out.extend_from_slice(&crc.to_le_bytes());
    out.extend_from_slice(&size.to_le_bytes());
    out.extend_from_slice(&size.to_le_bytes());
    out.extend_from_slice(&(name.len() as u16).to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
}

/// NPY 1.0: magic, version, header length, a padded dict header, then the raw data.
fn npy(t: &Tensor) -> Vec<u8> {
    let shape = match t.shape.len() {
        1 => format!("({},)", t.shape[0]),
        _ => format!(
            "({})",
            t.shape
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {shape}, }}",
        t.dtype.descr()
    );
    let total = 10 + header.len() + 1;
    header.push_str(&" ".repeat(total.next_multiple_of(64) - total));
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(&t.data);
    out
}
