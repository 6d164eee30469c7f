"""Grouped GEMM for Mixture-of-Experts layers (tess_grouped_gemm).

    import tessera, torch
    # x: tokens sorted by expert [total_M, K]; w: expert weights [G, N, K];
    # offs: int32 [G] cumulative ends of the groups' rows, on the GPU.
    y = tessera.grouped_mm(x, w, offs)          # as torch._grouped_mm(x, w.transpose(-2, -1), offs=offs)
    # DeepGEMM's masked layout: x [G, M_max, K], masked_m int32 [G] rows used per group.
    y = tessera.grouped_mm_masked(x, w, masked_m, expected_m=128)

Group sizes stay on the device: nothing synchronizes with the host, and a call
is safe under CUDA graph capture. x, w and out may be torch tensors, objects
with __dlpack__ or tessera.Matrix views; offs / masked_m and scale factors are
torch tensors. Work runs on the handle's stream; without a handle, on
PyTorch's current stream with its default handle (as tessera.gemm).
The C library checks the problem in full and its sentence is the exception's
text; Python checks only what the C descriptor cannot carry (dimensions, how
many groups a tensor holds, devices, the type of offs, and that each scale
tensor's shape fits its recipe and its strides stay inside its storage, as the
C library trusts the strides it is given: tessera.scales) and that a bias
tensor fits the problem (tessera.epilogue).
"""
import ctypes
import dataclasses
import enum

from . import _lib, call_cache, epilogue, fastcall, scales
from ._lib import GroupedGemmDescStruct, PlanStruct, ScaleDescStruct, TesseraDesc
from .dtypes import DType, as_dtype
from .errors import InvalidValueError, check
from .gemm import Plan, _epilogue_ptrs, _one_cuda_device, _ptr, _stream_handle, lent_for_capture
from .matrix import Order, as_matrix

SCALE_BLOCK = 128  # K (and N, for W's 128x128 factors) elements per block factor


class GroupLayout(enum.IntEnum):
    """tess_group_layout."""
    CONTIGUOUS = 0
    MASKED = 1


class GroupOrder(enum.IntEnum):
    """tess_group_order: the order a grouped kernel walks its tiles in (Plan.group_order)."""
    AUTO = 0
    N_FASTEST = 1
    M_FASTEST = 2
    BANDED = 3


# The recipe names each operand accepts (as tessera.gemm's), with their tess_scale_mode values.
_X_RECIPES = scales.X_RECIPES
_W_RECIPES = scales.W_RECIPES


def _ceil_div(a, b):
    return -(-a // b)


def _shape(t):
    """The shape of a tensor-like object as a tuple, or None (a Matrix or a DLPack capsule)."""
    s = getattr(t, "shape", None)
    return tuple(int(e) for e in s) if s is not None else None


def _device_of(t):
    """("cuda", index) or ("cpu", 0) of a torch tensor."""
    d = t.device
    return (d.type, d.index or 0)


def _torch_vector(t, what, length, dtype, device):
    """Checks a torch tensor: 1-D of `length` elements (length None: any shape), type `dtype` (e.g.
    "int32"), in the memory of CUDA device `device`, unit stride for a vector. Returns its pointer."""
    if not (hasattr(t, "data_ptr") and hasattr(t, "dtype") and hasattr(t, "device")):
        raise InvalidValueError(f"{what}: expected a torch.Tensor of {dtype} in GPU memory, got {type(t).__name__}")
    if str(t.dtype) != f"torch.{dtype}":
        raise InvalidValueError(f"{what}: expected {dtype}, got {t.dtype}")
    if _device_of(t) != ("cuda", device):
        raise InvalidValueError(f"{what} is on {t.device}; it must be on the operands' device cuda:{device}")
    if length is not None:
        if t.dim() != 1 or t.shape[0] != length:
            raise InvalidValueError(f"{what}: expected shape ({length},) (one entry per group), got {tuple(t.shape)}")
        if length > 1 and t.stride(0) != 1:
            raise InvalidValueError(f"{what}: must be contiguous (stride 1), got stride {t.stride(0)}")
    return t.data_ptr()


def _scale(t, what, recipe, recipes, layout, groups, mn, k, device):
    """(pointer, ScaleDescStruct) of one operand's dequantization factors, checked before any call
    (tessera.scales.grouped_scale_layout): the mode from the shape (see grouped_mm's docstring) or
    from `recipe` where the shape is ambiguous; strides as the tensor's, every factor read inside
    its storage; float32 on CUDA device `device`.

    `mn` is the operand's extent along M (X: total_M or M_max) or N (W); X's factors of a MASKED
    problem, and W's always, carry the group as their leading dimension."""
    if t is None:
        if recipe is not None:
            raise InvalidValueError(f"scale_recipe_{what}={recipe!r} needs scale_{what}")
        return None, ScaleDescStruct()
    if recipe is not None and recipe not in recipes:
        raise InvalidValueError(f"scale_recipe_{what}={recipe!r}: one of {sorted(recipes)}")
    ptr, shape, strides, extent = scales.tensor_geometry(t, f"scale_{what}", device)
    found = scales.grouped_scale_layout(what, recipe, layout == GroupLayout.MASKED, groups, mn, k, shape, strides,
                                        extent)
    return ptr, found.desc()


def _weight_desc(wm):
    """W's tess_matrix_desc: the [G, N, K] tensor's N x K matrices seen as the product's K x N B
    (the same memory with rows and columns exchanged: a row-major N x K is a column-major K x N)."""
    order = Order.COL if wm.order == Order.ROW else Order.ROW
    return TesseraDesc(int(wm.dtype), int(order), wm.cols, wm.rows, wm.ld, wm.batch_stride)


def _out_dtype(out_dtype, x_dtype):
    """Y's DType: out_dtype, else x's 16-bit type, else (FP8 inputs) bf16."""
    if out_dtype is not None:
        return as_dtype(out_dtype)
    return x_dtype if x_dtype in (DType.BF16, DType.F16) else DType.BF16


def _torch_dtype(dt):
    import torch
    t = {DType.BF16: torch.bfloat16, DType.F16: torch.float16, DType.F32: torch.float32,
         DType.E4M3: torch.float8_e4m3fn, DType.E5M2: torch.float8_e5m2}.get(dt)
    if t is None:
        raise InvalidValueError(f"out_dtype {dt.short_name}: Y is bf16, f16, f32, e4m3 or e5m2")
    return t


def _weights(w, w_layout):
    """W as the [G, N, K] tensor the kernels read: w itself ("nk": y = x @ w[g].T, the stacked
    nn.Linear weights), or for "kn" (torch._grouped_mm's mat_b: y = x @ w[g], w [G, K, N]) its
    view w.transpose(1, 2): never a copy or a silent transpose. Either may have K or (bf16 and
    f16: the grouped_f16_nmajor kernels) N contiguous; FP8 weights K contiguous."""
    if w_layout == "nk":
        return w
    if w_layout != "kn":
        raise InvalidValueError(f"w_layout={w_layout!r}: 'nk' (w [G, N, K], y = x @ w[g].T) or 'kn' (w [G, K, N], "
                                "y = x @ w[g], as torch._grouped_mm)")
    shape = _shape(w)
    if shape is None or not hasattr(w, "transpose") or len(shape) != 3:
        raise InvalidValueError("w_layout='kn': w must be a 3-D torch tensor [G, K, N]")
    if shape[1] > 1 and w.stride(1) != 1 and w.element_size() == 1:
        raise InvalidValueError(f"w_layout='kn': an FP8 w {list(shape)} with strides {list(w.stride())} has N "
                                "contiguous; the grouped kernels read FP8 weights with K contiguous: pass "
                                "w.transpose(1, 2).contiguous() with w_layout='nk' (or keep such a copy)")
    return w.transpose(1, 2)


def _prepare(layout, x, w, out, scale_x, scale_w, recipe_x, recipe_w, expected_m, out_dtype, handle, allocate,
             bias=None, activation=None, gate=None, gate_limit=0.0, fp8_args=(None, None)):
    """Checks what Python can see and fills the descriptor. Returns (handle, desc, pointers, out,
    device); with allocate=False and no out, Y is described (row-major, packed) but not allocated.
    fp8_args: an FP8 Y's (out_scale, amax) (scales.fp8_output); pointers["fp8"] are its
    tess_epilogue_ptrs and pointers["factors"] the 1x128 factors' tensor it allocates (or None)."""
    masked = layout == GroupLayout.MASKED
    xs, ws = _shape(x), _shape(w)
    if xs is not None and len(xs) != (3 if masked else 2):
        raise InvalidValueError(f"x: expected {'[G, M_max, K]' if masked else '[total_M, K]'}, got shape {xs}")
    if ws is not None and len(ws) != 3:
        raise InvalidValueError(f"w: expected [G, N, K] (each expert's N x K weight, K contiguous), got shape {ws}")
    views = {"x": as_matrix(x, "x"), "w": as_matrix(w, "w")}
    if out is not None:
        views["out"] = as_matrix(out, "out")
    device = _one_cuda_device(views)
    xm, wm = views["x"], views["w"]
    groups, n, k = (ws[0] if ws is not None else wm.batch), wm.rows, wm.cols
    gate_code, limit = epilogue.check_gate(gate, gate_limit, n)
    cols = n // 2 if gate_code else n  # Y's columns
    if masked and xm.batch != groups:
        raise InvalidValueError(f"x: {xm.batch} batches but w holds {groups} experts; the masked layout needs one "
                                "batch of rows per expert")
    # the factors first: nothing touches the device before they are known to fit
    sx, x_scale = _scale(scale_x, "x", recipe_x, _X_RECIPES, layout, groups, xm.rows, k, device)
    sw, w_scale = _scale(scale_w, "w", recipe_w, _W_RECIPES, layout, groups, n, k, device)
    ep = epilogue.grouped_epilogue(bias, activation, groups, n, device, gated=bool(gate_code))
    ym = views.get("out")
    if gate_code and ym is not None and (ym.rows, ym.cols) != (xm.rows, cols):
        raise InvalidValueError(f"out: {ym.rows} x {ym.cols}; with gate={gate!r} each of its matrices must be "
                                f"{'M_max' if masked else 'total_M'} x N/2 = {xm.rows} x {cols} (w's N={n} rows are "
                                "(gate, up) pairs)")
    desc = GroupedGemmDescStruct()
    check(_lib.lib().tess_grouped_gemm_desc_init(ctypes.byref(desc)))
    desc.x_scale, desc.w_scale = x_scale, w_scale
    desc.epilogue = ep.desc()
    desc.gate, desc.gate_limit = gate_code, limit
    desc.layout, desc.groups, desc.m, desc.n, desc.k = int(layout), groups, xm.rows, n, k
    desc.expected_m = int(expected_m or 0)
    desc.x, desc.w = xm.desc(), _weight_desc(wm)
    y_dtype = _out_dtype(out_dtype, xm.dtype) if out is None else views["out"].dtype
    if out is None and allocate:
        if not type(x).__module__.startswith("torch"):
            raise InvalidValueError("out: give an output tensor (tessera allocates one only for torch tensors)")
        import torch
        shape = (groups, xm.rows, cols) if masked else (xm.rows, cols)
        out = torch.empty(shape, dtype=_torch_dtype(y_dtype), device=x.device)
        views["out"] = as_matrix(out, "out")
    if out is not None:
        ym = views["out"]
        if masked and ym.batch != groups:
            raise InvalidValueError(f"out: {ym.batch} batches; the masked layout writes one per expert ({groups})")
        if not masked and _shape(out) is not None and len(_shape(out)) != 2:
            raise InvalidValueError(f"out: expected [total_M, N], got shape {_shape(out)}")
        desc.y = ym.desc()
    else:  # plans only: a packed row-major Y of the problem's shape
        desc.y = TesseraDesc(int(y_dtype), int(Order.ROW), xm.rows, cols, cols, xm.rows * cols if masked else 0)
    y_fp8 = (views["out"].dtype if out is not None else y_dtype) in (DType.E4M3, DType.E5M2)
    scales.check_fp8_gate(y_fp8, gate_code, gate)
    fp8_ptrs, factors = (None, None, None), None
    if out is not None:
        y_layout, fp8_ptrs, factors = scales.fp8_output(views["out"], device, *fp8_args)
        desc.y_scale = y_layout.desc()
    elif y_fp8 and fp8_args[0] == "1x128":  # plans only: the packed factors of a packed Y
        blocks = scales.ceil_div(cols, scales.BLOCK)
        desc.y_scale = scales.ScaleLayout(scales.BLOCK_1x128, 1, xm.rows, blocks * xm.rows if masked else 0).desc()
    if handle is not None and handle.device != device:
        raise InvalidValueError(f"the operands are on CUDA device {device}, the handle on {handle.device}")
    if handle is None:
        handle = _stream_handle(device, (x, w, out))
    ptrs = {"x": xm.ptr, "w": wm.ptr, "y": views["out"].ptr if out is not None else None, "sx": sx, "sw": sw,
            "bias": bias.data_ptr() if bias is not None else None, "fp8": fp8_ptrs, "factors": factors}
    return handle, desc, ptrs, out, device


def _run(desc, handle, ptrs, rows_ptr, plan):
    """Queues the grouped GEMM of a checked descriptor and its pointers."""
    raw_plan = ctypes.byref(plan.raw) if plan is not None else None
    check(_lib.lib().tess_grouped_gemm_fused(handle._h, ctypes.byref(desc), raw_plan, ctypes.c_void_p(ptrs["x"]),
                                             ctypes.c_void_p(ptrs["sx"]), ctypes.c_void_p(ptrs["w"]),
                                             ctypes.c_void_p(ptrs["sw"]), ctypes.c_void_p(rows_ptr),
                                             ctypes.c_void_p(ptrs["y"]),
                                             _epilogue_ptrs(ptrs["bias"], None, ptrs.get("fp8", (None, None, None)))))


def _empty_rows(x):
    """Whether x is a torch-like [0, K] tensor (a contiguous problem with no tokens at all)."""
    s = _shape(x)
    return s is not None and len(s) == 2 and s[0] == 0


def grouped_mm(x, w, offs, out=None, *, scale_x=None, scale_w=None, expected_m=None, out_dtype=None, plan=None,
               handle=None, scale_recipe_x=None, scale_recipe_w=None, w_layout="nk", bias=None, activation=None,
               gate=None, gate_limit=0.0, out_scale=None, amax=None):
    """y[rows of g] = activation((scale_x . x[rows of g]) @ (scale_w . w[g]).T + bias[g]) for each
    expert g; returns y.

    x: [total_M, K] row-major, the groups' rows one after another (tokens
    sorted by expert). w: [G, N, K], each expert's weight with K contiguous
    (the layout of nn.Linear weights stacked); with w_layout="kn", w is
    [G, K, N] and y = x @ w[g] (torch._grouped_mm's mat_b), K contiguous
    (e.g. the transpose view of stacked nn.Linear weights). offs: int32 [G] on the GPU,
    cumulative row ends (torch._grouped_mm's convention): group g owns rows
    offs[g-1] .. offs[g]-1 (offs[-1] = 0); empty groups are fine, and rows
    past offs[G-1] are left as they were. out: [total_M, N] (default: a new
    torch tensor of out_dtype: x's type for bf16/f16 inputs, bf16 for FP8).
    Inputs bf16 x bf16, f16 x f16 or e4m3 x e4m3; out bf16, f16, f32, or FP8 (below).
    expected_m: the typical rows per group, a planner hint (default
    total_M / G). plan: one of grouped_plans(...) (default: the heuristic's).

    Scale factors (float32 dequantization factors on the operands' GPU,
    any strides within the tensor's storage; the mode follows from the
    shape; scale_recipe_x / _w name it where a shape could be read two
    ways; any other shape is refused before the call):
      scale_x  (1,) or 0-d        one factor for all              TENSOR
               (G,)               one per group                   TENSOR, batch_stride 1
               (total_M,)         one per row                     OUTER_VEC
               (total_M, K/128)   e4m3: per row per 128 of K      BLOCK_1x128 (either order of the two
               (K/128, total_M)                                   dimensions; their strides are read as given)
      scale_w  (1,) or (G,)       per tensor / per expert         TENSOR
               (G, N)             one per output column           OUTER_VEC
               (G, N/128, K/128)  e4m3: per 128x128 block         BLOCK_128x128
    (K/128 and N/128 rounded up; w's factors are indexed so whatever w_layout.) 1-D factors are always per tensor, group
    or row, 2-D ones (X) block factors; ambiguous shapes (G == total_M, or a
    square (K/128, total_M)) need scale_recipe_x ("tensor", "rowwise",
    "1x128"; an explicit "1x128" reads a 2-D tensor as (rows, K blocks)).
    The block recipe is DeepSeek-V3's, 1x128 for x with 128x128 for w;
    tessera.quantize_fp8 makes both (rows contiguous for x, the layout the
    kernels load by TMA).

    Fused epilogue (in float32, before y is rounded): bias, a contiguous
    bf16, f16 or f32 torch tensor on the operands' GPU, one value per
    output column: (N,) shared by the experts, or (G, N) one vector per
    expert; then activation: None or "none", "relu", "gelu" (erf, as
    F.gelu), "gelu_tanh" (as F.gelu(approximate="tanh")) or "silu".
    gate="interleaved" (a gated activation, as tessera.gemm's): each
    expert's N product columns are (gate, up) pairs, 2j and 2j + 1, and y
    is [total_M, N/2], y[:, j] = activation(gate_j) * up_j after the bias
    ((N,) or (G, N)); gate_limit > 0 clamps the gate to at most it and up
    to [-gate_limit, gate_limit] first (SwiGLU: activation="silu").

    FP8 y (out_dtype="e4m3" or "e5m2", or an FP8 out), as tessera.gemm's:
    y = fp8(v * out_scale) (a float32 tensor of one factor; None: 1), with
    max |v| into amax's first element where given; or out_scale="1x128",
    a factor per row and 128 columns, returned as (y, factors): factors
    [total_M, ceil(N/128)] float32, rows contiguous, which the next
    grouped_mm's 1x128 scale_x reads. Not with a gate.
    Repeated calls of one layout are checked once, as gemm's are
    (tessera.call_cache); FP8 y calls are checked every time."""
    w = _weights(w, w_layout)
    epilogue.activation_code(activation)  # a misspelt name is refused even with no tokens
    if _empty_rows(x):  # no tokens at all (a rank whose experts got none): nothing to compute
        ws = _shape(w)
        gated, _ = epilogue.check_gate(gate, gate_limit, ws[1] if ws is not None else 0)
        import torch
        if out is None:
            out = torch.empty((0, ws[1] // 2 if gated else ws[1]),
                              dtype=_torch_dtype(_out_dtype(out_dtype, as_dtype(x.dtype))), device=x.device)
        fp8 = out.dtype in (torch.float8_e4m3fn, torch.float8_e5m2)
        scales.check_fp8_gate(fp8, gated, gate)
        if scales.fp8_output_form(fp8, str(out.dtype), out_scale, amax) == "tensor" and amax is not None:
            amax.view(-1)[:1].zero_()  # the largest |v| of no values, in amax's first element
        if out_scale == "1x128":
            blocks = scales.ceil_div(out.shape[1], scales.BLOCK)
            return out, torch.empty((blocks, 0), dtype=torch.float32, device=x.device).t()
        return out
    return _grouped_call(GroupLayout.CONTIGUOUS, x, w, offs, "offs", out, scale_x, scale_w, scale_recipe_x,
                         scale_recipe_w, expected_m, out_dtype, handle, plan, bias, activation, gate, gate_limit,
                         (out_scale, amax))


def grouped_mm_masked(x, w, masked_m, expected_m, out=None, *, scale_x=None, scale_w=None, out_dtype=None,
                      plan=None, handle=None, scale_recipe_x=None, scale_recipe_w=None, w_layout="nk", bias=None,
                      activation=None, gate=None, gate_limit=0.0, out_scale=None, amax=None):
    """y[g, :masked_m[g]] = activation((scale_x . x[g, :masked_m[g]]) @ (scale_w . w[g]).T + bias[g])
    for each expert g (DeepGEMM's masked layout); returns y.

    x: [G, M_max, K] row-major; w: [G, N, K] with K contiguous; masked_m:
    int32 [G] on the GPU, the rows each group uses; out: [G, M_max, N]
    (default: a new torch tensor, see grouped_mm). Rows past masked_m[g]
    are neither read into the result nor written: a new out holds garbage
    there. expected_m: the typical masked_m, a planner hint (0: M_max).
    Scale factors as grouped_mm's, with the group first for x's too:
    scale_x (1,)/(G,) per tensor/group, (G, M_max) per row,
    (G, M_max, K/128) or (G, K/128, M_max) 1x128 blocks. w_layout, bias,
    activation, gate and gate_limit as grouped_mm's (a gate: out
    [G, M_max, N/2]). An FP8 y as grouped_mm's; its 1x128 factors are
    [G, M_max, ceil(N/128)], rows contiguous within each group."""
    w = _weights(w, w_layout)
    return _grouped_call(GroupLayout.MASKED, x, w, masked_m, "masked_m", out, scale_x, scale_w, scale_recipe_x,
                         scale_recipe_w, expected_m, out_dtype, handle, plan, bias, activation, gate, gate_limit,
                         (out_scale, amax))


@dataclasses.dataclass(frozen=True)
class _Prepared:
    """What a grouped call's checks came to (tessera.call_cache): its default handle (None for a
    caller's) and descriptor, and the shape and dtype of the Y it allocates."""
    handle: object
    desc: GroupedGemmDescStruct
    out_shape: tuple
    out_dtype: object


def _call_key(layout, x, w, rows, out, scale_x, scale_w, recipe_x, recipe_w, expected_m, out_dtype, handle, bias,
              activation, gate=None, gate_limit=0.0):
    """The prepared-call key of a grouped call on torch CUDA tensors with the default handle (None
    for any other call, which is checked in full every time). w is the [G, N, K] view; the bias
    enters by its layout, its pointer is passed on every call."""
    stream = call_cache.call_selector(handle, (x, w, rows), (out, scale_x, scale_w, bias))
    if stream is None:
        return None
    try:
        key = ("grouped", int(layout), call_cache.tensor_keys((x, w, rows, out, bias), (scale_x, scale_w)), recipe_x,
               recipe_w, int(expected_m or 0), out_dtype, activation, gate, gate_limit, stream)
        hash(key)
        return key
    except (TypeError, ValueError):  # an unhashable argument, or an expected_m that is no number: checked in full
        return None


def _grouped_call(layout, x, w, rows, rows_what, out, scale_x, scale_w, recipe_x, recipe_w, expected_m, out_dtype,
                  handle, plan, bias=None, activation=None, gate=None, gate_limit=0.0, fp8_args=(None, None)):
    """A grouped GEMM call: checked in full and prepared the first time its key is seen, then
    (tessera.call_cache) only its pointers passed, which the C library checks itself. An FP8 Y
    (fp8_args: out_scale, amax) is checked every time; with 1x128 factors returns (out, factors)."""
    fp8 = scales.wants_fp8_out(out_dtype, out, *fp8_args)
    key = None if fp8 else _call_key(layout, x, w, rows, out, scale_x, scale_w, recipe_x, recipe_w, expected_m,
                                     out_dtype, handle, bias, activation, gate, gate_limit)
    p = call_cache.find(key) if key is not None else None
    if p is None:
        given = handle
        handle, desc, ptrs, out, device = _prepare(layout, x, w, out, scale_x, scale_w, recipe_x, recipe_w,
                                                   expected_m, out_dtype, handle, True, bias, activation, gate,
                                                   gate_limit, fp8_args)
        rows_ptr = _torch_vector(rows, rows_what, desc.groups, "int32", device)
        _run(desc, handle, ptrs, rows_ptr, plan)
        if ptrs["factors"] is not None:
            return out, ptrs["factors"]
        if key is not None and not lent_for_capture(handle):
            # (a caller's handle is not kept: its calls pass it again)
            call_cache.put(key, _Prepared(None if given is not None else handle, desc, tuple(out.shape), out.dtype))
        return out
    if out is None:
        import torch
        out = torch.empty(p.out_shape, dtype=p.out_dtype, device=x.device)
    fast = fastcall.module()
    if fast is not None:
        check(fast.grouped(fastcall.address("tess_grouped_gemm_fused"), (handle or p.handle)._h.value,
                           ctypes.addressof(p.desc), ctypes.addressof(plan.raw) if plan is not None else None, x,
                           scale_x, w, scale_w, rows, out, bias))
        return out
    check(_lib.lib().tess_grouped_gemm_fused((handle or p.handle)._h, ctypes.byref(p.desc),
                                             ctypes.byref(plan.raw) if plan is not None else None, x.data_ptr(),
                                             scale_x.data_ptr() if scale_x is not None else None, w.data_ptr(),
                                             scale_w.data_ptr() if scale_w is not None else None, rows.data_ptr(),
                                             out.data_ptr(), _epilogue_ptrs(_ptr(bias))))
    return out


def grouped_plans(x, w, out=None, *, scale_x=None, scale_w=None, expected_m=None, out_dtype=None, handle=None,
                  scale_recipe_x=None, scale_recipe_w=None, limit=64, w_layout="nk", bias=None, activation=None,
                  gate=None, gate_limit=0.0, out_scale=None):
    """Every plan that can run this grouped problem, best first (the first is the heuristic's
    choice): each grouped kernel in each tile order (Plan.group_order, a GroupOrder). A 2-D x
    means the contiguous layout (grouped_mm), a 3-D x the masked one (grouped_mm_masked); the
    group sizes are not needed. Pass the bias, activation, gate, gate_limit and (an FP8 y)
    out_scale the call will get. Pass a plan back as plan=... to run it (for autotuning)."""
    masked = len(_shape(x)) == 3 if _shape(x) is not None else as_matrix(x, "x").batch > 1
    w = _weights(w, w_layout)
    handle, desc, _, _, _ = _prepare(GroupLayout.MASKED if masked else GroupLayout.CONTIGUOUS, x, w, out, scale_x,
                                     scale_w, scale_recipe_x, scale_recipe_w, expected_m, out_dtype, handle, False,
                                     bias, activation, gate, gate_limit, (out_scale, None))
    plans = (PlanStruct * limit)()
    count = ctypes.c_int()
    check(_lib.lib().tess_grouped_gemm_plans(handle._h, ctypes.byref(desc), plans, limit, ctypes.byref(count)))
    return [dataclasses.replace(Plan._from(plans[i]), group_order=GroupOrder(plans[i].group_order))
            for i in range(min(count.value, limit))]
