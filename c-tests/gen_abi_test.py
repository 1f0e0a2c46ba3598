#!/usr/bin/env python3
"""ABI conformance test of the generated C headers (include/opencsd/...)
against OpenCSD 1.8.0's C ABI facts in ../shared/abi (or $OCSD_SHARED/abi).

At test time this script reads
  opencsd-1.8.0-struct-layout.txt   sizes, offsets, bit-field positions
  opencsd-1.8.0-constants.txt       every enumerator / #define value
  opencsd-1.8.0-macros.txt          function-like macros
  opencsd-1.8.0-c-api-symbols.txt   the C API functions
and writes a C test program (BUILD/abi_layout.c) that checks every struct
(sizeof, offsetof and sizeof of each member, bit-field positions by setting
the field through the header and reading the storage word back), every
constant's value, the function-like macros' results and that each C API
function is declared. The program is compiled with gcc (C99, -pedantic) and
g++ (C++11) with -Wall -Wextra -Werror -I include, and both builds are run.
Every public header is also compiled on its own as C99 and C++11.

An item that the headers do not define yet (e.g. protocol packet types still
being written) is reported MISSING and fails, unless --allow-missing is
given and the item matches a pattern in c-tests/abi_pending.txt (then it is
PENDING and counted as skipped). --allow-missing=all skips every missing
item. The environment variable OCSD_ABI_ALLOW_MISSING (1 or all) does the
same. An item that is defined but wrong always fails.

The last line printed is `N passed, N failed, N skipped`; the exit status is
non-zero if anything failed. Python 3 standard library only.
"""

import argparse
import fnmatch
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# Every public header, in an order that a client could include them.
PUBLIC_HEADERS = [
    "opencsd/ocsd_if_version.h",
    "opencsd/ocsd_if_types.h",
    "opencsd/trc_gen_elem_types.h",
    "opencsd/trc_pkt_types.h",
    "opencsd/etmv3/trc_pkt_types_etmv3.h",
    "opencsd/etmv4/trc_pkt_types_etmv4.h",
    "opencsd/ptm/trc_pkt_types_ptm.h",
    "opencsd/stm/trc_pkt_types_stm.h",
    "opencsd/ete/trc_pkt_types_ete.h",
    "opencsd/itm/trc_pkt_types_itm.h",
    "opencsd/c_api/ocsd_c_api_types.h",
    "opencsd/c_api/ocsd_c_api_custom.h",
    "opencsd/c_api/opencsd_c_api.h",
    "opencsd/c_api/ocsd_c_api_cust_fact.h",
    "opencsd/c_api/ocsd_c_api_cust_impl.h",
]

C_FLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]
CXX_FLAGS = ["-std=c++11", "-Wall", "-Wextra", "-Werror", "-pedantic"]

# Semantic checks of the function-like macros (OpenCSD 1.8.0's meaning):
# (expression, expected truth value / value).
MACRO_CHECKS = {
    "OCSD_DATA_RESP_IS_CONT(x)": [
        ("OCSD_DATA_RESP_IS_CONT(OCSD_RESP_CONT)", 1),
        ("OCSD_DATA_RESP_IS_CONT(OCSD_RESP_WARN_CONT)", 1),
        ("OCSD_DATA_RESP_IS_CONT(OCSD_RESP_ERR_CONT)", 1),
        ("OCSD_DATA_RESP_IS_CONT(OCSD_RESP_WAIT)", 0),
        ("OCSD_DATA_RESP_IS_CONT(OCSD_RESP_FATAL_SYS_ERR)", 0),
    ],
    "OCSD_DATA_RESP_IS_WAIT(x)": [
        ("OCSD_DATA_RESP_IS_WAIT(OCSD_RESP_ERR_CONT)", 0),
        ("OCSD_DATA_RESP_IS_WAIT(OCSD_RESP_WAIT)", 1),
        ("OCSD_DATA_RESP_IS_WAIT(OCSD_RESP_ERR_WAIT)", 1),
        ("OCSD_DATA_RESP_IS_WAIT(OCSD_RESP_FATAL_NOT_INIT)", 0),
    ],
    "OCSD_DATA_RESP_IS_FATAL(x)": [
        ("OCSD_DATA_RESP_IS_FATAL(OCSD_RESP_ERR_WAIT)", 0),
        ("OCSD_DATA_RESP_IS_FATAL(OCSD_RESP_FATAL_NOT_INIT)", 1),
        ("OCSD_DATA_RESP_IS_FATAL(OCSD_RESP_FATAL_SYS_ERR)", 1),
    ],
    "OCSD_DATA_RESP_IS_WARN(x)": [
        ("OCSD_DATA_RESP_IS_WARN(OCSD_RESP_WARN_CONT)", 1),
        ("OCSD_DATA_RESP_IS_WARN(OCSD_RESP_WARN_WAIT)", 1),
        ("OCSD_DATA_RESP_IS_WARN(OCSD_RESP_ERR_CONT)", 0),
        ("OCSD_DATA_RESP_IS_WARN(OCSD_RESP_CONT)", 0),
    ],
    "OCSD_DATA_RESP_IS_ERR(x)": [
        ("OCSD_DATA_RESP_IS_ERR(OCSD_RESP_ERR_CONT)", 1),
        ("OCSD_DATA_RESP_IS_ERR(OCSD_RESP_ERR_WAIT)", 1),
        ("OCSD_DATA_RESP_IS_ERR(OCSD_RESP_WARN_WAIT)", 0),
        ("OCSD_DATA_RESP_IS_ERR(OCSD_RESP_FATAL_INVALID_OP)", 0),
    ],
    "OCSD_DATA_RESP_IS_WARN_OR_ERR(x)": [
        ("OCSD_DATA_RESP_IS_WARN_OR_ERR(OCSD_RESP_WARN_CONT)", 1),
        ("OCSD_DATA_RESP_IS_WARN_OR_ERR(OCSD_RESP_ERR_WAIT)", 1),
        ("OCSD_DATA_RESP_IS_WARN_OR_ERR(OCSD_RESP_CONT)", 0),
        ("OCSD_DATA_RESP_IS_WARN_OR_ERR(OCSD_RESP_WAIT)", 0),
    ],
    "OCSD_IS_VALID_CS_SRC_ID(id)": [
        ("OCSD_IS_VALID_CS_SRC_ID(0x00)", 0),
        ("OCSD_IS_VALID_CS_SRC_ID(0x01)", 1),
        ("OCSD_IS_VALID_CS_SRC_ID(0x6F)", 1),
        ("OCSD_IS_VALID_CS_SRC_ID(0x70)", 0),
    ],
    "OCSD_IS_RESERVED_CS_SRC_ID(id)": [
        ("OCSD_IS_RESERVED_CS_SRC_ID(0x00)", 1),
        ("OCSD_IS_RESERVED_CS_SRC_ID(0x10)", 0),
        ("OCSD_IS_RESERVED_CS_SRC_ID(0x70)", 1),
        ("OCSD_IS_RESERVED_CS_SRC_ID(0x7F)", 1),
    ],
    "OCSD_IS_V8_ARCH(arch)": [
        ("OCSD_IS_V8_ARCH(ARCH_V7)", 0),
        ("OCSD_IS_V8_ARCH(ARCH_V8)", 1),
        ("OCSD_IS_V8_ARCH(ARCH_V8r3)", 1),
        ("OCSD_IS_V8_ARCH(ARCH_AA64)", 1),
        ("OCSD_IS_V8_ARCH(0x0865)", 0),
    ],
    "OCSD_IS_ARCH_MINVER(arch, min_arch)": [
        ("OCSD_IS_ARCH_MINVER(ARCH_V8, ARCH_V7)", 1),
        ("OCSD_IS_ARCH_MINVER(ARCH_V8, ARCH_V8)", 1),
        ("OCSD_IS_ARCH_MINVER(ARCH_V7, ARCH_V8)", 0),
    ],
    "OCSD_BIT_MASK(bits)": [
        ("(OCSD_BIT_MASK(8)) == 0xFFULL", 1),
        ("(OCSD_BIT_MASK(32)) == 0xFFFFFFFFULL", 1),
        ("(OCSD_BIT_MASK(64)) == ~0ULL", 1),
    ],
    "OCSD_PROTOCOL_IS_BUILTIN(P)": [
        ("OCSD_PROTOCOL_IS_BUILTIN(OCSD_PROTOCOL_UNKNOWN)", 0),
        ("OCSD_PROTOCOL_IS_BUILTIN(OCSD_PROTOCOL_ETMV4I)", 1),
        ("OCSD_PROTOCOL_IS_BUILTIN(OCSD_PROTOCOL_ITM)", 1),
        ("OCSD_PROTOCOL_IS_BUILTIN(OCSD_PROTOCOL_BUILTIN_END)", 0),
        ("OCSD_PROTOCOL_IS_BUILTIN(OCSD_PROTOCOL_CUSTOM_0)", 0),
    ],
    "OCSD_PROTOCOL_IS_CUSTOM(P)": [
        ("OCSD_PROTOCOL_IS_CUSTOM(OCSD_PROTOCOL_STM)", 0),
        ("OCSD_PROTOCOL_IS_CUSTOM(OCSD_PROTOCOL_CUSTOM_0)", 1),
        ("OCSD_PROTOCOL_IS_CUSTOM(OCSD_PROTOCOL_CUSTOM_9)", 1),
        ("OCSD_PROTOCOL_IS_CUSTOM(OCSD_PROTOCOL_END)", 0),
    ],
}


# ---------------------------------------------------------------------------
# Reading the ABI facts

class Agg:
    def __init__(self, kind, tag):
        self.kind = kind  # "struct" or "union"
        self.tag = tag
        self.size = None
        # ("field", path, off, size) | ("agg", path, off, size)
        # | ("bits", path, word_off, bit, width, storage)
        self.checks = []

    @property
    def name(self):
        return "%s %s" % (self.kind, self.tag)


MEMBER_RE = re.compile(
    r"^\s*(?P<type>.*?)\s*\b(?P<name>[A-Za-z_]\w*)(?P<arr>(\[[^\]]*\])*)"
    r"(?::(?P<width>\d+))?;\s*/\*\s*(?P<off>\d+)(?::\s*(?P<bit>\d+))?\s+(?P<size>\d+)\s*\*/")
OPEN_RE = re.compile(r"^\s*(struct|union)\s*\{\s*$")
CLOSE_RE = re.compile(r"^\s*\}\s*(?P<name>[A-Za-z_]\w*)?\s*;\s*/\*\s*(?P<off>\d+)\s+(?P<size>\d+)\s*\*/")
TOP_RE = re.compile(r"^(struct|union)\s+(\w+)\s*\{\s*$")
SIZE_RE = re.compile(r"/\*\s*size:\s*(\d+)")


def parse_layout(path):
    aggs = []
    cur = None
    stack = []  # frames: list of checks with relative paths
    with open(path) as f:
        for raw in f:
            line = raw.rstrip("\n")
            if cur is None:
                m = TOP_RE.match(line)
                if m:
                    cur = Agg(m.group(1), m.group(2))
                    stack = [[]]
                continue
            if re.match(r"^\};\s*$", line):
                cur.checks = stack[0]
                if cur.size is None:  # pahole omits it for some unions
                    cur.size = max(c[2] + c[-1] if c[0] != "bits" else c[2] + c[5] for c in cur.checks)
                aggs.append(cur)
                cur = None
                continue
            m = SIZE_RE.search(line)
            if m and len(stack) == 1:
                cur.size = int(m.group(1))
                continue
            if OPEN_RE.match(line):
                stack.append([])
                continue
            m = CLOSE_RE.match(line)
            if m and len(stack) > 1:
                inner = stack.pop()
                name = m.group("name")
                if name:
                    fixed = []
                    for c in inner:
                        fixed.append((c[0], name + "." + c[1]) + tuple(c[2:]))
                    stack[-1].append(("agg", name, int(m.group("off")), int(m.group("size"))))
                    stack[-1].extend(fixed)
                else:
                    stack[-1].extend(inner)
                continue
            m = MEMBER_RE.match(line)
            if m:
                off, size = int(m.group("off")), int(m.group("size"))
                if m.group("width") is not None:
                    stack[-1].append(("bits", m.group("name"), off, int(m.group("bit") or 0),
                                      int(m.group("width")), size))
                else:
                    stack[-1].append(("field", m.group("name"), off, size))
    return aggs


def parse_constants(path):
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#") or " = " not in line:
                continue
            name, val = line.split(" = ", 1)
            val = val.strip()
            if val.startswith('"'):
                out.append((name.strip(), "str", val))
            else:
                out.append((name.strip(), "int", int(val, 0)))
    return out


def parse_list(path):
    out = []
    if not os.path.isfile(path):
        return out
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                out.append(line)
    return out


# ---------------------------------------------------------------------------
# What the headers define (text scan; a compile probe confirms)

def header_text(include):
    texts = []
    for h in PUBLIC_HEADERS:
        p = os.path.join(include, h)
        if os.path.isfile(p):
            with open(p) as f:
                texts.append(f.read())
    # Drop comments so that PENDING notes do not count as definitions.
    t = "\n".join(texts)
    t = re.sub(r"/\*.*?\*/", " ", t, flags=re.S)
    t = re.sub(r"//[^\n]*", " ", t)
    return t


def defines_agg(text, agg):
    return re.search(r"\b%s\s+%s\s*\{" % (agg.kind, re.escape(agg.tag)), text) is not None


def defines_const(text, name):
    n = re.escape(name)
    return (re.search(r"#\s*define\s+%s\b(?!\()" % n, text) is not None
            or re.search(r"^\s*%s\s*(=[^=]|,|$)" % n, text, re.M) is not None)


def defines_macro(text, name):
    return re.search(r"#\s*define\s+%s\(" % re.escape(name), text) is not None


def declares_func(text, name):
    return re.search(r"^(?!\s*#).*\b%s\s*\(" % re.escape(name), text, re.M) is not None


# ---------------------------------------------------------------------------
# C code for the checks. Each item is a function that prints
# "RESULT <id> PASS" or "RESULT <id> FAIL <why>" lines.

def c_ident(s):
    return re.sub(r"\W", "_", s)


def agg_check_code(agg):
    t = agg.name
    body = []
    body.append('    CHECK_EQ(sizeof(%s), %d, "sizeof(%s)");' % (t, agg.size, t))
    for c in agg.checks:
        if c[0] in ("field", "agg"):
            _, p, off, size = c
            body.append('    CHECK_EQ(offsetof(%s, %s), %d, "offsetof(%s, %s)");' % (t, p, off, t, p))
            body.append('    CHECK_EQ(sizeof(((%s *)0)->%s), %d, "sizeof(%s.%s)");' % (t, p, size, t, p))
        else:
            _, p, woff, bit, width, storage = c
            mask = ((1 << width) - 1) << bit
            allones = (1 << width) - 1
            body.append("    {")
            body.append("        %s s; unsigned long long w = 0;" % t)
            body.append("        memset(&s, 0, sizeof s);")
            body.append("        s.%s = %dU;" % (p, allones))
            body.append("        memcpy(&w, (const unsigned char *)&s + %d, %d);" % (woff, storage))
            body.append('        CHECK_EQ(w, %dULL, "bit-field %s.%s (bits %d..%d of the %d-byte word at %d)");'
                        % (mask, t, p, bit, bit + width - 1, storage, woff))
            body.append("    }")
    return body


def const_check_code(name, kind, val):
    if kind == "str":
        return ['    CHECK_STR(%s, %s, "%s");' % (name, val, name)]
    lit = "(unsigned long long)(%dLL)" % val if val < 0 else "%dULL" % val
    return ['    CHECK_EQ((unsigned long long)(%s), %s, "%s");' % (name, lit, name)]


def macro_check_code(macro):
    name = macro.split("(")[0]
    body = ["#ifndef %s" % name, '    FAIL_MSG("%s is not defined");' % name, "#else"]
    for expr, want in MACRO_CHECKS.get(macro, []):
        if expr.startswith("("):
            body.append('    CHECK_EQ((unsigned long long)((%s) ? 1 : 0), %dULL, "%s");'
                        % (expr, want, expr.replace('"', '\\"')))
        else:
            body.append('    CHECK_EQ((unsigned long long)((%s) ? 1 : 0), %dULL, "%s");'
                        % (expr, want, expr))
    body.append("#endif")
    return body


def func_check_code(name):
    return ['    CHECK_EQ(sizeof(&%s) != 0, 1, "%s is declared");' % (name, name)]


PRELUDE = r"""/* Generated by c-tests/gen_abi_test.py from OpenCSD 1.8.0's ABI facts: do not edit. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
%(includes)s

static int g_item_fail;
static const char *g_item;

#define FAIL_MSG(msg) do { g_item_fail++; printf("RESULT %%s FAIL %%s\n", g_item, msg); } while (0)
#define CHECK_EQ(got, want, what) do { \
        unsigned long long got_ = (unsigned long long)(got), want_ = (unsigned long long)(want); \
        if (got_ != want_) { g_item_fail++; \
            printf("RESULT %%s FAIL %%s: got %%llu (0x%%llx), want %%llu (0x%%llx)\n", g_item, what, got_, got_, want_, want_); } \
    } while (0)
#define CHECK_STR(got, want, what) do { \
        const char *got_ = (got); \
        if (strcmp(got_, want) != 0) { g_item_fail++; \
            printf("RESULT %%s FAIL %%s: got \"%%s\", want \"%%s\"\n", g_item, what, got_, want); } \
    } while (0)
#define BEGIN(id) g_item = id; g_item_fail = 0
#define END() do { if (!g_item_fail) printf("RESULT %%s PASS\n", g_item); } while (0)
"""


def write_test(path, include_list, items):
    lines = [PRELUDE % {"includes": "\n".join('#include "%s"' % h for h in include_list)}]
    for i, (item_id, body) in enumerate(items):
        lines.append("static void check_%d(void) /* %s */\n{\n    BEGIN(\"%s\");" % (i, item_id, item_id))
        lines.extend(body)
        lines.append("    END();\n}\n")
    lines.append("int main(void)\n{")
    for i in range(len(items)):
        lines.append("    check_%d();" % i)
    lines.append("    return 0;\n}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def compile_run(cc, flags, src, exe, include, run=True):
    cmd = [cc] + flags + ["-I", include, "-o", exe, src]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    if p.returncode != 0:
        return False, p.stdout
    if not run:
        return True, ""
    r = subprocess.run([exe], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    return r.returncode == 0, r.stdout


def syntax_ok(cc, flags, src, include):
    cmd = [cc] + flags + ["-I", include, "-fsyntax-only", src]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    return p.returncode == 0, p.stdout


def first_error(out, n=3):
    errs = [l for l in out.splitlines() if "error" in l]
    return " | ".join((errs or out.splitlines())[:n])


# ---------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", help="the shared/ folder (default: $OCSD_SHARED or ../shared beside the repo)")
    ap.add_argument("--include", default=os.path.join(ROOT, "include"), help="header root (default: include/)")
    ap.add_argument("--build", default=os.path.join(ROOT, "target", "abi-test"), help="build folder")
    ap.add_argument("--allow-missing", nargs="?", const="pending", default=os.environ.get("OCSD_ABI_ALLOW_MISSING"),
                    help="skip missing items listed in the pending file (or, with =all, every missing item)")
    ap.add_argument("--pending-file", default=os.path.join(HERE, "abi_pending.txt"))
    ap.add_argument("--cc", default=os.environ.get("CC", "gcc"))
    ap.add_argument("--cxx", default=os.environ.get("CXX", "g++"))
    ap.add_argument("-v", "--verbose", action="store_true", help="print passing items too")
    a = ap.parse_args()

    shared = a.shared or os.environ.get("OCSD_SHARED") or os.path.join(os.path.dirname(ROOT), "shared")
    abi = os.path.join(shared, "abi")
    if not os.path.isdir(abi):
        print("SKIPPED: ../shared not found (looked for %s; set OCSD_SHARED to the shared/ folder)" % abi)
        return 0
    allow = a.allow_missing
    if allow in ("0", "", "no", None):
        allow = None
    elif allow not in ("all",):
        allow = "pending"
    pending = parse_list(a.pending_file) if allow == "pending" else []

    include = os.path.abspath(a.include)
    os.makedirs(a.build, exist_ok=True)
    text = header_text(include)
    present_headers = [h for h in PUBLIC_HEADERS if os.path.isfile(os.path.join(include, h))]

    results = {}  # id -> ("PASS"|"FAIL"|"PENDING", detail)
    order = []

    def record(item_id, status, detail=""):
        if item_id not in results:
            order.append(item_id)
            results[item_id] = (status, detail)
        elif status == "FAIL" and results[item_id][0] != "FAIL":
            results[item_id] = (status, detail)
        elif status == "FAIL":
            results[item_id] = (status, results[item_id][1] + "; " + detail)

    def missing(item_id, what):
        if allow == "all" or (allow == "pending" and any(fnmatch.fnmatchcase(item_id, p) for p in pending)):
            record(item_id, "PENDING", what)
        else:
            record(item_id, "FAIL", "MISSING: " + what)

    # 1. Each public header compiles on its own, as C and as C++.
    for h in PUBLIC_HEADERS:
        item = "header " + h
        if h not in present_headers:
            missing(item, "%s not found under %s" % (h, include))
            continue
        src = os.path.join(a.build, "hdr_" + c_ident(h))
        for (cc, flags, ext, lang) in ((a.cc, C_FLAGS, ".c", "C99"), (a.cxx, CXX_FLAGS, ".cpp", "C++11")):
            with open(src + ext, "w") as f:
                f.write('#include "%s"\n#include "%s"\nint ocsd_hdr_test_dummy;\n' % (h, h))
            ok, out = syntax_ok(cc, flags, src + ext, include)
            if ok:
                record(item, "PASS")
            else:
                record(item, "FAIL", "does not compile as %s: %s" % (lang, first_error(out)))

    # 2. Items from the ABI facts.
    items = []  # (id, body)
    for agg in parse_layout(os.path.join(abi, "opencsd-1.8.0-struct-layout.txt")):
        if defines_agg(text, agg):
            items.append((agg.name, agg_check_code(agg)))
        else:
            missing(agg.name, "%s is not defined by the headers" % agg.name)
    for name, kind, val in parse_constants(os.path.join(abi, "opencsd-1.8.0-constants.txt")):
        item = "const " + name
        if defines_const(text, name):
            items.append((item, const_check_code(name, kind, val)))
        else:
            missing(item, "%s is not defined by the headers" % name)
    for macro in parse_list(os.path.join(abi, "opencsd-1.8.0-macros.txt")):
        name = macro.split("(")[0]
        item = "macro " + name
        if defines_macro(text, name):
            items.append((item, macro_check_code(macro)))
        else:
            missing(item, "function-like macro %s is not defined by the headers" % macro)
    for fn in parse_list(os.path.join(abi, "opencsd-1.8.0-c-api-symbols.txt")):
        item = "func " + fn
        if declares_func(text, fn):
            items.append((item, func_check_code(fn)))
        else:
            missing(item, "C API function %s is not declared by the headers" % fn)

    # 3. Build the test; if it does not compile, find the items at fault one
    #    by one (each alone) and leave them out.
    src = os.path.join(a.build, "abi_layout.c")
    write_test(src, present_headers, items)
    ok_c, out_c = syntax_ok(a.cc, C_FLAGS, src, include)
    ok_x, out_x = syntax_ok(a.cxx, CXX_FLAGS + ["-x", "c++"], src, include)
    if not (ok_c and ok_x):
        good = []
        probe = os.path.join(a.build, "probe.c")
        for item_id, body in items:
            write_test(probe, present_headers, [(item_id, body)])
            okc, oc = syntax_ok(a.cc, C_FLAGS, probe, include)
            okx, ox = syntax_ok(a.cxx, CXX_FLAGS + ["-x", "c++"], probe, include)
            if okc and okx:
                good.append((item_id, body))
            else:
                record(item_id, "FAIL", "check does not compile (%s): %s"
                       % ("C" if not okc else "C++", first_error(oc if not okc else ox)))
        items = good
        write_test(src, present_headers, items)

    # 4. Compile with gcc and g++, run both.
    for (cc, flags, exe, lang) in ((a.cc, C_FLAGS, "abi_layout_c", "C"),
                                    (a.cxx, CXX_FLAGS + ["-x", "c++"], "abi_layout_cxx", "C++")):
        ok, out = compile_run(cc, flags, src, os.path.join(a.build, exe), include)
        seen = set()
        for line in out.splitlines():
            m = re.match(r"^RESULT (.*?) (PASS|FAIL)(?: (.*))?$", line)
            if not m:
                continue
            item_id, st, detail = m.group(1), m.group(2), m.group(3) or ""
            seen.add(item_id)
            record(item_id, st, ("[%s] " % lang + detail) if detail else "")
        for item_id, _ in items:
            if item_id not in seen:
                record(item_id, "FAIL", "[%s] no result (build or run failed: %s)" % (lang, first_error(out)))

    # 5. Report.
    npass = nfail = nskip = 0
    for item_id in order:
        st, detail = results[item_id]
        if st == "PASS":
            npass += 1
            if a.verbose:
                print("PASS    %s" % item_id)
            pats = [p for p in pending if fnmatch.fnmatchcase(item_id, p)] if allow == "pending" else []
            if pats:
                print("NOTE    %s passes now but is listed as pending (%s in %s)"
                      % (item_id, ", ".join(repr(p) for p in pats), os.path.basename(a.pending_file)))
        elif st == "PENDING":
            nskip += 1
            if a.verbose:
                print("PENDING %s (%s)" % (item_id, detail))
        else:
            nfail += 1
            print("FAIL    %s: %s" % (item_id, detail))
    if nskip:
        print("(%d missing item(s) skipped as pending: %s)" % (
            nskip, "--allow-missing=all" if allow == "all" else "listed in " + os.path.relpath(a.pending_file, ROOT)))
    print("%d passed, %d failed, %d skipped" % (npass, nfail, nskip))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
