//! Child processes under limits, for the code that runs native engines it does not trust: the
//! ONNX engine child (`onnx::isolate`) and the vendor driver child (`simulator::child`). Address
//! space and CPU time are `setrlimit` limits set between fork and exec; wall-clock time is
//! the parent's wait, which kills a child that overruns it.

use std::os::unix::process::CommandExt as _;
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

/// Set RLIMIT_AS and RLIMIT_CPU on the child `cmd` starts (and RLIMIT_CORE 0 with `no_core`).
pub fn set_limits(cmd: &mut Command, address_space: u64, cpu_seconds: u64, no_core: bool) {
    // SAFETY: between fork and exec only async-signal-safe calls: setrlimit.
    unsafe {
        cmd.pre_exec(move || {
            let core = no_core.then_some((libc::RLIMIT_CORE, 0, 0));
            // The CPU limit is soft, with a hard limit CPU_GRACE seconds later: the kernel
            // sends SIGXCPU at the soft limit, so a child stopped for its CPU time says so,
            // where equal limits end it with a SIGKILL that reads as a memory kill.
            for (resource, soft, hard) in [
                (libc::RLIMIT_AS, address_space, address_space),
                (
                    libc::RLIMIT_CPU,
                    cpu_seconds,
                    cpu_seconds.saturating_add(CPU_GRACE),
                ),
            ]
            .into_iter()
            .chain(core)
            {
                let r = libc::rlimit {
                    rlim_cur: soft as libc::rlim_t,
                    rlim_max: hard as libc::rlim_t,
                };
                if libc::setrlimit(resource, &r) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
}

/// Seconds of CPU time between the soft limit (SIGXCPU) and the hard one (SIGKILL).
pub const CPU_GRACE: u64 = 5;

/// Wait for `child` at most `wall` from now: its status, or `None` after killing it.
pub fn wait(child: &mut Child, wall: Duration) -> std::io::Result<Option<ExitStatus>> {
    let start = Instant::now();
    loop {
        match child.try_wait()? {
            Some(s) => return Ok(Some(s)),
            None if start.elapsed() > wall => {
                let _ = child.kill();
                let _ = child.wait();
                return Ok(None);
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    }
}

/// The name of a signal that ends a contained child.
pub fn signal_name(sig: i32) -> &'static str {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt as _;

    #[test]
    fn a_child_past_its_cpu_time_ends_with_sigxcpu_not_sigkill() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "while :; do :; done"]);
        set_limits(&mut cmd, 1 << 30, 1, true);
        let mut child = cmd.spawn().expect("sh starts");
        let status = wait(&mut child, Duration::from_secs(30))
            .expect("wait")
            .expect("the CPU limit ends it before the wall limit");
        assert_eq!(status.signal(), Some(libc::SIGXCPU));
    }
}
