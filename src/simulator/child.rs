//! Every driver call runs in a child `nbg vendor child` process: under address-space, CPU and
//! wall-clock limits, at most `children()` at a time on the machine (one lock file per slot:
//! one simulated compile holds about 365 MB with the contiguous pool), with a private temporary folder for its answer and the file the
//! driver writes. A crash, hang or out-of-memory is a `ChildFailure`, never a crash of `nbg`;
//! the temporary folder (and any partial file in it) is removed whatever happens.

use super::driver::{Request, Response};
use super::sdk::Sdk;
use std::io::Write as _;
use std::os::unix::process::ExitStatusExt as _;
use std::time::{Duration, Instant};

/// The child's limits.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// RLIMIT_AS in bytes: the simulator maps about 4.3 GB resident and reserves more.
    pub address_space: u64,
    /// RLIMIT_CPU in seconds.
    pub cpu_seconds: u64,
    /// Killed after this long (waiting for the machine-wide lock not included).
    pub wall: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            address_space: 16 << 30,
            cpu_seconds: 120,
            wall: Duration::from_secs(180),
        }
    }
}

/// How a child ended without an answer.
#[derive(Debug, thiserror::Error)]
pub enum ChildFailure {
    /// It could not be started.
    #[error("the driver child could not start: {0}")]
    Start(String),
    /// A signal ended it before it answered (SIGSEGV, SIGABRT, SIGBUS, SIGKILL).
    #[error("the vendor driver crashed with signal {signal} ({name}) before answering")]
    Signal {
        /// The signal number.
        signal: i32,
        /// Its name.
        name: &'static str,
    },
    /// It used up its CPU time (`Limits::cpu_seconds`, RLIMIT_CPU: SIGXCPU) before answering.
    #[error(
        "the driver child used its {0} s of CPU time (RLIMIT_CPU) before answering and was stopped: the graph takes longer than the limit on the simulator"
    )]
    CpuLimit(u64),
    /// It exited without writing an answer.
    #[error("the driver child exited with status {0} without answering")]
    NoAnswer(i32),
    /// It ran past the wall-clock limit and was killed.
    #[error("the driver child ran longer than {0:?} and was killed")]
    Timeout(Duration),
    /// Its answer was not valid.
    #[error("the driver child's answer is not valid: {0}")]
    BadAnswer(String),
    /// The parent's own files (temporary folder, lock) failed.
    #[error("{0}")]
    Io(String),
}

/// What a child said, and how it ended after answering.
#[derive(Debug)]
pub struct Answer {
    /// The response.
    pub response: Response,
    /// A signal that ended the child after it answered (the driver's teardown), if any.
    pub teardown_signal: Option<i32>,
    /// The file the driver wrote into the child's folder (`driver::OUT_FILE`), read back, if
    /// any.
    pub written: Option<Vec<u8>>,
    /// A run's outputs (`driver::RUN_OUTPUTS`), read back, if any.
    pub outputs: Option<Vec<u8>>,
    /// Wall-clock time of the child, lock wait excluded.
    pub seconds: f64,
}

/// How many driver children may run at once on the machine: `NBG_DRIVER_CHILDREN` (1 to 8),
/// else 2. One compile under the project's contiguous pool peaks at about 365 MB resident and
/// is CPU-bound on one core (12 s for conv-qdq-u8 on 0x1000000e, `/usr/bin/time -v`,
/// notebooks/vendor-toolchain.md), so two fit any machine the project runs on.
pub fn children() -> usize {
    std::env::var("NBG_DRIVER_CHILDREN")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|n| (1..=8).contains(n))
        .unwrap_or(2)
}

/// `f` over `items` on at most `children()` threads (each runs driver children), results in
/// the order of `items`.
pub fn map_parallel<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    use rayon::prelude::*;
    match rayon::ThreadPoolBuilder::new()
        .num_threads(children())
        .build()
    {
        Ok(pool) => pool.install(|| items.into_par_iter().map(&f).collect()),
        // No thread could be started: the same work, one at a time.
        Err(_) => items.into_iter().map(f).collect(),
    }
}

/// One of the machine-wide slots held while a driver child runs (`children()` of them, one
/// lock file each), so that processes and threads together never run more children at once.
struct Lock(std::fs::File);

impl Lock {
    fn take() -> Result<Lock, ChildFailure> {
        let slots = children();
        let open = |k: usize| {
            let path = std::env::temp_dir().join(format!("nbg-vendor-driver-{k}.lock"));
            std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)
                .map_err(|e| ChildFailure::Io(format!("{}: {e}", path.display())))
        };
        let files = (0..slots).map(open).collect::<Result<Vec<_>, _>>()?;
        loop {
            for f in &files {
                // SAFETY: flock on a descriptor this process owns.
                let r = unsafe {
                    libc::flock(
                        std::os::fd::AsRawFd::as_raw_fd(f),
                        libc::LOCK_EX | libc::LOCK_NB,
                    )
                };
                if r == 0 {
                    return f
                        .try_clone()
                        .map(Lock)
                        .map_err(|e| ChildFailure::Io(format!("driver slot: {e}")));
                }
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() != Some(libc::EWOULDBLOCK) {
                    return Err(ChildFailure::Io(format!("driver slot: {e}")));
                }
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        // SAFETY: unlocking the descriptor locked in `take`.
        unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&self.0), libc::LOCK_UN) };
    }
}

/// Run one request in a driver child simulating `config`. `extra_env` adds variables (the
/// save-network-binary ones for a compile; `{dir}` in a value is the child's folder). `image`
/// follows the request on stdin (a load from memory); it is never written to disk.
pub fn run(
    sdk: &Sdk,
    config: &str,
    request: &Request,
    image: &[u8],
    extra_env: &[(&str, String)],
    limits: Limits,
) -> Result<Answer, ChildFailure> {
    run_keeping(
        sdk,
        config,
        request,
        image,
        extra_env,
        limits,
        &mut Kept::default(),
    )
}

/// What a batch child left in its folder, kept however it ended: a crash in the middle of a
/// batch keeps the verdicts (and the compiled files) before it.
#[derive(Debug, Default)]
pub struct Kept {
    /// The batch file (`driver::BATCH_FILE`), one JSON line per item done.
    pub lines: Vec<u8>,
    /// A compile batch's files (`driver::batch_output`), by index, for the first `outputs`
    /// indices asked.
    pub files: Vec<Option<Vec<u8>>>,
}

impl Kept {
    /// The batch's answered items in order: its lines from item 0 up to the first that does not
    /// parse or is out of order, at most `asked`. The item after them is where the child ended.
    pub fn answered<T: serde::de::DeserializeOwned>(
        &self,
        asked: usize,
        index: impl Fn(&T) -> usize,
    ) -> Vec<T> {
        let mut out = Vec::new();
        for line in self.lines.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            match serde_json::from_slice::<T>(line) {
                Ok(item) if out.len() < asked && index(&item) == out.len() => out.push(item),
                _ => break,
            }
        }
        out
    }
}

/// `run`, also handing back in `kept` what the child left of a batch: its lines and, for
/// `kept.files.len()` indices, the files it wrote.
pub fn run_keeping(
    sdk: &Sdk,
    config: &str,
    request: &Request,
    image: &[u8],
    extra_env: &[(&str, String)],
    limits: Limits,
    kept: &mut Kept,
) -> Result<Answer, ChildFailure> {
    let exe = std::env::current_exe().map_err(|e| ChildFailure::Start(e.to_string()))?;
    let dir = tempfile::Builder::new()
        .prefix("nbg-vendor-")
        .tempdir()
        .map_err(|e| ChildFailure::Io(format!("temporary folder: {e}")))?;
    let result = dir.path().join("result.json");
    let line = serde_json::to_vec(request).map_err(|e| ChildFailure::Io(e.to_string()))?;
    let _lock = Lock::take()?;
    let mut cmd = std::process::Command::new(exe);
    cmd.args(["vendor", "child"])
        .arg(&result)
        .current_dir(dir.path())
        .stdin(std::process::Stdio::piped())
        .stdout(debug_stream())
        .stderr(debug_stream());
    for (k, v) in sdk.child_env(config) {
        cmd.env(k, v);
    }
    for (k, v) in extra_env {
        cmd.env(k, v.replace("{dir}", &dir.path().display().to_string()));
    }
    crate::contain::set_limits(&mut cmd, limits.address_space, limits.cpu_seconds, true);
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| ChildFailure::Start(e.to_string()))?;
    // The request and the image go in from a thread, so a child that stops reading cannot
    // block the parent's wait.
    let mut stdin = child.stdin.take();
    let feed = std::thread::scope(|s| {
        let writer = s.spawn(move || {
            if let Some(w) = stdin.as_mut() {
                let _ = w
                    .write_all(&line)
                    .and_then(|_| w.write_all(b"\n"))
                    .and_then(|_| w.write_all(image));
            }
            drop(stdin);
        });
        let status = match crate::contain::wait(&mut child, limits.wall) {
            Ok(Some(s)) => Ok(s),
            Ok(None) => Err(ChildFailure::Timeout(limits.wall)),
            Err(e) => Err(ChildFailure::Io(format!("wait: {e}"))),
        };
        let _ = writer.join();
        status
    });
    if let Ok(b) = std::fs::read(dir.path().join(super::driver::BATCH_FILE)) {
        kept.lines = b;
    }
    for (i, file) in kept.files.iter_mut().enumerate() {
        *file = std::fs::read(dir.path().join(super::driver::batch_output(i))).ok();
    }
    let status = feed?;
    let seconds = start.elapsed().as_secs_f64();
    let answer = std::fs::read(&result).ok();
    let written = std::fs::read(dir.path().join(super::driver::OUT_FILE)).ok();
    let outputs = std::fs::read(dir.path().join(super::driver::RUN_OUTPUTS)).ok();
    match (answer, status.signal()) {
        (Some(bytes), signal) => {
            let response: Response = serde_json::from_slice(&bytes)
                .map_err(|e| ChildFailure::BadAnswer(e.to_string()))?;
            Ok(Answer {
                response,
                teardown_signal: signal,
                written,
                outputs,
                seconds,
            })
        }
        (None, Some(libc::SIGXCPU)) => Err(ChildFailure::CpuLimit(limits.cpu_seconds)),
        (None, Some(signal)) => Err(ChildFailure::Signal {
            signal,
            name: crate::contain::signal_name(signal),
        }),
        (None, None) => Err(ChildFailure::NoAnswer(status.code().unwrap_or(-1))),
    }
}

/// The child's folder is private; this says where the driver is told to write.
pub fn save_env(name: Option<&str>) -> Vec<(&'static str, String)> {
    let mut v = vec![
        ("VIV_VX_ENABLE_SAVE_NETWORK_BINARY", "1".to_string()),
        (
            "VIV_VX_SAVE_NETWORK_BINARY_PATH",
            format!("{{dir}}/{}", super::driver::OUT_FILE),
        ),
    ];
    if let Some(n) = name {
        v.push(("VIV_VX_NBG_NAME", n.to_string()));
    }
    v
}

/// Where the child's standard streams go: the driver prints its own messages (on both), which
/// whoever debugs a refusal sees with `NBG_VENDOR_DEBUG` set; otherwise they are discarded.
fn debug_stream() -> std::process::Stdio {
    if std::env::var_os("NBG_VENDOR_DEBUG").is_some() {
        std::process::Stdio::inherit()
    } else {
        std::process::Stdio::null()
    }
}

#[cfg(test)]
mod tests {
    use super::Kept;

    #[derive(serde::Deserialize)]
    struct Item {
        i: usize,
    }

    fn answered(lines: &str, asked: usize) -> Vec<usize> {
        let kept = Kept {
            lines: lines.as_bytes().to_vec(),
            files: Vec::new(),
        };
        kept.answered::<Item>(asked, |t| t.i)
            .into_iter()
            .map(|t| t.i)
            .collect()
    }

    /// A child that crashed in the middle of a batch leaves whole lines for the items before
    /// the crash and at most a torn line for the item it died on: the whole ones are kept, in
    /// order, and nothing after the first line that is torn, out of order or beyond `asked`.
    #[test]
    fn a_batch_cut_by_a_crash_keeps_the_items_before_it() {
        assert_eq!(answered("{\"i\":0}\n{\"i\":1}\n", 3), [0, 1]);
        assert_eq!(answered("{\"i\":0}\n{\"i\":1}\n{\"i\"", 3), [0, 1]);
        assert_eq!(answered("{\"i\":0}\n{\"i\":2}\n{\"i\":1}\n", 3), [0]);
        assert_eq!(answered("{\"i\":0}\n{\"i\":1}\n{\"i\":2}\n", 2), [0, 1]);
        assert_eq!(answered("", 2), Vec::<usize>::new());
        assert_eq!(answered("\n\n{\"i\":0}\n", 1), [0]);
    }
}
