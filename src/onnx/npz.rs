//! Tensors at the run boundary, and `.npz` archives: read with `zip` and a bounded NPY parser (stored or
//! deflated entries, as NumPy writes them), written here deterministically (NPY 1.0 entries in a stored ZIP with a
//! fixed 1980-01-01 timestamp) so that the same tensors always give the same bytes.

use super::refusal::{Refusal, RefusalCode};
use crate::nbg::fingerprint::Hash256;
use serde::Serialize;

/// Element types the boundary accepts (every numeric tensor type ONNX Runtime's CPU provider
/// takes), with their ONNX code and NPY descriptor. NumPy has no bfloat16: it travels as the
/// two-byte void `|V2` (what `ml_dtypes` writes) and is accepted where the model declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Dtype {
    /// 32-bit IEEE float (ONNX FLOAT, NPY `<f4`).
    F32,
    /// 64-bit IEEE float (ONNX DOUBLE, NPY `<f8`).
    F64,
    /// 16-bit IEEE float (ONNX FLOAT16, NPY `<f2`).
    F16,
    /// bfloat16 (ONNX BFLOAT16, NPY `|V2`).
    BF16,
    /// Signed 8-bit integer (ONNX INT8, NPY `|i1`).
    I8,
    /// Signed 16-bit integer (ONNX INT16, NPY `<i2`).
    I16,
    /// Signed 32-bit integer (ONNX INT32, NPY `<i4`).
    I32,
    /// Signed 64-bit integer (ONNX INT64, NPY `<i8`).
    I64,
    /// Unsigned 8-bit integer (ONNX UINT8, NPY `|u1`).
    U8,
    /// Unsigned 16-bit integer (ONNX UINT16, NPY `<u2`).
    U16,
    /// Unsigned 32-bit integer (ONNX UINT32, NPY `<u4`).
    U32,
    /// Unsigned 64-bit integer (ONNX UINT64, NPY `<u8`).
    U64,
    /// Boolean, one byte of 0 or 1 (ONNX BOOL, NPY `|b1`).
    Bool,
    /// Strings, as NumPy's fixed-width `<U{width}`: `width` UTF-32LE code units per element,
    /// NUL-padded. ONNX Runtime receives them as UTF-8 strings (trailing NULs removed).
    Str(u32),
}

impl Dtype {
    const ALL: [(Dtype, i32, &'static str, usize); 13] = [
        (Dtype::F32, 1, "<f4", 4),
        (Dtype::U8, 2, "|u1", 1),
        (Dtype::I8, 3, "|i1", 1),
        (Dtype::U16, 4, "<u2", 2),
        (Dtype::I16, 5, "<i2", 2),
        (Dtype::I32, 6, "<i4", 4),
        (Dtype::I64, 7, "<i8", 8),
        (Dtype::Bool, 9, "|b1", 1),
        (Dtype::F16, 10, "<f2", 2),
        (Dtype::F64, 11, "<f8", 8),
        (Dtype::U32, 12, "<u4", 4),
        (Dtype::U64, 13, "<u8", 8),
        (Dtype::BF16, 16, "|V2", 2),
    ];

    /// The fixed-size type of an ONNX element type (strings have no fixed width).
    pub fn from_onnx(code: i32) -> Option<Dtype> {
        Self::ALL.iter().find(|r| r.1 == code).map(|r| r.0)
    }

    fn from_descr(d: &str) -> Option<Dtype> {
        if let Some(w) = d.strip_prefix("<U") {
            // At most 64 Ki code points per string.
            return w
                .parse::<u32>()
                .ok()
                .filter(|&w| (1..=65_536).contains(&w))
                .map(Dtype::Str);
        }
        // NumPy spells the two-byte void `<V2` or `|V2` depending on how it was made.
        let d = if d == "<V2" { "|V2" } else { d };
        Self::ALL.iter().find(|r| r.2 == d).map(|r| r.0)
    }

    fn row(self) -> Option<(Dtype, i32, &'static str, usize)> {
        Self::ALL.iter().find(|r| r.0 == self).copied()
    }

    /// The ONNX element type code (8 for strings).
    pub fn onnx(self) -> i32 {
        match self {
            Dtype::Str(_) => 8,
            d => d.row().map_or(0, |r| r.1),
        }
    }

    /// The NPY descriptor.
    pub fn descr(self) -> String {
        match self {
            Dtype::Str(w) => format!("<U{w}"),
            d => d.row().map_or("", |r| r.2).to_string(),
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Dtype::Str(w) => 4 * w as usize,
            d => d.row().map_or(0, |r| r.3),
        }
    }

    /// Every accepted element type.
    pub fn all() -> impl Iterator<Item = Dtype> {
        Self::ALL.iter().map(|r| r.0)
    }
}

/// One named tensor: C-order little-endian raw bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    /// The tensor's name: the graph input or output it is, the archive member without `.npy`.
    pub name: String,
    /// Its element type.
    pub dtype: Dtype,
    /// Its dimensions, outermost first.
    pub shape: Vec<u64>,
    /// Its elements, C order, little-endian, `elements() * dtype.size()` bytes.
    pub data: Vec<u8>,
}

/// What evidence records of a tensor: never its values.
#[derive(Clone, Debug, Serialize)]
pub struct TensorFacts {
    /// The tensor's name.
    pub name: String,
    /// Its NPY descriptor (`<f4`, ...).
    pub dtype: String,
    /// Its dimensions, outermost first.
    pub shape: Vec<u64>,
    /// SHA-256 of its raw element bytes (C order, little-endian).
    pub sha256: Hash256,
}

impl Tensor {
    /// An F32 tensor holding `values` (C order).
    pub fn from_f32(name: &str, shape: &[u64], values: &[f32]) -> Tensor {
        Tensor {
            name: name.into(),
            dtype: Dtype::F32,
            shape: shape.to_vec(),
            data: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        }
    }

    /// An F32 tensor's elements; `None` for other types.
    pub fn f32_values(&self) -> Option<Vec<f32>> {
        (self.dtype == Dtype::F32).then(|| {
            self.data
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        })
    }

    /// Every element as f64 (bool as 0/1; 64-bit integers beyond 2^53 round); `None` for
    /// strings.
    pub fn to_f64(&self) -> Option<Vec<f64>> {
        let d = &self.data;
        let n = self.dtype.size();
        if matches!(self.dtype, Dtype::Str(_)) || d.len() % n != 0 {
            return None;
        }
        Some(
            d.chunks_exact(n)
                .map(|c| match self.dtype {
                    Dtype::F32 => f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
                    Dtype::F64 => {
                        f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])
                    }
                    Dtype::F16 => f64::from(f16_to_f32(u16::from_le_bytes([c[0], c[1]]))),
                    Dtype::BF16 => f64::from(f32::from_bits(
                        u32::from(u16::from_le_bytes([c[0], c[1]])) << 16,
                    )),
                    Dtype::I8 => f64::from(c[0] as i8),
                    Dtype::U8 | Dtype::Bool => f64::from(c[0]),
                    Dtype::I16 => f64::from(i16::from_le_bytes([c[0], c[1]])),
                    Dtype::U16 => f64::from(u16::from_le_bytes([c[0], c[1]])),
                    Dtype::I32 => f64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])),
                    Dtype::U32 => f64::from(u32::from_le_bytes([c[0], c[1], c[2], c[3]])),
                    Dtype::I64 => {
                        i64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]) as f64
                    }
                    Dtype::U64 => {
                        u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]) as f64
                    }
                    Dtype::Str(_) => f64::NAN,
                })
                .collect(),
        )
    }

    /// A string tensor's elements (NUL padding removed); `None` for other types or invalid
    /// code points.
    pub fn strings(&self) -> Option<Vec<String>> {
        let Dtype::Str(w) = self.dtype else {
            return None;
        };
        self.data
            .chunks_exact(4 * w as usize)
            .map(|c| {
                c.chunks_exact(4)
                    .map(|u| u32::from_le_bytes([u[0], u[1], u[2], u[3]]))
                    .take_while(|&u| u != 0)
                    .map(char::from_u32)
                    .collect::<Option<String>>()
            })
            .collect()
    }

    /// A string tensor, as fixed-width UTF-32LE of the longest element (at least 1).
    pub fn from_strings(name: &str, shape: &[u64], values: &[String]) -> Tensor {
        let w = values
            .iter()
            .map(|s| s.chars().count())
            .max()
            .unwrap_or(0)
            .max(1);
        let mut data = Vec::with_capacity(values.len() * 4 * w);
        for s in values {
            let n = s.chars().count();
            data.extend(s.chars().flat_map(|c| u32::from(c).to_le_bytes()));
            data.extend(std::iter::repeat_n(0u8, 4 * (w - n)));
        }
        Tensor {
            name: name.into(),
            dtype: Dtype::Str(w as u32),
            shape: shape.to_vec(),
            data,
        }
    }

    /// The number of elements (the product of the dimensions; 1 for a scalar).
    pub fn elements(&self) -> u64 {
        self.shape.iter().product()
    }

    /// Whether every float value is finite (integers always are).
    pub fn finite(&self) -> bool {
        match self.dtype {
            Dtype::F32 => self
                .data
                .chunks_exact(4)
                .all(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]).is_finite()),
            Dtype::F64 => self.data.chunks_exact(8).all(|c| {
                f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]).is_finite()
            }),
            // An all-ones exponent is infinity or NaN.
            Dtype::F16 => self
                .data
                .chunks_exact(2)
                .all(|c| u16::from_le_bytes([c[0], c[1]]) & 0x7c00 != 0x7c00),
            Dtype::BF16 => self
                .data
                .chunks_exact(2)
                .all(|c| u16::from_le_bytes([c[0], c[1]]) & 0x7f80 != 0x7f80),
            _ => true,
        }
    }

    /// What evidence records of it: name, descriptor, shape and the hash of its bytes.
    pub fn facts(&self) -> TensorFacts {
        TensorFacts {
            name: self.name.clone(),
            dtype: self.dtype.descr(),
            shape: self.shape.clone(),
            sha256: Hash256::of(&self.data),
        }
    }
}

/// IEEE half to single precision (exact: every half is a single).
fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = (h >> 10) & 0x1f;
    let frac = u32::from(h & 0x3ff);
    let bits = match exp {
        0 if frac == 0 => sign,
        0 => {
            // Subnormal: value = frac * 2^-24.
            let v = frac as f32 * f32::from_bits(0x3380_0000);
            return if sign != 0 { -v } else { v };
        }
        0x1f => sign | 0x7f80_0000 | (frac << 13),
        e => sign | ((u32::from(e) + 112) << 23) | (frac << 13),
    };
    f32::from_bits(bits)
}

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
/// any member is inflated.
fn read_bounded(
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
