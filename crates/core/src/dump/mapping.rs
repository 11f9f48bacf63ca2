//! A read-only memory map of a dump that survives the file shrinking underneath it.
//!
//! A mapped file that another process truncates (a salvage rewriting it, an operator's `>`)
//! turns every read of a page past the new end into a `SIGBUS`, which kills the process: the
//! CLI dies with "Bus error" (leaving its temp files), the window loses every open tab. The
//! readers here work on `&[u8]` slices of the map (frame scans, decoding, the hex view), so the
//! fault must be absorbed where it happens, not avoided by every reader.
//!
//! The mechanism: one process-wide `SIGBUS` handler (installed when the first dump is mapped)
//! that handles only faults whose address lies in a mapping registered here. It maps anonymous
//! zero pages over the faulting page up to the end of that mapping (`MAP_FIXED`, read-only)
//! and records the offset of that page, so the faulting read resumes and reads zeros. Readers
//! never take those zeros for data: [`Mapping::intact_len`] (two atomic loads) says how much of
//! the map still holds the file as it was, [`Mapping::check`] asks the system for the file's
//! size (one `fstat` of the mapped inode), and the dump's readers check one or the other where
//! it matters (see `DumpFile::check_unchanged` and `DumpFile::intact`). Every other `SIGBUS` is
//! passed to the handler installed before ours (Rust's, which reports a stack overflow) or to
//! the default action, so a real crash still crashes.
//!
//! Why not the alternatives: reading through `pread` would copy every frame and change every
//! reader of a multi-gigabyte file; checking the size before touching pages leaves a race no
//! check closes (the file may shrink between the check and the read); copying small files
//! leaves the large ones, the ones a window holds for hours, unguarded. The handler costs
//! nothing until a fault, and the race is closed by checking after the read: a reader copies
//! (or decodes) the bytes first, then checks; if the file shrank before or during the read,
//! the check sees it. The size check is needed besides the fault: the bytes between the new end
//! and the end of its page read as zeros without any fault, so the readers that hand bytes on
//! ask for the size once per chunk of rows, before a save, and at the end of a command.
//!
//! In the handler, `mmap` is a plain system call on Linux and macOS (POSIX does not list it as
//! async-signal-safe; JVMs and sanitizers absorb faults the same way), and `errno` is restored.
//! Windows refuses to truncate a file while it is mapped, so nothing needs absorbing there.
//!
//! What it does not notice: a file rewritten in place to the same size or larger between two
//! reads (no page faults, no size change). walscope's own writers only append to a dump or
//! replace it by rename; a replaced file keeps the old inode mapped and whole, and
//! [`Mapping::replaced`] tells the window the file on disk is another one.
//!
//! Owns: the handler, the registry of mapped ranges (a fixed array of slots, atomics only,
//! so the handler may read it), and each mapping's registration. Must never: handle a fault
//! outside a registered mapping, allocate, lock or panic in the handler, or unmap a mapping
//! before its slot is cleared (`Drop` clears the slot first; a mapping is only dropped when no
//! slice of it is alive, so no read can fault in it meanwhile).

use memmap2::Mmap;
use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// How much of a mapped file is gone: it was `was` bytes when mapped, it is `now` bytes (or
/// at most: a page past `now` read as zeros).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shrink {
    pub was: u64,
    pub now: u64,
}

impl std::fmt::Display for Shrink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the file shrank from {} to {} bytes", self.was, self.now)
    }
}

/// A read-only map of a whole, non-empty file, registered with the fault handler.
pub struct Mapping {
    map: Mmap,
    file: File,
    /// The registry slot (none where no handler is needed: see [`registry`]).
    slot: Option<usize>,
    /// The smallest size the file has been seen at since it was mapped (`fstat`, or a page
    /// that read as zeros once a fault was looked at).
    seen: AtomicU64,
}

impl Mapping {
    /// Maps `file` (at least one byte long) read-only, its faults absorbed from now on.
    pub fn map(file: File) -> io::Result<Mapping> {
        // SAFETY: the map is read-only. A file cut short while mapped faults on the pages past
        // its new end: the handler of this module turns those pages into zeros (the slot is
        // registered before any byte is read) and the readers check before trusting them.
        let map = unsafe { Mmap::map(&file)? };
        let slot = registry::register(map.as_ptr() as usize, map.len())?;
        let seen = AtomicU64::new(map.len() as u64);
        Ok(Mapping { map, file, slot, seen })
    }

    pub fn bytes(&self) -> &[u8] {
        &self.map
    }

    pub fn len(&self) -> u64 {
        self.map.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Asks for sequential read-ahead (a hint).
    pub fn advise_sequential(&self) {
        #[cfg(unix)]
        let _ = self.map.advise(memmap2::Advice::Sequential);
    }

    /// Whether a page of the map has read as zeros because the file no longer reached it. One
    /// atomic load: cheap enough for a scan to ask at every frame.
    pub fn faulted(&self) -> bool {
        self.slot.is_some_and(|s| registry::fault_offset(s).is_some())
    }

    /// The first bytes of the map that still hold the file as it was mapped, as far as is known
    /// without asking the system (see [`Mapping::check`]).
    pub fn intact_len(&self) -> u64 {
        let fault = self.slot.and_then(registry::fault_offset).map_or(u64::MAX, |o| o as u64);
        self.len().min(self.seen.load(Ordering::Acquire)).min(fault)
    }

    /// How the file shrank, as far as is known without asking the system, but for one `fstat`
    /// after a fault (which gives the true size for the words).
    pub fn known_shrink(&self) -> Option<Shrink> {
        let was = self.len();
        let seen = self.seen.load(Ordering::Acquire);
        if seen < was {
            return Some(Shrink { was, now: seen });
        }
        let fault = self.slot.and_then(registry::fault_offset)? as u64;
        // A fault not looked at yet: the true size, once (a file cut and grown again is
        // known by where its pages read as zeros).
        let now = self.size_on_disk().unwrap_or(0).min(fault);
        self.seen.fetch_min(now, Ordering::AcqRel);
        Some(Shrink { was, now: self.seen.load(Ordering::Acquire) })
    }

    /// Asks the system for the mapped file's size (one `fstat` of the inode that is mapped,
    /// whatever is at its path now): `Err` when it is shorter than the map, or a page of the map
    /// read as zeros. Bytes read before this call that it passes were the file's own.
    pub fn check(&self) -> Result<(), Shrink> {
        if let Ok(now) = self.size_on_disk() {
            self.seen.fetch_min(now, Ordering::AcqRel);
        }
        match self.known_shrink() {
            Some(s) => Err(s),
            None => Ok(()),
        }
    }

    fn size_on_disk(&self) -> io::Result<u64> {
        Ok(self.file.metadata()?.len())
    }

    /// Whether `path` now names another file than the one mapped (renamed over, deleted and
    /// created again): the map still holds the file as it was opened.
    pub fn replaced(&self, path: &Path) -> bool {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            match (self.file.metadata(), std::fs::metadata(path)) {
                (Ok(a), Ok(b)) => (a.dev(), a.ino()) != (b.dev(), b.ino()),
                (Ok(_), Err(_)) => true,
                _ => false,
            }
        }
        #[cfg(not(unix))]
        {
            let _ = path;
            false
        }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // Before the map goes: a slot never names a range that may be mapped again.
        if let Some(s) = self.slot {
            registry::unregister(s);
        }
    }
}

#[cfg(unix)]
mod registry {
    //! The mapped ranges, readable from the signal handler (atomics only, no allocation), and
    //! the handler itself.

    use std::io;
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering, fence};

    /// How many dumps may be mapped at once (the window's tabs, a replay's dumps).
    const SLOTS: usize = 1024;
    const NO_FAULT: usize = usize::MAX;

    /// One registered range. `seq` is odd while the range is being written, so the handler
    /// never trusts a torn `start`/`len` pair (a sequence lock).
    struct Slot {
        taken: AtomicBool,
        seq: AtomicUsize,
        start: AtomicUsize,
        len: AtomicUsize,
        /// Offset of the first page that read as zeros, or [`NO_FAULT`].
        fault: AtomicUsize,
    }

    #[allow(clippy::declare_interior_mutable_const)]
    const FREE: Slot = Slot {
        taken: AtomicBool::new(false),
        seq: AtomicUsize::new(0),
        start: AtomicUsize::new(0),
        len: AtomicUsize::new(0),
        fault: AtomicUsize::new(NO_FAULT),
    };
    static REGISTRY: [Slot; SLOTS] = [FREE; SLOTS];
    static PAGE: AtomicUsize = AtomicUsize::new(0);
    /// The `SIGBUS` disposition before ours, to pass on what is not ours.
    static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();

    /// Registers `start..start + len`, installing the handler first.
    pub fn register(start: usize, len: usize) -> io::Result<Option<usize>> {
        install()?;
        for (i, slot) in REGISTRY.iter().enumerate() {
            if slot.taken.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_ok() {
                slot.fault.store(NO_FAULT, Ordering::Relaxed);
                slot.seq.fetch_add(1, Ordering::AcqRel);
                slot.start.store(start, Ordering::Relaxed);
                slot.len.store(len, Ordering::Relaxed);
                slot.seq.fetch_add(1, Ordering::Release);
                return Ok(Some(i));
            }
        }
        Err(io::Error::other(format!(
            "more than {SLOTS} dumps are mapped at once: close some files and try again"
        )))
    }

    pub fn unregister(i: usize) {
        let slot = &REGISTRY[i];
        slot.seq.fetch_add(1, Ordering::AcqRel);
        slot.start.store(0, Ordering::Relaxed);
        slot.len.store(0, Ordering::Relaxed);
        slot.seq.fetch_add(1, Ordering::Release);
        slot.taken.store(false, Ordering::Release);
    }

    pub fn fault_offset(i: usize) -> Option<usize> {
        let f = REGISTRY[i].fault.load(Ordering::Acquire);
        (f != NO_FAULT).then_some(f)
    }

    fn install() -> io::Result<()> {
        static INSTALLED: OnceLock<Result<(), i32>> = OnceLock::new();
        let done = INSTALLED.get_or_init(|| {
            // SAFETY: sysconf and sigaction with valid arguments; the handler only touches the
            // statics of this module.
            unsafe {
                let page = libc::sysconf(libc::_SC_PAGESIZE);
                PAGE.store(if page > 0 { page as usize } else { 4096 }, Ordering::Relaxed);
                let mut previous: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut previous) != 0 {
                    return Err(io::Error::last_os_error().raw_os_error().unwrap_or(0));
                }
                let _ = PREVIOUS.set(previous);
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_sigbus as *const () as usize;
                action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut action.sa_mask);
                if libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut()) != 0 {
                    return Err(io::Error::last_os_error().raw_os_error().unwrap_or(0));
                }
            }
            Ok(())
        });
        done.map_err(|code| {
            io::Error::other(format!(
                "cannot guard mapped files against being cut short (sigaction: {})",
                io::Error::from_raw_os_error(code)
            ))
        })
    }

    /// The registered slot whose range holds `addr`, and that range.
    fn find(addr: usize) -> Option<(&'static Slot, usize, usize)> {
        for slot in &REGISTRY {
            let before = slot.seq.load(Ordering::Acquire);
            if before % 2 == 1 {
                continue;
            }
            let (start, len) = (slot.start.load(Ordering::Relaxed), slot.len.load(Ordering::Relaxed));
            fence(Ordering::Acquire);
            if slot.seq.load(Ordering::Relaxed) != before || start == 0 {
                continue;
            }
            if addr >= start && addr - start < len {
                return Some((slot, start, len));
            }
        }
        None
    }

    /// Maps zero pages from the page of `addr` to the end of its mapping; whether it did.
    fn absorb(addr: usize) -> bool {
        let Some((slot, start, len)) = find(addr) else {
            return false;
        };
        let page = PAGE.load(Ordering::Relaxed).max(1);
        let from = addr - addr % page;
        let end = start.saturating_add(len);
        let to = end.saturating_add(page - 1) / page * page;
        // SAFETY: `from..to` lies in a live read-only mapping of ours (registered, so not yet
        // unmapped: its owner clears the slot before unmapping, and owns it while a slice of it
        // is read). Replacing its pages past the file's end with zeros changes no byte the file
        // still holds there.
        let mapped = unsafe {
            libc::mmap(
                from as *mut libc::c_void,
                to - from,
                libc::PROT_READ,
                libc::MAP_FIXED | libc::MAP_PRIVATE | libc::MAP_ANON,
                -1,
                0,
            )
        };
        if mapped == libc::MAP_FAILED {
            return false;
        }
        slot.fault.fetch_min(from.saturating_sub(start), Ordering::AcqRel);
        true
    }

    /// The `SIGBUS` handler: a fault in a registered mapping is absorbed; anything else goes to
    /// the previous handler, or kills the process as it would have without us.
    extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
        // SAFETY: the kernel passes a valid siginfo; `errno` is this thread's.
        unsafe {
            let errno = errno_location();
            let saved = errno.map(|e| *e);
            // Only a fault the kernel raised for a memory access names an address (not one
            // sent with kill()).
            let from_kernel = !info.is_null() && (*info).si_code > 0;
            if from_kernel && absorb(fault_address(info)) {
                if let (Some(e), Some(v)) = (errno, saved) {
                    *e = v;
                }
                return;
            }
            pass_on(sig, info, ctx, from_kernel);
        }
    }

    /// What would have happened without us: the previous handler, or the default action.
    unsafe fn pass_on(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void, fault: bool) {
        // SAFETY: calls the handler that was installed for this signal, as the kernel would
        // have; or restores the default and lets the fault (or a raise) deliver it again.
        unsafe {
            if let Some(prev) = PREVIOUS.get() {
                let h = prev.sa_sigaction;
                if h != libc::SIG_DFL && h != libc::SIG_IGN {
                    if prev.sa_flags & libc::SA_SIGINFO != 0 {
                        let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                            std::mem::transmute(h);
                        f(sig, info, ctx);
                    } else {
                        let f: extern "C" fn(libc::c_int) = std::mem::transmute(h);
                        f(sig);
                    }
                    return;
                }
            }
            let mut dfl: libc::sigaction = std::mem::zeroed();
            dfl.sa_sigaction = libc::SIG_DFL;
            libc::sigaction(sig, &dfl, std::ptr::null_mut());
            // A fault happens again when the access is retried, now with the default action;
            // a signal sent by another process is raised again (delivered on return).
            if !fault {
                libc::raise(sig);
            }
        }
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    unsafe fn fault_address(info: *mut libc::siginfo_t) -> usize {
        // SAFETY: a SIGBUS raised by the kernel carries the address.
        unsafe { (*info).si_addr() as usize }
    }

    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    unsafe fn fault_address(info: *mut libc::siginfo_t) -> usize {
        // SAFETY: a SIGBUS raised by the kernel carries the address.
        unsafe { (*info).si_addr as usize }
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    unsafe fn errno_location() -> Option<*mut libc::c_int> {
        // SAFETY: this thread's errno.
        Some(unsafe { libc::__errno_location() })
    }

    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    unsafe fn errno_location() -> Option<*mut libc::c_int> {
        None
    }
}

#[cfg(not(unix))]
mod registry {
    //! Elsewhere (Windows) a file cannot be cut short while it is mapped: the system refuses
    //! the truncation, so there is nothing to absorb.
    pub fn register(_: usize, _: usize) -> std::io::Result<Option<usize>> {
        Ok(None)
    }
    pub fn unregister(_: usize) {}
    pub fn fault_offset(_: usize) -> Option<usize> {
        None
    }
}

#[cfg(all(test, unix))]
#[path = "mapping_tests.rs"]
mod tests;
