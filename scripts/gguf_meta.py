"""Reads GGUF metadata (no tensors) with the standard library only."""
import struct

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}


def _read(f, fmt):
    size = struct.calcsize(fmt)
    return struct.unpack(fmt, f.read(size))[0]


def _value(f, vtype):
    if vtype in _SCALARS:
        return _read(f, _SCALARS[vtype])
    if vtype == 8:
        return f.read(_read(f, "<Q")).decode("utf-8")
    if vtype == 9:
        item_type = _read(f, "<I")
        return [_value(f, item_type) for _ in range(_read(f, "<Q"))]
    raise ValueError(f"unknown GGUF value type {vtype}")


def read_metadata(path):
    """Returns the metadata key/value pairs of the GGUF file at `path`."""
    with open(path, "rb") as f:
        if f.read(4) != b"GGUF":
            raise ValueError(f"{path} is not a GGUF file")
        version = _read(f, "<I")
        if version < 2:
            raise ValueError(f"GGUF version {version} is not supported")
        _read(f, "<Q")  # tensor count
        count = _read(f, "<Q")
        meta = {}
        for _ in range(count):
            key = f.read(_read(f, "<Q")).decode("utf-8")
            meta[key] = _value(f, _read(f, "<I"))
        return meta
