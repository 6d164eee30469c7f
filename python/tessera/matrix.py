"""Matrices as tessera sees them (tess_matrix_desc plus a pointer), made from
PyTorch tensors, objects with __dlpack__, or DLPack capsules, as views: no
copy, and the source is kept alive by the view."""
import ctypes
import dataclasses
import enum

from ._lib import TesseraDesc
from .dtypes import DType, as_dtype, from_dlpack
from .errors import InvalidValueError


class Order(enum.IntEnum):
    """tess_order (cublasLtOrder_t values)."""
    COL = 0
    ROW = 1


@dataclasses.dataclass
class Matrix:
    """A rows x cols matrix (or a batch of them) in device or host memory."""
    ptr: int
    dtype: DType
    rows: int
    cols: int
    ld: int
    order: Order
    batch: int = 1
    batch_stride: int = 0
    device: tuple = ("cuda", 0)  # ("cuda", id) or ("cpu", 0)
    owner: object = dataclasses.field(default=None, repr=False, compare=False)

    def desc(self):
        """The tess_matrix_desc of this matrix."""
        return TesseraDesc(int(self.dtype), int(self.order), self.rows, self.cols, self.ld, self.batch_stride)


def _layout(rows, cols, s_row, s_col, what):
    """(order, ld) for a rows x cols matrix with element strides (s_row, s_col).
    A contiguous vector is read along its length (a column as column-major),
    so that its leading dimension is its length, not 1."""
    if cols == 1 and s_row == 1:
        return Order.COL, rows
    if rows == 1 and s_col == 1:
        return Order.ROW, cols
    if (s_col == 1 or cols == 1) and (rows == 1 or s_row >= cols):
        return Order.ROW, (s_row if rows > 1 else cols)
    if (s_row == 1 or rows == 1) and (cols == 1 or s_col >= rows):
        return Order.COL, s_col
    raise InvalidValueError(f"{what}: strides ({s_row}, {s_col}) for shape ({rows}, {cols}) are neither row- nor "
                            "column-major with unit stride; make it contiguous (e.g. .contiguous()) first")


def from_parts(ptr, dtype, shape, strides, device, owner=None, what="matrix"):
    """A Matrix from a pointer, a dtype, a 2-D or 3-D (batch first) shape and element strides."""
    dtype = as_dtype(dtype)
    if len(shape) not in (2, 3) or len(strides) != len(shape):
        raise InvalidValueError(f"{what}: expected a 2-D matrix or a 3-D batch of matrices, got shape {tuple(shape)}")
    batch, batch_stride = (shape[0], strides[0]) if len(shape) == 3 else (1, 0)
    rows, cols = shape[-2], shape[-1]
    if min(shape) < 1:
        raise InvalidValueError(f"{what}: shape {tuple(shape)} has an empty dimension")
    if batch_stride < 0 or min(strides) < 0:
        raise InvalidValueError(f"{what}: negative strides {tuple(strides)} are not supported")
    order, ld = _layout(rows, cols, strides[-2], strides[-1], what)
    return Matrix(int(ptr), dtype, int(rows), int(cols), int(ld), order, int(batch),
                  int(batch_stride) if batch > 1 else 0, device, owner)


# ---- DLPack (dlpack.h, v0.8 and v1.x) -------------------------------------

class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class _DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64), ("dl_tensor", _DLTensor)]


# DLDeviceType: kDLCPU=1, kDLCUDA=2, kDLCUDAHost=3, kDLCUDAManaged=13.
_DEVICES = {1: "cpu", 2: "cuda", 3: "cpu", 13: "cuda"}

_capsule_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_get_pointer.restype = ctypes.c_void_p
_capsule_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_get_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_get_name.restype = ctypes.c_char_p
_capsule_get_name.argtypes = [ctypes.py_object]


def from_dlpack_capsule(capsule, what="matrix"):
    """A Matrix viewing an unconsumed DLPack capsule. The capsule is borrowed,
    not consumed: it stays alive with the view and frees the tensor when both go."""
    name = _capsule_get_name(capsule)
    if name == b"dltensor_versioned":
        managed = _DLManagedTensorVersioned.from_address(_capsule_get_pointer(capsule, name))
        if managed.major > 1:
            raise InvalidValueError(f"{what}: DLPack {managed.major}.{managed.minor} is newer than tessera reads (1.x)")
    elif name == b"dltensor":
        managed = _DLManagedTensor.from_address(_capsule_get_pointer(capsule, name))
    else:
        raise InvalidValueError(f"{what}: not an unused DLPack capsule (name {name!r})")
    t = managed.dl_tensor
    shape = [t.shape[i] for i in range(t.ndim)]
    if t.strides:
        strides = [t.strides[i] for i in range(t.ndim)]
    else:  # NULL strides: compact row-major
        strides, step = [], 1
        for extent in reversed(shape):
            strides.insert(0, step)
            step *= extent
    kind = _DEVICES.get(t.device.device_type)
    if kind is None:
        raise InvalidValueError(f"{what}: DLPack device type {t.device.device_type} is neither CPU nor CUDA")
    dtype = from_dlpack(t.dtype.code, t.dtype.bits, t.dtype.lanes)
    return from_parts((t.data or 0) + t.byte_offset, dtype, shape, strides, (kind, t.device.device_id), capsule, what)


def _is_torch_tensor(x):
    return type(x).__module__.startswith("torch") and hasattr(x, "data_ptr") and hasattr(x, "stride")


def as_matrix(x, what="matrix"):
    """A Matrix view of `x`: a Matrix, a torch.Tensor, an object with __dlpack__
    (NumPy, CuPy, JAX ...), or a DLPack capsule. 2-D, or 3-D with the batch first."""
    if isinstance(x, Matrix):
        return x
    if _is_torch_tensor(x):
        device = ("cuda", x.device.index or 0) if x.device.type == "cuda" else (x.device.type, 0)
        return from_parts(x.data_ptr(), x.dtype, tuple(x.shape), x.stride(), device, x, what)
    if hasattr(x, "__dlpack__"):
        try:
            capsule = x.__dlpack__(max_version=(1, 0))
        except TypeError:  # producers older than DLPack 1.0 take no max_version
            capsule = x.__dlpack__()
        m = from_dlpack_capsule(capsule, what)
        m.owner = (capsule, x)
        return m
    if type(x).__name__ == "PyCapsule":
        return from_dlpack_capsule(x, what)
    raise InvalidValueError(f"{what}: expected a torch.Tensor, an object with __dlpack__, a DLPack capsule or a "
                            f"tessera.Matrix, got {type(x).__name__}")
