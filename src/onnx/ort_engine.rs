//! The CPU oracle: ONNX Runtime through the `ort` crate, loaded at run time (`load-dynamic`)
//! from the `libonnxruntime` shared library of the PyPI `onnxruntime` wheel that `.ci/setup`
//! installs, or from `ORT_DYLIB_PATH`. The library's own version string must be the pinned one.
//!
//! Sessions are exactly the spec's: the CPU execution provider only (checked after construction
//! from ONNX Runtime's recorded graph assignment), sequential execution, extended graph
//! optimization, one intra-op and one inter-op thread.
//!
//! In the engine child process ([`super::isolate`]) every buffer the session allocates
//! (intermediate tensors, outputs, kernel scratch space) comes from one process-wide CPU
//! allocator that refuses any single block above the tensor limit, so an intermediate the
//! model's declarations never show (an `Expand` to a shape read at run time) is refused, not
//! materialized. ONNX Runtime does not check an allocator's result (its own allocators throw),
//! so a refusal ends the child with the reason on stderr, which the parent reports; this is
//! why the bound is only installed in the child. Memory patterns are off there, so ONNX
//! Runtime asks for each tensor separately instead of one planned block.

use super::error::OnnxError;
use super::npz::{Dtype, Tensor};
use ort::AsPointer as _;
use ort::environment::Environment;
use ort::memory::Allocator;
use ort::session::Session;
use ort::session::builder::GraphOptimizationLevel;
use ort::value::{DynTensor, DynValue, TensorElementType, ValueType};
use std::ffi::CStr;
use std::path::PathBuf;
use std::sync::OnceLock;

pub use super::pins::{CPU_PROVIDER, ORT_VERSION as VERSION};
/// The engine name evidence records.
pub const NAME: &str = "onnxruntime";

/// Where the shared library is: `ORT_DYLIB_PATH`, else inside the installed `onnxruntime`
/// Python package (`onnxruntime/capi/libonnxruntime.so.VERSION`).
pub fn library_path() -> Result<PathBuf, OnnxError> {
    if let Some(p) = std::env::var_os("ORT_DYLIB_PATH").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import importlib.util as u, sys; s = u.find_spec('onnxruntime'); sys.exit(3) if s is None else print(s.submodule_search_locations[0])",
        ])
        .output()
        .map_err(|e| OnnxError::PythonUnavailable(e.to_string()))?;
    if !out.status.success() {
        return Err(OnnxError::PackageMissing);
    }
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()).join("capi");
    let lib = dir.join(format!("libonnxruntime.so.{VERSION}"));
    if lib.is_file() {
        Ok(lib)
    } else {
        Err(OnnxError::LibraryMissing(lib))
    }
}

/// The version string the library reports (`OrtGetApiBase()->GetVersionString()`).
fn library_version(path: &std::path::Path) -> Result<String, OnnxError> {
    // SAFETY: loading ONNX Runtime runs its initializers, which is what using it requires; the
    // symbol's signature is the C API's.
    unsafe {
        let lib = libloading::Library::new(path).map_err(|e| OnnxError::LibraryUnloadable {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        let get: libloading::Symbol<unsafe extern "C" fn() -> *const ort::sys::OrtApiBase> = lib
            .get(b"OrtGetApiBase")
            .map_err(|_| OnnxError::NotOnnxRuntime(path.to_path_buf()))?;
        let base = get();
        if base.is_null() {
            return Err(OnnxError::NullApiBase(path.to_path_buf()));
        }
        let v = ((*base).GetVersionString)();
        Ok(CStr::from_ptr(v).to_string_lossy().into_owned())
    }
}

/// The process-wide environment, or why it cannot exist (kept: the library is loaded once).
static ENV: OnceLock<Result<Environment, OnnxError>> = OnceLock::new();

/// The largest block the session allocator hands out: the audit's per-tensor limit.
const MAX_BLOCK: usize = super::audit::MAX_TENSOR_BYTES as usize;
/// Alignment of every block: ONNX Runtime's CPU allocator uses 64 bytes.
const ALIGN: usize = 64;
/// Set in the engine child: the exit status a refused allocation ends the process with.
static BOUND_EXIT: OnceLock<i32> = OnceLock::new();

/// Bound every allocation of this process's sessions by the tensor limit; a refusal ends the
/// process with `exit_code` and the reason as the last line of stderr. Call before the first
/// session, in a process that exists only to run one (the engine child).
pub fn bound_tensors_or_exit(exit_code: i32) {
    let _ = BOUND_EXIT.set(exit_code);
}

/// An `OrtAllocator` whose blocks are bounded by `MAX_BLOCK`; `base` comes first so ONNX
/// Runtime's pointer to it is a pointer to this struct.
#[repr(C)]
struct BoundedAllocator {
    base: ort::sys::OrtAllocator,
    info: *mut ort::sys::OrtMemoryInfo,
}

unsafe extern "system" fn bounded_alloc(
    _this: *mut ort::sys::OrtAllocator,
    size: usize,
) -> *mut std::ffi::c_void {
    if size > MAX_BLOCK {
        eprintln!(
            "a tensor of {size} bytes exceeds the {MAX_BLOCK}-byte tensor limit; the run is refused"
        );
        // SAFETY: `_exit` ends the process at once, without running ONNX Runtime's static
        // destructors while one of its calls is on the stack.
        unsafe { libc::_exit(BOUND_EXIT.get().copied().unwrap_or(1)) }
    }
    let mut p = std::ptr::null_mut();
    // SAFETY: ALIGN is a power of two and a multiple of the pointer size; `p` is written only
    // on success. A zero-byte request still returns a unique, freeable pointer.
    match unsafe { libc::posix_memalign(&mut p, ALIGN, size.max(1)) } {
        0 => p,
        _ => std::ptr::null_mut(),
    }
}

unsafe extern "system" fn bounded_free(
    _this: *mut ort::sys::OrtAllocator,
    p: *mut std::ffi::c_void,
) {
    // SAFETY: every pointer ONNX Runtime frees here came from `bounded_alloc` (posix_memalign).
    unsafe { libc::free(p) }
}

unsafe extern "system" fn bounded_info(
    this: *const ort::sys::OrtAllocator,
) -> *const ort::sys::OrtMemoryInfo {
    // SAFETY: `this` is the `base` field of the registered `BoundedAllocator`.
    unsafe { (*this.cast::<BoundedAllocator>()).info }
}

unsafe extern "system" fn bounded_reserve(
    this: *const ort::sys::OrtAllocator,
    size: usize,
) -> *mut std::ffi::c_void {
    // SAFETY: forwards to the allocation function, which does not use `this`.
    unsafe { bounded_alloc(this.cast_mut(), size) }
}

/// An ONNX Runtime status as a result: `Ok` for the null (success) status, else `context: `
/// and the library's message; the status is released either way.
fn checked(status: ort::sys::OrtStatusPtr, context: &'static str) -> Result<(), OnnxError> {
    if status.0.is_null() {
        return Ok(());
    }
    let api = ort::api();
    // SAFETY: a non-null status is a valid OrtStatus; it is released after reading.
    let msg = unsafe { CStr::from_ptr((api.GetErrorMessage)(status.0)) }
        .to_string_lossy()
        .into_owned();
    unsafe { (api.ReleaseStatus)(status.0) };
    Err(OnnxError::Status {
        context,
        message: msg,
    })
}

/// Register the bounded allocator with the environment, once per process; sessions opt in with
/// `session.use_env_allocators`.
fn register_bounded_allocator(env: &Environment) -> Result<(), OnnxError> {
    let api = ort::api();
    let status = |s| checked(s, "registering the bounded CPU allocator");
    let mut info = std::ptr::null_mut();
    // SAFETY: `info` receives a new memory info that is never released (process lifetime).
    status(unsafe {
        (api.CreateCpuMemoryInfo)(
            ort::sys::OrtAllocatorType::OrtDeviceAllocator,
            ort::sys::OrtMemType::OrtMemTypeDefault,
            &mut info,
        )
    })?;
    // SAFETY: `OrtAllocator::default` is a plain struct with the API version and no functions.
    let mut base = unsafe { ort::sys::OrtAllocator::default() };
    base.Alloc = Some(bounded_alloc);
    base.Free = Some(bounded_free);
    base.Info = Some(bounded_info);
    base.Reserve = Some(bounded_reserve);
    let allocator: &'static mut BoundedAllocator =
        Box::leak(Box::new(BoundedAllocator { base, info }));
    // SAFETY: the allocator is leaked, so it outlives the environment that keeps its pointer.
    status(unsafe { (api.RegisterAllocator)(env.ptr().cast_mut(), &mut allocator.base) })
}

/// The process-wide environment, loading the library on first use. Errors name how to install
/// the library or point `ORT_DYLIB_PATH` at it; the CLI turns them into exit 2.
pub fn environment() -> Result<&'static Environment, OnnxError> {
    ENV.get_or_init(|| {
        let path = library_path()?;
        let version = library_version(&path)?;
        if version != VERSION {
            return Err(OnnxError::WrongVersion {
                path,
                found: version,
            });
        }
        ort::init_from(&path)
            .map_err(|e| OnnxError::RuntimeInit(e.to_string()))?
            .with_name("nbg")
            .with_telemetry(false)
            .build()
            .map_err(|e| OnnxError::Environment(e.to_string()))
            .and_then(|env| match BOUND_EXIT.get() {
                Some(_) => register_bounded_allocator(&env).map(|()| env),
                None => Ok(env),
            })
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// One CPU-only session.
pub struct OrtSession {
    session: Session,
    outputs: Vec<String>,
    providers: Vec<String>,
}

impl OrtSession {
    /// The providers ONNX Runtime assigned the graph to (checked: CPU only).
    pub fn providers(&self) -> &[String] {
        &self.providers
    }
}

/// Build the spec's session and check that every node went to the CPU provider.
pub fn session(model: &[u8], outputs: &[String]) -> Result<OrtSession, OnnxError> {
    let env = environment()?;
    let e =
        |e: ort::Error<ort::session::builder::SessionBuilder>| OnnxError::Runtime(e.to_string());
    let builder = Session::builder(env)
        .map_err(|e| OnnxError::Runtime(e.to_string()))?
        .with_no_environment_execution_providers()
        .map_err(e)?
        .with_execution_providers([ort::ep::CPU::default().build()])
        .map_err(e)?
        .with_parallel_execution(false)
        .map_err(e)?
        .with_optimization_level(GraphOptimizationLevel::Level2)
        .map_err(e)?
        .with_intra_threads(1)
        .map_err(e)?
        .with_inter_threads(1)
        .map_err(e)?
        .with_config_entry("session.record_ep_graph_assignment_info", "1")
        .map_err(e)?;
    let mut builder = match BOUND_EXIT.get() {
        Some(_) => builder
            .with_env_allocators()
            .map_err(e)?
            .with_memory_pattern(false)
            .map_err(e)?,
        None => builder,
    };
    let session = builder
        .commit_from_memory(model)
        .map_err(|e| OnnxError::Runtime(e.to_string()))?;
    let providers = providers(&session)?;
    if let Some(p) = providers.iter().find(|p| *p != CPU_PROVIDER) {
        return Err(OnnxError::ForeignProvider(p.clone()));
    }
    Ok(OrtSession {
        session,
        outputs: outputs.to_vec(),
        providers,
    })
}

/// The execution providers ONNX Runtime assigned the session's subgraphs to, sorted, unique.
pub fn providers(session: &Session) -> Result<Vec<String>, OnnxError> {
    let api = ort::api();
    let mut subgraphs: *const *const ort::sys::OrtEpAssignedSubgraph = std::ptr::null();
    let mut n = 0usize;
    let check = |s| checked(s, "cannot read the session's provider assignment");
    // SAFETY: the session pointer is live for the borrow; the arrays are owned by the session.
    unsafe {
        check((api.Session_GetEpGraphAssignmentInfo)(
            session.ptr(),
            &mut subgraphs,
            &mut n,
        ))?;
        let mut out = Vec::new();
        for i in 0..n {
            let mut name: *const std::ffi::c_char = std::ptr::null();
            check((api.EpAssignedSubgraph_GetEpName)(
                *subgraphs.add(i),
                &mut name,
            ))?;
            if name.is_null() {
                return Err(OnnxError::UnnamedProvider);
            }
            out.push(CStr::from_ptr(name).to_string_lossy().into_owned());
        }
        out.sort();
        out.dedup();
        Ok(out)
    }
}

fn element(d: Dtype) -> TensorElementType {
    match d {
        Dtype::F32 => TensorElementType::Float32,
        Dtype::F64 => TensorElementType::Float64,
        Dtype::F16 => TensorElementType::Float16,
        Dtype::BF16 => TensorElementType::Bfloat16,
        Dtype::I8 => TensorElementType::Int8,
        Dtype::I16 => TensorElementType::Int16,
        Dtype::I32 => TensorElementType::Int32,
        Dtype::I64 => TensorElementType::Int64,
        Dtype::U8 => TensorElementType::Uint8,
        Dtype::U16 => TensorElementType::Uint16,
        Dtype::U32 => TensorElementType::Uint32,
        Dtype::U64 => TensorElementType::Uint64,
        Dtype::Bool => TensorElementType::Bool,
        Dtype::Str(_) => TensorElementType::String,
    }
}

fn dtype(t: TensorElementType) -> Option<Dtype> {
    [
        Dtype::F32,
        Dtype::F64,
        Dtype::F16,
        Dtype::BF16,
        Dtype::I8,
        Dtype::I16,
        Dtype::I32,
        Dtype::I64,
        Dtype::U8,
        Dtype::U16,
        Dtype::U32,
        Dtype::U64,
        Dtype::Bool,
    ]
    .into_iter()
    .find(|d| element(*d) == t)
}

fn to_value(t: &Tensor) -> Result<DynValue, OnnxError> {
    if let Some(strings) = t.strings() {
        let shape: Vec<i64> = t.shape.iter().map(|&d| d as i64).collect();
        return ort::value::Tensor::from_string_array((shape, strings.as_slice()))
            .map(|v| v.into_dyn())
            .map_err(|e| input_error(t, e));
    }
    let shape: Vec<i64> = t.shape.iter().map(|&d| d as i64).collect();
    let mut v = DynTensor::new(&Allocator::default(), element(t.dtype), shape)
        .map_err(|e| input_error(t, e))?;
    if !t.data.is_empty() {
        let p = v.data_ptr_mut().cast::<u8>();
        if p.is_null() {
            return Err(OnnxError::NoBuffer {
                side: "input",
                name: t.name.clone(),
            });
        }
        // SAFETY: the buffer holds elements * size bytes, which the boundary checked equals
        // `data.len()`; bool is one byte in ONNX Runtime as in NPY.
        unsafe { std::ptr::copy_nonoverlapping(t.data.as_ptr(), p, t.data.len()) };
    }
    Ok(v.into_dyn())
}

/// ONNX Runtime's reason an input tensor cannot become one of its values.
fn input_error(t: &Tensor, e: ort::Error) -> OnnxError {
    OnnxError::Conversion {
        side: "input",
        name: t.name.clone(),
        reason: e.to_string(),
    }
}

/// ONNX Runtime's reason an output value cannot be read.
fn output_error(name: &str, e: ort::Error) -> OnnxError {
    OnnxError::Conversion {
        side: "output",
        name: name.to_string(),
        reason: e.to_string(),
    }
}

fn from_value(name: &str, v: &DynValue) -> Result<Tensor, OnnxError> {
    let ValueType::Tensor { ty, shape, .. } = v.dtype() else {
        return Err(OnnxError::NotATensor {
            name: name.to_string(),
            found: v.dtype().to_string(),
        });
    };
    if *ty == TensorElementType::String {
        let t = v
            .view()
            .downcast::<ort::value::DynTensorValueType>()
            .map_err(|e| output_error(name, e))?;
        let (shape, strings) = t.try_extract_strings().map_err(|e| output_error(name, e))?;
        let dims: Vec<u64> = shape.iter().map(|&x| x.max(0) as u64).collect();
        return Ok(Tensor::from_strings(name, &dims, &strings));
    }
    let d = dtype(*ty).ok_or_else(|| OnnxError::UnsupportedElement {
        name: name.to_string(),
        element: ty.to_string(),
    })?;
    let dims: Vec<u64> = shape
        .iter()
        .map(|&x| {
            u64::try_from(x).map_err(|_| OnnxError::NegativeDimension {
                name: name.to_string(),
                dimension: x,
            })
        })
        .collect::<Result<_, _>>()?;
    let bytes = dims
        .iter()
        .try_fold(d.size() as u64, |a, &x| a.checked_mul(x))
        .ok_or_else(|| OnnxError::OutputTooLarge(name.to_string()))? as usize;
    let data = if bytes == 0 {
        Vec::new()
    } else {
        let t = v
            .view()
            .downcast::<ort::value::DynTensorValueType>()
            .map_err(|e| output_error(name, e))?;
        let p = t.data_ptr().cast::<u8>();
        if p.is_null() {
            return Err(OnnxError::NoBuffer {
                side: "output",
                name: name.to_string(),
            });
        }
        // SAFETY: a CPU tensor of this type and shape holds exactly `bytes` bytes.
        unsafe { std::slice::from_raw_parts(p, bytes) }.to_vec()
    };
    Ok(Tensor {
        name: name.to_string(),
        dtype: d,
        shape: dims,
        data,
    })
}

impl super::types::Session for OrtSession {
    fn run(&mut self, given: &[Tensor]) -> Result<Vec<Tensor>, OnnxError> {
        let inputs: Vec<(String, DynValue)> = given
            .iter()
            .map(|t| Ok((t.name.clone(), to_value(t)?)))
            .collect::<Result<_, OnnxError>>()?;
        let out = self
            .session
            .run(inputs)
            .map_err(|e| OnnxError::Runtime(e.to_string()))?;
        self.outputs
            .iter()
            .map(|name| {
                let v = out
                    .get(name)
                    .ok_or_else(|| OnnxError::MissingOutput(name.clone()))?;
                from_value(name, v)
            })
            .collect()
    }
}
