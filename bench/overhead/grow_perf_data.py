#!/usr/bin/env python3
"""Writes a file-mode perf.data of at least TARGET_BYTES: the data section of
SEED repeated (each copy ends on a record boundary, so the result is a valid
perf.data whose records repeat), the header and feature sections kept, their
offsets moved. For bench/overhead.sh's reader memory check.

  grow_perf_data.py SEED OUT TARGET_BYTES
"""
import struct
import sys

MAGIC = b"PERFILE2"
HEADER = struct.Struct("<8sQQQQQQQQ")  # magic, size, attr_size, attrs, data, event_types


def main():
    seed, out, target = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(seed, "rb") as f:
        image = f.read()
    (magic, hsize, attr_size, attrs_off, attrs_size, data_off, data_size,
     types_off, types_size) = HEADER.unpack_from(image, 0)
    if magic != MAGIC or hsize != 104 or data_size == 0:
        sys.exit(f"grow_perf_data.py: {seed} is not a finished file-mode perf.data")
    if attrs_off + attrs_size > data_off or types_off + types_size > data_off:
        sys.exit("grow_perf_data.py: attrs after the data are not handled")
    copies = max(1, -(-target // data_size))
    delta = (copies - 1) * data_size
    table_off = data_off + data_size
    bits = int.from_bytes(image[72:104], "little")
    nfeat = bin(bits).count("1")
    table = bytearray(image[table_off:table_off + 16 * nfeat])
    for k in range(nfeat):
        off, size = struct.unpack_from("<QQ", table, 16 * k)
        struct.pack_into("<QQ", table, 16 * k, off + delta, size)
    header = bytearray(image[:data_off])
    struct.pack_into("<QQ", header, 40, data_off, data_size * copies)
    data = image[data_off:table_off]
    with open(out, "wb") as f:
        f.write(header)
        for _ in range(copies):
            f.write(data)
        f.write(table)
        f.write(image[table_off + 16 * nfeat:])


if __name__ == "__main__":
    main()
