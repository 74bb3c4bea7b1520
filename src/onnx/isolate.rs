//! Engine runs in a child process (issue 18): `nbg onnx run` hands the model and its input to
//! `nbg onnx engine-child` under `setrlimit` address-space and CPU-time limits and a wall-clock
//! limit, so an abort, out-of-memory or hang inside an engine's native code becomes
//! `CPU_ENGINE_FAILED` instead of taking the command down. The child speaks through files in a
//! private temporary folder and its exit status: 0 ran, 3 the engine refused the model
//! (`CPU_ENGINE_UNSUPPORTED`), 4 the run failed; a signal or the wall limit is a failure.

use super::npz::{self, Tensor};
use super::run::{Engine, Factory, Session};
use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::path::PathBuf;
use std::time::{Duration, Instant};

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
struct Done(Result<Vec<Tensor>, String>);

impl Session for Done {
    fn run(&mut self, _: &[Tensor]) -> Result<Vec<Tensor>, String> {
        std::mem::replace(&mut self.0, Err("the child session already ran".into()))
    }
}

impl Factory for ChildEngines {
    fn npu(&mut self, _model: &[u8]) -> Result<Box<dyn Session>, String> {
        Err("no NPU session exists: the compiler is not qualified".into())
    }

    fn cpu(&mut self, model: &[u8], inputs: &[Tensor]) -> Result<Box<dyn Session>, String> {
        let dir = tempfile::tempdir().map_err(|e| format!("temporary folder: {e}"))?;
        let p = |n: &str| dir.path().join(n);
        std::fs::write(p("model.onnx"), model).map_err(|e| e.to_string())?;
        std::fs::write(p("in.npz"), npz::write(inputs)).map_err(|e| e.to_string())?;
        let file = |n: &str| std::fs::File::create(p(n)).map_err(|e| e.to_string());
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
        // SAFETY: between fork and exec only async-signal-safe calls: setrlimit.
        unsafe {
            cmd.pre_exec(move || {
                for (resource, value) in [
                    (libc::RLIMIT_AS, limits.address_space),
                    (libc::RLIMIT_CPU, limits.cpu_seconds),
                ] {
                    let r = libc::rlimit {
                        rlim_cur: value as libc::rlim_t,
                        rlim_max: value as libc::rlim_t,
                    };
                    if libc::setrlimit(resource, &r) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot start the engine process: {e}"))?;
        let start = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(s)) => break Some(s),
                Ok(None) if start.elapsed() > limits.wall => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(5)),
                Err(e) => return Err(format!("waiting for the engine process: {e}")),
            }
        };
        let read = |n: &str| {
            String::from_utf8_lossy(&std::fs::read(p(n)).unwrap_or_default()).into_owned()
        };
        let message = || {
            let e = read("stderr");
            e.lines().last().unwrap_or("").to_string()
        };
        let done = match status {
            None => Err(format!(
                "the engine process exceeded the wall-clock limit of {} s and was killed",
                limits.wall.as_secs()
            )),
            Some(s) if s.code() == Some(0) => {
                self.providers = serde_json::from_str(&read("stdout")).unwrap_or_default();
                let bytes = std::fs::read(p("out.npz")).map_err(|e| e.to_string())?;
                npz::read(&bytes, u64::MAX >> 1).map_err(|r| r.to_string())
            }
            Some(s) if s.code() == Some(EXIT_UNSUPPORTED) => return Err(message()),
            Some(s) if s.code() == Some(EXIT_FAILED) => Err(message()),
            Some(s) => match s.signal() {
                Some(sig) => Err(format!(
                    "the engine process was killed by signal {sig} ({}): an abort, out-of-memory under the {} GiB address-space limit, or the {} s CPU limit",
                    signal_name(sig),
                    limits.address_space >> 30,
                    limits.cpu_seconds
                )),
                None => Err(format!("the engine process exited with {s}: {}", message())),
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

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGABRT => "SIGABRT",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        _ => "signal",
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
    use super::run::contained;
    let fail = |code: i32, m: String| {
        eprintln!("{m}");
        code
    };
    let (Ok(bytes), Ok(archive)) = (std::fs::read(model), std::fs::read(input)) else {
        return fail(
            EXIT_FAILED,
            "the engine process cannot read its files".into(),
        );
    };
    let limits = super::audit::Limits::default();
    super::ort_engine::bound_tensors_or_exit(EXIT_FAILED);
    let policy = match super::policy::embedded() {
        Ok(p) => p,
        Err(r) => return fail(EXIT_FAILED, r.to_string()),
    };
    let a = match super::audit::audit(&bytes, &limits, &policy) {
        Ok(a) => a,
        Err(r) => return fail(EXIT_FAILED, r.to_string()),
    };
    let inputs = match npz::read(&archive, limits.tensor_bytes) {
        Ok(t) => t,
        Err(r) => return fail(EXIT_FAILED, r.to_string()),
    };
    let mut engines = super::run::Engines::with_engine(&a, engine);
    let mut session = match contained(|| engines.cpu(&bytes, &inputs)) {
        Ok(s) => s,
        Err(super::run::Contained::Error(e)) => return fail(EXIT_UNSUPPORTED, e),
        Err(super::run::Contained::Panic(m)) => {
            return fail(EXIT_FAILED, format!("the engine panicked: {m}"));
        }
    };
    let outputs = match contained(|| session.run(&inputs)) {
        Ok(o) => o,
        Err(super::run::Contained::Error(e)) => return fail(EXIT_FAILED, e),
        Err(super::run::Contained::Panic(m)) => {
            return fail(EXIT_FAILED, format!("the engine panicked: {m}"));
        }
    };
    if let Err(e) = std::fs::write(output, npz::write(&outputs)) {
        return fail(EXIT_FAILED, e.to_string());
    }
    println!(
        "{}",
        serde_json::to_string(&engines.providers()).unwrap_or_default()
    );
    0
}
