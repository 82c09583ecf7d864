#!/usr/bin/env python3
"""Writes a file-mode perf.data of at least TARGET_BYTES: the data section of
SEED repeated (each copy ends on a record boundary, so the result is a valid
perf.data whose records repeat), the header and feature sections kept, their
offsets moved. With --pipe, a pipe-mode stream instead: the header, one
HEADER_ATTR per attr (attr and ids), then the repeated data (no features).
For bench/overhead.sh's reader memory check.

  grow_perf_data.py [--pipe] SEED OUT TARGET_BYTES
"""
import struct
import sys

MAGIC = b"PERFILE2"
HEADER = struct.Struct("<8sQQQQQQQQ")  # magic, size, attr_size, attrs, data, event_types


def main():
    args = sys.argv[1:]
    pipe = args[0] == "--pipe"
    if pipe:
        args = args[1:]
    seed, out, target = args[0], args[1], int(args[2])
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
    if pipe:
        header = bytearray(struct.pack("<8sQ", MAGIC, 16))
        for at in range(attrs_off, attrs_off + attrs_size, attr_size):
            attr = image[at:at + attr_size - 16]
            ids_off, ids_size = struct.unpack_from("<QQ", image, at + attr_size - 16)
            body = attr + image[ids_off:ids_off + ids_size]
            header += struct.pack("<IHH", 64, 0, 8 + len(body)) + body  # PERF_RECORD_HEADER_ATTR
        data = image[data_off:table_off]
        with open(out, "wb") as f:
            f.write(header)
            for _ in range(copies):
                f.write(data)
        return
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
