// Give the C API shared library OpenCSD's soname so that clients linked
// against it (perf) resolve `libopencsd_c_api.so.1`.
fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os == "linux" {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libopencsd_c_api.so.1");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
