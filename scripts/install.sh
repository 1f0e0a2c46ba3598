#!/usr/bin/env bash
# Build (release) and install libraries, headers and pkg-config file under a
# prefix:  scripts/install.sh [--pgo] /usr/local
# (--pgo: the profile-guided build of scripts/build-pgo.sh, trained on the
# shared snapshots: the same code, faster; a plain build when it cannot be
# trained, with a message saying why)
# Installs lib/libopencsd_c_api.so.1.8.0 (+ .so.1, .so links), the static
# lib/libopencsd_c_api.a, lib/libopencsd.so.1.8.0 (+ links), include/opencsd/...
# lib/pkgconfig/opencsd.pc and lib/cmake/opencsd/opencsdConfig.cmake.
set -euo pipefail
pgo=""
if [ "${1:-}" = "--pgo" ]; then
    pgo=1
    shift
fi
prefix=${1:?usage: install.sh [--pgo] PREFIX}
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
if [ -n "$pgo" ]; then
    bash scripts/build-pgo.sh
else
    cargo build --release --workspace --quiet
fi
mkdir -p "$prefix/lib/pkgconfig" "$prefix/include"
prefix=$(cd "$prefix" && pwd)
for lib in opencsd_c_api opencsd; do
    install -m 0755 "target/release/lib$lib.so" "$prefix/lib/lib$lib.so.1.8.0"
    ln -sf "lib$lib.so.1.8.0" "$prefix/lib/lib$lib.so.1"
    ln -sf "lib$lib.so.1" "$prefix/lib/lib$lib.so"
done
install -m 0644 target/release/libopencsd_c_api.a "$prefix/lib/libopencsd_c_api.a"
cp -r include/opencsd "$prefix/include/"
sed "s|@PREFIX@|$prefix|" pkgconfig/opencsd.pc.in > "$prefix/lib/pkgconfig/opencsd.pc"
mkdir -p "$prefix/lib/cmake/opencsd"
install -m 0644 cmake/opencsdConfig.cmake "$prefix/lib/cmake/opencsd/opencsdConfig.cmake"
echo "installed under $prefix"
