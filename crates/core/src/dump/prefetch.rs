//! Software prefetch: asking the CPU to start loading bytes into its caches before they are
//! read. Big dumps are read once, front to back, in reads that depend on each other (a frame's
//! header gives the next frame's place; a field's length, the next field's): without a hint,
//! each first touch waits for memory.
//!
//! Owns: the one `unsafe` hint and its platform switch. Must never: read or change what the
//! program sees (a prefetch is only a hint, and a no-op where the platform has none).

/// Asks for every cache line of `bytes`.
#[inline]
pub fn prefetch(bytes: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    for line in bytes.chunks(64) {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: a prefetch never faults and changes nothing the program sees; the address is
        // inside `bytes` all the same.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(line.as_ptr().cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = bytes;
}
