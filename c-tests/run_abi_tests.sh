#!/usr/bin/env bash
# ABI tests of the generated C headers against OpenCSD 1.8.0's ABI facts.
#
#   c-tests/run_abi_tests.sh                  strict: every missing item fails
#   c-tests/run_abi_tests.sh --allow-missing  missing items listed in
#                                             c-tests/abi_pending.txt are skipped
#   c-tests/run_abi_tests.sh -v               list passing items too
#
# Reads ../shared/abi (or $OCSD_SHARED/abi); without it, prints SKIPPED and
# exits 0. Builds in target/abi-test/. Needs python3, gcc and g++. Ends with
# a line `N passed, N failed, N skipped`; exits non-zero on any failure.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
shared="${OCSD_SHARED:-$(dirname "$root")/shared}"
if [ ! -d "$shared/abi" ]; then
    echo "SKIPPED: ../shared not found (looked for $shared/abi; set OCSD_SHARED to the shared/ folder)"
    exit 0
fi
for tool in python3 "${CC:-gcc}" "${CXX:-g++}"; do
    command -v "$tool" >/dev/null || { echo "run_abi_tests: $tool not found" >&2; exit 2; }
done
exec python3 "$here/gen_abi_test.py" --shared "$shared" --include "$root/include" \
    --build "$root/target/abi-test" "$@"
