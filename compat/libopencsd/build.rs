// soname libopencsd.so.1, as OpenCSD's C++ library has.
fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libopencsd.so.1");
    }
}
