//! The vendor's own toolchain as a measured peer: VeriSilicon's x86-64 OpenVX simulator driver
//! (VIP SDK 6.4.x, from the PyPI wheel `acuitylite`, installed by `.ci/setup`, never
//! committed), loaded at run time in a contained child process. Its serializer writes real NBG
//! files from the project's own ONNX models (`compile`, `capture`); its loader imports NBG
//! files from a path or from memory (`load`), and what it reports is compared with nbg's parse.

pub mod agreement;
pub mod capture;
pub mod capture_sets;
mod child;
pub mod compat;
pub mod compiles;
pub mod controls;
pub mod convert;
pub mod driver;
mod ffi;
pub mod geometry_proofs;
pub mod lower;
pub mod mapping_run;
pub mod models;
pub mod npu;
pub mod plan;
pub mod qualify;
pub mod roles;
pub mod run;
pub mod sdk;
pub mod substitute;
pub mod sweep;
pub mod targets;

pub use child::{ChildFailure, Limits};
pub use driver::{Parameter, Response};
pub use sdk::{Sdk, SdkError};
pub use targets::Config;

use crate::digest::Hash256;
use serde::Serialize;

/// Why a vendor command could not give its result.
#[derive(Debug, thiserror::Error)]
pub enum VendorError {
    /// The driver is not installed or not the pinned build (exit 2).
    #[error(transparent)]
    Sdk(#[from] SdkError),
    /// The target is not one of the driver's configurations (exit 2).
    #[error("{0}")]
    Target(String),
    /// The model failed the ONNX admission audit (exit 1).
    #[error("the model is refused by the ONNX admission audit: {0}")]
    Admission(String),
    /// The model holds something the lowering does not cover (exit 1).
    #[error("the model cannot be built for the driver: {0}")]
    Unsupported(#[from] lower::Unsupported),
    /// The driver child crashed, hung or could not run (exit 1).
    #[error(transparent)]
    Child(#[from] ChildFailure),
    /// A driver call returned an error status (exit 1).
    #[error("the driver refused the graph at {}: status {} ({})", .0.step, .0.status, .0.status_name)]
    DriverRefused(driver::DriverRefusal),
    /// The child could not do what was asked (exit 1).
    #[error("the driver child failed: {0}")]
    ChildError(String),
    /// The graph was processed but the driver wrote no network binary (exit 1).
    #[error("the driver processed the graph but wrote no network binary")]
    NoBinary,
    /// A file the command writes could not be written (exit 2).
    #[error(transparent)]
    Write(#[from] crate::files::InputError),
    /// nbg refuses the file a run was asked to load (exit 1).
    #[error("nbg refuses the file: {0}")]
    Invalid(crate::Failure),
    /// The given inputs do not match the file's input records (exit 2).
    #[error("{0}")]
    InputMismatch(String),
    /// A substitution asked of a run cannot be made (exit 2).
    #[error("{0}")]
    Substitution(String),
    /// An input or output record's storage has no float conversion (exit 1).
    #[error("{0}")]
    Unconvertible(String),
    /// The CPU oracle could not give the reference outputs (exit 1).
    #[error("the CPU oracle failed: {0}")]
    Oracle(String),
}

impl VendorError {
    /// The exit status: 2 for set-up and usage problems, 1 for a refusal or failure.
    pub fn exit_status(&self) -> crate::exit::Exit {
        match self {
            VendorError::Sdk(_)
            | VendorError::Target(_)
            | VendorError::Write(_)
            | VendorError::InputMismatch(_)
            | VendorError::Substitution(_) => crate::exit::Exit::Usage,
            _ => crate::exit::Exit::Failure,
        }
    }

    /// A stable kebab-case code.
    pub fn code(&self) -> &'static str {
        match self {
            VendorError::Sdk(SdkError::Missing { .. }) => "vendor-driver-missing",
            VendorError::Sdk(_) => "vendor-driver-mismatch",
            VendorError::Target(_) => "vendor-unknown-target",
            VendorError::Admission(_) => "model-refused",
            VendorError::Unsupported(_) => "model-not-covered",
            VendorError::Child(ChildFailure::Signal { .. }) => "vendor-driver-crashed",
            VendorError::Child(ChildFailure::Timeout(_) | ChildFailure::CpuLimit(_)) => {
                "vendor-driver-timeout"
            }
            VendorError::Child(_) => "vendor-child-failed",
            VendorError::DriverRefused(_) => "vendor-driver-refused",
            VendorError::ChildError(_) => "vendor-child-failed",
            VendorError::NoBinary => "vendor-no-binary",
            VendorError::Write(_) => "output-unwritable",
            VendorError::Invalid(_) => "invalid-nbg",
            VendorError::InputMismatch(_) => "input-mismatch",
            VendorError::Substitution(_) => "substitution-refused",
            VendorError::Unconvertible(_) => "io-unconvertible",
            VendorError::Oracle(_) => "oracle-failed",
        }
    }
}

/// The installed driver's configurations, from its pinned emulator library alone (the PIDs'
/// names, without verifying the rest of the driver).
pub fn installed_configs() -> Result<Vec<Config>, VendorError> {
    Ok(targets::table(&sdk::emulator_library()?))
}

/// The installed driver's configurations as `nbg info` names a file's board by them (its
/// target word against their PIDs), or `None` when no driver is installed.
pub fn info_configurations() -> Option<Vec<crate::lab::info::Configuration>> {
    let configs = installed_configs().ok()?;
    let named = configs
        .into_iter()
        .map(|c| crate::lab::info::Configuration {
            name: c.name,
            pid: c.pid,
        });
    Some(named.collect())
}

/// The driver's configurations, read from its emulator library.
pub fn configs(sdk: &Sdk) -> Result<Vec<Config>, VendorError> {
    let path = sdk.emulator();
    let bytes = std::fs::read(&path).map_err(|source| SdkError::Io { path, source })?;
    Ok(targets::table(&bytes))
}

/// A compiled network binary and how it was made.
#[derive(Clone, Debug, Serialize)]
pub struct Compiled {
    /// The NBG bytes the driver wrote.
    #[serde(skip)]
    pub nbg: Vec<u8>,
    /// The configuration simulated.
    pub config: Config,
    /// SHA-256 of the ONNX model.
    pub model_sha256: Hash256,
    /// SHA-256 of the NBG.
    pub nbg_sha256: Hash256,
    /// NBG size in bytes.
    pub nbg_bytes: u64,
    /// The version word at offset 4.
    pub nbg_version: String,
    /// `VX_CONTEXT_IMPLEMENTATION` and version.
    pub implementation: String,
    /// Seconds the child ran.
    pub seconds: f64,
    /// A signal that ended the child after the file was written (the driver's teardown).
    pub teardown_signal: Option<i32>,
}

fn driver_response(r: Response) -> Result<Response, VendorError> {
    match r {
        Response::Refused(r) => Err(VendorError::DriverRefused(r)),
        Response::Error { message } => Err(VendorError::ChildError(message)),
        other => Ok(other),
    }
}

/// Admit `model` with the ONNX audit, lower it and have the driver compile it for `config`.
/// `network_name` sets the embedded name (`VIV_VX_NBG_NAME`).
pub fn compile(
    sdk: &Sdk,
    config: &Config,
    model: &[u8],
    network_name: Option<&str>,
) -> Result<Compiled, VendorError> {
    compile_fixed(sdk, config, model, network_name, &[])
}

/// `compile`, with the shapes of the graph inputs `fixed` names fixed (symbolic batch or
/// spatial dimensions set by the input a run gives; `lower::with_input_shapes`).
pub fn compile_fixed(
    sdk: &Sdk,
    config: &Config,
    model: &[u8],
    network_name: Option<&str>,
    fixed: &[(String, Vec<u64>)],
) -> Result<Compiled, VendorError> {
    let plan = admitted_plan(model, fixed)?;
    let answer = child::run(
        sdk,
        &config.name,
        &driver::Request::Compile { plan },
        &[],
        &child::save_env(network_name),
        Limits::default(),
    )?;
    compiled(
        config,
        model,
        answer.written,
        answer.response,
        answer.seconds,
        answer.teardown_signal,
    )
}

/// `model` admitted by the ONNX audit and lowered to the graph the driver builds, the inputs
/// `fixed` names at the given shapes.
fn admitted_plan(model: &[u8], fixed: &[(String, Vec<u64>)]) -> Result<plan::Plan, VendorError> {
    use prost::Message as _;
    let limits = crate::onnx::audit::Limits::default();
    let policy =
        crate::onnx::policy::embedded().map_err(|e| VendorError::Admission(e.to_string()))?;
    crate::onnx::audit::audit(model, &limits, &policy)
        .map_err(|r| VendorError::Admission(r.to_string()))?;
    let proto = crate::onnx::proto::ModelProto::decode(model)
        .map_err(|e| VendorError::Admission(e.to_string()))?;
    Ok(lower::lower_fixed(&proto, fixed)?)
}

/// The record of one compile of `model` for `config`: what the driver answered and the file
/// it wrote.
fn compiled(
    config: &Config,
    model: &[u8],
    written: Option<Vec<u8>>,
    response: Response,
    seconds: f64,
    teardown_signal: Option<i32>,
) -> Result<Compiled, VendorError> {
    let Response::Compiled {
        implementation,
        version,
    } = driver_response(response)?
    else {
        return Err(VendorError::ChildError("an unexpected answer".into()));
    };
    let nbg = written
        .filter(|b| !b.is_empty())
        .ok_or(VendorError::NoBinary)?;
    let version_word =
        crate::nbg::read::le32_at(&nbg, crate::nbg::format::OFF_VERSION_WORD).unwrap_or(0);
    Ok(Compiled {
        config: config.clone(),
        model_sha256: Hash256::of(model),
        nbg_sha256: Hash256::of(&nbg),
        nbg_bytes: nbg.len() as u64,
        nbg_version: format!("0x{version_word:08x}"),
        implementation: format!("{implementation} OpenVX 0x{version:04x}"),
        seconds,
        teardown_signal,
        nbg,
    })
}

/// Where the loader reads the image from.
pub enum Image<'a> {
    /// A file path (`vx_vivante_file`).
    File(&'a std::path::Path),
    /// Bytes in memory (`vx_vivante_pointer`), handed to the child on a pipe, never written.
    Memory(&'a [u8]),
}

/// The loader's verdict on one file.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum LoadVerdict {
    /// `vxImportKernelFromURL` gave a kernel.
    Accepted {
        /// `vx_vivante_file` or `vx_vivante_pointer`.
        import_type: String,
        /// What it reports, in index order.
        parameters: Vec<Parameter>,
    },
    /// It returned an error status.
    Refused(driver::DriverRefusal),
    /// The loader crashed or hung on it (contained).
    Crashed {
        /// What happened.
        failure: String,
    },
}

/// Import `image` with the loader under `config`.
pub fn load(
    sdk: &Sdk,
    config: &Config,
    image: Image<'_>,
) -> Result<(LoadVerdict, f64), VendorError> {
    let (request, bytes) = match image {
        Image::File(p) => (
            driver::Request::Load {
                path: Some(p.canonicalize().unwrap_or_else(|_| p.to_path_buf())),
                len: 0,
            },
            &[][..],
        ),
        Image::Memory(b) => (
            driver::Request::Load {
                path: None,
                len: b.len() as u64,
            },
            b,
        ),
    };
    let answer = match child::run(sdk, &config.name, &request, bytes, &[], Limits::default()) {
        Ok(a) => a,
        Err(
            f @ (ChildFailure::Signal { .. }
            | ChildFailure::Timeout(_)
            | ChildFailure::CpuLimit(_)
            | ChildFailure::NoAnswer(_)),
        ) => {
            return Ok((
                LoadVerdict::Crashed {
                    failure: f.to_string(),
                },
                0.0,
            ));
        }
        Err(f) => return Err(f.into()),
    };
    let verdict = match answer.response {
        Response::Accepted {
            import_type,
            parameters,
        } => LoadVerdict::Accepted {
            import_type,
            parameters,
        },
        Response::Refused(r) => LoadVerdict::Refused(r),
        Response::Error { message } => return Err(VendorError::ChildError(message)),
        Response::Compiled { .. } | Response::Batch { .. } | Response::Ran { .. } => {
            return Err(VendorError::ChildError("an unexpected answer".into()));
        }
    };
    Ok((verdict, answer.seconds))
}

/// The `vx_type_e` name of an NBG buffer format name (`vip_buffer_format_e`).
pub fn vx_type_of_format(format: &str) -> Option<&'static str> {
    Some(match format {
        "FP32" => "FLOAT32",
        "FP16" => "FLOAT16",
        "UINT8" => "UINT8",
        "INT8" => "INT8",
        "UINT16" => "UINT16",
        "INT16" => "INT16",
        "INT32" => "INT32",
        "UINT32" => "UINT32",
        "BFP16" => "BFLOAT16",
        _ => return None,
    })
}

/// nbg's I/O records against the loader's parameters: one line per difference (count,
/// direction, dimensions, element type, scale and zero point), empty when they agree.
pub fn compare_io(
    inputs: &[crate::nbg::parse::IoRecord],
    outputs: &[crate::nbg::parse::IoRecord],
    parameters: &[Parameter],
) -> Vec<String> {
    let mut out = Vec::new();
    let ours: Vec<(&str, &crate::nbg::parse::IoRecord)> = inputs
        .iter()
        .map(|r| ("input", r))
        .chain(outputs.iter().map(|r| ("output", r)))
        .collect();
    if ours.len() != parameters.len() {
        out.push(format!(
            "nbg has {} I/O records ({} in, {} out), the loader {} parameters",
            ours.len(),
            inputs.len(),
            outputs.len(),
            parameters.len()
        ));
    }
    for (i, ((dir, r), p)) in ours.iter().zip(parameters).enumerate() {
        if *dir != p.direction {
            out.push(format!("parameter {i}: nbg {dir}, loader {}", p.direction));
        }
        let dims: Vec<u64> = r.dimensions.iter().map(|&d| u64::from(d)).collect();
        if let Some(d) = &p.dims
            && *d != dims
        {
            out.push(format!(
                "parameter {i}: dimensions nbg {dims:?}, loader {d:?}"
            ));
        }
        let nbg_type = r.data_format_name.and_then(vx_type_of_format);
        if let (Some(a), Some(b)) = (nbg_type, p.data_type.as_deref())
            && a != b
        {
            out.push(format!("parameter {i}: element type nbg {a}, loader {b}"));
        }
        if let (Some(a), Some(b)) = (r.quantization.scale, p.scale)
            && a != b
        {
            out.push(format!("parameter {i}: scale nbg {a}, loader {b}"));
        }
        if let (Some(a), Some(b)) = (r.quantization.zero_point, p.zero_point)
            && a != b
        {
            out.push(format!("parameter {i}: zero point nbg {a}, loader {b}"));
        }
    }
    out
}

/// The loader's verdict on one image of a batch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum BatchVerdict {
    /// `vxImportKernelFromURL` accepted it.
    Accepted,
    /// It returned an error status.
    Refused {
        /// The status.
        status: i32,
        /// Its name.
        status_name: String,
    },
    /// The loader crashed on it (the signal), contained in its child.
    Crashed {
        /// The signal number.
        signal: i32,
        /// Its name.
        name: String,
    },
    /// It ran past the batch's time limit on this image.
    Hung,
}

impl BatchVerdict {
    /// Its name, as serialized (`verdict`).
    pub fn name(&self) -> &'static str {
        match self {
            BatchVerdict::Accepted => "accepted",
            BatchVerdict::Refused { .. } => "refused",
            BatchVerdict::Crashed { .. } => "crashed",
            BatchVerdict::Hung => "hung",
        }
    }

    /// The driver's status of a refusal.
    pub fn status(&self) -> Option<i32> {
        match self {
            BatchVerdict::Refused { status, .. } => Some(*status),
            _ => None,
        }
    }
}

/// Images per loader child (a crash costs a restart, a hang the child's limit).
pub const BATCH: usize = 128;
/// RLIMIT_AS of a batch child. An import of a valid file stays under 40 MB resident, but a
/// mutated size field makes the loader reserve gigabytes (12.7 GB resident measured under the
/// compile limit); past this limit its allocation fails inside the child, reported as the
/// crash it causes.
pub const LOAD_ADDRESS_SPACE: u64 = 4 << 30;

/// Hand every image to the loader simulating `config`, from memory, `BATCH` per contained
/// child: each verdict, and how many children ran. A crash or hang is the verdict of the image
/// the child was on; the batch goes on from the next image in a new child.
pub fn load_batch(
    sdk: &Sdk,
    config: &Config,
    images: &[Vec<u8>],
) -> Result<(Vec<BatchVerdict>, u64), VendorError> {
    let mut out: Vec<BatchVerdict> = Vec::with_capacity(images.len());
    let mut children = 0u64;
    while out.len() < images.len() {
        let rest = &images[out.len()..images.len().min(out.len() + BATCH)];
        let lens: Vec<u64> = rest.iter().map(|i| i.len() as u64).collect();
        let payload: Vec<u8> = rest.concat();
        // A few seconds to start, then a generous second per image: an import takes
        // milliseconds, and a hung one must not hold the sweep for long.
        let limits = Limits {
            wall: std::time::Duration::from_secs(20 + rest.len() as u64),
            address_space: LOAD_ADDRESS_SPACE,
            ..Limits::default()
        };
        let mut kept = child::Kept::default();
        let request = driver::Request::LoadBatch { lens };
        let ended = child::run_keeping(
            sdk,
            &config.name,
            &request,
            &payload,
            &[],
            limits,
            &mut kept,
        );
        children += 1;
        let before = out.len();
        for l in kept.answered::<driver::BatchLine>(rest.len(), |l| l.i) {
            out.push(if l.status == ffi::SUCCESS {
                BatchVerdict::Accepted
            } else {
                BatchVerdict::Refused {
                    status: l.status,
                    status_name: ffi::status_name(l.status).into(),
                }
            });
        }
        let judged = out.len() - before;
        if judged == rest.len() {
            continue;
        }
        // The child ended on image `judged`: that image is the finding.
        out.push(match ended {
            Err(ChildFailure::Signal { signal, name }) => BatchVerdict::Crashed {
                signal,
                name: name.into(),
            },
            Err(ChildFailure::Timeout(_) | ChildFailure::CpuLimit(_)) => BatchVerdict::Hung,
            Ok(child::Answer {
                teardown_signal: Some(signal),
                ..
            }) => BatchVerdict::Crashed {
                signal,
                name: crate::contain::signal_name(signal).into(),
            },
            Err(ChildFailure::NoAnswer(code)) => BatchVerdict::Crashed {
                signal: 0,
                name: format!("exit status {code}"),
            },
            Err(f) => return Err(f.into()),
            Ok(a) => {
                return Err(VendorError::ChildError(format!(
                    "the batch child answered {:?} after {judged} of {} images",
                    a.response,
                    rest.len()
                )));
            }
        });
    }
    Ok((out, children))
}
