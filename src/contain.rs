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
            let core = no_core.then_some((libc::RLIMIT_CORE, 0));
            for (resource, value) in [
                (libc::RLIMIT_AS, address_space),
                (libc::RLIMIT_CPU, cpu_seconds),
            ]
            .into_iter()
            .chain(core)
            {
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
}

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
