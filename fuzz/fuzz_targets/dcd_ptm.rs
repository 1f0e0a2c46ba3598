#![no_main]
//! cargo fuzz run dcd_ptm — see fuzz/README.md
#[path = "../../tests/robust_harness/mod.rs"]
mod robust_harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(e) = robust_harness::fuzz_stack("PTM1.1", true, data) {
        panic!("{}", e);
    }
});
