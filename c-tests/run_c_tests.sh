#!/bin/sh
# Build the C API library and run the C / C++ client tests under valgrind.
#
#   c-tests/run_c_tests.sh            (from anywhere in the tree)
#   NO_VALGRIND=1 c-tests/run_c_tests.sh
#
# Each test is compiled with gcc (C11) or g++ against
# target/release/libopencsd_c_api.so (through a private directory holding
# its soname, libopencsd_c_api.so.1, so that a system OpenCSD is never
# picked up instead) and run under valgrind --error-exitcode=1.
#
# Headers: the tests include the generated headers under include/.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cd "$root" || exit 2

cargo build --release --lib --quiet || { echo "cargo build failed"; echo "0 passed, 1 failed"; exit 1; }

out="$root/target/c-tests"
lib="$out/lib"
mkdir -p "$lib"
ln -sf "$root/target/release/libopencsd_c_api.so" "$lib/libopencsd_c_api.so"
ln -sf "$root/target/release/libopencsd_c_api.so" "$lib/libopencsd_c_api.so.1"

CFLAGS="-std=c11 -Wall -Wextra -Werror -g"
CXXFLAGS="-std=c++11 -Wall -Wextra -Werror -g"
INC="-I$here -I$root/include"
LINK="-L$lib -lopencsd_c_api -Wl,-rpath,$lib"

vg=""
if [ -z "${NO_VALGRIND:-}" ]; then
    if command -v valgrind >/dev/null 2>&1; then
        vg="valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,possible"
    else
        echo "warning: valgrind not found, running without it"
    fi
fi

passed=0
failed=0
for src in "$here"/test_*.c "$here"/test_*.cpp; do
    [ -e "$src" ] || continue
    name=$(basename "$src")
    name=${name%.*}
    exe="$out/$name"
    case "$src" in
        *.cpp) cc="g++ $CXXFLAGS" ;;
        *) cc="gcc $CFLAGS" ;;
    esac
    if ! $cc $INC -o "$exe" "$src" $LINK; then
        echo "FAIL: $name (compile)"
        failed=$((failed + 1))
        continue
    fi
    if (cd "$out" && $vg "$exe" > "$out/$name.log" 2>&1); then
        echo "PASS: $name ($(tail -n 1 "$out/$name.log"))"
        passed=$((passed + 1))
    else
        echo "FAIL: $name"
        sed 's/^/    /' "$out/$name.log" | tail -n 40
        failed=$((failed + 1))
    fi
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
