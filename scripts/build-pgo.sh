#!/usr/bin/env bash
# Release build with profile-guided optimisation (PGO): the libraries and
# commands of `cargo build --release --workspace`, compiled a second time
# with the profile of an instrumented build decoding the shared snapshots
# and perf recordings. Same code, same output; on bugfix-exact-match (a
# trace the training does not decode) the C API decodes 0 to 2% faster
# with file memory and about 3% faster with callback memory than the
# plain build (see README, "Install"). RUSTFLAGS already set are kept.
#
#   bash scripts/build-pgo.sh [--target-dir DIR]
#
# DIR (default: target) receives the build as cargo's release build:
# DIR/release/libopencsd_c_api.so, trc_pkt_lister, ocsd, ... A later plain
# `cargo build --release` into the same folder replaces them (its flags
# differ). Training data: $OCSD_SHARED (default ../shared). It needs the
# llvm-profdata of the compiler's LLVM (`rustup component add
# llvm-tools`, done here when rustup is there); without it, or without the
# training data, the build is the plain release build, and says so.
#
# Trained on: trc_pkt_lister -decode of every shared snapshot but
# bugfix-exact-match (all protocols, the lister's text); the C client of
# the benchmarks (c-tests/bench/decode_snapshot.c) with file and callback
# memory on the larger snapshots, each trace buffer repeated 16 times (a
# long trace: code met again and again); the Rust API's serial,
# parallel, folded and iterator decodes of juno_r1_1; `ocsd perf` on the
# shared recordings. bugfix-exact-match is left out so that the
# benchmarks, which run on it, do not measure a build trained on their
# own input.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=../c-tests/bench/client.sh
. "$root/c-tests/bench/client.sh"
target="$root/target"
while [ $# -gt 0 ]; do
    case "$1" in
        --target-dir) target=$(mkdir -p "$2" && cd "$2" && pwd); shift 2 ;;
        *) echo "usage: build-pgo.sh [--target-dir DIR]" >&2; exit 2 ;;
    esac
done
shared=${OCSD_SHARED:-$root/../shared}
host=$(rustc -vV | sed -n 's/^host: //p')
profdata="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata"

plain() {
    echo "build-pgo: $1: building without a profile"
    cargo build --release --workspace --lib --bins --examples --target-dir "$target"
    exit 0
}
if [ ! -x "$profdata" ] && command -v rustup >/dev/null 2>&1; then
    rustup component add llvm-tools >/dev/null 2>&1 || true
fi
[ -x "$profdata" ] || plain "no llvm-profdata in the toolchain (rustup component add llvm-tools)"
[ -d "$shared/conformance/snapshots" ] || plain "no training data ($shared/conformance/snapshots)"
shared=$(cd "$shared" && pwd)

work="$target/pgo"
raw="$work/raw"
rm -rf "$raw" "$work/run"
mkdir -p "$raw" "$work/run"

# 1. instrumented build (its own folder: the flags differ)
echo "build-pgo: instrumented build"
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-generate=$raw" cargo build --release --workspace --lib --bins --examples --quiet --target-dir "$work/gen"
# build scripts and proc macros run during the build wrote profiles too
rm -f "$raw"/*.profraw
gen="$work/gen/release"
for f in libopencsd_c_api.so trc_pkt_lister ocsd examples/parallel_count; do
    [ -e "$gen/$f" ] || { echo "build-pgo: the instrumented build made no $f" >&2; exit 1; }
done

# 2. training
echo "build-pgo: training"
run="$work/run"
n=0
for ss in "$shared"/conformance/snapshots*/*/; do
    name=$(basename "$ss")
    [ "$name" = bugfix-exact-match ] && continue
    [ -f "$ss/snapshot.ini" ] || continue
    "$gen/trc_pkt_lister" -ss_dir "$ss" -decode -no_time_print -logfile -logfilename "$run/lister.ppl" >/dev/null 2>&1 || true
    rm -f "$run/lister.ppl"
    n=$((n + 1))
done
mkdir -p "$run/lib"
ln -sf "$gen/libopencsd_c_api.so" "$run/lib/libopencsd_c_api.so.1"
cc=$(command -v gcc || command -v cc || true)
clients="juno_r1_1 TC2 tc2-ptm-rstk-t32 test-file-mem-offsets Snowball juno-uname-001"
if [ -z "$cc" ] || ! build_client "$cc" "$root" "$run/decode_snapshot" "$run/lib"; then
    echo "build-pgo: the C API client did not build (no C compiler?): the C API layer is not trained"
    clients=""
fi
for name in $clients; do
    ss="$shared/conformance/snapshots/$name"
    [ -d "$ss" ] || continue
    "$gen/trc_pkt_lister" -ss_dir "$ss" -decode -print_plan "$run/$name.plan" >/dev/null 2>&1 || continue
    # the trace buffer 16 times over: a long trace, where code decoded
    # once is met again and again (the shared snapshots hold short ones)
    repeat_plan "$run/$name.plan" 16 "$run/$name.x16" || continue
    for mem in file callback; do
        LD_LIBRARY_PATH="$run/lib" "$run/decode_snapshot" -mem "$mem" "$run/$name.x16.plan" >/dev/null 2>&1 || true
    done
done
juno="$shared/conformance/snapshots/juno_r1_1"
if [ -d "$juno" ]; then
    for args in 0 2 "0 fold" "2 fold" iter; do
        # shellcheck disable=SC2086
        "$gen/examples/parallel_count" "$juno" $args >/dev/null 2>&1 || true
    done
fi
for rec in "$shared"/perf/*.perf.data; do
    [ -f "$rec" ] || continue
    "$gen/ocsd" perf "$rec" --autofdo "$run/afdo.txt" >/dev/null 2>&1 || true
    "$gen/ocsd" perf "$rec" --branches >/dev/null 2>&1 || true
done
ls "$raw"/*.profraw >/dev/null 2>&1 || plain "the training wrote no profile"
"$profdata" merge -o "$work/merged.profdata" "$raw"
echo "build-pgo: trained on $n snapshots; profile $work/merged.profdata"

# 3. the release build, with the profile
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-use=$work/merged.profdata" cargo build --release --workspace --lib --bins --examples --target-dir "$target"
echo "build-pgo: built with the profile into $target/release"
