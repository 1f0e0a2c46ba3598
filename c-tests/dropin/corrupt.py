#!/usr/bin/env python3
"""Write a corrupted copy of a plan's trace buffer, and a plan reading it.

    corrupt.py PLAN SEED OUT_PLAN OUT_BIN [--sync-words | --fsync-runs]

PLAN is a decode plan (`trc_pkt_lister -print_plan`). The copy of its
trace buffer gets 1 to 6 damages chosen by SEED (the same for the same
seed): a flipped bit, a few random bytes inserted, a few bytes deleted, or
a run of bytes zeroed. With --sync-words, 1 to 4 damages in the first
3000 bytes that keep the size (for TPIU captures): a byte pair made the
first half of an FSYNC (ff ff) or an HSYNC (ff 7f), a whole FSYNC written,
or a random byte. With --fsync-runs, 1 to 5 runs of FSYNC words inserted
between 16-byte frames (4, 8 or 12 words: a frame reset for a deformatter
with OCSD_DFRMTR_RESET_ON_4X_FSYNC; 1, 2, 3 or 5: an error there). OUT_PLAN
is PLAN reading OUT_BIN instead.
"""
import random
import sys


def read_plan(plan):
    """The plan's lines, the place of its one buffer line, the buffer's
    format and its bytes; None (after a message) when there is not one
    buffer line."""
    lines = open(plan).read().splitlines()
    buffers = [i for i, l in enumerate(lines) if l.startswith("buffer ")]
    if len(buffers) != 1:
        sys.stderr.write("%s: %s: expected one buffer line\n" % (sys.argv[0], plan))
        return None
    kind, path = lines[buffers[0]].split(" ", 2)[1:]
    return lines, buffers[0], kind, bytearray(open(path, "rb").read())


def write_plan(lines, at, kind, data, out_plan, out_bin):
    """Write `data` to OUT_BIN, and the plan reading it as a `kind` buffer
    to OUT_PLAN."""
    open(out_bin, "wb").write(data)
    lines[at] = "buffer %s %s" % (kind, out_bin)
    open(out_plan, "w").write("\n".join(lines) + "\n")


def damage(data, rnd):
    """1 to 6 damages: a flipped bit, bytes inserted, deleted or zeroed."""
    for _ in range(rnd.randint(1, 6)):
        if not data:
            break
        op, pos = rnd.random(), rnd.randrange(len(data))
        if op < 0.5:
            data[pos] ^= 1 << rnd.randrange(8)
        elif op < 0.7:
            data[pos:pos] = bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 8)))
        elif op < 0.9:
            del data[pos:pos + rnd.randint(1, 16)]
        else:
            n = rnd.randint(1, 32)
            data[pos:pos + n] = bytes(len(data[pos:pos + n]))
    return data


def sync_words(data, rnd):
    """1 to 4 sync words or bytes written in the first 3000 bytes."""
    for _ in range(rnd.randint(1, 4)):
        if len(data) < 4:
            break
        pos = rnd.randrange(min(len(data), 3000) - 3)
        op = rnd.randrange(4)
        if op == 0:
            data[pos:pos + 2] = b"\xff\xff"
        elif op == 1:
            data[pos:pos + 2] = b"\xff\x7f"
        elif op == 2:
            data[pos:pos + 4] = b"\xff\xff\xff\x7f"
        else:
            data[pos] = rnd.randrange(256)
    return data


def fsync_runs(data, rnd):
    """1 to 5 runs of FSYNC words inserted between 16-byte frames."""
    frames = [bytes(data[k:k + 16]) for k in range(0, len(data), 16)]
    at = sorted(rnd.randrange(len(frames)) for _ in range(rnd.randint(1, 5)))
    for k in reversed(at):
        frames.insert(k, b"\xff\xff\xff\x7f" * rnd.choice([4, 4, 8, 12, 1, 2, 3, 5]))
    return bytearray(b"".join(frames))


def rewrite_plan(args, usage, make):
    """The command `PLAN N OUT_PLAN OUT_BIN` (`args`): PLAN's buffer
    rewritten by `make(kind, data, n)`, which returns the new buffer's
    format and bytes, written as OUT_BIN with OUT_PLAN reading it. The exit
    status: 2 (after `usage`, or a message) on bad arguments or plan."""
    if len(args) != 4:
        sys.stderr.write(usage)
        return 2
    got = read_plan(args[0])
    if got is None:
        return 2
    lines, at, kind, data = got
    kind, data = make(kind, data, int(args[1]))
    write_plan(lines, at, kind, data, args[2], args[3])
    return 0


def main():
    modes = {None: damage, "--sync-words": sync_words, "--fsync-runs": fsync_runs}
    mode = sys.argv[5] if len(sys.argv) == 6 else None
    if mode not in modes:
        sys.stderr.write(__doc__)
        return 2
    return rewrite_plan(sys.argv[1:5], __doc__, lambda kind, data, seed: (kind, modes[mode](data, random.Random(seed))))


if __name__ == "__main__":
    sys.exit(main())
