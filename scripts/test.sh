#!/usr/bin/env bash
# Run every test suite: Rust unit and integration tests (incl. the claimed
# OpenCSD conformance cases), the API documentation build, clippy, the
# generated-header check, the C/C++ ABI and
# C API client tests, the CMake / pkg-config consumer tests, the drop-in
# tests, and the profile-guided build.
# Prints one line per suite and a closing "N passed, N failed" line.
set -uo pipefail
cd "$(dirname "$0")/.."
passed=0; failed=0; failures=()
suite() {
    local name=$1; shift
    echo "=== $name"
    if "$@"; then passed=$((passed+1)); echo "=== $name: PASS"
    else failed=$((failed+1)); failures+=("$name"); echo "=== $name: FAIL"; fi
}
suite "cargo build" cargo build --release --workspace
suite "cargo test" cargo test --release --workspace
# the API documentation (public and private items) builds without a warning
suite "cargo doc" env RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --document-private-items --quiet
# clippy finds nothing (the lints the code base does not follow are listed,
# with why, under [lints.clippy] in Cargo.toml)
suite "cargo clippy" cargo clippy --release --workspace --all-targets --quiet -- -D warnings
if [ -f tools/gen-headers/Cargo.toml ]; then
    suite "headers up to date" cargo run --release --quiet --manifest-path tools/gen-headers/Cargo.toml -- --check
fi
[ -f c-tests/run_abi_tests.sh ] && suite "C ABI layout and constants" bash c-tests/run_abi_tests.sh
for t in c-tests/run_c_tests.sh c-tests/run_consumer_tests.sh c-tests/run_dropin_tests.sh; do
    [ -f "$t" ] && suite "$t" bash "$t"
done
# the profile-guided release build (scripts/build-pgo.sh) builds and
# decodes as the plain one does
suite "PGO build" bash scripts/check-pgo.sh
if [ ${#failures[@]} -gt 0 ]; then echo "failed suites: ${failures[*]}"; fi
echo "suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
