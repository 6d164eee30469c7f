"""The weight gradient of a Mixture-of-Experts layer (tess_grouped_wgrad).

    import tessera, torch
    # dy: [T, N] the output gradient, x: [T, K] the forward input, tokens sorted by expert;
    # offs: int32 [G] cumulative ends of the groups' tokens, on the GPU (as grouped_mm's).
    dw = tessera.grouped_mm_wgrad(dy, x, offs)      # [G, N, K]: dw[g] = dy[rows of g].T @ x[rows of g]
    tessera.grouped_mm_wgrad(dy, x, offs, out=dw, c=dw, beta=1.0)   # accumulate into dw

One kernel launch for every expert: the group sizes stay on the device, so a
call is safe under CUDA graph capture. Work runs on the handle's stream;
without a handle, on PyTorch's current stream with its default handle (as
tessera.gemm). Python checks the shapes, devices and offs' type; the C library
checks the rest and its sentence is the exception's text.
"""
import ctypes

from . import _lib
from ._lib import GroupedWgradDescStruct, PlanStruct, TesseraDesc
from .dtypes import DType, as_dtype
from .errors import InvalidValueError, check
from .gemm import Plan, _stream_handle
from .matrix import Order, as_matrix

_OUT_TYPES = (DType.BF16, DType.F16, DType.F32)


def _torch_dtype(dt):
    import torch
    return {DType.BF16: torch.bfloat16, DType.F16: torch.float16, DType.F32: torch.float32}[dt]


def _tokens(t, what, cols_name):
    """(TesseraDesc, pointer, device index) of a token operand: a 2-D torch tensor [T, cols] in GPU
    memory with its features contiguous (T may be 0)."""
    if not (hasattr(t, "data_ptr") and hasattr(t, "dim") and hasattr(t, "stride")):
        raise InvalidValueError(f"{what}: expected a torch.Tensor [T, {cols_name}], got {type(t).__name__}")
    if t.dim() != 2:
        raise InvalidValueError(f"{what}: expected [T, {cols_name}] (tokens by features), got shape {tuple(t.shape)}")
    if t.device.type != "cuda":
        raise InvalidValueError(f"{what} is in {t.device.type} memory; tessera multiplies matrices in GPU memory")
    rows, cols = int(t.shape[0]), int(t.shape[1])
    if cols < 1:
        raise InvalidValueError(f"{what}: shape {tuple(t.shape)}: {cols_name} must be at least 1")
    if cols > 1 and t.stride(1) != 1:
        raise InvalidValueError(f"{what}: [T, {cols_name}] must be row-major (features contiguous, stride 1), got "
                                f"strides {tuple(t.stride())}; pass {what}.contiguous()")
    # (one row or none: any ld addresses it; whole 16 bytes, as TMA's rule asks of 16-bit rows)
    ld = int(t.stride(0)) if rows > 1 else -(-cols // 8) * 8
    desc = TesseraDesc(int(as_dtype(t.dtype)), int(Order.ROW), rows, cols, ld, 0)
    return desc, t.data_ptr(), t.device.index or 0


def _groups_of(offs, device):
    """G from offs: an int32 [G] torch tensor, contiguous, on CUDA device `device`."""
    if not (hasattr(offs, "data_ptr") and hasattr(offs, "dtype")):
        raise InvalidValueError(f"offs: expected an int32 torch.Tensor [G] in GPU memory, got {type(offs).__name__}")
    if str(offs.dtype) != "torch.int32":
        raise InvalidValueError(f"offs: expected int32 [G] (cumulative token ends), got {offs.dtype}")
    if offs.device.type != "cuda" or (offs.device.index or 0) != device:
        raise InvalidValueError(f"offs is on {offs.device}; it must be on the operands' device cuda:{device}")
    if offs.dim() != 1 or offs.shape[0] < 1:
        raise InvalidValueError(f"offs: expected shape (G,) with G >= 1 (one entry per group), got {tuple(offs.shape)}")
    if offs.shape[0] > 1 and offs.stride(0) != 1:
        raise InvalidValueError(f"offs: must be contiguous (stride 1), got stride {offs.stride(0)}")
    return int(offs.shape[0])


def _gradient(t, what, shape, device):
    """The Matrix view of out or c: a [G, N, K] tensor on CUDA device `device`."""
    if tuple(int(e) for e in getattr(t, "shape", ())) != shape:
        raise InvalidValueError(f"{what}: expected [G, N, K] = {list(shape)}, got shape "
                                f"{tuple(getattr(t, 'shape', ()))}")
    m = as_matrix(t, what)
    if m.device != ("cuda", device):
        raise InvalidValueError(f"{what} is on {m.device[0]}:{m.device[1]}; it must be on the operands' device "
                                f"cuda:{device}")
    return m


def _prepare(dy, x, offs, out, c, alpha, beta, out_dtype, expected_tokens, handle, allocate):
    """Checks what Python can see and fills the descriptor. Returns (handle, desc, pointers, out)."""
    dy_desc, dy_ptr, device = _tokens(dy, "dy", "N")
    x_desc, x_ptr, x_device = _tokens(x, "x", "K")
    if x_device != device:
        raise InvalidValueError(f"dy is on cuda:{device} and x on cuda:{x_device}; they must share one device")
    if dy_desc.rows != x_desc.rows:
        raise InvalidValueError(f"dy is [{dy_desc.rows}, {dy_desc.cols}] and x [{x_desc.rows}, {x_desc.cols}]; both "
                                "must have the same T rows (one per token)")
    groups = _groups_of(offs, device)
    tokens, n, k = dy_desc.rows, dy_desc.cols, x_desc.cols
    shape = (groups, n, k)
    desc = GroupedWgradDescStruct()
    check(_lib.lib().tess_grouped_wgrad_desc_init(ctypes.byref(desc)))
    desc.groups, desc.tokens, desc.n, desc.k = groups, tokens, n, k
    desc.expected_tokens = int(expected_tokens or 0)
    desc.alpha, desc.beta = float(alpha), float(beta)
    desc.dy, desc.x = dy_desc, x_desc
    if beta != 0 and c is None:
        raise InvalidValueError(f"beta={beta} reads c, but c is None; pass c (e.g. c=out to accumulate into out)")
    c_ptr = None
    if c is not None and beta != 0:
        cm = _gradient(c, "c", shape, device)
        desc.c, c_ptr = cm.desc(), cm.ptr
    if out is None and allocate:
        import torch
        dt = as_dtype(out_dtype) if out_dtype is not None else as_dtype(dy.dtype)
        if dt not in _OUT_TYPES:
            raise InvalidValueError(f"out_dtype {dt.short_name}: dw is bf16, f16 or f32")
        out = torch.empty(shape, dtype=_torch_dtype(dt), device=dy.device)
    if out is not None:
        om = _gradient(out, "out", shape, device)
        desc.dw, out_ptr = om.desc(), om.ptr
    else:  # plans only: a packed [G, N, K] dw
        dt = as_dtype(out_dtype) if out_dtype is not None else as_dtype(dy.dtype)
        desc.dw, out_ptr = TesseraDesc(int(dt), int(Order.ROW), n, k, k, n * k if groups > 1 else 0), None
    if handle is not None and handle.device != device:
        raise InvalidValueError(f"the operands are on CUDA device {device}, the handle on {handle.device}")
    if handle is None:
        handle = _stream_handle(device, (dy, x, out))
    return handle, desc, {"dy": dy_ptr, "x": x_ptr, "offs": offs.data_ptr(), "c": c_ptr, "dw": out_ptr}, out


def grouped_mm_wgrad(dy, x, offs, out=None, *, c=None, alpha=1.0, beta=0.0, out_dtype=None, expected_tokens=None,
                     plan=None, handle=None):
    """dw[g] = alpha * dy[rows of g].T @ x[rows of g] + beta * c[g] for each expert g; returns dw.

    The weight gradient of grouped_mm (y = x @ w[g].T, w [G, N, K]): dy [T, N] and x [T, K], torch
    tensors on the GPU, bf16 or f16 (the same type), features contiguous; offs int32 [G] on the
    GPU, cumulative token ends as grouped_mm's (group g owns rows offs[g-1] .. offs[g]-1; empty
    groups are fine; tokens past offs[G-1] are never read; values outside [0, T] or decreasing
    are clamped on the device). out: [G, N, K] (default: a new tensor of out_dtype, dy's type
    unless given: bf16, f16 or f32); an expert without tokens gets beta * c[g] (zero for beta 0).
    c: [G, N, K], read where beta != 0; it may be out itself (gradient accumulation). T may be 0.
    expected_tokens: the typical tokens per expert, a planner hint (default T / G). plan: one of
    grouped_wgrad_plans(...) (default: the heuristic's)."""
    handle, desc, ptrs, out = _prepare(dy, x, offs, out, c, alpha, beta, out_dtype, expected_tokens, handle, True)
    raw_plan = ctypes.byref(plan.raw) if plan is not None else None
    check(_lib.lib().tess_grouped_wgrad(handle._h, ctypes.byref(desc), raw_plan, ctypes.c_void_p(ptrs["dy"]),
                                        ctypes.c_void_p(ptrs["x"]), ctypes.c_void_p(ptrs["offs"]),
                                        ctypes.c_void_p(ptrs["c"]), ctypes.c_void_p(ptrs["dw"])))
    return out


def grouped_wgrad_plans(dy, x, offs, out=None, *, c=None, alpha=1.0, beta=0.0, out_dtype=None, expected_tokens=None,
                        handle=None, limit=16):
    """Every plan that can run this weight gradient, best first (the first is the heuristic's
    choice); pass one back as plan=... to grouped_mm_wgrad (for autotuning). Arguments as
    grouped_mm_wgrad's; offs is read for its length only."""
    handle, desc, _, _ = _prepare(dy, x, offs, out, c, alpha, beta, out_dtype, expected_tokens, handle, False)
    plans = (PlanStruct * limit)()
    count = ctypes.c_int()
    check(_lib.lib().tess_grouped_wgrad_plans(handle._h, ctypes.byref(desc), plans, limit, ctypes.byref(count)))
    return [Plan._from(plans[i]) for i in range(min(count.value, limit))]
