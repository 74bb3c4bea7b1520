//! An NBG run once on the simulator: loaded from memory in the driver child, its inputs
//! converted from float to the stored types nbg's parse names, its outputs read back and
//! converted to float. The names, shapes and quantization are nbg's; the loader's own view of
//! the parameters is compared with them.
//!
//! This driver build (6.4.x) sends files of versions 0x00020000 to 0x00020004 down its v1
//! memory setup: the import succeeds and `vxVerifyGraph` fails with -1 ("cpuBackBuffer is
//! null"). The same bytes with the version word read as 0x00020005 verify and run, so such a
//! file is relabelled in memory (stated in the report as `relabelled`), never on disk.

use super::convert::{Conversion, Storage};
use super::substitute::{Substituted, Substitution};
use super::{ChildFailure, Config, Limits, Parameter, Response, Sdk, VendorError, child, driver};
use crate::digest::Hash256;
use crate::nbg::family::NbgFamily as _;
use crate::nbg::parse::IoRecord;
use crate::onnx::npz::{Dtype, Tensor};
use serde::Serialize;

/// The version word the driver runs a v2 file under.
pub const RUN_VERSION: u32 = 0x0002_0005;
/// The v2 versions this driver build verifies only after relabelling.
const RELABELLED: std::ops::RangeInclusive<u32> = 0x0002_0000..=0x0002_0004;

/// A version word read differently, in memory only.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Relabel {
    /// The file's version word.
    pub from: String,
    /// The word the driver was handed.
    pub to: String,
    /// Why.
    pub reason: &'static str,
}

/// One input or output of a run. Its JSON names the dimensions `npz_shape`, as `info` and
/// `parse` do (outermost first); `shape`, the same list under its old key, stays for one
/// release (in `info` and `parse`, `shape` is the file's order, innermost first).
#[derive(Clone, Debug, PartialEq)]
pub struct RunTensor {
    /// The name nbg's parse gives it (`input_N` / `output_N` where the record names none or a
    /// name repeats).
    pub name: String,
    /// Its dimensions, outermost first (the file's, reversed): the NPZ order.
    pub shape: Vec<u64>,
    /// How the file stores it.
    pub storage: Storage,
    /// What was done between the archive and the stored elements.
    pub conversion: Conversion,
    /// SHA-256 of the stored elements.
    pub stored_sha256: Hash256,
}

impl Serialize for RunTensor {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut t = s.serialize_struct("RunTensor", 6)?;
        t.serialize_field("name", &self.name)?;
        t.serialize_field("npz_shape", &self.shape)?;
        t.serialize_field("shape", &self.shape)?;
        t.serialize_field("storage", &self.storage)?;
        t.serialize_field("conversion", &self.conversion)?;
        t.serialize_field("stored_sha256", &self.stored_sha256)?;
        t.end()
    }
}

/// What the driver did with the graph.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum RunVerdict {
    /// Verified and processed; the outputs were read back.
    Ran {
        /// Seconds `vxVerifyGraph` took.
        verify_seconds: f64,
        /// Seconds `vxProcessGraph` took.
        process_seconds: f64,
    },
    /// A call returned an error status.
    Refused(super::driver::DriverRefusal),
    /// The driver crashed or hung (contained).
    Crashed {
        /// What happened.
        failure: String,
    },
}

/// Every name an NPZ input may go by: each input's own name, and `input_N` (its position)
/// where no input is named so already. A stored name such as `input/output[0]` is an awkward
/// NPZ key; the alias is the same input. Pairs of (name, input index).
fn accepted_names(wanted: &[Io]) -> Vec<(String, usize)> {
    let mut v: Vec<(String, usize)> = wanted
        .iter()
        .enumerate()
        .map(|(i, w)| (w.name.clone(), i))
        .collect();
    for i in 0..wanted.len() {
        let alias = format!("input_{i}");
        if !wanted.iter().any(|w| w.name == alias) {
            v.push((alias, i));
        }
    }
    v
}

/// The names a refusal offers: each input's name with its alias.
fn names_hint(accepted: &[(String, usize)]) -> String {
    let inputs = accepted.iter().map(|(_, i)| i + 1).max().unwrap_or(0);
    let each: Vec<String> = (0..inputs)
        .map(|i| {
            let names: Vec<String> = accepted
                .iter()
                .filter(|(_, k)| *k == i)
                .map(|(n, _)| format!("{n:?}"))
                .collect();
            names.join(" or ")
        })
        .collect();
    format!("its inputs: {}", each.join(", "))
}

/// The record of one run.
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    /// SHA-256 of the file as given.
    pub nbg_sha256: Hash256,
    /// Its version word.
    pub version: String,
    /// The version word the driver was handed instead, when it was.
    pub relabelled: Option<Relabel>,
    /// Bytes substituted in memory before the run (`--substitute`), checksums recomputed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub substituted: Vec<Substituted>,
    /// The configuration simulated.
    pub config: Config,
    /// What the driver did.
    pub verdict: RunVerdict,
    /// The inputs, in the file's order.
    pub inputs: Vec<RunTensor>,
    /// The outputs, in the file's order (empty unless it ran).
    pub outputs: Vec<RunTensor>,
    /// Where the loader's parameters differ from nbg's I/O records.
    pub io_differences: Vec<String>,
    /// Seconds the child ran.
    pub seconds: f64,
    /// A signal that ended the child after it answered (the driver's teardown).
    pub teardown_signal: Option<i32>,
}

/// A run's report with its outputs, both as stored and as float32.
#[derive(Clone, Debug)]
pub struct Ran {
    /// The record.
    pub report: RunReport,
    /// The outputs' stored elements (their stored type), in the file's order.
    pub stored: Vec<Tensor>,
    /// The outputs as float32, in the file's order.
    pub float: Vec<Tensor>,
}

/// One I/O record as a run sees it.
struct Io {
    name: String,
    shape: Vec<u64>,
    storage: Storage,
    bytes: u64,
}

/// The name a run gives record `r` (of `all`, `side` "input" or "output").
fn io_name(r: &IoRecord, all: &[IoRecord], side: &str) -> String {
    match r.name.as_deref() {
        Some(n)
            if !n.is_empty()
                && all.iter().filter(|x| x.name.as_deref() == Some(n)).count() == 1 =>
        {
            n.to_string()
        }
        _ => format!("{side}_{}", r.index),
    }
}

fn ios(all: &[IoRecord], side: &str) -> Result<Vec<Io>, VendorError> {
    all.iter()
        .map(|r| {
            let name = io_name(r, all, side);
            let storage = Storage::of(r)
                .map_err(|e| VendorError::Unconvertible(format!("{side} {name:?}: {e}")))?;
            let shape: Vec<u64> = r.dimensions.iter().rev().map(|&d| u64::from(d)).collect();
            let bytes = shape
                .iter()
                .try_fold(storage.dtype().size() as u64, |a, &d| a.checked_mul(d))
                .ok_or_else(|| VendorError::Unconvertible(format!("{side} {name:?}: too large")))?;
            Ok(Io {
                name,
                shape,
                storage,
                bytes,
            })
        })
        .collect()
}

/// What a run hands the driver: the image (relabelled when needed) and each input's stored
/// elements, with the records of the conversion.
pub struct Prepared {
    image: Vec<u8>,
    nbg_sha256: Hash256,
    version: u32,
    relabelled: Option<Relabel>,
    substituted: Vec<Substituted>,
    inputs: Vec<RunTensor>,
    stored_inputs: Vec<Vec<u8>>,
    outputs: Vec<Io>,
    records: (Vec<IoRecord>, Vec<IoRecord>),
}

impl Prepared {
    /// The input names, shapes and element types an archive for `bytes` may hold: the stored
    /// type, or float32 to be converted.
    pub fn input_bound(bytes: &[u8]) -> Result<Vec<(String, u64)>, VendorError> {
        let g = crate::parse(bytes).map_err(VendorError::Invalid)?;
        let wanted = ios(g.inputs(), "input")?;
        let bound = |io: &Io| {
            let elements = io.bytes / io.storage.dtype().size() as u64;
            elements.saturating_mul(4).max(io.bytes)
        };
        // Each input under its name and under its position's alias (`accepted_names`).
        Ok(accepted_names(&wanted)
            .into_iter()
            .map(|(name, i)| (name, bound(&wanted[i])))
            .collect())
    }

    /// The inputs as the run will feed them: name, shape, storage, conversion and the stored
    /// elements' SHA-256, in the file's order.
    pub fn inputs(&self) -> &[RunTensor] {
        &self.inputs
    }

    /// `new` for `bytes` with `subs` made in memory and its checksums recomputed
    /// (`substitute::substituted`); the report keeps the file's own SHA-256 and lists them.
    pub fn with_substitutions(
        bytes: &[u8],
        inputs: &[Tensor],
        subs: &[Substitution],
    ) -> Result<Prepared, VendorError> {
        if subs.is_empty() {
            return Prepared::new(bytes, inputs);
        }
        let (image, substituted) = super::substitute::substituted(bytes, subs)?;
        let mut p = Prepared::new(&image, inputs)?;
        p.nbg_sha256 = Hash256::of(bytes);
        p.substituted = substituted;
        Ok(p)
    }

    /// Parse `bytes`, match `inputs` to its input records by name, shape and type, and convert
    /// them to the stored types.
    pub fn new(bytes: &[u8], inputs: &[Tensor]) -> Result<Prepared, VendorError> {
        let g = crate::parse(bytes).map_err(VendorError::Invalid)?;
        let wanted = ios(g.inputs(), "input")?;
        let outputs = ios(g.outputs(), "output")?;
        let mismatch = |m: String| Err(VendorError::InputMismatch(m));
        let accepted = accepted_names(&wanted);
        for t in inputs {
            if !accepted.iter().any(|(n, _)| *n == t.name) {
                return mismatch(format!(
                    "{:?}: the file has no input of that name ({})",
                    t.name,
                    names_hint(&accepted)
                ));
            }
        }
        let given = |i: usize| {
            let named: Vec<&String> = accepted
                .iter()
                .filter(|(_, k)| *k == i)
                .map(|(n, _)| n)
                .collect();
            let mut found = inputs.iter().filter(|t| named.contains(&&t.name));
            (found.next(), found.next())
        };
        let mut records = Vec::with_capacity(wanted.len());
        let mut stored_inputs = Vec::with_capacity(wanted.len());
        for (i, w) in wanted.iter().enumerate() {
            let t = match given(i) {
                (Some(_), Some(_)) => {
                    return mismatch(format!(
                        "{:?}: given twice, by its name and by its position's alias",
                        w.name
                    ));
                }
                (t, _) => t,
            };
            let Some(t) = t else {
                return mismatch(format!(
                    "{:?}: missing (the file's input {:?} {})",
                    w.name,
                    w.shape,
                    w.storage.dtype().descr()
                ));
            };
            if t.shape != w.shape {
                return mismatch(format!(
                    "{:?}: shape {:?}, the file's is {:?}",
                    w.name, t.shape, w.shape
                ));
            }
            let (conversion, stored) = if t.dtype == w.storage.dtype() {
                (Conversion::AsStored, t.data.clone())
            } else if t.dtype == Dtype::F32 {
                let Some(values) = t.f32_values() else {
                    return mismatch(format!("{:?}: not float32", w.name));
                };
                if values.iter().any(|v| !v.is_finite()) {
                    return mismatch(format!("{:?}: holds NaN or infinity", w.name));
                }
                (w.storage.to_stored(), w.storage.quantize(&values))
            } else {
                return mismatch(format!(
                    "{:?}: element type {}, the file stores {} (give that, or float32 to convert)",
                    w.name,
                    t.dtype.descr(),
                    w.storage.dtype().descr()
                ));
            };
            if stored.len() as u64 != w.bytes {
                return mismatch(format!(
                    "{:?}: {} bytes, the file's input holds {}",
                    w.name,
                    stored.len(),
                    w.bytes
                ));
            }
            records.push(RunTensor {
                name: w.name.clone(),
                shape: w.shape.clone(),
                storage: w.storage,
                conversion,
                stored_sha256: Hash256::of(&stored),
            });
            stored_inputs.push(stored);
        }
        let version = g.version();
        let mut image = bytes.to_vec();
        let relabelled = RELABELLED.contains(&version).then(|| {
            let at = crate::nbg::format::OFF_VERSION_WORD;
            image[at..at + 4].copy_from_slice(&RUN_VERSION.to_le_bytes());
            Relabel {
                from: format!("0x{version:08x}"),
                to: format!("0x{RUN_VERSION:08x}"),
                reason: "the driver's 6.4.x build verifies 0x00020000-0x00020004 through its v1 memory setup and fails (\"cpuBackBuffer is null\"); the same bytes read as 0x00020005 run",
            }
        });
        Ok(Prepared {
            image,
            nbg_sha256: Hash256::of(bytes),
            version,
            relabelled,
            substituted: Vec::new(),
            inputs: records,
            stored_inputs,
            outputs,
            records: (g.inputs().to_vec(), g.outputs().to_vec()),
        })
    }
}

/// Run a prepared graph once under `config` in the driver child.
pub fn run(sdk: &Sdk, config: &Config, p: &Prepared) -> Result<Ran, VendorError> {
    let request = driver::Request::Run {
        len: p.image.len() as u64,
        inputs: p.stored_inputs.iter().map(|b| b.len() as u64).collect(),
    };
    let mut payload =
        Vec::with_capacity(p.image.len() + p.stored_inputs.iter().map(Vec::len).sum::<usize>());
    payload.extend_from_slice(&p.image);
    for b in &p.stored_inputs {
        payload.extend_from_slice(b);
    }
    let report = |verdict, outputs, io_differences, seconds, teardown_signal| RunReport {
        nbg_sha256: p.nbg_sha256,
        version: format!("0x{:08x}", p.version),
        relabelled: p.relabelled.clone(),
        substituted: p.substituted.clone(),
        config: config.clone(),
        verdict,
        inputs: p.inputs.clone(),
        outputs,
        io_differences,
        seconds,
        teardown_signal,
    };
    let answer = match child::run(
        sdk,
        &config.name,
        &request,
        &payload,
        &[],
        Limits::default(),
    ) {
        Ok(a) => a,
        Err(
            f @ (ChildFailure::Signal { .. }
            | ChildFailure::Timeout(_)
            | ChildFailure::CpuLimit(_)
            | ChildFailure::NoAnswer(_)),
        ) => {
            let failure = f.to_string();
            return Ok(Ran {
                report: report(RunVerdict::Crashed { failure }, vec![], vec![], 0.0, None),
                stored: vec![],
                float: vec![],
            });
        }
        Err(f) => return Err(f.into()),
    };
    let (parameters, sizes, verify_seconds, process_seconds) = match answer.response {
        Response::Ran {
            parameters,
            outputs,
            verify_seconds,
            process_seconds,
        } => (parameters, outputs, verify_seconds, process_seconds),
        Response::Refused(r) => {
            let verdict = RunVerdict::Refused(r);
            return Ok(Ran {
                report: report(
                    verdict,
                    vec![],
                    vec![],
                    answer.seconds,
                    answer.teardown_signal,
                ),
                stored: vec![],
                float: vec![],
            });
        }
        Response::Error { message } => return Err(VendorError::ChildError(message)),
        _ => return Err(VendorError::ChildError("an unexpected answer".into())),
    };
    let differences = super::compare_io(&p.records.0, &p.records.1, &parameters);
    let bytes = answer.outputs.unwrap_or_default();
    let (stored, float, records) = outputs_of(&p.outputs, &sizes, &bytes, &parameters)?;
    let verdict = RunVerdict::Ran {
        verify_seconds,
        process_seconds,
    };
    Ok(Ran {
        report: report(
            verdict,
            records,
            differences,
            answer.seconds,
            answer.teardown_signal,
        ),
        stored,
        float,
    })
}

/// A run's outputs: as stored, as float32, and their records.
type Outputs = (Vec<Tensor>, Vec<Tensor>, Vec<RunTensor>);

/// The outputs the child wrote (`sizes` bytes each, back to back in `bytes`), as stored and
/// as float32, checked against nbg's records.
fn outputs_of(
    ios: &[Io],
    sizes: &[u64],
    bytes: &[u8],
    parameters: &[Parameter],
) -> Result<Outputs, VendorError> {
    let loader_outputs = parameters
        .iter()
        .filter(|p| p.direction == "output")
        .count();
    if sizes.len() != ios.len() || loader_outputs != ios.len() {
        return Err(VendorError::ChildError(format!(
            "the driver gave {} outputs, nbg's parse has {}",
            sizes.len(),
            ios.len()
        )));
    }
    let (mut stored, mut float, mut records) = (vec![], vec![], vec![]);
    let mut at = 0usize;
    for (io, &n) in ios.iter().zip(sizes) {
        let end = usize::try_from(n).ok().and_then(|n| at.checked_add(n));
        let Some(data) = end.and_then(|e| bytes.get(at..e)) else {
            return Err(VendorError::ChildError(
                "the outputs file is shorter than its sizes".into(),
            ));
        };
        if n != io.bytes {
            return Err(VendorError::ChildError(format!(
                "output {:?}: the driver gave {n} bytes, nbg's record holds {}",
                io.name, io.bytes
            )));
        }
        at += data.len();
        records.push(RunTensor {
            name: io.name.clone(),
            shape: io.shape.clone(),
            storage: io.storage,
            conversion: io.storage.to_float(),
            stored_sha256: Hash256::of(data),
        });
        float.push(Tensor::from_f32(
            &io.name,
            &io.shape,
            &io.storage.dequantize(data),
        ));
        stored.push(Tensor {
            name: io.name.clone(),
            dtype: io.storage.dtype(),
            shape: io.shape.clone(),
            data: data.to_vec(),
        });
    }
    Ok((stored, float, records))
}
