# Shared by the benchmark and the profile-guided build scripts (POSIX sh;
# source it): the benchmark C client and plans over a repeated trace.

# build_client CC ROOT OUT LIBDIR: compile c-tests/bench/decode_snapshot.c
# with CC against ROOT's headers into OUT, linked with the
# libopencsd_c_api.so.1 in LIBDIR (run it with LD_LIBRARY_PATH=LIBDIR).
build_client() {
    "$1" -std=c11 -O2 -Wall -Wextra -Werror -I"$2/include" -o "$3" "$2/c-tests/bench/decode_snapshot.c" \
        -L"$4" -l:libopencsd_c_api.so.1 -ldl
}

# repeat_plan PLAN K OUT: the plan PLAN (from trc_pkt_lister -print_plan)
# with its trace buffer repeated K times, as OUT.plan over OUT.bin.
repeat_plan() {
    buf=$(sed -n 's/^buffer [^ ]* //p' "$1")
    [ -f "$buf" ] || return 1
    : >"$3.bin"
    i=0
    while [ "$i" -lt "$2" ]; do cat "$buf" >>"$3.bin"; i=$((i + 1)); done
    sed "s|^buffer \([^ ]*\) .*|buffer \1 $3.bin|" "$1" >"$3.plan"
}
