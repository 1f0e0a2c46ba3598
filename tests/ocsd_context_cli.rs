//! `ocsd decode` with memory images selected by context ID and VMID
//! (`--dump FILE@ADDR,ctx=N`, `[[memory]] context_id = N`), on a hand-built
//! ETMv4 trace in which two processes run the same addresses.

use std::path::PathBuf;
use std::process::{Command, Output};

const NOP: u32 = 0xD503_201F;

fn words(w: &[u32]) -> Vec<u8> {
    w.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// A-Sync, Trace Info, Trace On, then per (context ID, atoms): an
/// Address+Context packet at 0x1000 (AArch64 EL1 NS, VMID 7) and E atoms.
fn trace(parts: &[(u32, usize)]) -> Vec<u8> {
    let mut t = vec![0u8; 11];
    t.extend([0x80, 0x01, 0x00, 0x04]);
    for &(cid, atoms) in parts {
        t.extend([0x85, 0x00, 0x08, 0, 0, 0, 0, 0, 0, 0xf1, 7]);
        t.extend(cid.to_le_bytes());
        t.extend(std::iter::repeat_n(0xf7, atoms));
    }
    t
}

const CONFIG: &str = "format = \"single\"\n[[source]]\nprotocol = \"etmv4\"\ncore = \"Cortex-A57\"\n[source.registers]\n\
TRCIDR0 = 0x28000EA1\nTRCIDR1 = 0x4100F403\nTRCIDR2 = 0x00000488\nTRCCONFIGR = 0xC1\nTRCTRACEIDR = 0x10\n";

fn tmp() -> PathBuf {
    let d = std::env::temp_dir().join(format!("ocsd-ctx-cli-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn ocsd(args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ocsd")).args(args).output().expect("run ocsd")
}

/// (start, instructions) of each instruction range; 0 instructions for
/// memory not accessible.
fn ranges(o: &Output) -> Vec<u32> {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout.clone()).unwrap();
    text.lines()
        .filter_map(|l| {
            if l.contains("ADDR_NACC") {
                Some(0)
            } else {
                let p = l.find("num_i(")?;
                l[p + 6..].split(')').next()?.parse().ok()
            }
        })
        .collect()
}

#[test]
fn process_images_per_context_id() {
    let d = tmp();
    let p = |f: &str| d.join(f).to_str().unwrap().to_string();
    // process 0x10: NOP; NOP; B .-8 (3 a loop); process 0x20: NOP; B .-4 (2)
    std::fs::write(d.join("p10.bin"), words(&[NOP, NOP, 0x17FF_FFFE])).unwrap();
    std::fs::write(d.join("p20.bin"), words(&[NOP, 0x17FF_FFFF])).unwrap();
    std::fs::write(d.join("trace.bin"), trace(&[(0x10, 2), (0x20, 2), (0x10, 1), (0x30, 1)])).unwrap();
    std::fs::write(d.join("cfg.toml"), CONFIG).unwrap();
    let base = vec!["decode".to_string(), "--trace".into(), p("trace.bin"), "--config".into(), p("cfg.toml")];
    let want = vec![3, 3, 2, 2, 3, 0];

    // on the command line
    let mut a = base.clone();
    a.extend(["--dump".into(), format!("{}@0x1000,ctx=0x10", p("p10.bin")), "--dump".into(), format!("{}@0x1000:EL1N,ctx=32,vmid=7", p("p20.bin"))]);
    assert_eq!(ranges(&ocsd(&a)), want);

    // in the configuration file
    let cfg = format!(
        "{CONFIG}[[memory]]\nfile = \"p10.bin\"\naddress = 0x1000\ncontext_id = 0x10\n[[memory]]\nfile = \"p20.bin\"\naddress = 0x1000\ncontext_id = 0x20\nvmid = 7\n"
    );
    std::fs::write(d.join("cfg2.toml"), cfg).unwrap();
    let mut a = base.clone();
    a[4] = p("cfg2.toml");
    assert_eq!(ranges(&ocsd(&a)), want);

    // a VMID the trace never gives: process 0x20's image is never read
    let mut a = base.clone();
    a.extend(["--dump".into(), format!("{}@0x1000,ctx=0x10", p("p10.bin")), "--dump".into(), format!("{}@0x1000,ctx=0x20,vmid=8", p("p20.bin"))]);
    assert_eq!(ranges(&ocsd(&a)), vec![3, 3, 0, 3, 0]);

    // without context selection the two images overlap: one line, exit 2
    let mut a = base.clone();
    a.extend(["--dump".into(), format!("{}@0x1000", p("p10.bin")), "--dump".into(), format!("{}@0x1000", p("p20.bin"))]);
    let o = ocsd(&a);
    let e = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("overlaps") && e.trim_end().lines().count() == 1, "{e}");
    // bad option values
    for (arg, want) in [(",ctx=banana", "banana"), (",colour=red", "colour"), (",ctx=0x100000000", "32-bit")] {
        let mut a = base.clone();
        a.extend(["--dump".into(), format!("{}@0x1000{arg}", p("p10.bin"))]);
        let o = ocsd(&a);
        let e = String::from_utf8_lossy(&o.stderr).to_string();
        assert_eq!(o.status.code(), Some(2), "{arg}: {e}");
        assert!(e.contains(want), "{arg}: {e}");
    }
    let _ = std::fs::remove_dir_all(&d);
}
