#!/bin/sh
# Benchmarks against the installed OpenCSD, whole-process and paired.
#
#   c-tests/bench/run_bench.sh [SNAPSHOT_NAME ...]   (default: bugfix-exact-match)
#   ROUNDS=7 c-tests/bench/run_bench.sh              (default 5 rounds)
#   PGO=1 c-tests/bench/run_bench.sh                 (the profile-guided build)
#
# Measures the plain release build (target/release), or with PGO=1 the
# profile-guided one, built by scripts/build-pgo.sh into target/pgo-build
# (trained on the other shared snapshots, not on bugfix-exact-match).
# Builds the C client c-tests/bench/decode_snapshot.c once against include/
# and runs the same binary on this library (through a
# private directory holding its soname) and on the system's
# libopencsd_c_api.so.1 (Debian's OpenCSD 1.3.3): ldd shows which library
# each run loads. The client builds its tree from the plan the lister
# writes (trc_pkt_lister -print_plan), so the snapshot-to-tree mapping is
# src/snapshot/to_tree.rs alone.
#
# For each snapshot it prints, with min / median / max over the rounds:
#   - the C API with file memory accessors and with perf's memory callback
#     (one callback with trace ID over the whole address space), OpenCSD
#     and this library, with the speed-up ratios and the number of memory
#     callback calls of each;
#   - trc_pkt_lister -decode to a log file (no OpenCSD lister is installed:
#     this library's alone; the lister appends to a log file that is there,
#     as OpenCSD's does, so the log is removed, untimed, before each run),
#     and -decode_only and -decode serial against
#     -parallel 2 (the logs must be identical), with the peak memory and
#     page faults of one run of each;
#   - -decode_only to /dev/null, serial against -parallel 2 (no disk
#     write), and the Rust API decode counting elements, serial against 2
#     threads (examples/parallel_count.rs), the Rust API folding the
#     elements on the decode threads (decode_parallel_fold) against a
#     serial fold, `ocsd decode --autofdo` serial against --jobs 2, and
#     what the machine gives two threads: two serial decodes at once
#     against one;
#   - peak memory (max RSS) of the C client on both libraries;
#   - this library's C client time on the trace buffer repeated 1x, 4x, 16x.
# Then `ocsd perf --autofdo` on the largest shared perf.data recording
# against `perf script --itrace=i1` (Debian's perf and OpenCSD).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/client.sh"
shared=${OCSD_SHARED:-$root/../shared}
shared=$(cd "$shared" 2>/dev/null && pwd) || { echo "SKIPPED: reference data not found (set OCSD_SHARED)"; exit 0; }
[ -d "$shared/conformance/snapshots" ] || { echo "SKIPPED: $shared/conformance/snapshots not found"; exit 0; }
cd "$root" || exit 2
if [ -n "${PGO:-}" ]; then
    mkdir -p "$root/target/pgo-build"
    bash "$root/scripts/build-pgo.sh" --target-dir "$root/target/pgo-build" >"$root/target/pgo-build/build.log" 2>&1 ||
        { tail -n 20 "$root/target/pgo-build/build.log"; exit 1; }
    rel="$root/target/pgo-build/release"
    echo "the profile-guided build ($rel)"
else
    cargo build --release --quiet || exit 1
    cargo build --release --quiet --example parallel_count || exit 1
    rel="$root/target/release"
fi
counter="$rel/examples/parallel_count"

out="$root/target/bench"
lib="$out/lib"
mkdir -p "$lib"
ln -sf "$rel/libopencsd_c_api.so" "$lib/libopencsd_c_api.so.1"
build_client gcc "$root" "$out/decode_snapshot" "$lib" || exit 1
client="$out/decode_snapshot"
lister="$rel/trc_pkt_lister"
rounds=${ROUNDS:-5}
sys=""
if [ -e /usr/lib/x86_64-linux-gnu/libopencsd_c_api.so.1 ] || ldconfig -p 2>/dev/null | grep -q libopencsd_c_api.so.1; then
    sys=1
fi

echo "this library: $(LD_LIBRARY_PATH="$lib" ldd "$client" | grep opencsd_c_api)"
[ -n "$sys" ] && echo "OpenCSD:      $(env -u LD_LIBRARY_PATH ldd "$client" | grep opencsd_c_api)"

[ $# -gt 0 ] || set -- bugfix-exact-match
for name in "$@"; do
    ss="$shared/conformance/snapshots/$name"
    plan="$out/$name.plan"
    "$lister" -ss_dir "$ss" -decode -print_plan "$plan" >/dev/null || exit 1
    [ -s "$plan" ] || { echo "no plan for $name"; exit 1; }
    echo
    echo "== $name: C API (seconds; ratio = OpenCSD time / this library's time)"
    set --
    for mem in file callback; do
        [ -n "$sys" ] && set -- "$@" "opencsd-$mem=env -u LD_LIBRARY_PATH $client -mem $mem $plan"
        set -- "$@" "ours-$mem=LD_LIBRARY_PATH=$lib $client -mem $mem $plan"
    done
    if [ -n "$sys" ]; then
        # pair each of ours with OpenCSD's same memory mode
        python3 "$here/compare.py" -n "$rounds" "$1" "$2" || exit 1
        python3 "$here/compare.py" -n "$rounds" "$3" "$4" || exit 1
    else
        python3 "$here/compare.py" -n "$rounds" "$@" || exit 1
    fi

    # The lister appends to a log file already there (as OpenCSD's lister
    # does): the log is removed, untimed, before each timed run.
    echo
    echo "== $name: trc_pkt_lister -decode to a log file (this library; no OpenCSD lister installed)"
    python3 "$here/compare.py" -n "$rounds" --before "lister=rm -f $out/$name.ppl" \
        "lister=$lister -ss_dir $ss -decode -no_time_print -logfile -logfilename $out/$name.ppl" || exit 1
    rm -f "$out/$name.ppl"

    for mode in -decode_only -decode; do
        echo
        echo "== $name: parallel decode, trc_pkt_lister $mode to a log file (ratio = serial / parallel)"
        python3 "$here/compare.py" -n "$rounds" \
            --before "serial=rm -f $out/$name.serial.ppl" --before "parallel-2=rm -f $out/$name.par.ppl" \
            "serial=$lister -ss_dir $ss -decode $mode -no_time_print -logfile -logfilename $out/$name.serial.ppl" \
            "parallel-2=$lister -ss_dir $ss -decode $mode -parallel 2 -no_time_print -logfile -logfilename $out/$name.par.ppl" || exit 1
        # the logs differ only in the command line they echo: compared
        # after it, in place (no copies of two logs of 200 MB and more)
        hs=$(sed -n '1,/ -ss_dir /p' "$out/$name.serial.ppl" | wc -c)
        hp=$(sed -n '1,/ -ss_dir /p' "$out/$name.par.ppl" | wc -c)
        cmp -s -i "$hs:$hp" "$out/$name.serial.ppl" "$out/$name.par.ppl" || { echo "parallel log differs from the serial log"; exit 1; }
        for run in serial parallel-2; do
            extra=""
            [ "$run" = parallel-2 ] && extra="-parallel 2"
            rm -f "$out/$name.mem.ppl"
            # shellcheck disable=SC2086
            printf "%-12s %s\n" "$run" "$(/usr/bin/time -f "%M KiB max RSS, %R minor page faults, %U s user, %S s sys" \
                "$lister" -ss_dir "$ss" -decode $mode $extra -no_time_print -logfile -logfilename "$out/$name.mem.ppl" 2>&1 >/dev/null | tail -n 1)"
        done
        rm -f "$out/$name.serial.ppl" "$out/$name.par.ppl" "$out/$name.mem.ppl"
    done

    # (the logs written above are still being written back by the kernel
    # for a while, on one of the machine's cores: wait for that first, so
    # that the parallel decodes below have the cores they are given)
    sync

    # The same decode without the log file: the disk write (a 200 MB log
    # is mostly the kernel copying it into the page cache, which varies
    # widely on a shared machine) is left out, so the ratio is that of the
    # decode and its text.
    echo
    echo "== $name: parallel decode, trc_pkt_lister -decode_only to /dev/null (ratio = serial / parallel)"
    python3 "$here/compare.py" -n "$rounds" \
        "serial=$lister -ss_dir $ss -decode -decode_only -no_time_print -logfile -logfilename /dev/null" \
        "parallel-2=$lister -ss_dir $ss -decode -decode_only -parallel 2 -no_time_print -logfile -logfilename /dev/null" || exit 1

    # The Rust API: elements decoded and counted (examples/parallel_count.rs),
    # serially (decode_each's callback, and pulled from the iterator) and on
    # 2 threads; the element count and checksum must agree.
    echo
    echo "== $name: parallel decode, Rust API, elements counted (ratio = serial / this)"
    python3 "$here/compare.py" -n "$rounds" \
        "serial=$counter $ss 0" "parallel-2=$counter $ss 2" "iterator=$counter $ss iter" || exit 1
    [ "$($counter "$ss" 0)" = "$($counter "$ss" 2)" ] || { echo "parallel elements differ from serial"; exit 1; }
    [ "$($counter "$ss" 0)" = "$($counter "$ss" iter)" ] || { echo "the iterator's elements differ from decode_each's"; exit 1; }

    # The Rust API folding the elements where they are decoded
    # (decode_parallel_fold: a count and an order-free sum of element
    # hashes), serially (decode_each) and on 1 and 2 threads.
    echo
    echo "== $name: parallel fold, Rust API, elements counted and hashed (ratio = serial fold / this)"
    python3 "$here/compare.py" -n "$rounds" \
        "serial-fold=$counter $ss 0 fold" "fold-1=$counter $ss 1 fold" "fold-2=$counter $ss 2 fold" || exit 1
    [ "$($counter "$ss" 0 fold)" = "$($counter "$ss" 2 fold)" ] || { echo "the parallel fold differs from the serial fold"; exit 1; }

    # The profiles of `ocsd decode` on two threads: decoded on the threads,
    # the samples taken on the calling thread (the same file)
    echo
    echo "== $name: ocsd decode --autofdo, serial against --jobs 2 (ratio = serial / this)"
    ocsd="$rel/ocsd"
    python3 "$here/compare.py" -n "$rounds" \
        "serial=$ocsd decode --snapshot $ss --autofdo $out/afdo.serial" "jobs-2=$ocsd decode --snapshot $ss --autofdo $out/afdo.jobs2 --jobs 2" || exit 1
    cmp -s "$out/afdo.serial" "$out/afdo.jobs2" || { echo "the AutoFDO profile on two threads differs from the serial one"; exit 1; }

    # What two threads can give on this machine: two serial decodes run at
    # once against one (on two free cores the pair takes as long as one;
    # the throughput gain is twice the ratio of medians).
    echo
    echo "== $name: the machine's scaling, two serial Rust API decodes at once against one (ratio = one / both)"
    python3 "$here/compare.py" -n "$rounds" \
        "one=$counter $ss 0" "both=$counter $ss 0 >/dev/null & $counter $ss 0 >/dev/null; wait" || exit 1

    echo
    echo "== $name: peak memory (max RSS, KiB)"
    for mem in file callback; do
        [ -n "$sys" ] && printf "opencsd-%-9s %s\n" "$mem" "$(env -u LD_LIBRARY_PATH /usr/bin/time -f %M "$client" -mem "$mem" "$plan" 2>&1 >/dev/null | tail -n 1)"
        printf "ours-%-12s %s\n" "$mem" "$(LD_LIBRARY_PATH="$lib" /usr/bin/time -f %M "$client" -mem "$mem" "$plan" 2>&1 >/dev/null | tail -n 1)"
    done

    echo
    echo "== $name: cost against trace size (the buffer repeated; this library, file memory)"
    set --
    for k in 1 4 16; do
        repeat_plan "$plan" "$k" "$out/$name.x$k" || exit 1
        set -- "$@" "x$k=LD_LIBRARY_PATH=$lib $client $out/$name.x$k.plan"
    done
    python3 "$here/compare.py" -n "$rounds" "$@" || exit 1
    for k in 1 4 16; do
        printf "x%-3s max RSS %s KiB\n" "$k" "$(LD_LIBRARY_PATH="$lib" /usr/bin/time -f %M "$client" "$out/$name.x$k.plan" 2>&1 >/dev/null | tail -n 1)"
    done
done

# `ocsd perf` on the largest shared perf.data recording: reading it and
# writing its AutoFDO profile, against Debian's perf (with the system's
# OpenCSD) decoding it with `perf script --itrace=i1`. Runs of a few
# milliseconds: many rounds, each command run without a shell.
rec=$(ls -S "$shared"/perf/*.perf.data 2>/dev/null | head -n 1)
if [ -n "$rec" ] && command -v perf >/dev/null 2>&1; then
    echo
    echo "== $(basename "$rec"): ocsd perf --autofdo against perf script --itrace=i1 (ratio = perf's time / ocsd's)"
    python3 "$here/compare.py" --ms -n "$((rounds * 8))" \
        "perf-script=env -u LD_LIBRARY_PATH perf script -i $rec --itrace=i1" \
        "ocsd-autofdo=$rel/ocsd perf $rec --autofdo $out/perf.afdo" || exit 1
fi
