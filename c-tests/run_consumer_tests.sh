#!/usr/bin/env bash
# Packaging tests: exported symbols, install to a prefix, build a client with
# pkg-config, with `-lopencsd_c_api -lopencsd`, and with CMake find_package.
# Prints "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
shared=${OCSD_SHARED:-$root/../shared}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0; fail=0
ok() { echo "PASS: $1"; pass=$((pass+1)); }
bad() { echo "FAIL: $1"; fail=$((fail+1)); }

cd "$root"
cargo build --release --workspace --quiet || { echo "build failed"; echo "0 passed, 1 failed"; exit 1; }

# 1. exactly OpenCSD's 34 functions are exported
if [ -f "$shared/abi/opencsd-1.8.0-c-api-symbols.txt" ]; then
    if diff <(nm -D --defined-only target/release/libopencsd_c_api.so | awk '{print $3}' | sort) \
            <(sort "$shared/abi/opencsd-1.8.0-c-api-symbols.txt") >/dev/null; then
        ok "exported symbols are exactly the 34 C API functions"
    else
        bad "exported symbols differ from opencsd-1.8.0-c-api-symbols.txt"
    fi
else
    echo "SKIPPED: symbol list check ($shared/abi not found)"
fi
for lib in opencsd_c_api opencsd; do
    if objdump -p "target/release/lib$lib.so" | grep -q "SONAME *lib$lib.so.1"; then ok "lib$lib.so soname"; else bad "lib$lib.so soname"; fi
done

# 2. install, then build with pkg-config
prefix="$work/prefix"
if bash scripts/install.sh "$prefix" >/dev/null; then ok "install to a prefix"; else bad "install"; fi
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
run_client() {
    if command -v valgrind >/dev/null 2>&1; then
        LD_LIBRARY_PATH="$prefix/lib" valgrind -q --error-exitcode=1 --leak-check=full "$1" > "$work/out.txt" 2>&1
    else
        LD_LIBRARY_PATH="$prefix/lib" "$1" > "$work/out.txt" 2>&1
    fi
}
if gcc -Wall -Werror -o "$work/client_pc" c-tests/consumer/client.c $(pkg-config --cflags --libs opencsd) && run_client "$work/client_pc"; then
    ok "C client built with pkg-config runs"
else
    bad "C client built with pkg-config"; cat "$work/out.txt" 2>/dev/null
fi
if g++ -Wall -Werror -x c++ -o "$work/client_cxx" c-tests/consumer/client.c -I"$prefix/include" -L"$prefix/lib" -lopencsd_c_api -lopencsd && run_client "$work/client_cxx"; then
    ok "C++ build with -lopencsd_c_api -lopencsd runs"
else
    bad "C++ build with -lopencsd_c_api -lopencsd"
fi
if gcc -static-libgcc -o "$work/client_static" c-tests/consumer/client.c -I"$prefix/include" "$prefix/lib/libopencsd_c_api.a" -lpthread -ldl -lm && "$work/client_static" >/dev/null; then
    ok "static library links and runs"
else
    bad "static library"
fi

# 2b. a program compiled against OpenCSD's own installed headers (Debian's
# libopencsd-dev, OpenCSD 1.3.3) runs unchanged on this library
if [ -f /usr/include/opencsd/c_api/opencsd_c_api.h ]; then
    if gcc -w -o "$work/perf_like_sys" c-tests/test_perf_like.c -I/usr/include -Ic-tests -L"$prefix/lib" -lopencsd_c_api -lopencsd \
        && LD_LIBRARY_PATH="$prefix/lib" "$work/perf_like_sys" > "$work/out.txt" 2>&1; then
        ok "perf-like client built with OpenCSD's installed headers runs on this library"
    else
        bad "perf-like client built with OpenCSD's installed headers"; tail -3 "$work/out.txt"
    fi
else
    echo "SKIPPED: OpenCSD's headers not installed (apt-get install libopencsd-dev)"
fi

# 3. CMake find_package
if command -v cmake >/dev/null 2>&1; then
    if cmake -S c-tests/consumer -B "$work/cm" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null && cmake --build "$work/cm" >/dev/null && run_client "$work/cm/client"; then
        ok "CMake find_package(opencsd) consumer"
    else
        bad "CMake find_package(opencsd) consumer"
    fi
    # the project's own CMakeLists: build (reusing cargo's target dir) and install
    p2="$work/prefix2"
    if cmake -S . -B "$work/top" -DOCSD_CARGO_TARGET_DIR="$root/target" -DCMAKE_INSTALL_PREFIX="$p2" >/dev/null \
        && cmake --build "$work/top" >/dev/null && cmake --install "$work/top" >/dev/null \
        && cmake -S c-tests/consumer -B "$work/cm2" -DCMAKE_PREFIX_PATH="$p2" >/dev/null && cmake --build "$work/cm2" >/dev/null \
        && LD_LIBRARY_PATH="$p2/lib" "$work/cm2/client" >/dev/null \
        && PKG_CONFIG_PATH="$p2/lib/pkgconfig" pkg-config --exists opencsd; then
        ok "cmake --install of the project, then a find_package consumer"
    else
        bad "cmake --install of the project"
    fi
else
    echo "SKIPPED: cmake not installed"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
