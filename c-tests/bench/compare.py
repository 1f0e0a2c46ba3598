#!/usr/bin/env python3
"""Paired whole-process timings: run each command of a set in turn, N
rounds, and print min / median / max wall times and, per round, the ratio
of each command's time to the first one's (min / median / max over the
rounds).

    compare.py [-n N] [--before NAME=COMMAND ...] NAME=COMMAND NAME=COMMAND ...

COMMAND is run directly (leading NAME=VALUE words set its environment),
or through the shell when it has shell syntax; output discarded except for lines
starting with "memory callbacks:" or "elements:" (printed once per
command, from its last round). The first command is the reference of the
ratios: put the slower one (e.g. OpenCSD) first to read speed-ups.
--before NAME=COMMAND runs COMMAND, untimed, before each timed run of the
command NAME (e.g. removing the log file it appends to).
"""
import argparse
import os
import statistics
import subprocess
import sys
import time


SHELL_CHARS = set("|&;<>()$`\\\"'*?[]{}~")


def direct(cmd):
    """(argv, env) to run COMMAND without a shell: leading NAME=VALUE words
    become environment variables. None when it needs a shell. (A shell
    takes about a millisecond to start: on commands of a few milliseconds
    it would be a good part of what is timed.)"""
    if any(c in SHELL_CHARS for c in cmd):
        return None
    words = cmd.split()
    env = dict(os.environ)
    while words and "=" in words[0] and words[0].split("=", 1)[0].isidentifier():
        k, v = words.pop(0).split("=", 1)
        env[k] = v
    return (words, env) if words else None


def run(cmd):
    d = direct(cmd)
    t0 = time.perf_counter()
    if d:
        p = subprocess.run(d[0], env=d[1], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    else:
        p = subprocess.run(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {cmd}")
    counts = [l for l in p.stdout.splitlines() if l.startswith(("memory callbacks:", "elements:"))]
    return dt, counts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=5, help="rounds (default 5)")
    ap.add_argument("--before", metavar="NAME=COMMAND", action="append", default=[],
                    help="run COMMAND (untimed) before each timed run of NAME")
    ap.add_argument("--ms", action="store_true",
                    help="print times in milliseconds (commands of a few milliseconds)")
    ap.add_argument("cmds", nargs="+", metavar="NAME=COMMAND")
    a = ap.parse_args()
    cmds = [c.split("=", 1) for c in a.cmds]
    before = dict(b.split("=", 1) for b in a.before)
    times = {n: [] for n, _ in cmds}
    counts = {}
    for _ in range(a.n):
        for n, c in cmds:
            if n in before:
                subprocess.run(before[n], shell=True, check=True)
            dt, cnt = run(c)
            times[n].append(dt)
            counts[n] = cnt
    ref = cmds[0][0]
    fmt = lambda xs: f"{min(xs):7.3f} {statistics.median(xs):7.3f} {max(xs):7.3f}"
    unit, label = (1000.0, "ms") if a.ms else (1.0, "seconds")
    print(f"{'':24} {label + ': min  median     max':>30}   {ref + ' / this: min median max':>34}   counts")
    for n, _ in cmds:
        ratios = [r / t for r, t in zip(times[ref], times[n])]
        print(f"{n:24} {fmt([t * unit for t in times[n]]):>30}   {fmt(ratios):>34}   {'; '.join(counts[n])}")
    # the ratios above are of paired rounds; also the ratio of the medians
    # (each command's median over its own runs)
    for n, _ in cmds[1:]:
        print(f"{n:24} median {ref} / median {n}: {statistics.median(times[ref]) / statistics.median(times[n]):.3f}")


if __name__ == "__main__":
    main()
