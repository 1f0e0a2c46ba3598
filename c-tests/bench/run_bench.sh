#!/bin/sh
# Build the C benchmark client against include/ and run the same binary on
# this library (target/release, through a private directory holding its
# soname, so that a system OpenCSD is never picked up) and, when installed,
# on the system's libopencsd_c_api.so.1 (e.g. Debian's OpenCSD 1.3.3).
#
#   c-tests/bench/run_bench.sh [SNAPSHOT_NAME ...]   (default: bugfix-exact-match juno_r1_1)
#   REPEAT=10 c-tests/bench/run_bench.sh
#
# Prints each library's decode-loop throughput (stderr of -time) and checks
# that both decode the same number of elements (OpenCSD 1.3.3 may differ a
# little from 1.8.0, e.g. juno_r1_1: 1.3.3 repeats an address-not-accessible
# element before some exceptions). For whole-process timing, run the two
# commands it prints under /usr/bin/time or hyperfine.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
shared=${OCSD_SHARED:-$root/../shared}
[ -d "$shared/conformance/snapshots" ] || { echo "SKIPPED: $shared/conformance/snapshots not found (set OCSD_SHARED)"; exit 0; }
cd "$root" || exit 2
cargo build --release --lib --quiet || exit 1

out="$root/target/bench"
lib="$out/lib"
mkdir -p "$lib"
ln -sf "$root/target/release/libopencsd_c_api.so" "$lib/libopencsd_c_api.so.1"
gcc -std=c11 -O2 -Wall -Wextra -Werror -I"$root/include" -o "$out/decode_snapshot" "$here/decode_snapshot.c" \
    -L"$lib" -l:libopencsd_c_api.so.1 || exit 1

[ $# -gt 0 ] || set -- bugfix-exact-match juno_r1_1
status=0
for name in "$@"; do
    plan="$out/$name.plan"
    python3 "$here/snapshot_plan.py" "$shared/conformance/snapshots/$name" -o "$plan" || exit 1
    echo "== $name"
    ours=$(LD_LIBRARY_PATH="$lib" "$out/decode_snapshot" -time -repeat "${REPEAT:-5}" "$plan" | tail -n 1)
    echo "   this library: $ours"
    if [ -e /usr/lib/x86_64-linux-gnu/libopencsd_c_api.so.1 ] || ldconfig -p 2>/dev/null | grep -q libopencsd_c_api.so.1; then
        sys=$("$out/decode_snapshot" -time -repeat "${REPEAT:-5}" "$plan" | tail -n 1)
        echo "   system OpenCSD: $sys"
        [ "$ours" = "$sys" ] || echo "   element counts differ"
    fi
    echo "   whole process: env LD_LIBRARY_PATH=$lib $out/decode_snapshot $plan"
    echo "                  $out/decode_snapshot $plan"
done
exit $status
