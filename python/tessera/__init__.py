"""tessera: GEMM kernels for NVIDIA Hopper GPUs, from Python.

A pure-Python package over the C library (ctypes). Errors raise
tessera.TesseraError subclasses (all ValueErrors) whose text is the library's
sentence naming what was wrong. Matrices may be torch tensors, anything with
__dlpack__, DLPack capsules, or tessera.Matrix views. Where PyTorch is
installed, importing tessera also registers its GEMMs as custom operators,
torch.ops.tessera.* (tessera.ops), which torch.compile traces through.
"""
from ._lib import library_path
from .dtypes import DType, as_dtype
from .errors import (AllocFailedError, ArchMismatchError, ExecutionFailedError, InsufficientWorkspaceError,
                     InternalError, InvalidValueError, NoDeviceError, NotInitializedError, NotSupportedError,
                     Status, TesseraError, status_name)
from .handle import DeviceInfo, Handle, version, version_string
from .gemm import (Plan, gemm, gemm_plans, gemm_workspace_size, quantize_fp8, quantize_fp8_transposed, quantize_int8,
                   set_sm_budget, transpose)
from .grouped import GroupLayout, GroupOrder, grouped_mm, grouped_mm_masked, grouped_plans
from .wgrad import grouped_mm_wgrad, grouped_wgrad_plans
from .int4 import dequantize_int4, pack_int4, unpack_int4_zeros, w4a16_gemm, w4a16_gemm_masked
from . import layout
from .matrix import Matrix, Order, as_matrix, from_parts

try:  # torch.ops.tessera.*: registered where PyTorch is installed
    import torch as _torch  # noqa: F401
except ImportError:
    ops = FP8Linear = fp8_linear = None
else:
    from . import ops
    from .fp8_training import FP8Linear, fp8_linear

__version__ = "0.2.0"

__all__ = [
    "AllocFailedError", "ArchMismatchError", "as_dtype", "as_matrix", "dequantize_int4", "DeviceInfo", "DType",
    "ExecutionFailedError", "fp8_linear", "FP8Linear", "from_parts", "gemm", "gemm_plans", "gemm_workspace_size",
    "grouped_mm", "grouped_mm_masked", "grouped_mm_wgrad", "grouped_plans", "grouped_wgrad_plans", "GroupLayout", "GroupOrder", "Handle",
    "InsufficientWorkspaceError", "InternalError", "InvalidValueError", "layout", "library_path", "Matrix",
    "NoDeviceError", "NotInitializedError", "NotSupportedError", "ops", "Order", "pack_int4", "Plan", "quantize_fp8",
    "quantize_fp8_transposed", "quantize_int8", "set_sm_budget", "Status", "status_name", "TesseraError", "transpose",
    "unpack_int4_zeros", "version", "version_string", "w4a16_gemm", "w4a16_gemm_masked",
]
