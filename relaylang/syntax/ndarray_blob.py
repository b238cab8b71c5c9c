"""Tensor blobs of the `#[metadata]` section (LANGUAGE.md §10.3) <-> numpy arrays.

A constant's data is stored base64-encoded in `b64ndarrays` as the binary
layout of apache/tvm src/runtime/ndarray.cc (`SaveDLTensor` / `NDArray::Load`):
magic, reserved word, device, rank, DLDataType, shape, byte count, then the
little-endian elements. metadata.py does the base64 and the node graph.
"""
from __future__ import annotations

import base64
import math
import struct
from typing import TYPE_CHECKING, Any

from .metadata_json import MetadataError

if TYPE_CHECKING:
    import numpy as np

_MAGIC = 0xDD5E40F096B4A13F
_HEADER = struct.Struct("<QQiiiBBH")   # magic, reserved, device type, id, ndim, code, bits, lanes
_DTYPES = {(0, 8): "int8", (0, 16): "int16", (0, 32): "int32", (0, 64): "int64",
           (1, 8): "uint8", (1, 16): "uint16", (1, 32): "uint32", (1, 64): "uint64",
           (2, 16): "float16", (2, 32): "float32", (2, 64): "float64", (1, 1): "bool"}
_CODES = {name: key for key, name in _DTYPES.items()}
# ir/lowp.py's dtypes: DLPack 1.1's float8/float4 type codes, TVM's int/uint codes; one
# byte an element (as bool's one bit takes a byte), holding the bit pattern (floats) or
# the value (integers)
_LOWP = {(10, 8): "float8_e4m3fn", (11, 8): "float8_e4m3fnuz", (12, 8): "float8_e5m2",
         (13, 8): "float8_e5m2fnuz", (14, 8): "float8_e8m0fnu", (17, 4): "float4_e2m1fn",
         (0, 4): "int4", (1, 4): "uint4", (0, 2): "int2", (1, 2): "uint2"}
_LOWP_CODES = {name: key for key, name in _LOWP.items()}


def decode_blob(raw: bytes) -> np.ndarray:
    """One `SaveDLTensor` blob -> a read-only numpy array; ValueError says what is wrong."""
    import numpy as np
    if len(raw) < _HEADER.size:
        raise ValueError(f"tensor blob is truncated ({len(raw)} bytes)")
    magic, _, _, _, ndim, code, bits, lanes = _HEADER.unpack_from(raw)
    if magic != _MAGIC:
        raise ValueError(f"bad tensor magic 0x{magic:016X} (expected 0x{_MAGIC:016X})")
    if code == 4 and bits != 16:
        raise ValueError(f"bfloat{bits} tensors are not supported")
    name = "bfloat16" if code == 4 else _DTYPES.get((code, bits)) or _LOWP.get((code, bits))
    if name is None:
        raise ValueError(f"unsupported tensor dtype (type code {code}, {bits} bits)")
    if lanes != 1:
        raise ValueError(f"vector tensor dtypes are not supported ({name}x{lanes})")
    start = _HEADER.size + 8 * ndim + 8
    if not 0 <= ndim <= 64 or len(raw) < start:
        raise ValueError(f"tensor blob is truncated or has a bad rank ({ndim})")
    shape = struct.unpack_from(f"<{ndim}q", raw, _HEADER.size)
    (nbytes,) = struct.unpack_from("<q", raw, start - 8)
    if any(d < 0 for d in shape):
        raise ValueError(f"tensor shape {list(shape)} has a negative dimension")
    count = math.prod(shape)
    if nbytes != count * max(1, bits // 8):
        raise ValueError(f"tensor byte count {nbytes} does not match {name}{list(shape)}")
    if len(raw) - start != nbytes:
        raise ValueError(f"tensor data has {len(raw) - start} bytes, the header says {nbytes}")
    if name == "bfloat16":       # bit patterns in numpy_support's carrier
        from ..ir.bfloat16 import BFLOAT16
        array = np.frombuffer(raw, BFLOAT16, count, start).copy()
        array.flags.writeable = False
        return array.reshape(shape)
    if name in _LOWP_CODES:      # ir/lowp.py's carriers, one byte an element
        from ..ir.lowp import CARRIERS, INT_FORMATS, from_lowp_bits
        data = np.frombuffer(raw, np.uint8, count, start)
        if name in INT_FORMATS:  # values: their low bits are the pattern
            array = from_lowp_bits(data, name)
        else:
            array = data.copy().view(CARRIERS[name])
        array.flags.writeable = False
        return array.reshape(shape)
    dtype = np.dtype(np.uint8 if name == "bool" else name).newbyteorder("<")
    array = np.frombuffer(raw, dtype, count, start)   # a view: no per-element Python work
    if name == "bool":   # one byte per element; any nonzero byte is true
        array = array != 0
    elif not dtype.isnative:
        array = array.astype(dtype.newbyteorder("="))
    array.flags.writeable = False   # constants are shared by the IR: keep them immutable
    return array.reshape(shape)


def encode_blob(value: Any) -> str:
    """A numpy array or scalar -> its `SaveDLTensor` blob, base64-encoded."""
    import numpy as np
    array = np.asarray(value)
    if array.dtype.kind == "V":           # bfloat16 (numpy_support.BFLOAT16): its bits
        from ..ir.bfloat16 import BFLOAT16, bfloat16_bits
        if array.dtype == BFLOAT16:
            data = bfloat16_bits(array).astype("<u2").tobytes()
            head = _HEADER.pack(_MAGIC, 0, 1, 0, array.ndim, 4, 16, 1)
            dims = struct.pack(f"<{array.ndim}q", *array.shape) + struct.pack("<q", len(data))
            return base64.b64encode(head + dims + data).decode("ascii")
        from ..ir.lowp import lowp_name
        name = lowp_name(array.dtype)
        if name is not None:
            code, bits = _LOWP_CODES[name]
            data = np.ascontiguousarray(array).view(np.uint8).tobytes()
            head = _HEADER.pack(_MAGIC, 0, 1, 0, array.ndim, code, bits, 1)
            dims = struct.pack(f"<{array.ndim}q", *array.shape) + struct.pack("<q", len(data))
            return base64.b64encode(head + dims + data).decode("ascii")
    key = _CODES.get(array.dtype.name) if array.dtype.kind in "biuf" else None
    if key is None:
        raise MetadataError(f"a {array.dtype} tensor cannot be stored as metadata")
    code, bits = key
    if bits == 1:
        data = array.astype(np.uint8).tobytes()
    else:
        data = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
    head = _HEADER.pack(_MAGIC, 0, 1, 0, array.ndim, code, bits, 1)
    dims = struct.pack(f"<{array.ndim}q", *array.shape) + struct.pack("<q", len(data))
    return base64.b64encode(head + dims + data).decode("ascii")
