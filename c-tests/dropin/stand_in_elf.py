#!/usr/bin/env python3
"""Write a stand-in for a traced program that is not available, so that
`perf script` can follow the trace of a shared recording through code.

    stand_in_elf.py OUT_FILE BUILD_ID_HEX WORD[,WORD...]

A minimal AArch64 ELF (ET_DYN): one R+X PT_LOAD over the whole 0x3000-byte
file, a GNU build-ID note (so perf accepts it for the recorded DSO through
--symfs), and .text at 0x1000..0x2000 filled with the given instruction
words (hex) repeated. The same layout as tests/perf_branches.rs builds.
"""
import struct
import sys


def stand_in_elf(build_id, words):
    size = 0x3000
    b = bytearray(size)

    def put(at, data):
        b[at:at + len(data)] = data

    note = struct.pack("<III", 4, len(build_id), 3) + b"GNU\0" + build_id
    put(0x200, note)
    for i, o in enumerate(range(0x1000, 0x2000, 4)):
        put(o, struct.pack("<I", words[i % len(words)]))
    shstr = b"\0.note.gnu.build-id\0.text\0.shstrtab\0"
    put(0x2000, shstr)
    phoff, shoff = 64, 0x2100
    eh = b"\x7fELF\x02\x01\x01\0" + bytes(8)
    eh += struct.pack("<HHIQQQI", 3, 183, 1, 0, phoff, shoff, 0)
    eh += struct.pack("<6H", 64, 56, 2, 64, 4, 3)
    put(0, eh)

    def ph(t, f, off, sz, al):
        return struct.pack("<II6Q", t, f, off, off, off, sz, sz, al)

    put(phoff, ph(1, 5, 0, size, 0x1000) + ph(4, 4, 0x200, len(note), 4))

    def sh(name, t, flags, addr, off, sz, al):
        return struct.pack("<II4QIIQQ", name, t, flags, addr, off, sz, 0, 0, al, 0)

    shs = sh(0, 0, 0, 0, 0, 0, 0)
    shs += sh(1, 7, 2, 0x200, 0x200, len(note), 4)
    shs += sh(20, 1, 6, 0x1000, 0x1000, 0x1000, 4)
    shs += sh(26, 3, 0, 0, 0x2000, len(shstr), 1)
    put(shoff, shs)
    return bytes(b)


def main():
    out, bid, words = sys.argv[1], bytes.fromhex(sys.argv[2]), [int(w, 16) for w in sys.argv[3].split(",")]
    with open(out, "wb") as f:
        f.write(stand_in_elf(bid, words))


if __name__ == "__main__":
    main()
