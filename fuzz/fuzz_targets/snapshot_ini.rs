#![no_main]
//! cargo fuzz run snapshot_ini — see fuzz/README.md
#[path = "../../tests/robust_harness/mod.rs"]
mod robust_harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(e) = robust_harness::ini_bytes_scenario(data) {
        panic!("{}", e);
    }
});
