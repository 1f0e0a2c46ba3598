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

from corrupt import rewrite_plan


def capture(frames, prefix):
    """PREFIX bytes that are not an FSYNC, then the first 32 KiB of
    `frames` with an FSYNC before every 16th, padded to whole words."""
    frames = frames[:32768]
    out = bytearray((0x10 * (i + 1)) & 0xFE for i in range(prefix))
    for k in range(0, len(frames) - 15, 16):
        if k % 256 == 0:
            out += b"\xff\xff\xff\x7f"
        out += frames[k:k + 16]
    out += bytes(-len(out) % 4)
    return out


def main():
    return rewrite_plan(sys.argv[1:], __doc__, lambda _, frames, prefix: ("dstream_coresight", capture(frames, prefix)))


if __name__ == "__main__":
    sys.exit(main())
