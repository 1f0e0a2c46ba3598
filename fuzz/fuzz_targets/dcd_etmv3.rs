#![no_main]
//! cargo fuzz run dcd_etmv3 — see fuzz/README.md
#[path = "../../tests/robust_harness/mod.rs"]
mod robust_harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(e) = robust_harness::fuzz_stack("ETM3.5", true, data) {
        panic!("{}", e);
    }
});
