#![no_main]
//! The property is `props::http_json` in tests/fuzz_regressions.rs (shared with the regression test).

#[allow(dead_code, unused_imports)]
#[path = "../../tests/fuzz_regressions.rs"]
mod regressions;

libfuzzer_sys::fuzz_target!(|data: &[u8]| regressions::props::http_json(data));
