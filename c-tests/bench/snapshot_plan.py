#!/usr/bin/env python3
"""Turn a CoreSight trace snapshot directory into a plain-text decode plan
for c-tests/bench/decode_snapshot.c.

    snapshot_plan.py SNAPSHOT_DIR [-b BUFFER_NAME] [-o PLAN_FILE]

The snapshot is read the way src/snapshot/ (and OpenCSD's trc_pkt_lister)
reads it: snapshot.ini lists the device .ini files, trace.ini names the
trace buffers, which sources feed them and which core each source traces.
Each source becomes one decoder, configured from its device's [regs]
section (register names as in src/snapshot/to_tree.rs and the protocol
modules' snapshot_config builders); the memory dumps of the source's core
become memory accessors (each file region once).

Plan format (one record a line, fields separated by single spaces, `#`
starts a comment line; paths are absolute and come last on their line so
that they may hold spaces):

    buffer FORMAT PATH
        FORMAT: coresight | dstream_coresight | source_data
    decoder NAME SOURCE FIELD=VALUE ...
        NAME: the built-in decoder name (ETMV4I, ETE, ETMV3, PTM, STM, ITM);
        FIELD: a member of that protocol's config struct (ocsd_etmv4_cfg,
        ocsd_ete_cfg, ocsd_etmv3_cfg, ocsd_ptm_cfg, ocsd_stm_cfg,
        ocsd_itm_cfg); register values in hex, arch_ver / core_prof as
        the enumerator names (ARCH_V8, profile_CortexA, ...).
    mem ADDRESS OFFSET LENGTH SPACE PATH
        ADDRESS, OFFSET, LENGTH in hex; LENGTH 0: the file from OFFSET on;
        SPACE: an ocsd_mem_space_acc_t enumerator name.
"""
import argparse
import os
import sys


def parse_ini(path):
    """[(section name, [(key, value)])] in file order, like src/snapshot/ini.rs."""
    sections = []
    with open(path, "rb") as f:
        text = f.read().decode("utf-8", "replace")
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in ";#":
            continue
        if line.startswith("["):
            sections.append((line[1:].split("]")[0].strip(), []))
            continue
        if "=" in line and sections:
            k, v = line.split("=", 1)
            sections[-1][1].append((k.strip(), v.strip()))
    return sections


def section(ini, name):
    for n, entries in ini:
        if n.lower() == name.lower():
            return entries
    return None


def get(entries, key):
    if entries is None:
        return None
    for k, v in entries:
        if k.lower() == key.lower():
            return v
    return None


def strtoul(s):
    """C strtoul(s, 0, 0) as src/snapshot/mod.rs parse_c_ulong does."""
    s = s.strip()
    if s[:2] in ("0x", "0X"):
        digits, radix = s[2:], 16
    elif len(s) > 1 and s[0] == "0":
        digits, radix = s[1:], 8
    else:
        digits, radix = s, 10
    v = 0
    for c in digits:
        try:
            d = int(c, radix)
        except ValueError:
            break
        v = v * radix + d
    return v & 0xFFFFFFFFFFFFFFFF


class Device:
    def __init__(self, ini):
        dev = section(ini, "device") or []
        self.name = get(dev, "name") or ""
        self.type_name = get(dev, "type") or ""
        self.regs = [(k.split("(")[0].strip(), v) for k, v in (section(ini, "regs") or [])]
        self.dumps = []
        for n, entries in ini:
            if n[:4].lower() == "dump":
                self.dumps.append(
                    dict(
                        file=get(entries, "file") or "",
                        address=strtoul(get(entries, "address") or "0"),
                        length=strtoul(get(entries, "length") or "0"),
                        offset=strtoul(get(entries, "offset") or "0"),
                        space=get(entries, "space") or "",
                    )
                )

    def reg(self, name):
        for k, v in self.regs:
            if k.lower() == name.lower():
                return strtoul(v) & 0xFFFFFFFF
        return None


CORES = {
    ("ARCH_V8", "profile_CortexA"): "Cortex-A78 Cortex-A73 Cortex-A72 Cortex-A57 Cortex-A53 Cortex-A35 Cortex-A32",
    ("ARCH_V8r3", "profile_CortexA"): "Cortex-A77 Cortex-A76 Cortex-A75 Cortex-A65 Cortex-A55",
    ("ARCH_V7", "profile_CortexA"): "Cortex-A17 Cortex-A15 Cortex-A12 Cortex-A9 Cortex-A8 Cortex-A7 Cortex-A5",
    ("ARCH_V8", "profile_CortexR"): "Cortex-R52",
    ("ARCH_V7", "profile_CortexR"): "Cortex-R8 Cortex-R7 Cortex-R5 Cortex-R4",
    ("ARCH_V8r3", "profile_CortexM"): "Cortex-M55 Cortex-M85",
    ("ARCH_V8", "profile_CortexM"): "Cortex-M33 Cortex-M23",
    ("ARCH_V7", "profile_CortexM"): "Cortex-M0 Cortex-M0+ Cortex-M3 Cortex-M4",
}
UNKNOWN = ("ARCH_UNKNOWN", "profile_Unknown")


def arch_profile(core):
    """src/snapshot/mod.rs arch_profile: the core table, then the
    ARMvM[.m]-P and ARM-AA64[-P] patterns."""
    for ap, names in CORES.items():
        if core in names.split():
            return ap
    if core.startswith("ARMv"):
        rest = core[4:]
        if not rest or not rest[0].isdigit():
            return UNKNOWN
        maj, idx, minor = int(rest[0]), 1, 0
        if rest[1:2] == ".":
            minor = int(rest[2]) if rest[2:3].isdigit() else 0
            idx = 3
        elif "." in rest:
            return UNKNOWN
        if maj == 7:
            arch = "ARCH_V7"
        elif maj == 8 and minor < 3:
            arch = "ARCH_V8"
        elif maj == 8 and minor == 3:
            arch = "ARCH_V8r3"
        elif maj >= 8:
            arch = "ARCH_AA64"
        else:
            return UNKNOWN
        if rest[idx : idx + 1] != "-":
            return UNKNOWN
        prof = {"A": "profile_CortexA", "R": "profile_CortexR", "M": "profile_CortexM"}.get(rest[idx + 1 : idx + 2])
        return (arch, prof) if prof else UNKNOWN
    if core.startswith("ARM-") and core[4:8] in ("aa64", "AA64"):
        prof = "profile_CortexA"
        if core[8:9] == "-":
            prof = {"R": "profile_CortexR", "M": "profile_CortexM"}.get(core[9:10], "profile_CortexA")
        return ("ARCH_AA64", prof)
    return UNKNOWN


def warn(msg):
    print("snapshot_plan: " + msg, file=sys.stderr)


def regs(dev, table):
    """[(field, register, required, default)] -> [(field, value)] or None."""
    out, ok = [], True
    for field, reg, required, default in table:
        v = dev.reg(reg)
        if v is None:
            if required:
                warn("%s: missing register %s" % (dev.name, reg))
                ok = False
                continue
            v = default
        out.append((field, "0x%08X" % v))
    return out if ok else None


ETM4_REGS = [
    ("reg_configr", "TRCCONFIGR", True, 0),
    ("reg_traceidr", "TRCTRACEIDR", True, 0),
    ("reg_idr0", "TRCIDR0", True, 0),
    ("reg_idr1", "TRCIDR1", False, 0x4100F403),
    ("reg_idr2", "TRCIDR2", True, 0),
    ("reg_idr8", "TRCIDR8", False, 0),
    ("reg_idr9", "TRCIDR9", False, 0),
    ("reg_idr10", "TRCIDR10", False, 0),
    ("reg_idr11", "TRCIDR11", False, 0),
    ("reg_idr12", "TRCIDR12", False, 0),
    ("reg_idr13", "TRCIDR13", False, 0),
]
ETE_REGS = [
    ("reg_configr", "TRCCONFIGR", True, 0),
    ("reg_traceidr", "TRCTRACEIDR", True, 0),
    ("reg_idr0", "TRCIDR0", True, 0),
    ("reg_idr1", "TRCIDR1", False, 0x4100FFF3),
    ("reg_idr2", "TRCIDR2", True, 0),
    ("reg_idr8", "TRCIDR8", False, 0),
    ("reg_devarch", "TRCDEVARCH", True, 0),
]
ETM3_REGS = [
    ("reg_idr", "ETMIDR", True, 0),
    ("reg_ctrl", "ETMCR", True, 0),
    ("reg_ccer", "ETMCCER", True, 0),
    ("reg_trc_id", "ETMTRACEIDR", True, 0),
]


def decoder_for(dev, ap):
    """(decoder name, [(field, value)]) for a source device, or None."""
    base = dev.type_name.split(".")[0]
    with_ap = [("arch_ver", ap[0]), ("core_prof", ap[1])]
    if base.startswith("ETM3"):
        f = regs(dev, ETM3_REGS)
        return f and ("ETMV3", f + with_ap)
    if base.startswith("PTM") or base.startswith("PFT"):
        f = regs(dev, ETM3_REGS)
        return f and ("PTM", f + with_ap)
    if base == "ETM4":
        f = regs(dev, ETM4_REGS)
        return f and ("ETMV4I", f + with_ap)
    if base == "ETE":
        f = regs(dev, ETE_REGS)
        return f and ("ETE", f + with_ap)
    if base == "STM":
        f = regs(dev, [("reg_tcsr", "STMTCSR", True, 0)])
        return f and ("STM", f)
    if base == "ITM":
        f = regs(dev, [("reg_tcr", "ITMTCR", True, 0)])
        return f and ("ITM", f)
    warn("%s: no decoder for device type %s" % (dev.name, dev.type_name))
    return None


MEM_SPACES = {
    "EL1S": "OCSD_MEM_SPACE_EL1S", "SP": "OCSD_MEM_SPACE_EL1S",
    "EL1N": "OCSD_MEM_SPACE_EL1N", "P": "OCSD_MEM_SPACE_EL1N", "NP": "OCSD_MEM_SPACE_EL1N",
    "EL1R": "OCSD_MEM_SPACE_EL1R",
    "EL2S": "OCSD_MEM_SPACE_EL2S",
    "EL2": "OCSD_MEM_SPACE_EL2", "EL2N": "OCSD_MEM_SPACE_EL2", "H": "OCSD_MEM_SPACE_EL2",
    "EL2R": "OCSD_MEM_SPACE_EL2R",
    "EL3": "OCSD_MEM_SPACE_EL3",
    "ROOT": "OCSD_MEM_SPACE_ROOT",
    "S": "OCSD_MEM_SPACE_S", "N": "OCSD_MEM_SPACE_N", "R": "OCSD_MEM_SPACE_R",
}


def main():
    ap = argparse.ArgumentParser(description="write a decode plan for decode_snapshot from a trace snapshot")
    ap.add_argument("snapshot_dir")
    ap.add_argument("-b", "--buffer", help="trace buffer name (default: the first in trace.ini)")
    ap.add_argument("-o", "--output", help="plan file (default: standard output)")
    args = ap.parse_args()

    base = os.path.abspath(args.snapshot_dir)
    ss = parse_ini(os.path.join(base, "snapshot.ini"))
    devices = {}
    for _, f in section(ss, "device_list") or []:
        d = Device(parse_ini(os.path.join(base, f)))
        devices.setdefault(d.name, d)

    meta = get(section(ss, "trace"), "metadata")
    if not meta:
        sys.exit("snapshot_plan: no [trace] metadata in snapshot.ini")
    tr = parse_ini(os.path.join(base, meta))
    listed = [b.strip().lower() for b in (get(section(tr, "trace_buffers"), "buffers") or "").split(",") if b.strip()]
    buffers = []
    for n, entries in tr:
        if n.lower() in listed:
            buffers.append((get(entries, "name") or "", get(entries, "file") or "", get(entries, "format") or ""))
    if not buffers:
        sys.exit("snapshot_plan: no trace buffers in %s" % meta)
    buf = buffers[0]
    if args.buffer:
        match = [b for b in buffers if b[0] == args.buffer]
        if not match:
            sys.exit("snapshot_plan: no buffer named %s (have: %s)" % (args.buffer, ", ".join(b[0] for b in buffers)))
        buf = match[0]
    # later duplicate keys replace earlier ones (a map, as in src/snapshot/)
    src_bufs = dict(section(tr, "source_buffers") or [])
    core_srcs = section(tr, "core_trace_sources") or []

    out = ["# decode plan for %s, buffer %s" % (base, buf[0]), "buffer %s %s" % (buf[2], os.path.join(base, buf[1]))]
    single = buf[2] == "source_data"
    mapped = set()
    for src in sorted(s for s, b in src_bufs.items() if b == buf[0]):
        dev = devices.get(src)
        if dev is None:
            warn("no device data for source %s" % src)
            if single:
                break
            continue
        core_name = next((c for c, s in core_srcs if s == src), "")
        core = devices.get(core_name) if core_name else None
        if core_name and core is None:
            warn("no device data for core %s of source %s" % (core_name, src))
        else:
            aprof = arch_profile(core.type_name) if core else UNKNOWN
            dec = None
            if core is not None and aprof[0] == "ARCH_UNKNOWN":
                warn("unrecognized core name %s" % core.type_name)
            else:
                dec = decoder_for(dev, aprof)
            if dec:
                name, fields = dec
                out.append("decoder %s %s %s" % (name, src, " ".join("%s=%s" % kv for kv in fields)))
                for d in core.dumps if core else []:
                    path = os.path.join(base, d["file"])
                    key = (path, d["address"], d["offset"], d["length"])
                    if key in mapped:
                        continue
                    mapped.add(key)
                    space = MEM_SPACES.get(d["space"], "OCSD_MEM_SPACE_ANY")
                    out.append("mem 0x%X 0x%X 0x%X %s %s" % (d["address"], d["offset"], d["length"], space, path))
            else:
                warn("no decoder created for source %s" % src)
        if single:
            break

    text = "\n".join(out) + "\n"
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
