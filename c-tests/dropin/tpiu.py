#!/usr/bin/env python3
"""Write a TPIU capture (FSYNCs between frames) of a plan's frame-aligned
trace buffer, and a plan reading it as such.

    tpiu.py PLAN PREFIX OUT_PLAN OUT_BIN

PLAN is a decode plan (`trc_pkt_lister -print_plan`) whose buffer holds
memory-aligned 16-byte frames. OUT_BIN is PREFIX bytes that are not an
FSYNC, then the first 32 KiB of frames with an FSYNC before every 16th,
padded to whole words; OUT_PLAN is PLAN reading OUT_BIN as a
dstream_coresight buffer (a deformatter configured for FSYNCs). With a
PREFIX that is not a multiple of 4, the frames start part-way through a
word: what a WAIT leaves of an input block is then not a whole number of
words, which OpenCSD refuses.
"""
import sys


def main():
    if len(sys.argv) != 5:
        sys.stderr.write(__doc__)
        return 2
    plan, prefix, out_plan, out_bin = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    lines = open(plan).read().splitlines()
    buffers = [i for i, l in enumerate(lines) if l.startswith("buffer ")]
    if len(buffers) != 1:
        sys.stderr.write("tpiu.py: %s: expected one buffer line\n" % plan)
        return 2
    path = lines[buffers[0]].split(" ", 2)[2]
    frames = open(path, "rb").read()[:32768]
    out = bytearray((0x10 * (i + 1)) & 0xFE for i in range(prefix))
    for k in range(0, len(frames) - 15, 16):
        if k % 256 == 0:
            out += b"\xff\xff\xff\x7f"
        out += frames[k:k + 16]
    out += bytes(-len(out) % 4)
    open(out_bin, "wb").write(out)
    lines[buffers[0]] = "buffer dstream_coresight %s" % out_bin
    open(out_plan, "w").write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
