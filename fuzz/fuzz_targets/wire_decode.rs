#![no_main]
//! The property is `props::wire_decode` in tests/fuzz_regressions.rs (shared with the regression test).

#[allow(dead_code, unused_imports)]
#[path = "../../tests/fuzz_regressions.rs"]
mod regressions;

libfuzzer_sys::fuzz_target!(|data: &[u8]| regressions::props::wire_decode(data));
