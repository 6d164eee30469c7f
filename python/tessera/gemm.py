"""D = alpha * A @ B + beta * C on the GPU (tess_gemm).

    import tessera, torch
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(1024, 4096, device="cuda", dtype=torch.bfloat16)
    d = tessera.gemm(a, w.T)                 # a @ w.T, like torch.matmul

Operands are torch tensors, objects with __dlpack__ or tessera.Matrix views of
device memory; 2-D, or 3-D with the batch first (a 2-D operand is shared by
the batch). Any mix of row- and column-major A and B works; their leading
dimensions must be whole 16 bytes (TMA's rule: 8 elements of bf16, 16 of
FP8; the error says how to pad), except FP8 operands that are not K-major,
which are copied K-major first. Work runs on the handle's stream; without a handle, on PyTorch's
current stream with that stream's default handle (one per device and
stream, each owning a 32 MiB workspace: calls on concurrent streams never
share one). A handle's calls must not overlap in time: a Handle given to
calls on concurrent streams must be one per stream.
"""
import ctypes
import dataclasses
import functools
import threading
from typing import Callable, Optional

from . import _lib, call_cache, epilogue, fastcall, scales
from ._lib import EpiloguePtrsStruct, GemmDescStruct, PlanStruct, ScaleDescStruct
from .dtypes import DType, as_dtype
from .errors import InvalidValueError, check
from .handle import Handle
from .matrix import Order, as_matrix

# TESS_GEMM_WORKSPACE_BYTES of tessera.h: a workspace for every plan of this version.
DEFAULT_WORKSPACE_BYTES = 32 << 20


@dataclasses.dataclass(frozen=True)
class Plan:
    """A kernel choice for one problem (tess_plan): pass it back to gemm(plan=...)."""
    name: str
    tile: tuple          # (M, N, K) of the CTA tile
    stages: int
    cluster_m: int       # CTAs per cluster along M (sharing B's tiles by multicast)
    grid: int
    tiles: int
    stream_k: bool
    workspace_bytes: int
    group_order: int     # grouped plans: the tile order (tessera.GroupOrder); 0 for dense plans
    transposed: bool     # runs D^T = B^T A^T (small M: the tokens are the kernel's narrow N tile)
    raw: PlanStruct = dataclasses.field(repr=False, compare=False)

    @classmethod
    def _from(cls, raw):
        copy = PlanStruct.from_buffer_copy(raw)
        return cls(raw.name.decode(), (raw.tile_m, raw.tile_n, raw.tile_k), raw.stages, raw.cluster_m, raw.grid,
                   raw.tiles, bool(raw.stream_k), raw.workspace_bytes, raw.group_order, bool(raw.transposed), copy)


def _batch_of(m, batch, what):
    if m.batch not in (1, batch):
        raise InvalidValueError(f"{what}: a batch of {m.batch}, but the problem's batch is {batch}")
    return m.batch_stride if m.batch > 1 else 0


def _describe(a, b, c, d, alpha, beta):
    """The tess_gemm_desc of Matrix views a (M x K), b (K x N), c, d (M x N)."""
    batch = max(a.batch, b.batch, d.batch, c.batch if c is not None else 1)
    if d.batch != batch:
        raise InvalidValueError(f"out: a batch of {d.batch}; it must hold all {batch} results")
    desc = GemmDescStruct()
    check(_lib.lib().tess_gemm_desc_init(ctypes.byref(desc)))
    desc.m, desc.k, desc.n, desc.batch = a.rows, a.cols, b.cols, batch
    desc.alpha, desc.beta = float(alpha), float(beta)
    for name, m in (("a", a), ("b", b), ("d", d)) + ((("c", c),) if c is not None else ()):
        raw = m.desc()
        raw.batch_stride = _batch_of(m, batch, "out" if name == "d" else name)
        setattr(desc, name, raw)
    if c is None:
        desc.c = desc.d
    return desc


def _device_views(a, b, c, out, residual=None):
    """Matrix views of the operands, checked to live on one CUDA device."""
    views = {"a": as_matrix(a, "a"), "b": as_matrix(b, "b")}
    if c is not None:
        views["c"] = as_matrix(c, "c")
    if out is not None:
        views["out"] = as_matrix(out, "out")
    if residual is not None:
        views["residual"] = as_matrix(residual, "residual")
    return views, _one_cuda_device(views)


def _one_cuda_device(views):
    """The CUDA device index all the named matrix views share; InvalidValueError if they do not."""
    for what, m in views.items():
        if m.device[0] != "cuda":
            raise InvalidValueError(f"{what} is in {m.device[0]} memory; tessera multiplies matrices in GPU memory "
                                    "(move it with .cuda() or .to('cuda'))")
    devices = {m.device[1] for m in views.values()}
    if len(devices) > 1:
        raise InvalidValueError(f"the operands are on CUDA devices {sorted(devices)}; they must share one")
    return devices.pop()


def _torch_out(a, b, views, out_dtype, cols):
    """A new torch tensor for D: (batch,) M x cols (N, or N/2 with a gate), row-major, of out_dtype,
    else A's type (bf16 for FP8 or int8 A)."""
    import torch
    batch = max(views["a"].batch, views["b"].batch)
    shape = (batch, views["a"].rows, cols) if batch > 1 else (views["a"].rows, cols)
    quantized = views["a"].dtype in (DType.E4M3, DType.E5M2, DType.S8)
    dtype = {DType.BF16: torch.bfloat16, DType.F16: torch.float16, DType.F32: torch.float32,
             DType.E4M3: torch.float8_e4m3fn, DType.E5M2: torch.float8_e5m2}.get(
        as_dtype(out_dtype) if out_dtype is not None else DType.BF16 if quantized else views["a"].dtype)
    if dtype is None:
        raise InvalidValueError(f"out_dtype {out_dtype}: D is bf16, f16, f32, e4m3 or e5m2")
    return torch.empty(shape, dtype=dtype, device=a.device)


_default_lock = threading.Lock()
_default_handles = {}
_capture_handles = {}
_sm_budgets = {}  # device -> the SM budget of its default handles (set_sm_budget)


def set_sm_budget(sms, device=0):
    """Caps the streaming multiprocessors tessera's calls on `device` use with their default
    handles (those made already and later) at `sms`, 1 to the device's count (0 or None: all),
    so that communication kernels on other streams keep the rest (as DeepGEMM's set_num_sms for
    DeepEP). Results do not depend on the budget; a Handle passed as handle= keeps its own
    (Handle.sm_budget)."""
    default_handle(device).sm_budget = sms  # checked against the device before it is kept
    with _default_lock:
        handles = [h for (d, _), h in _default_handles.items() if d == device]
        if device in _capture_handles:
            handles.append(_capture_handles[device])
        for h in handles:
            h.sm_budget = sms
        _sm_budgets[device] = int(sms or 0)


def _new_handle(device, stream):
    """A handle on `stream` (None: the legacy default stream) with a 32 MiB workspace (from PyTorch
    when it is installed)."""
    h = Handle(device)
    if stream is not None:
        h.stream = stream
    if _sm_budgets.get(device):
        h.sm_budget = _sm_budgets[device]
    try:
        import torch
        h.set_workspace(torch.empty(DEFAULT_WORKSPACE_BYTES, dtype=torch.uint8, device=f"cuda:{device}"))
    except ImportError:
        pass  # no allocator at hand: data-parallel plans only
    return h


def default_handle(device, stream=None):
    """This process's handle for a device and a stream (a cudaStream_t as an int, e.g. a torch
    stream's cuda_stream; None: the legacy default stream). One handle per stream, so that calls
    on two streams may overlap: a handle's calls share its stream-K flags and workspace
    (tess_create). Inside CUDA graph capture no handle can be made (that allocates and
    synchronizes): a capturing stream without its own handle takes the device's capture handle,
    made beside the device's first one and used for nothing else, so graphs captured so replay
    on that handle's flags and workspace (replay them one at a time, or warm each capture stream
    up first, or pass handle=)."""
    with _default_lock:
        h = _default_handles.get((device, stream))
        if h is not None:
            return h
        if stream is not None and _capturing(device):
            h = _capture_handles.get(device)
            if h is None:
                raise InvalidValueError(f"tessera's first call on CUDA device {device} is inside CUDA graph capture, "
                                        "where its handle cannot be made: run the call once before capturing")
            h.stream = stream
            return h
        h = _default_handles[(device, stream)] = _new_handle(device, stream)
        if device not in _capture_handles:
            _capture_handles[device] = _new_handle(device, None)
        return h


def _capturing(device):
    """Whether PyTorch's current stream on the device is capturing a CUDA graph."""
    try:
        import torch
        with torch.cuda.device(device):
            return torch.cuda.is_current_stream_capturing()
    except ImportError:
        return False


def _stream_handle(device, tensors):
    """The default handle for a call: that of PyTorch's current stream when the operands are
    torch tensors, else the legacy default stream's."""
    if any(type(t).__module__.startswith("torch") for t in tensors if t is not None):
        import torch
        return default_handle(device, call_cache.current_stream(torch, device))
    return default_handle(device)


def _prepare(a, b, c, out, alpha, beta, handle, out_dtype, scale_args=None, epilogue_args=None, residual=None,
             gate_args=None, fp8_args=(None, None), aux=None):
    """Checks the operands (and the scale, bias and residual tensors, before anything touches the
    device) and fills the descriptor. scale_args: (scale_a, scale_b, scale_recipe_a, scale_recipe_b)
    or None; epilogue_args: (bias, activation, bias_along) or None; gate_args: (gate, gate_limit) or
    None; fp8_args: (out_scale, amax) of an FP8 D (scales.fp8_output); aux: gemm's aux= (None: none;
    views["aux"] its matrix). Returns (handle, desc, views, out, (scale_a pointer, scale_b pointer),
    (FP8 D pointers, its block factors or None, the aux matrix or None))."""
    views, device = _device_views(a, b, c, out, residual)
    gate, gate_limit = gate_args or (None, 0.0)
    gate_code, limit = epilogue.check_gate(gate, gate_limit, views["b"].cols)
    cols = views["b"].cols // 2 if gate_code else views["b"].cols  # D's columns
    if gate_code:
        _check_gated(views, c, beta, gate, cols)
    sa, sb, a_layout, b_layout = _scales(views, device, *(scale_args or (None, None, None, None)))
    ep = _epilogue(views, device, *(epilogue_args or (None, None, "columns")), gated=bool(gate_code))
    residual_desc = _residual_desc(views, cols, gate if gate_code else None) if residual is not None else None
    if out is None:
        if not type(a).__module__.startswith("torch"):
            raise InvalidValueError("out: give an output matrix (tessera allocates one only for torch tensors)")
        if float(beta) != 0.0 and c is None:
            raise InvalidValueError(f"beta={beta} reads C: pass c=, or an out= that holds C")
        out = _torch_out(a, b, views, out_dtype, cols)
        views["out"] = as_matrix(out, "out")
    scales.check_fp8_gate(views["out"].dtype in (DType.E4M3, DType.E5M2), gate_code, gate)
    d_layout, fp8_ptrs, factors = scales.fp8_output(views["out"], device, *fp8_args)
    aux_out, aux_desc = _aux(aux, a, views) if aux is not None else (None, None)
    if handle is None:
        handle = _stream_handle(device, (a, b, c, out))
    elif handle.device != device:
        raise InvalidValueError(f"the operands are on CUDA device {device}, the handle on {handle.device}")
    if float(beta) != 0.0 and c is None:
        c = out  # beta * D accumulates into the output, as cuBLAS's C == D
        views["c"] = views["out"]
    desc = _describe(views["a"], views["b"], views.get("c"), views["out"], alpha, beta)
    desc.a_scale, desc.b_scale = a_layout.desc(), b_layout.desc()
    desc.epilogue = ep.desc()
    desc.gate, desc.gate_limit = gate_code, limit
    if residual_desc is not None:
        desc.residual = residual_desc
    desc.d_scale = d_layout.desc()
    if aux_desc is not None:
        desc.aux = aux_desc
    return handle, desc, views, out, (sa, sb), (fp8_ptrs, factors, aux_out)


def _check_gated(views, c, beta, gate, cols):
    """A gated problem reads no C, and a given out must be M x N/2 (`cols`)."""
    epilogue.check_gate_reads_no_c(gate, beta, c)
    o, m = views.get("out"), views["a"].rows
    if o is not None and (o.rows, o.cols) != (m, cols):
        raise InvalidValueError(f"out: {o.rows} x {o.cols}; with gate={gate!r} it must be M x N/2 = {m} x {cols} "
                                f"(b's N={2 * cols} columns are (gate, up) pairs)")


def _residual_desc(views, cols, gate=None):
    """The tess_matrix_desc of the residual's view, checked against D's M x cols (N, or N/2 with a
    gate) and the batch (as the operands' views give them)."""
    r, m = views["residual"], views["a"].rows
    batch = max(v.batch for name, v in views.items() if name != "residual")
    if r.dtype not in (DType.BF16, DType.F16, DType.F32):
        raise InvalidValueError(f"residual: {r.dtype.name.lower()}; a residual is bf16, f16 or f32")
    if (r.rows, r.cols) != (m, cols):
        shape = f"M x N/2 = {m} x {cols}, as out with gate={gate!r}" if gate is not None else \
            f"M x N = {m} x {cols}, as out"
        raise InvalidValueError(f"residual: {r.rows} x {r.cols}; it must be {shape}")
    raw = r.desc()
    raw.batch_stride = _batch_of(r, batch, "residual")
    return raw


def _epilogue(views, device, bias, activation, bias_along, gated=False):
    """The Epilogue of the problem (tessera.epilogue.dense_epilogue): the activation's name, and
    the bias tensor checked against M, N (the product's) and the batch (as the operands' views
    give them)."""
    batch = max(m.batch for m in views.values())
    return epilogue.dense_epilogue(bias, activation, bias_along, views["a"].rows, views["b"].cols, batch, device,
                                   gated=gated)


def _epilogue_ptrs(bias_ptr, residual_ptr=None, fp8_out=(None, None, None), aux_ptr=None):
    """The tess_epilogue_ptrs of a call's bias and residual pointers, an FP8 D's (d_scale,
    d_amax, d_scale_out) pointers and aux's (a pointer to one), or None where none is given
    (dense and grouped calls alike)."""
    if bias_ptr is None and residual_ptr is None and all(p is None for p in fp8_out) and aux_ptr is None:
        return None
    return ctypes.byref(EpiloguePtrsStruct(ctypes.sizeof(EpiloguePtrsStruct), bias_ptr, residual_ptr, *fp8_out,
                                           aux_ptr))


def _aux(aux, a, views):
    """gemm's aux output and its tess_matrix_desc: aux=True, a new torch tensor like out; else the
    matrix given, checked against out's shape, dtype and batch and the operands' device (the C
    library checks its order, alignment and overlaps). views gains "aux"."""
    o = views["out"]
    if o.dtype not in (DType.BF16, DType.F16, DType.F32):
        raise InvalidValueError(f"aux with a {o.dtype.name.lower()} out: aux takes out's type, so out must be bf16, "
                                "f16 or f32")
    if aux is True:
        if not type(a).__module__.startswith("torch"):
            raise InvalidValueError("aux=True allocates a torch tensor; for other matrices pass aux= a matrix")
        import torch
        dtype = {DType.BF16: torch.bfloat16, DType.F16: torch.float16, DType.F32: torch.float32}[o.dtype]
        lead = (o.batch,) if o.batch > 1 else ()
        if o.order == Order.COL:  # out's order: allocated transposed, then viewed back
            aux = torch.empty(lead + (o.cols, o.rows), dtype=dtype, device=a.device).transpose(-1, -2)
        else:
            aux = torch.empty(lead + (o.rows, o.cols), dtype=dtype, device=a.device)
    elif aux is False:
        raise InvalidValueError("aux=False: leave aux=None for no aux output")
    x = views["aux"] = as_matrix(aux, "aux")
    _one_cuda_device(views)
    if (x.rows, x.cols) != (o.rows, o.cols) or x.dtype != o.dtype:
        raise InvalidValueError(f"aux: {x.rows} x {x.cols} {x.dtype.name.lower()}; it must be M x N = {o.rows} x "
                                f"{o.cols} {o.dtype.name.lower()}, as out")
    raw = x.desc()
    raw.batch_stride = _batch_of(x, max(v.batch for name, v in views.items() if name != "aux"), "aux")
    return aux, raw



def _ptr(t):
    """A torch tensor's data pointer, or None."""
    return t.data_ptr() if t is not None else None


# Scale recipes by name (tess_scale_mode values).
SCALE_RECIPES = scales.RECIPES

_NO_SCALE = scales.ScaleLayout(scales.TENSOR, 0, 0, 0)


def _scales(views, device, scale_a, scale_b, recipe_a, recipe_b):
    """(pointer a, pointer b, ScaleLayout a, ScaleLayout b) of the scale tensors, each checked
    against its recipe for this problem (tessera.scales.gemm_scale_layout): shape, strides within
    its storage, float32, on the operands' device."""
    a, b = views["a"], views["b"]
    if (scale_a is not None or scale_b is not None) and a.cols != b.rows:
        raise InvalidValueError(f"a is {a.rows} x {a.cols} but b is {b.rows} x {b.cols}: a's columns and b's rows "
                                "are K and must match")
    batch = max(m.batch for m in views.values())
    out = []
    for what, t, recipe, mn in (("a", scale_a, recipe_a, a.rows), ("b", scale_b, recipe_b, b.cols)):
        if t is None:
            if recipe not in (None, "tensor"):
                raise InvalidValueError(f"scale_recipe_{what}={recipe!r} needs scale_{what}")
            out.append((None, _NO_SCALE))
            continue
        ptr, shape, strides, extent = scales.tensor_geometry(t, f"scale_{what}", device)
        out.append((ptr, scales.gemm_scale_layout(what, recipe, mn, a.cols, shape, strides, extent, batch)))
    return out[0][0], out[1][0], out[0][1], out[1][1]


def gemm(a, b, out=None, *, c=None, alpha=1.0, beta=0.0, out_dtype=None, plan=None, handle=None, scale_a=None,
         scale_b=None, scale_recipe_a=None, scale_recipe_b=None, fast_accum=False, bias=None, activation=None,
         bias_along="columns", allow_tf32=False, residual=None, gate=None, gate_limit=0.0, out_scale=None,
         amax=None, aux=None):
    """out = activation(alpha * (scale_a . a) @ (scale_b . b) + beta * c + bias) + residual (c
    defaults to out itself); returns out. With gate="interleaved", out = activation(v[:, 0::2]) *
    v[:, 1::2] + residual, v = alpha * (scale_a . a) @ (scale_b . b) + bias.

    a is M x K, b is K x N (2-D, or 3-D batches); out is allocated as a
    row-major torch tensor of out_dtype (default: a's type; bf16 for FP8)
    when not given. `plan` is one of gemm_plans(...) (default: the
    heuristic's). FP8 (torch.float8_e4m3fn / e5m2) operands are read
    K-major (a row-major, b column-major: b = w.T of a row-major weight w);
    one in another layout is copied K-major into the handle's workspace
    first (32 MiB by default: InsufficientWorkspaceError where the copy does
    not fit; quantize_fp8_transposed makes K-major operands directly).
    int8 (torch.int8) a and b are summed in int32 (exactly, K up to 131071),
    then scaled by their per-tensor or per-row/column factors (W8A8), K-major
    or copied K-major as FP8 operands are. float32 a and b multiply as TF32 (10 mantissa bits, float32 sums) with
    allow_tf32=True, as torch.backends.cuda.matmul.allow_tf32; without it
    they are refused (tessera has no full-precision float32 GEMM).

    Scales: float32 dequantization factors on the operands' GPU, any
    strides (a transposed view works), checked against the recipe before
    the call (tessera.InvalidValueError names what does not fit):
      recipe      scale_a (M = rows of a)     scale_b (N = columns of b)
      "tensor"    (), (1,), (1, 1)            (), (1,), (1, 1)
      "rowwise"   (M, 1), (M,), (1, M)        (1, N), (N,), (N, 1)
      "1x128"     (M, ceil(K/128))            (N, ceil(K/128))
      "128x128"   (ceil(M/128), ceil(K/128))  (ceil(N/128), ceil(K/128))
    (torch._scaled_mm's conventions, except that block factors of b are
    indexed (columns, K blocks): for _scaled_mm's (ceil(K/128), ...) scale_b
    pass scale_b.T.) Without a recipe, one factor is "tensor" and the
    rowwise shapes are "rowwise"; block factors need scale_recipe_a / _b.
    A 3-D problem takes these shapes, or each with a batch dimension
    first (one set per batch: (B, ...), or shared: (1, ...)); "tensor" also
    (B,) and "rowwise" (B, M) / (B, N). quantize_fp8 makes block factors in
    the layout tessera reads fastest.

    Fused epilogue (computed in float32 on the result, before it is
    rounded into out): bias, a contiguous bf16, f16 or f32 torch tensor on
    the operands' GPU, added to every row: (N,) (or (1, N)); with
    bias_along="rows", added to every column: (M,) (or (1, M)); a 3-D
    problem also takes one vector per batch, (B, N) or (B, M). Then
    activation: None or "none", "relu", "gelu" (erf, as F.gelu), "gelu_tanh"
    (as F.gelu(approximate="tanh")) or "silu". Then residual: an M x N
    (or batched) bf16, f16 or f32 matrix of any strides added last (a
    transformer block's skip connection); it may be out itself.

    FP8 out (out_dtype="e4m3" or "e5m2", or an out of torch.float8_e4m3fn /
    float8_e5m2): the values v above become fp8(v * s) (rounded to nearest,
    saturating, NaN kept), s = out_scale (a float32 tensor of one element;
    None: 1), and with amax (a float32 tensor, its first element written)
    max |v| over all of out (NaN ignored); or with out_scale="1x128" one
    factor per row and 128 columns, f = max |v| / the type's largest (1
    where all are 0), out = fp8(v / f), and the call returns (out, factors):
    factors (M, ceil(N/128)) (a batch first for 3-D) float32, M contiguous,
    which is what gemm's scale_a with scale_recipe_a="1x128" reads. Not
    with a gate.

    Gated activation (GLU): gate="interleaved" pairs b's N columns, 2j
    the gate and 2j + 1 the up projection, and out is M x N/2 (N even),
    out[:, j] = activation(v[:, 2j]) * v[:, 2j + 1] with v after the bias
    (N values per column, or M per row): SwiGLU with activation="silu",
    GeGLU with the GELUs, ReGLU with "relu", bilinear with none.
    gate_limit > 0 clamps first (GPT-OSS): the gate to at most gate_limit,
    the up value to [-gate_limit, gate_limit]; 0 (default) does not.
    A gate reads no C (beta must be 0, c None); a residual is M x N/2.

    aux (with an activation, no gate, a bf16/f16/f32 out): also writes the
    values before the activation and the residual, alpha * a @ b + beta * c
    + bias, rounded once to out's type (what the activation's backward pass
    reads; cuBLASLt's GELU_AUX): aux=True allocates them like out (torch
    tensors), or pass a matrix of out's shape, dtype and order (batch
    included) that overlaps no other operand. The call then returns
    (out, aux), checked in full every time (not prepared).

    On torch tensors, the checks run once per layout: a later call whose
    tensors have the same shapes, strides, dtypes and device (and the same
    scalars, recipes, bias layout, activation, gate, and current stream
    or handle) passes only its pointers, which the C library checks
    (tessera.call_cache)."""
    if handle is None and aux is None and out_scale is None and amax is None:
        # A call on the default handle: whole in C where it was prepared before.
        prepared_in_c = fastcall.gemm_prepared()
        if prepared_in_c is not None:
            done = prepared_in_c(call_cache._entries, (a, b, out, c, bias, residual), (scale_a, scale_b),
                                 (alpha, beta, out_dtype, scale_recipe_a, scale_recipe_b, fast_accum, allow_tf32,
                                  activation, bias_along, gate, gate_limit),
                                 ctypes.addressof(plan.raw) if plan is not None else None)
            if isinstance(done, int):
                check(done)  # a status the library refused the call with: raises
            if done is not None:
                return done
    fp8_out = scales.wants_fp8_out(out_dtype, out, out_scale, amax)  # checked in full on every call
    full = fp8_out or aux is not None  # checked in full on every call, never prepared
    key = None if full else _call_key(a, b, out, c, alpha, beta, out_dtype, handle, scale_a, scale_b, scale_recipe_a,
                                      scale_recipe_b, (fast_accum, allow_tf32), bias, activation, bias_along,
                                      residual, (gate, gate_limit))
    prepared = call_cache.find(key) if key is not None else None
    if prepared is not None:
        return _run_prepared(prepared, handle, a, b, out, c, scale_a, scale_b, bias, plan, residual)
    c_given = c is not None
    given = handle
    handle, desc, views, out, (sa, sb), (fp8_ptrs, factors, aux_out) = _prepare(
        a, b, c, out, alpha, beta, handle, out_dtype, (scale_a, scale_b, scale_recipe_a, scale_recipe_b),
        (bias, activation, bias_along), residual, (gate, gate_limit), (out_scale, amax), aux)
    desc.fast_accum, desc.allow_tf32 = int(bool(fast_accum)), int(bool(allow_tf32))
    raw_plan = ctypes.byref(plan.raw) if plan is not None else None
    c_ptr = views["c"].ptr if "c" in views else None
    check(_lib.lib().tess_gemm_fused(handle._h, ctypes.byref(desc), raw_plan, ctypes.c_void_p(views["a"].ptr),
                                     ctypes.c_void_p(sa), ctypes.c_void_p(views["b"].ptr), ctypes.c_void_p(sb),
                                     ctypes.c_void_p(c_ptr), ctypes.c_void_p(views["out"].ptr),
                                     _epilogue_ptrs(_ptr(bias), views["residual"].ptr if residual is not None else None,
                                                    fp8_ptrs, views["aux"].ptr if aux is not None else None)))
    if factors is not None:
        return out, factors
    if aux is not None:
        return out, aux_out
    if key is not None and not lent_for_capture(handle):
        import torch  # a key is made for torch tensors only
        # (a caller's handle is not kept: its calls pass it again)
        # D's allocator: empty_like of a one-element tensor expanded to D's shape (no memory held),
        # which parses fewer arguments than torch.empty(shape, dtype=, device=)
        like = torch.empty((), dtype=out.dtype, device=out.device).expand(out.shape)
        call_cache.put(key, _Prepared(None if given is not None else handle, desc, not c_given and c_ptr is not None,
                                      functools.partial(torch.empty_like, like, memory_format=torch.contiguous_format)))
    return out


def lent_for_capture(handle):
    """Whether `handle` is a device's capture handle, lent to whichever capturing stream has no
    handle of its own (default_handle): a call made with it is never prepared, since the stream
    it serves changes from capture to capture."""
    return _capture_handles.get(handle.device) is handle


@dataclasses.dataclass(frozen=True)
class _Prepared:
    """What a gemm call's checks came to (tessera.call_cache): its default handle (None for a
    caller's) and descriptor, whether C is D (beta != 0 without c), and the D allocator of calls
    without out (empty(): a new tensor of the first call's D's shape, dtype and device)."""
    handle: Optional[Handle]
    desc: GemmDescStruct
    c_is_out: bool
    empty: Callable[[], object]
    desc_address: int = dataclasses.field(init=False)  # the descriptor's (tessera._fastcall's calls take it)

    def __post_init__(self):
        object.__setattr__(self, "desc_address", ctypes.addressof(self.desc))


def _call_key(a, b, out, c, alpha, beta, out_dtype, handle, scale_a, scale_b, recipe_a, recipe_b, flags, bias,
              activation, bias_along, residual=None, gate=(None, 0.0)):
    """The prepared-call key of a gemm call on torch CUDA tensors (None for any other call, which
    is checked in full every time; call_cache.call_selector); flags: (fast_accum, allow_tf32);
    gate: (gate, gate_limit). The bias and residual enter by their layouts (shape, strides, dtype,
    device); their pointers are passed on every call."""
    stream = call_cache.call_selector(handle, (a, b), (out, c, scale_a, scale_b, bias, residual))
    if stream is None:
        return None
    alpha, beta = float(alpha), float(beta)
    if alpha != alpha or beta != beta:  # NaN matches no key: checked in full, not remembered
        return None
    # (tensors, the other arguments, the stream): tessera._fastcall's gemm_prepared builds the same
    # key from the same arguments unconverted, which compare and hash alike (1 == 1.0 == True).
    # An unhashable key (a list for a recipe, say) is no key: call_cache.find and put say so.
    return (call_cache.tensor_keys((a, b, out, c, bias, residual), (scale_a, scale_b)),
            (alpha, beta, out_dtype, recipe_a, recipe_b, bool(flags[0]), bool(flags[1]), activation, bias_along,
             gate[0], gate[1]), stream)


def _run_prepared(p, handle, a, b, out, c, scale_a, scale_b, bias, plan, residual=None):
    """A gemm call whose key matched prepared call p: only the pointers are new (the C library
    checks their alignment); on the caller's handle, or p's default one."""
    if out is None:
        out = p.empty()
    fast = fastcall.module()
    if fast is not None:
        check(fast.gemm(fastcall.address("tess_gemm_fused"), (handle or p.handle)._h.value, p.desc_address,
                        ctypes.addressof(plan.raw) if plan is not None else None, a, scale_a, b, scale_b,
                        c if c is not None else out if p.c_is_out else None, out, bias, residual))
        return out
    c_ptr = c.data_ptr() if c is not None else out.data_ptr() if p.c_is_out else None
    check(_lib.lib().tess_gemm_fused((handle or p.handle)._h, ctypes.byref(p.desc),
                                     ctypes.byref(plan.raw) if plan is not None else None, a.data_ptr(),
                                     scale_a.data_ptr() if scale_a is not None else None, b.data_ptr(),
                                     scale_b.data_ptr() if scale_b is not None else None, c_ptr, out.data_ptr(),
                                     _epilogue_ptrs(_ptr(bias), _ptr(residual))))
    return out


def _torch_handle(x):
    """The default handle of a torch tensor's device and PyTorch's current stream there."""
    if x.device.type != "cuda":
        raise InvalidValueError(f"the tensor is in {x.device.type} memory; this runs on the GPU")
    return _stream_handle(x.device.index or 0, (x,))


def _fp8_dtype(dtype, caller):
    import torch
    qt = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}.get(dtype)
    if qt is None:
        raise InvalidValueError(f"{caller}: dtype {dtype!r}: 'e4m3' or 'e5m2'")
    return qt


def _check_row_major(x, handle, caller):
    """x: a 2-D row-major tensor on the handle's device (where a handle is given)."""
    if x.dim() != 2 or (x.stride(1) != 1 and x.shape[1] > 1):
        raise InvalidValueError(f"{caller}: x must be a 2-D row-major tensor (contiguous rows)")
    if handle is not None and (x.device.type != "cuda" or (x.device.index or 0) != handle.device):
        raise InvalidValueError(f"{caller}: x is on {x.device}, the handle on cuda:{handle.device}")


def _row_ld(x):
    """A row-major 2-D tensor's leading dimension (a single row's stride is arbitrary: its width then)."""
    return x.stride(0) if x.shape[0] > 1 else x.shape[1]


def _factors(mode, rows, cols, device):
    """An empty factor tensor in the packed layout of `mode` for `rows` x `cols`, and its ScaleDescStruct."""
    import torch
    layout, shape = ScaleDescStruct(), (ctypes.c_int64 * 2)()
    check(_lib.lib().tess_scale_layout_query(mode, rows, cols, ctypes.byref(layout), shape, None, None))
    factors = torch.empty_strided((shape[0], shape[1]), (max(layout.stride_mn, 1), max(layout.stride_k, 1)),
                                  dtype=torch.float32, device=device)
    return factors, layout


def quantize_fp8(x, recipe="1x128", dtype="e4m3", *, handle=None):
    """(q, scales): x (a 2-D row-major f32/f16/bf16 torch tensor, columns = K)
    quantized to FP8 with dequantization factors, such that x ~ q * scales
    per block. recipe: "tensor" (scales of shape (1,)), "rowwise" ((rows, 1):
    one per row), "1x128" ((rows,
    ceil(cols/128)), rows contiguous) or "128x128" ((ceil(rows/128),
    ceil(cols/128)), K blocks contiguous) -- the layouts gemm's scale_a /
    scale_b take for a = x, or b = x.T of a weight x."""
    import torch
    _check_row_major(x, handle, "quantize_fp8")
    mode = SCALE_RECIPES.get(recipe)
    if mode not in (scales.TENSOR, scales.OUTER_VEC, scales.BLOCK_1x128, scales.BLOCK_128x128):
        raise InvalidValueError(f"quantize_fp8: recipe {recipe!r}: one of 'tensor', 'rowwise', '1x128', '128x128'")
    qt = _fp8_dtype(dtype, "quantize_fp8")
    rows, cols = x.shape
    factors, layout = _factors(mode, rows, cols, x.device)
    q = torch.empty((rows, cols), dtype=qt, device=x.device)
    h = handle or _torch_handle(x)
    check(_lib.lib().tess_quantize_fp8(h._h, rows, cols, int(as_dtype(x.dtype)), ctypes.c_void_p(x.data_ptr()),
                                       _row_ld(x), int(as_dtype(qt)), ctypes.c_void_p(q.data_ptr()), cols,
                                       ctypes.c_void_p(factors.data_ptr()), ctypes.byref(layout)))
    return q, (factors.reshape(1) if mode == scales.TENSOR else factors)


def _round16(n):
    return (n + 15) // 16 * 16


def quantize_int8(x, recipe="rowwise", *, handle=None):
    """(q, scales): x (a 2-D row-major f32/f16/bf16 torch tensor, columns = K)
    quantized symmetrically to int8 for the W8A8 GEMM: factor = amax / 127,
    q = round(x / factor) in [-127, 127]. recipe: "rowwise" ((rows, 1): per
    token for activations, per output channel for a weight stored N x K) or
    "tensor" ((1,)) -- gemm's scale_a for a = x, or scale_b (as .T) for
    b = x.T of a weight x."""
    import torch
    _check_row_major(x, handle, "quantize_int8")
    mode = SCALE_RECIPES.get(recipe)
    if mode not in (scales.TENSOR, scales.OUTER_VEC):
        raise InvalidValueError(f"quantize_int8: recipe {recipe!r}: 'rowwise' or 'tensor'")
    rows, cols = x.shape
    factors, layout = _factors(mode, rows, cols, x.device)
    q = torch.empty((rows, _round16(cols)), dtype=torch.int8, device=x.device)[:, :cols]
    h = handle or _torch_handle(x)
    check(_lib.lib().tess_quantize_int8(h._h, rows, cols, int(as_dtype(x.dtype)), ctypes.c_void_p(x.data_ptr()),
                                        _row_ld(x), ctypes.c_void_p(q.data_ptr()), _round16(cols),
                                        ctypes.c_void_p(factors.data_ptr()), ctypes.byref(layout)))
    return q, (factors.reshape(1) if mode == scales.TENSOR else factors)


def quantize_fp8_transposed(x, recipe="1x128", dtype="e4m3", *, rowwise=True, handle=None):
    """Cast-transpose, for backward GEMMs: x (2-D row-major f32/f16/bf16,
    rows x cols) quantized twice in one read. Returns (q, scales, qt,
    scales_t): q, scales exactly as quantize_fp8(x, recipe), and qt (cols x
    rows, row-major: x.T) with scales_t exactly as quantize_fp8(x.T,
    recipe). recipe "1x128": each copy's factors along its own rows (qt is
    the K-major operand of a product that reduces over x's rows, as a weight
    gradient dY.T @ X); "128x128": one factor per block, the same for both
    (scales_t is scales.T as values; a weight and the K-major copy of its
    transpose). Both copies' rows are padded to 16 bytes (views of wider
    tensors), so either is a gemm operand at any extent. rowwise=False skips
    q and returns (qt, scales_t)."""
    import torch
    _check_row_major(x, handle, "quantize_fp8_transposed")
    mode = SCALE_RECIPES.get(recipe)
    if mode not in (scales.BLOCK_1x128, scales.BLOCK_128x128):
        raise InvalidValueError(f"quantize_fp8_transposed: recipe {recipe!r}: '1x128' or '128x128'")
    qtype = _fp8_dtype(dtype, "quantize_fp8_transposed")
    rows, cols = x.shape
    h = handle or _torch_handle(x)
    # rows padded to 16 bytes (TMA's rule), so that both copies are GEMM operands at any extent
    qt = torch.empty((cols, _round16(rows)), dtype=qtype, device=x.device)[:, :rows]
    factors_t, layout_t = _factors(mode, cols, rows, x.device)
    if rowwise:
        q = torch.empty((rows, _round16(cols)), dtype=qtype, device=x.device)[:, :cols]
        factors, layout = _factors(mode, rows, cols, x.device)
        q_ptr, f_ptr, layout_ref = q.data_ptr(), factors.data_ptr(), ctypes.byref(layout)
    else:
        q_ptr, f_ptr, layout_ref = None, None, None
    check(_lib.lib().tess_quantize_fp8_transposed(
        h._h, rows, cols, int(as_dtype(x.dtype)), ctypes.c_void_p(x.data_ptr()), _row_ld(x), int(as_dtype(qtype)),
        ctypes.c_void_p(q_ptr), _round16(cols), ctypes.c_void_p(f_ptr), layout_ref, ctypes.c_void_p(qt.data_ptr()),
        _round16(rows), ctypes.c_void_p(factors_t.data_ptr()), ctypes.byref(layout_t)))
    return (q, factors, qt, factors_t) if rowwise else (qt, factors_t)


def transpose(x, *, handle=None):
    """A row-major copy of x.T for a 2-D row-major torch tensor x (e.g. the
    K-major copy of an N-major FP8 operand)."""
    import torch
    _check_row_major(x, handle, "transpose")
    rows, cols = x.shape
    out = torch.empty((cols, rows), dtype=x.dtype, device=x.device)
    h = handle or _torch_handle(x)
    check(_lib.lib().tess_transpose(h._h, int(as_dtype(x.dtype)), rows, cols, ctypes.c_void_p(x.data_ptr()),
                                    _row_ld(x), ctypes.c_void_p(out.data_ptr()), rows))
    return out


def gemm_plans(a, b, out=None, *, c=None, alpha=1.0, beta=0.0, out_dtype=None, handle=None, limit=16, scale_a=None,
               scale_b=None, scale_recipe_a=None, scale_recipe_b=None, fast_accum=False, bias=None, activation=None,
               bias_along="columns", allow_tf32=False, residual=None, gate=None, gate_limit=0.0, out_scale=None):
    """Every plan that can run this problem within the handle's workspace, best first (for autotuning).
    Pass the scales (and fast_accum, bias, activation, allow_tf32, residual, gate, gate_limit, and
    an FP8 out's out_scale) gemm will get: FP8 plans depend on the scale recipes, gated problems
    and 1x128-scaled FP8 outs have fewer plans."""
    handle, desc, _, _, _, _ = _prepare(a, b, c, out, alpha, beta, handle, out_dtype,
                                        (scale_a, scale_b, scale_recipe_a, scale_recipe_b),
                                        (bias, activation, bias_along), residual, (gate, gate_limit),
                                        (out_scale, None))
    desc.fast_accum, desc.allow_tf32 = int(bool(fast_accum)), int(bool(allow_tf32))
    plans = (PlanStruct * limit)()
    count = ctypes.c_int()
    check(_lib.lib().tess_gemm_plans(handle._h, ctypes.byref(desc), plans, limit, ctypes.byref(count)))
    return [Plan._from(plans[i]) for i in range(min(count.value, limit))]


def gemm_workspace_size(a, b, out=None, *, c=None, alpha=1.0, beta=0.0, out_dtype=None, handle=None, scale_a=None,
                        scale_b=None, scale_recipe_a=None, scale_recipe_b=None, fast_accum=False, bias=None,
                        activation=None, bias_along="columns", allow_tf32=False, residual=None, gate=None,
                        gate_limit=0.0, out_scale=None):
    """Bytes of workspace the heuristic's favourite plan for this problem needs (with the K-major
    copies of FP8 operands that are not K-major); an FP8 out's out_scale as gemm's."""
    handle, desc, _, _, _, _ = _prepare(a, b, c, out, alpha, beta, handle, out_dtype,
                                        (scale_a, scale_b, scale_recipe_a, scale_recipe_b),
                                        (bias, activation, bias_along), residual, (gate, gate_limit),
                                        (out_scale, None))
    desc.fast_accum, desc.allow_tf32 = int(bool(fast_accum)), int(bool(allow_tf32))
    size = ctypes.c_size_t()
    check(_lib.lib().tess_gemm_workspace_size(handle._h, ctypes.byref(desc), ctypes.byref(size)))
    return size.value
