// Give the C API shared library OpenCSD's soname so that clients linked
// against it (perf) resolve `libopencsd_c_api.so.1`; link the `ocsd`
// command as a static PIE where the C library allows it.
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os == "linux" {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libopencsd_c_api.so.1");
        static_pie_ocsd();
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=OCSD_DYNAMIC");
}

/// The libraries Rust's standard library links on linux-gnu, and the
/// static archive each stands for in a static link.
const STATIC_FOR: [(&str, &str); 7] = [
    ("gcc_s", "libgcc_eh.a"),
    ("c", "libc.a"),
    ("m", "libm.a"),
    ("rt", "librt.a"),
    ("pthread", "libpthread.a"),
    ("dl", "libdl.a"),
    ("util", "libutil.a"),
];

/// `ocsd` as a static PIE (glibc only, where its static archives are
/// installed: Debian's libc6-dev and gcc have them).
///
/// `ocsd perf` runs for a few milliseconds, and a dynamically linked
/// process spends a visible part of that in the dynamic loader: mapping
/// libc, libm and libgcc_s, relocating them and itself against them (page
/// faults on every page it writes), and libgcc_s's start-up CPU probe
/// (`cpuid`, slow under a hypervisor). A static PIE does none of that and
/// keeps address randomisation.
///
/// Rust can only link statically on linux-gnu with `-C
/// target-feature=+crt-static`, which applies to every crate of the build
/// and would drop the C API's shared library (`cdylib`). So the static
/// link is made with link arguments of this binary alone: `-static-pie`,
/// and a folder searched first whose `libgcc_s.so`, `libc.so`, ... are
/// linker scripts naming the static archives, so that the libraries the
/// standard library asks for dynamically resolve to those. Anything
/// missing (another C library, no static archives, a linker without
/// static PIE support): the binary is linked dynamically as before.
/// `OCSD_DYNAMIC=1` asks for the dynamic link.
fn static_pie_ocsd() {
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let arch_ok = matches!(std::env::var("CARGO_CFG_TARGET_ARCH").as_deref(), Ok("x86_64") | Ok("aarch64"));
    if env != "gnu" || !arch_ok || std::env::var_os("OCSD_DYNAMIC").is_some_and(|v| v != "0") {
        return;
    }
    let Some(out) = std::env::var_os("OUT_DIR").map(PathBuf::from) else { return };
    // the C compiler rustc links with (cargo's target linker, else cc)
    let cc = std::env::var("RUSTC_LINKER").unwrap_or_else(|_| "cc".into());
    let found = |name: &str| -> Option<PathBuf> {
        let o = Command::new(&cc).arg(format!("-print-file-name={}", name)).output().ok()?;
        let p = PathBuf::from(String::from_utf8(o.stdout).ok()?.trim());
        // gcc prints the bare name back when it does not find the file
        (o.status.success() && p.is_absolute() && p.exists()).then_some(p)
    };
    if found("rcrt1.o").is_none() {
        return;
    }
    let dir = out.join("static-pie");
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    for (lib, archive) in STATIC_FOR {
        let Some(a) = found(archive) else { return };
        if !write_script(&dir.join(format!("lib{}.so", lib)), &a) {
            return;
        }
    }
    // check that the toolchain links a static PIE this way before using it
    if !links(&cc, &dir, &out) {
        println!("cargo:warning=ocsd: static PIE link not available; linked dynamically");
        return;
    }
    println!("cargo:rustc-link-arg-bin=ocsd=-static-pie");
    println!("cargo:rustc-link-arg-bin=ocsd=-L{}", dir.display());
}

fn write_script(path: &Path, archive: &Path) -> bool {
    std::fs::write(path, format!("/* ocsd's static link: this library's static archive */\nINPUT({})\n", archive.display())).is_ok()
}

/// Link a C program as the Rust link would (`-lgcc_s -lc ...` through the
/// scripts in `dir`, `-static-pie`) and check the result has no program
/// interpreter.
fn links(cc: &str, dir: &Path, out: &Path) -> bool {
    let src = out.join("static-pie-check.c");
    let exe = out.join("static-pie-check");
    if std::fs::write(&src, "int main(void) { return 0; }\n").is_err() {
        return false;
    }
    let mut c = Command::new(cc);
    // as rustc links: the libraries asked for dynamically (-Bdynamic)
    c.arg("-static-pie").arg("-o").arg(&exe).arg(&src).arg(format!("-L{}", dir.display())).arg("-Wl,-Bdynamic");
    for (lib, _) in STATIC_FOR {
        c.arg(format!("-l{}", lib));
    }
    let ok = c.output().is_ok_and(|o| o.status.success());
    if !ok {
        return false;
    }
    // a static PIE: no PT_INTERP (type 3) among the program headers
    let Ok(b) = std::fs::read(&exe) else { return false };
    if b.len() < 64 || &b[..4] != b"\x7fELF" || b[4] != 2 {
        return false;
    }
    let u16_at = |o: usize| u16::from_le_bytes([b[o], b[o + 1]]) as usize;
    let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap()) as usize;
    let (phoff, phentsize, phnum) = (u64_at(32), u16_at(54), u16_at(56));
    (0..phnum).all(|i| {
        let o = phoff + i * phentsize;
        o + 4 <= b.len() && u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]) != 3
    })
}
