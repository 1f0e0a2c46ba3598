#!/usr/bin/env bash
# The profile-guided build (scripts/build-pgo.sh) builds, and decodes as
# the plain build does: every conformance case, normal and corrupted, with
# its lister (the logs byte for byte), and its C API library through the
# benchmark client on bugfix-exact-match, with file and with callback
# memory, giving the elements and memory callbacks of the plain library, in
# the same order
# (target/release, built by the test command's first suite).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../c-tests/bench/client.sh
. "$root/c-tests/bench/client.sh"
shared=${OCSD_SHARED:-$root/../shared}
out="$root/target/pgo-build"
bash "$root/scripts/build-pgo.sh" --target-dir "$out"
rel="$out/release"
for f in libopencsd_c_api.so libopencsd.so libopencsd_c_api.a trc_pkt_lister ocsd; do
    [ -e "$rel/$f" ] || { echo "the profile-guided build made no $f"; exit 1; }
done
if [ ! -d "$shared/conformance/snapshots" ]; then
    echo "SKIPPED (decode checks): reference data not found (set OCSD_SHARED)"
    exit 0
fi
python3 "$shared/conformance/run" --lister "$rel/trc_pkt_lister" | tail -n 2
python3 "$shared/conformance/run" --lister "$rel/trc_pkt_lister" --cases "$shared/conformance/cases-corrupt.tsv" | tail -n 2

plain="$root/target/release/libopencsd_c_api.so"
[ -e "$plain" ] || cargo build --release --quiet --manifest-path "$root/Cargo.toml"
work="$out/check"
mkdir -p "$work/pgo" "$work/plain"
ln -sf "$rel/libopencsd_c_api.so" "$work/pgo/libopencsd_c_api.so.1"
ln -sf "$plain" "$work/plain/libopencsd_c_api.so.1"
build_client gcc "$root" "$work/decode_snapshot" "$work/pgo"
"$rel/trc_pkt_lister" -ss_dir "$shared/conformance/snapshots/bugfix-exact-match" -decode -print_plan "$work/bem.plan" >/dev/null
for v in pgo plain; do
    # (ldd's whole output first: `ldd | grep -q` under pipefail fails
    # when grep leaves before ldd has written everything)
    loads=$(LD_LIBRARY_PATH="$work/$v" ldd "$work/decode_snapshot")
    grep -qF "$work/$v/libopencsd_c_api.so.1" <<<"$loads" ||
        { echo "the client does not load the $v library:"; echo "$loads"; exit 1; }
done
# every element's text and every memory callback (address, size, answer),
# in order, the same with both builds
for mem in file callback; do
    for v in pgo plain; do
        LD_LIBRARY_PATH="$work/$v" "$work/decode_snapshot" -mem "$mem" -print -print-mem "$work/bem.plan" | md5sum >"$work/$v.$mem.sum"
        LD_LIBRARY_PATH="$work/$v" "$work/decode_snapshot" -mem "$mem" "$work/bem.plan" >"$work/$v.$mem.txt"
    done
    cmp "$work/pgo.$mem.sum" "$work/plain.$mem.sum" || { echo "C API, $mem memory: the builds give other elements or callbacks"; exit 1; }
    cmp "$work/pgo.$mem.txt" "$work/plain.$mem.txt" || { echo "C API, $mem memory: the builds differ"; exit 1; }
    echo "C API, $mem memory: $(tr '\n' ' ' <"$work/pgo.$mem.txt")(both builds, the same elements and callbacks in order)"
done
