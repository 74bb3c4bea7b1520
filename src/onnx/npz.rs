//! Tensors at the run boundary, and `.npz` archives: read with `zip` and `npyz` (stored or
//! deflated entries, as NumPy writes them), written here deterministically (NPY 1.0 entries in a stored ZIP with a
//! fixed 1980-01-01 timestamp) so that the same tensors always give the same bytes.

use super::audit::Refusal;
use crate::fingerprint::Hash256;
use serde::Serialize;

/// Element types the boundary accepts, with their ONNX code and NPY descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Dtype {
    F32,
    F64,
    I32,
    I64,
    U8,
    I8,
    Bool,
}

impl Dtype {
    const ALL: [(Dtype, i32, &'static str, usize); 7] = [
        (Dtype::F32, 1, "<f4", 4),
        (Dtype::U8, 2, "|u1", 1),
        (Dtype::I8, 3, "|i1", 1),
        (Dtype::I32, 6, "<i4", 4),
        (Dtype::I64, 7, "<i8", 8),
        (Dtype::Bool, 9, "|b1", 1),
        (Dtype::F64, 11, "<f8", 8),
    ];

    pub fn from_onnx(code: i32) -> Option<Dtype> {
        Self::ALL.iter().find(|r| r.1 == code).map(|r| r.0)
    }

    fn from_descr(d: &str) -> Option<Dtype> {
        Self::ALL.iter().find(|r| r.2 == d).map(|r| r.0)
    }

    fn row(self) -> (Dtype, i32, &'static str, usize) {
        *Self::ALL
            .iter()
            .find(|r| r.0 == self)
            .expect("every dtype has a row")
    }

    pub fn onnx(self) -> i32 {
        self.row().1
    }

    pub fn descr(self) -> &'static str {
        self.row().2
    }

    pub fn size(self) -> usize {
        self.row().3
    }
}

/// One named tensor: C-order little-endian raw bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    pub name: String,
    pub dtype: Dtype,
    pub shape: Vec<u64>,
    pub data: Vec<u8>,
}

/// What evidence records of a tensor: never its values.
#[derive(Clone, Debug, Serialize)]
pub struct TensorFacts {
    pub name: String,
    pub dtype: &'static str,
    pub shape: Vec<u64>,
    pub sha256: Hash256,
}

impl Tensor {
    pub fn from_f32(name: &str, shape: &[u64], values: &[f32]) -> Tensor {
        Tensor {
            name: name.into(),
            dtype: Dtype::F32,
            shape: shape.to_vec(),
            data: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        }
    }

    pub fn f32_values(&self) -> Option<Vec<f32>> {
        (self.dtype == Dtype::F32).then(|| {
            self.data
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
                .collect()
        })
    }

    pub fn elements(&self) -> u64 {
        self.shape.iter().product()
    }

    /// Whether every float value is finite (integers always are).
    pub fn finite(&self) -> bool {
        match self.dtype {
            Dtype::F32 => self
                .data
                .chunks_exact(4)
                .all(|c| f32::from_le_bytes(c.try_into().expect("4")).is_finite()),
            Dtype::F64 => self
                .data
                .chunks_exact(8)
                .all(|c| f64::from_le_bytes(c.try_into().expect("8")).is_finite()),
            _ => true,
        }
    }

    pub fn facts(&self) -> TensorFacts {
        TensorFacts {
            name: self.name.clone(),
            dtype: self.dtype.descr(),
            shape: self.shape.clone(),
            sha256: Hash256::of(&self.data),
        }
    }
}

fn bad(m: impl Into<String>) -> Refusal {
    Refusal::new("TENSOR_ARCHIVE_INVALID", m)
}

/// Read every array of an `.npz` archive (stored or deflated entries), refusing Fortran order
/// and unsupported dtypes.
pub fn read(bytes: &[u8], max_tensor_bytes: u64) -> Result<Vec<Tensor>, Refusal> {
    let mut archive =
        zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| bad(e.to_string()))?;
    let mut out = Vec::with_capacity(archive.len());
    for i in 0..archive.len() {
        let entry = archive.by_index(i).map_err(|e| bad(e.to_string()))?;
        let Some(name) = entry.name().strip_suffix(".npy").map(str::to_string) else {
            return Err(bad(format!("{}: not an .npy entry", entry.name())));
        };
        if entry.size() > max_tensor_bytes + 4096 {
            return Err(Refusal::new(
                "TENSOR_TOO_LARGE",
                format!("{name}: more than {max_tensor_bytes} bytes"),
            ));
        }
        let npy = npyz::NpyFile::new(entry).map_err(|e| bad(format!("{name}: {e}")))?;
        if npy.order() == npyz::Order::Fortran {
            return Err(bad(format!(
                "{name}: Fortran-order (non-contiguous) arrays are refused"
            )));
        }
        let descr = npy.dtype().descr().trim_matches('\'').to_string();
        let dtype = Dtype::from_descr(&descr)
            .ok_or_else(|| bad(format!("{name}: unsupported dtype {descr}")))?;
        let shape = npy.shape().to_vec();
        let elements = shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
        match elements.and_then(|e| e.checked_mul(dtype.size() as u64)) {
            Some(b) if b <= max_tensor_bytes => {}
            _ => {
                return Err(Refusal::new(
                    "TENSOR_TOO_LARGE",
                    format!("{name}: more than {max_tensor_bytes} bytes"),
                ));
            }
        }
        let data: Vec<u8> = match dtype {
            Dtype::F32 => le(npy.into_vec::<f32>(), f32::to_le_bytes),
            Dtype::F64 => le(npy.into_vec::<f64>(), f64::to_le_bytes),
            Dtype::I32 => le(npy.into_vec::<i32>(), i32::to_le_bytes),
            Dtype::I64 => le(npy.into_vec::<i64>(), i64::to_le_bytes),
            Dtype::U8 => npy.into_vec::<u8>(),
            Dtype::I8 => le(npy.into_vec::<i8>(), i8::to_le_bytes),
            Dtype::Bool => npy
                .into_vec::<bool>()
                .map(|v| v.into_iter().map(u8::from).collect()),
        }
        .map_err(|e| bad(format!("{name}: {e}")))?;
        out.push(Tensor {
            name,
            dtype,
            shape,
            data,
        });
    }
    Ok(out)
}

fn le<T: Copy, const N: usize>(
    v: std::io::Result<Vec<T>>,
    f: fn(T) -> [u8; N],
) -> std::io::Result<Vec<u8>> {
    v.map(|v| v.into_iter().flat_map(f).collect())
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
        common_header(&mut zip, crc, entry.len() as u32, name.len() as u16);
        zip.extend_from_slice(name.as_bytes());
        zip.extend_from_slice(&entry);
        central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        central.extend_from_slice(&20u16.to_le_bytes()); // made by
        common_header(&mut central, crc, entry.len() as u32, name.len() as u16);
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
fn common_header(out: &mut Vec<u8>, crc: u32, size: u32, name_len: u16) {
    out.extend_from_slice(&20u16.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&0x0021u16.to_le_bytes());
    out.extend_from_slice(&crc.to_le_bytes());
    out.extend_from_slice(&size.to_le_bytes());
    out.extend_from_slice(&size.to_le_bytes());
    out.extend_from_slice(&name_len.to_le_bytes());
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
