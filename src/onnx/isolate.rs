//! Engine runs in a child process (issue 18): `nbg onnx run` hands the model and its input to
//! `nbg onnx engine-child` under `setrlimit` address-space and CPU-time limits and a wall-clock
//! limit, so an abort, out-of-memory or hang inside an engine's native code becomes
//! `CPU_ENGINE_FAILED` instead of taking the command down. The child speaks through files in a
//! private temporary folder and its exit status: 0 ran, 3 the engine refused the model
//! (`CPU_ENGINE_UNSUPPORTED`), 4 the run failed; a signal or the wall limit is a failure.

use super::error::OnnxError;
use super::npz::{self, Tensor};
use super::refusal::Refusal;
use super::run::{Engine, Factory, Session};
use std::os::unix::process::ExitStatusExt as _;
use std::path::PathBuf;
use std::time::Duration;

/// Exit status of a child whose engine refused the model at construction.
pub const EXIT_UNSUPPORTED: i32 = 3;
/// Exit status of a child whose run failed.
pub const EXIT_FAILED: i32 = 4;

/// The child's limits.
#[derive(Clone, Copy, Debug)]
pub struct ChildLimits {
    /// RLIMIT_AS in bytes (ONNX Runtime reserves address space generously; 8 GiB by default).
    pub address_space: u64,
    /// RLIMIT_CPU in seconds.
    pub cpu_seconds: u64,
    /// Killed after this long.
    pub wall: Duration,
}

impl Default for ChildLimits {
    fn default() -> Self {
        ChildLimits {
            address_space: 8 << 30,
            cpu_seconds: 120,
            wall: Duration::from_secs(180),
        }
    }
}

/// A factory whose CPU session runs entirely in a child `nbg` process.
pub struct ChildEngines {
    /// The executable run as the child (this binary).
    pub exe: PathBuf,
    /// Which engine the child runs.
    pub engine: Engine,
    /// Resource limits set on the child.
    pub limits: ChildLimits,
    providers: Vec<String>,
}

impl ChildEngines {
    /// A child runner for `engine` under `limits`.
    pub fn new(exe: PathBuf, engine: Engine, limits: ChildLimits) -> Self {
        ChildEngines {
            exe,
            engine,
            limits,
            providers: vec![],
        }
    }
}

/// The child's result, handed back when the session is asked to run.
struct Done(Result<Vec<Tensor>, OnnxError>);

impl Session for Done {
    fn run(&mut self, _: &[Tensor]) -> Result<Vec<Tensor>, OnnxError> {
        std::mem::replace(&mut self.0, Err(OnnxError::ChildAlreadyRan))
    }
}

/// An I/O error on a file of the child's folder, said as the OS says it.
fn file_error(e: std::io::Error) -> OnnxError {
    OnnxError::ChildFile(e.to_string())
}

impl Factory for ChildEngines {
    fn npu(&mut self, _model: &[u8], _inputs: &[Tensor]) -> Result<Box<dyn Session>, OnnxError> {
        Err(OnnxError::NpuUnqualified)
    }

    fn cpu(&mut self, model: &[u8], inputs: &[Tensor]) -> Result<Box<dyn Session>, OnnxError> {
        let dir = tempfile::tempdir().map_err(|e| OnnxError::ChildFolder(e.to_string()))?;
        let p = |n: &str| dir.path().join(n);
        std::fs::write(p("model.onnx"), model).map_err(file_error)?;
        std::fs::write(p("in.npz"), npz::write(inputs)).map_err(file_error)?;
        let file = |n: &str| std::fs::File::create(p(n)).map_err(file_error);
        let mut cmd = std::process::Command::new(&self.exe);
        cmd.args(["onnx", "engine-child", "--engine"])
            .arg(match self.engine {
                Engine::Ort => "ort",
                Engine::Tract => "tract",
            })
            .arg(p("model.onnx"))
            .arg(p("in.npz"))
            .arg(p("out.npz"))
            .stdin(std::process::Stdio::null())
            .stdout(file("stdout")?)
            .stderr(file("stderr")?);
        let limits = self.limits;
        crate::contain::set_limits(&mut cmd, limits.address_space, limits.cpu_seconds, false);
        let mut child = cmd
            .spawn()
            .map_err(|e| OnnxError::ChildStart(e.to_string()))?;
        let status = crate::contain::wait(&mut child, limits.wall)
            .map_err(|e| OnnxError::ChildWait(e.to_string()))?;
        let read = |n: &str| {
            String::from_utf8_lossy(&std::fs::read(p(n)).unwrap_or_default()).into_owned()
        };
        let message = || {
            let e = read("stderr");
            e.lines().last().unwrap_or("").to_string()
        };
        let done = match status {
            None => Err(OnnxError::ChildTimeout(limits.wall.as_secs())),
            Some(s) if s.code() == Some(0) => {
                self.providers = serde_json::from_str(&read("stdout")).unwrap_or_default();
                let bytes = std::fs::read(p("out.npz")).map_err(file_error)?;
                npz::read(&bytes, u64::MAX >> 1).map_err(OnnxError::ChildOutput)
            }
            Some(s) if s.code() == Some(EXIT_UNSUPPORTED) => {
                return Err(OnnxError::ChildRefused(message()));
            }
            Some(s) if s.code() == Some(EXIT_FAILED) => Err(OnnxError::ChildFailed(message())),
            Some(s) => match s.signal() {
                Some(sig) => Err(OnnxError::ChildSignal {
                    signal: sig,
                    name: crate::contain::signal_name(sig),
                    address_gib: limits.address_space >> 30,
                    cpu_seconds: limits.cpu_seconds,
                }),
                None => Err(OnnxError::ChildExit {
                    status: s.to_string(),
                    message: message(),
                }),
            },
        };
        Ok(Box::new(Done(done)))
    }

    fn engine(&self) -> Engine {
        self.engine
    }

    fn providers(&self) -> Vec<String> {
        self.providers.clone()
    }
}

/// Why the child stops short of writing its outputs; the exit status the parent reads follows
/// from the kind.
#[derive(Debug, thiserror::Error)]
enum ChildFailure {
    /// The model or the input archive cannot be read.
    #[error("the engine process cannot read its files")]
    Files,
    /// The embedded policy, the audit or the input archive refused (checked before, in the
    /// parent, so a failure here is not the engine's verdict).
    #[error("{0}")]
    Refused(Refusal),
    /// The engine cannot build a session for the model.
    #[error("{0}")]
    Unsupported(OnnxError),
    /// The session's run failed.
    #[error("{0}")]
    Failed(OnnxError),
    /// The engine panicked, building the session or running it.
    #[error("the engine panicked: {0}")]
    Panicked(String),
    /// The output archive cannot be written.
    #[error("{0}")]
    Write(std::io::Error),
}

impl ChildFailure {
    /// The exit status the parent maps back: only a refused construction is
    /// [`EXIT_UNSUPPORTED`].
    fn exit_status(&self) -> i32 {
        match self {
            ChildFailure::Unsupported(_) => EXIT_UNSUPPORTED,
            _ => EXIT_FAILED,
        }
    }
}

/// The child side: construct and run one session on the files the parent wrote. Returns the
/// exit status the parent reads.
pub fn child_main(
    engine: Engine,
    model: &std::path::Path,
    input: &std::path::Path,
    output: &std::path::Path,
) -> i32 {
    match child(engine, model, input, output) {
        Ok(providers) => {
            println!("{}", serde_json::to_string(&providers).unwrap_or_default());
            0
        }
        Err(f) => {
            eprintln!("{f}");
            f.exit_status()
        }
    }
}

/// One session's construction and run; the providers it used, or why not.
fn child(
    engine: Engine,
    model: &std::path::Path,
    input: &std::path::Path,
    output: &std::path::Path,
) -> Result<Vec<String>, ChildFailure> {
    use super::run::{Contained, contained};
    let (Ok(bytes), Ok(archive)) = (std::fs::read(model), std::fs::read(input)) else {
        return Err(ChildFailure::Files);
    };
    let limits = super::audit::Limits::default();
    super::ort_engine::bound_tensors_or_exit(EXIT_FAILED);
    let policy = super::policy::embedded().map_err(ChildFailure::Refused)?;
    let a = super::audit::audit(&bytes, &limits, &policy).map_err(ChildFailure::Refused)?;
    let inputs = npz::read_inputs(&archive, &a.inputs, limits.tensor_bytes)
        .map_err(ChildFailure::Refused)?;
    let mut engines = super::run::Engines::with_engine(&a, engine);
    let mut session = contained(|| engines.cpu(&bytes, &inputs)).map_err(|c| match c {
        Contained::Error(e) => ChildFailure::Unsupported(e),
        Contained::Panic(m) => ChildFailure::Panicked(m),
    })?;
    let outputs = contained(|| session.run(&inputs)).map_err(|c| match c {
        Contained::Error(e) => ChildFailure::Failed(e),
        Contained::Panic(m) => ChildFailure::Panicked(m),
    })?;
    std::fs::write(output, npz::write(&outputs)).map_err(ChildFailure::Write)?;
    Ok(engines.providers())
}
