"""A ZIP writer that lays files out the way torch's PyTorchFileWriter (miniz) does.

Why not zipfile: torch writes every member STORED, with its data aligned to 64 bytes by an
extra field "FB" padded with 'Z' bytes, a data descriptor after the data (flag bit 3, CRC and
sizes zero in the local header), DOS time and date 0 and a ZIP64 end record even for tiny
archives. Readers of real .pt2 files meet exactly that layout, so the samples use it too.
Writing the same members in the same order gives the same bytes (no clocks, no randomness).
"""

import struct
import zlib

ALIGNMENT = 64
FLAGS = 0x0808  # bit 3: sizes in a data descriptor; bit 11: UTF-8 names (miniz sets both)


def _local_header(name, pos):
    fixed = 30 + len(name) + 4  # local header, name, the "FB" extra field's own header
    pad = (-(pos + fixed)) % ALIGNMENT
    header = struct.pack("<IHHHHHIIIHH", 0x04034B50, 0, FLAGS, 0, 0, 0, 0, 0, 0,
                         len(name), 4 + pad)
    extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
    return header + name + extra


def _central_entry(name, crc, size, offset):
    return struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0, 0, FLAGS, 0, 0, 0, crc, size,
                       size, len(name), 0, 0, 0, 0, 0, offset) + name


def _end_records(count, cd_offset, cd_size):
    zip64_eocd_offset = cd_offset + cd_size
    zip64_eocd = struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 0x031E, 45, 0, 0, count, count,
                             cd_size, cd_offset)
    locator = struct.pack("<IIQI", 0x07064B50, 0, zip64_eocd_offset, 1)
    eocd = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, count, count, cd_size, cd_offset, 0)
    return zip64_eocd + locator + eocd


def zip_bytes(records):
    """records: list of (member name, bytes) in write order. Returns the archive bytes."""
    out = bytearray()
    central = bytearray()
    for name, data in records:
        name_b = name.encode("utf-8")
        offset = len(out)
        crc = zlib.crc32(data) & 0xFFFFFFFF
        out += _local_header(name_b, offset)
        out += data
        out += struct.pack("<IIII", 0x08074B50, crc, len(data), len(data))
        central += _central_entry(name_b, crc, len(data), offset)
    cd_offset = len(out)
    out += central
    out += _end_records(len(records), cd_offset, len(central))
    return bytes(out)
