#!/usr/bin/env python3
"""Writes a file-mode perf.data of at least TARGET_BYTES: the data section of
SEED repeated (each copy ends on a record boundary, so the result is a valid
perf.data whose records repeat), the header and feature sections kept, their
offsets moved. With --pipe, a pipe-mode stream instead: the header, one
HEADER_ATTR per attr (attr and ids), then the repeated data (no features).
With --shift-times, each copy's timestamps (samples' TIME, the sample_id
trailers' TIME; 0 stays 0) are moved past the copy before it, so that the
result reads as one long capture in time order, as a recorder writes it,
rather than the same seconds over and over. For bench/overhead.sh's reader
memory check.

  grow_perf_data.py [--pipe] [--shift-times] SEED OUT TARGET_BYTES
"""
import array
import struct
import sys

MAGIC = b"PERFILE2"
HEADER = struct.Struct("<8sQQQQQQQQ")  # magic, size, attr_size, attrs, data, event_types


SAMPLE_IP, SAMPLE_TID, SAMPLE_TIME, SAMPLE_ID, SAMPLE_CPU = 1 << 0, 1 << 1, 1 << 2, 1 << 6, 1 << 7
SAMPLE_STREAM_ID, SAMPLE_IDENTIFIER = 1 << 9, 1 << 16
SAMPLE_ID_ALL = 1 << 18  # in the attr's flags word


def time_slots(image, attrs_off, attrs_size, attr_size, data):
    """The u64 indices (into data as an array of u64) of every non-zero
    timestamp, and those timestamps. All attrs must share one sample_type."""
    kinds = {struct.unpack_from("<QQ", image, at + 24)[0] | (struct.unpack_from("<Q", image, at + 40)[0] &
             SAMPLE_ID_ALL) << 40 for at in range(attrs_off, attrs_off + attrs_size, attr_size)}
    if len(kinds) != 1:
        sys.exit("grow_perf_data.py: --shift-times needs one sample_type for all attrs")
    kind = kinds.pop()
    st, id_all = kind & ((1 << 40) - 1), bool(kind >> 40)
    if not st & SAMPLE_TIME:
        return [], []
    sample_at = 8 + 8 * sum(bool(st & b) for b in (SAMPLE_IDENTIFIER, SAMPLE_IP, SAMPLE_TID))
    trailer_from_end = 8 * sum(bool(st & b) for b in (SAMPLE_TIME, SAMPLE_ID, SAMPLE_STREAM_ID, SAMPLE_CPU,
                                                          SAMPLE_IDENTIFIER))
    slots, times = [], []
    at = 0
    while at + 8 <= len(data):
        rtype, _, size = struct.unpack_from("<IHH", data, at)
        if size < 8:
            sys.exit(f"grow_perf_data.py: record of size {size} at data offset {at}")
        pos = None
        if rtype == 9:
            pos = at + sample_at
        elif rtype < 64 and id_all:
            pos = at + size - trailer_from_end
        if pos is not None and pos % 8 == 0 and pos + 8 <= at + size:
            t = struct.unpack_from("<Q", data, pos)[0]
            if t != 0:
                slots.append(pos // 8)
                times.append(t)
        at += size
    return slots, times


def copies_of(data, copies, slots, times):
    """The data, `copies` times; with slots, each copy's times moved past the last."""
    if not slots:
        for _ in range(copies):
            yield data
        return
    span = max(times) - min(times) + 1
    words = array.array("Q")
    words.frombytes(data)
    for k in range(copies):
        delta = k * span
        for i, t in zip(slots, times):
            words[i] = t + delta
        yield words.tobytes()


def main():
    args = sys.argv[1:]
    pipe = shift = False
    while args and args[0].startswith("--"):
        pipe |= args[0] == "--pipe"
        shift |= args[0] == "--shift-times"
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
        slots, times = time_slots(image, attrs_off, attrs_size, attr_size, data) if shift else ([], [])
        with open(out, "wb") as f:
            f.write(header)
            for copy in copies_of(data, copies, slots, times):
                f.write(copy)
        return
    struct.pack_into("<QQ", header, 40, data_off, data_size * copies)
    data = image[data_off:table_off]
    slots, times = time_slots(image, attrs_off, attrs_size, attr_size, data) if shift else ([], [])
    with open(out, "wb") as f:
        f.write(header)
        for copy in copies_of(data, copies, slots, times):
            f.write(copy)
        f.write(table)
        f.write(image[table_off + 16 * nfeat:])


if __name__ == "__main__":
    main()
