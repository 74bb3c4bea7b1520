//! Read-only mappings of a file, one window at a time, for hashing page-cache bytes without
//! copying them (the copy of `pread` was 7 % of `nbg inventory`'s CPU on a 1 GiB file).
//!
//! A mapped file that another process truncates raises SIGBUS on the next access past its new
//! end, which would kill the process instead of reporting an I/O error. So every live window
//! is registered in a fixed table, and a SIGBUS handler, installed once, maps a page of zeros
//! over a faulting page inside a registered window and marks that window faulted; the read
//! goes on, and the caller reports the window as unreadable. A SIGBUS anywhere else goes to
//! the handler that was there before (the standard library's stack-overflow check, or the
//! default action), so it behaves as it would without this module.

use memmap2::{Mmap, MmapOptions};
use std::fs::File;
use std::sync::Once;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Windows that can be live at once; when all are taken, callers read with `pread` instead.
const SLOTS: usize = 64;

/// One registered window: `[start, end)` in this address space (`start == 0`: free).
struct Slot {
    start: AtomicUsize,
    end: AtomicUsize,
    faulted: AtomicBool,
}

static TABLE: [Slot; SLOTS] = [const {
    Slot {
        start: AtomicUsize::new(0),
        end: AtomicUsize::new(0),
        faulted: AtomicBool::new(false),
    }
}; SLOTS];
static PAGE: AtomicUsize = AtomicUsize::new(0);
static INSTALL: Once = Once::new();
/// The SIGBUS action found when the guard was installed, and whether installing succeeded.
static PREVIOUS: OnceLock<Option<libc::sigaction>> = OnceLock::new();

/// A read-only mapping of `len` bytes of a file, guarded against truncation while it lives.
pub(crate) struct Window {
    map: Mmap,
    slot: usize,
}

impl Window {
    /// Map `len > 0` bytes at `offset` (a multiple of the page size), or `None` when the file
    /// cannot be mapped or no slot is free: the caller then reads with `pread`.
    pub(crate) fn map(file: &File, offset: u64, len: usize) -> Option<Window> {
        if len == 0 || !guard_installed() {
            return None;
        }
        let slot = TABLE.iter().position(|s| {
            s.start
                .compare_exchange(0, usize::MAX, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        })?;
        // SAFETY: the mapping is read-only and private; a concurrent truncation is caught by
        // the guard (the slot is registered before any byte is read), and a concurrent write
        // changes bytes being hashed exactly as it would between two `pread`s.
        let mapped = unsafe {
            MmapOptions::new()
                .offset(offset)
                .len(len)
                .populate()
                .map(file)
        };
        let Ok(map) = mapped else {
            TABLE[slot].start.store(0, Ordering::Release);
            return None;
        };
        let start = map.as_ptr() as usize;
        TABLE[slot].faulted.store(false, Ordering::Relaxed);
        TABLE[slot].end.store(start + len, Ordering::Release);
        TABLE[slot].start.store(start, Ordering::Release);
        Some(Window { map, slot })
    }

    /// The mapped bytes (zeros where the file had shrunk: see `faulted`).
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// Whether a page of this window was past the file's end when read (the file shrank), so
    /// its bytes are not the file's.
    pub(crate) fn faulted(&self) -> bool {
        TABLE[self.slot].faulted.load(Ordering::Acquire)
    }
}

impl Drop for Window {
    fn drop(&mut self) {
        // Unregistered before `map` unmaps: nothing reads the window any more. The next
        // `map` of this slot writes `end` before `start`, so `end` needs no reset.
        TABLE[self.slot].start.store(0, Ordering::Release);
    }
}

/// Install the SIGBUS guard once; false when the system refused it (no windows then).
fn guard_installed() -> bool {
    INSTALL.call_once(|| {
        // SAFETY: sysconf and sigaction are called with valid arguments; the handler only
        // reads atomics and calls mmap, which is a system call.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        let Ok(page) = usize::try_from(page) else {
            let _ = PREVIOUS.set(None);
            return;
        };
        PAGE.store(page, Ordering::Relaxed);
        let previous = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as *const () as libc::sighandler_t;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            let mut previous: libc::sigaction = std::mem::zeroed();
            // The previous action is stored before any window exists to fault.
            (libc::sigaction(libc::SIGBUS, &action, &mut previous) == 0).then_some(previous)
        };
        let _ = PREVIOUS.set(previous);
    });
    matches!(PREVIOUS.get(), Some(Some(_)))
}

extern "C" fn on_sigbus(
    signal: libc::c_int,
    info: *mut libc::siginfo_t,
    context: *mut libc::c_void,
) {
    // SAFETY: the kernel passes a valid siginfo for a SA_SIGINFO handler.
    let address = unsafe { (*info).si_addr() } as usize;
    let page = PAGE.load(Ordering::Relaxed);
    for slot in &TABLE {
        let start = slot.start.load(Ordering::Acquire);
        if start == 0 || start == usize::MAX || address < start {
            continue;
        }
        if address >= slot.end.load(Ordering::Acquire) {
            continue;
        }
        let at = address & !(page - 1);
        // SAFETY: `at` is a page inside a live read-only mapping this module owns; replacing
        // it with anonymous zeros changes no memory anything else uses.
        let zeros = unsafe {
            libc::mmap(
                at as *mut libc::c_void,
                page,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if zeros != libc::MAP_FAILED {
            slot.faulted.store(true, Ordering::Release);
            return;
        }
        break;
    }
    // SAFETY: the previous action is called as the kernel would have called it.
    unsafe { chain(signal, info, context) }
}

/// Hand a SIGBUS that is not a window's to the action installed before the guard.
unsafe fn chain(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    let previous = match PREVIOUS.get() {
        Some(Some(previous)) => *previous,
        _ => return,
    };
    let handler = previous.sa_sigaction;
    if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
        // Restore the default action and return: the faulting access runs again and the
        // kernel applies it (a SIGBUS from a fault cannot be ignored).
        unsafe {
            let mut default: libc::sigaction = std::mem::zeroed();
            default.sa_sigaction = libc::SIG_DFL;
            libc::sigaction(signal, &default, std::ptr::null_mut());
        }
        return;
    }
    unsafe {
        if previous.sa_flags & libc::SA_SIGINFO != 0 {
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                std::mem::transmute(handler);
            f(signal, info, context);
        } else {
            let f: extern "C" fn(libc::c_int) = std::mem::transmute(handler);
            f(signal);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_window_reads_the_file() {
        let mut file = tempfile::tempfile().unwrap();
        let bytes: Vec<u8> = (0..3 * 4096u32).map(|i| (i % 251) as u8).collect();
        file.write_all(&bytes).unwrap();
        let window = Window::map(&file, 0, bytes.len()).unwrap();
        assert_eq!(window.bytes(), &bytes[..]);
        assert!(!window.faulted());
    }

    #[test]
    fn a_file_truncated_under_a_window_reads_as_zeros_and_is_flagged() {
        let mut file = tempfile::tempfile().unwrap();
        let page = PAGE.load(Ordering::Relaxed).max(4096);
        file.write_all(&vec![0xa5; 4 * page]).unwrap();
        let window = Window::map(&file, 0, 4 * page).unwrap();
        file.set_len(page as u64).unwrap();
        // Without the guard this read would kill the test process with SIGBUS.
        let sum: u64 = window.bytes().iter().map(|&b| u64::from(b)).sum();
        assert!(window.faulted());
        assert_eq!(sum, 0xa5 * page as u64);
        drop(window);
        let again = Window::map(&file, 0, page).unwrap();
        assert!(!again.faulted(), "a slot's fault is not inherited");
    }
}
