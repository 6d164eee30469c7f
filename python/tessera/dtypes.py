"""Element types: tess_dtype, and the mapping from PyTorch, NumPy and DLPack types."""
import ctypes
import enum

from . import _lib
from .errors import InvalidValueError, check


class DType(enum.IntEnum):
    """tess_dtype (values are cudaDataType_t's)."""
    F32 = 0
    F16 = 2
    BF16 = 14
    E4M3 = 28
    E5M2 = 29
    S8 = 3

    @property
    def size(self):
        """Bytes per element."""
        return int(_lib.lib().tess_dtype_size(int(self)))

    @property
    def short_name(self):
        """'bf16', as tessera prints it."""
        return _lib.lib().tess_dtype_name(int(self)).decode()

    @classmethod
    def from_name(cls, name):
        """Parses 'bf16', 'bfloat16', 'float8_e4m3fn', ... (InvalidValueError otherwise)."""
        out = ctypes.c_int()
        check(_lib.lib().tess_dtype_from_name(str(name).encode(), ctypes.byref(out)))
        return cls(out.value)


# DLPack type codes (dlpack.h): kDLInt=0, kDLFloat=2, kDLBfloat=4, kDLFloat8_e4m3fn=10, kDLFloat8_e5m2=12.
_DLPACK = {(2, 32): DType.F32, (2, 16): DType.F16, (4, 16): DType.BF16, (10, 8): DType.E4M3, (12, 8): DType.E5M2,
           (0, 8): DType.S8}


def from_dlpack(code, bits, lanes=1):
    """The DType of a DLPack (code, bits, lanes) triple."""
    dt = _DLPACK.get((code, bits))
    if dt is None or lanes != 1:
        raise InvalidValueError(f"DLPack type (code={code}, bits={bits}, lanes={lanes}) is not one of tessera's "
                                "element types (f32, f16, bf16, float8_e4m3fn, float8_e5m2, int8)")
    return dt


# as_dtype's answers for names and torch/numpy dtypes (hashable, few): parsing
# through the library takes a ctypes call, three times in every gemm call.
_AS_DTYPE = {}


def as_dtype(x):
    """A DType from a DType, a tess_dtype int, a name, or a torch/numpy dtype."""
    if isinstance(x, DType):
        return x
    if isinstance(x, int):
        return DType(x)
    try:
        return _AS_DTYPE[x]
    except (KeyError, TypeError):
        pass
    if isinstance(x, str):
        dt = DType.from_name(x)
    else:
        name = str(x)
        for prefix in ("torch.", "dtype('", "<class 'numpy."):
            if name.startswith(prefix):
                name = name[len(prefix):]
        dt = DType.from_name(name.rstrip("')>"))
    try:
        _AS_DTYPE[x] = dt
    except TypeError:  # unhashable: not kept
        pass
    return dt
