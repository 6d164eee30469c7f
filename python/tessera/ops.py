"""tessera's GEMMs as PyTorch custom operators: torch.ops.tessera.gemm,
grouped_mm, grouped_mm_masked and quantize_fp8.

Registered with torch.library (importing tessera registers them where torch
is installed), each with a fake implementation that gives the output's
shape, dtype, strides and device without running anything, so that
torch.compile(fullgraph=True), torch.export and FakeTensor tracing see
through them with no graph break. The real implementations are
tessera.gemm, tessera.grouped_mm, tessera.grouped_mm_masked and
tessera.quantize_fp8 (same arguments, the outputs always new tensors: a
custom operator returns no tensor that aliases its inputs), which check
every argument before the call. Rows a grouped GEMM's groups do not
cover are undefined in the new output.

Autograd: gemm and grouped_mm on bf16/f16 operands differentiate through
tessera's own GEMMs (dA = alpha dD B^T, dB = alpha A^T dD; a grouped
GEMM's dx on the transposed experts, its dw one k-grouped GEMM for every
expert, tessera.grouped_mm_wgrad, or one GEMM per expert where that does
not apply); a fused
bias gets the sum of dD over what it is broadcast along. A fused
activation is differentiated at the values before it, recomputed by one
more GEMM. FP8 operands, scale factors and a gate (gate="interleaved")
take no gradient (NotImplementedError).

    y = torch.ops.tessera.gemm(x, w.T)                                   # bf16
    y = torch.ops.tessera.gemm(q, wq.T, scale_a=sx, scale_b=sw,
                               scale_recipe_a="1x128", scale_recipe_b="128x128")
    y = torch.ops.tessera.gemm(x, w.T, bias=b, activation="gelu")       # a fused linear layer
    y = torch.ops.tessera.gemm(x, w13.T, activation="silu", gate="interleaved")  # SwiGLU, N/2 columns
    y = torch.ops.tessera.grouped_mm(x, w, offs)                         # MoE experts
"""
from typing import List, Optional, Tuple

import torch

# (By name, not `from . import gemm`: the package's `gemm` attribute is the
# function, which shadows the module of the same name.)
from .gemm import gemm as _gemm_call
from .gemm import quantize_fp8 as _quantize_fp8_call
from .grouped import grouped_mm as _grouped_mm_call
from .grouped import grouped_mm_masked as _grouped_mm_masked_call
from .wgrad import grouped_mm_wgrad as _grouped_mm_wgrad_call
from . import epilogue as _epilogue
from . import scales as _scales
from .errors import InvalidValueError, NotSupportedError

_FP8 = (torch.float8_e4m3fn, torch.float8_e5m2)


def _out_dtype(a_dtype, out_dtype):
    """D's dtype: out_dtype, else A's for 16-bit inputs, bf16 for FP8 (tessera.gemm's rule)."""
    if out_dtype is not None:
        return out_dtype
    return torch.bfloat16 if a_dtype in _FP8 else a_dtype


def _batch(t):
    """A 2-D operand's batch (1), or a 3-D one's leading dimension."""
    return t.shape[0] if t.dim() == 3 else 1


@torch.library.custom_op("tessera::gemm", mutates_args=(), device_types="cuda")
def gemm(a: torch.Tensor, b: torch.Tensor, c: Optional[torch.Tensor] = None, alpha: float = 1.0, beta: float = 0.0,
         out_dtype: Optional[torch.dtype] = None, scale_a: Optional[torch.Tensor] = None,
         scale_b: Optional[torch.Tensor] = None, scale_recipe_a: Optional[str] = None,
         scale_recipe_b: Optional[str] = None, fast_accum: bool = False, bias: Optional[torch.Tensor] = None,
         activation: str = "none", bias_along: str = "columns", residual: Optional[torch.Tensor] = None,
         gate: str = "none", gate_limit: float = 0.0) -> torch.Tensor:
    """D = activation(alpha * (scale_a . a) @ (scale_b . b) + beta * c + bias) + residual, a new
    row-major tensor (tessera.gemm; gate="interleaved": D has N/2 columns, activation(v[:, 0::2]) *
    v[:, 1::2] + residual)."""
    return _gemm_call(a, b, c=c, alpha=alpha, beta=beta, out_dtype=_out_dtype(a.dtype, out_dtype), scale_a=scale_a,
                      scale_b=scale_b, scale_recipe_a=scale_recipe_a, scale_recipe_b=scale_recipe_b,
                      fast_accum=fast_accum, bias=bias, activation=activation, bias_along=bias_along,
                      residual=residual, gate=gate, gate_limit=gate_limit)


def _device_index(t):
    """The CUDA device index of a (fake) tensor."""
    return t.device.index or 0


@gemm.register_fake
def _gemm_fake(a, b, c=None, alpha=1.0, beta=0.0, out_dtype=None, scale_a=None, scale_b=None, scale_recipe_a=None,
               scale_recipe_b=None, fast_accum=False, bias=None, activation="none", bias_along="columns",
               residual=None, gate="none", gate_limit=0.0):
    """(batch,) M x N (N/2 with a gate), row-major: 3-D where either operand has a batch of more
    than one. Refuses what the real one refuses from the shapes alone (so that torch.compile says
    it at trace time)."""
    for what, t in (("a", a), ("b", b)):
        if t.dim() not in (2, 3):
            raise InvalidValueError(f"{what}: expected a 2-D matrix or a 3-D batch of matrices, got shape "
                                    f"{tuple(t.shape)}")
    if a.shape[-1] != b.shape[-2]:
        raise InvalidValueError(f"a is {a.shape[-2]} x {a.shape[-1]} but b is {b.shape[-2]} x {b.shape[-1]}: a's "
                                "columns and b's rows are K and must match")
    if _batch(a) > 1 and _batch(b) > 1 and _batch(a) != _batch(b):
        raise InvalidValueError(f"a holds a batch of {_batch(a)} and b of {_batch(b)}: equal, or one of them 1")
    batch = max(_batch(a), _batch(b))
    m, n = a.shape[-2], b.shape[-1]
    gated, _ = _epilogue.check_gate(gate, gate_limit, n)
    if gated:
        _epilogue.check_gate_reads_no_c(gate, beta, c)
    _epilogue.dense_epilogue(bias, activation, bias_along, m, n, batch, _device_index(a), gated=bool(gated))
    cols = n // 2 if gated else n
    shape = (batch, m, cols) if batch > 1 else (m, cols)
    if residual is not None and (residual.dim() not in (2, 3) or tuple(residual.shape[-2:]) != (m, cols) or
                                 (residual.dim() == 3 and residual.shape[0] not in (1, batch))):
        raise InvalidValueError(f"residual: expected shape {shape} (or ({m}, {cols}) shared by the batch), got "
                                f"{tuple(residual.shape)}")
    return a.new_empty(shape, dtype=_out_dtype(a.dtype, out_dtype))


@torch.library.custom_op("tessera::grouped_mm", mutates_args=(), device_types="cuda")
def grouped_mm(x: torch.Tensor, w: torch.Tensor, offs: torch.Tensor, scale_x: Optional[torch.Tensor] = None,
               scale_w: Optional[torch.Tensor] = None, expected_m: Optional[int] = None,
               out_dtype: Optional[torch.dtype] = None, scale_recipe_x: Optional[str] = None,
               scale_recipe_w: Optional[str] = None, w_layout: str = "nk", bias: Optional[torch.Tensor] = None,
               activation: str = "none", gate: str = "none", gate_limit: float = 0.0) -> torch.Tensor:
    """y[rows of g] = activation(x[rows of g] @ w[g].T + bias[g]) for each expert g of the contiguous
    layout (tessera.grouped_mm; w_layout="kn": w [G, K, N] and y = x @ w[g], as torch._grouped_mm;
    gate="interleaved": y has N/2 columns); rows past offs[-1] are undefined (as torch._grouped_mm's:
    clearing them would cost a pass over y)."""
    return _grouped_mm_call(x, w, offs, scale_x=scale_x, scale_w=scale_w, expected_m=expected_m,
                               out_dtype=_out_dtype(x.dtype, out_dtype), scale_recipe_x=scale_recipe_x,
                               scale_recipe_w=scale_recipe_w, w_layout=w_layout, bias=bias, activation=activation,
                               gate=gate, gate_limit=gate_limit)


def _grouped_shapes(what, x, w, rows, rows_what, w_layout, x_dims):
    """(G, N, K) of a grouped call from its shapes, refusing what the real one refuses from the shapes
    alone (so that torch.compile says it at trace time)."""
    if w_layout not in ("nk", "kn"):
        raise InvalidValueError(f"w_layout={w_layout!r}: 'nk' (w [G, N, K], y = x @ w[g].T) or 'kn' (w [G, K, N], "
                                "y = x @ w[g], as torch._grouped_mm)")
    if w.dim() != 3:
        raise InvalidValueError(f"w: expected [G, N, K] (or [G, K, N] with w_layout='kn'), got shape {tuple(w.shape)}")
    if x.dim() != x_dims:
        raise InvalidValueError(f"{what}: x: expected {'[G, M_max, K]' if x_dims == 3 else '[total_M, K]'}, got "
                                f"shape {tuple(x.shape)}")
    groups = w.shape[0]
    n, k = (w.shape[1], w.shape[2]) if w_layout == "nk" else (w.shape[2], w.shape[1])
    if x.shape[-1] != k:
        raise InvalidValueError(f"{what}: x's rows hold {x.shape[-1]} elements but each expert's weight takes K = {k}")
    if rows.dim() != 1 or rows.shape[0] != groups:
        raise InvalidValueError(f"{rows_what}: expected shape ({groups},) (one entry per group), got "
                                f"{tuple(rows.shape)}")
    if x_dims == 3 and x.shape[0] != groups:
        raise InvalidValueError(f"x: {x.shape[0]} batches but w holds {groups} experts; the masked layout needs one "
                                "batch of rows per expert")
    return groups, n, k


@grouped_mm.register_fake
def _grouped_mm_fake(x, w, offs, scale_x=None, scale_w=None, expected_m=None, out_dtype=None, scale_recipe_x=None,
                     scale_recipe_w=None, w_layout="nk", bias=None, activation="none", gate="none", gate_limit=0.0):
    """total_M x N (N/2 with a gate), row-major (no tokens at all: 0 x N, as the real one returns
    before its checks but the activation's and the gate's)."""
    if x.dim() == 2 and x.shape[0] == 0 and w.dim() == 3 and w_layout in ("nk", "kn"):
        _epilogue.activation_code(activation)
        n = w.shape[1] if w_layout == "nk" else w.shape[2]
        gated, _ = _epilogue.check_gate(gate, gate_limit, n)
        return x.new_empty((0, n // 2 if gated else n), dtype=_out_dtype(x.dtype, out_dtype))
    groups, n, _ = _grouped_shapes("grouped_mm", x, w, offs, "offs", w_layout, 2)
    gated, _ = _epilogue.check_gate(gate, gate_limit, n)
    _epilogue.grouped_epilogue(bias, activation, groups, n, _device_index(x), gated=bool(gated))
    return x.new_empty((x.shape[0], n // 2 if gated else n), dtype=_out_dtype(x.dtype, out_dtype))


@torch.library.custom_op("tessera::grouped_mm_masked", mutates_args=(), device_types="cuda")
def grouped_mm_masked(x: torch.Tensor, w: torch.Tensor, masked_m: torch.Tensor, expected_m: int,
                      scale_x: Optional[torch.Tensor] = None, scale_w: Optional[torch.Tensor] = None,
                      out_dtype: Optional[torch.dtype] = None, scale_recipe_x: Optional[str] = None,
                      scale_recipe_w: Optional[str] = None, w_layout: str = "nk", bias: Optional[torch.Tensor] = None,
                      activation: str = "none", gate: str = "none", gate_limit: float = 0.0) -> torch.Tensor:
    """y[g, :masked_m[g]] = activation(x[g, :masked_m[g]] @ w[g].T + bias[g]) (tessera.grouped_mm_masked;
    w_layout and gate as grouped_mm's); rows past masked_m[g] are undefined (as DeepGEMM's)."""
    return _grouped_mm_masked_call(x, w, masked_m, expected_m, scale_x=scale_x, scale_w=scale_w,
                                      out_dtype=_out_dtype(x.dtype, out_dtype), scale_recipe_x=scale_recipe_x,
                                      scale_recipe_w=scale_recipe_w, w_layout=w_layout, bias=bias,
                                      activation=activation, gate=gate, gate_limit=gate_limit)


@grouped_mm_masked.register_fake
def _grouped_mm_masked_fake(x, w, masked_m, expected_m, scale_x=None, scale_w=None, out_dtype=None,
                            scale_recipe_x=None, scale_recipe_w=None, w_layout="nk", bias=None, activation="none",
                            gate="none", gate_limit=0.0):
    """G x M_max x N (N/2 with a gate), row-major."""
    groups, n, _ = _grouped_shapes("grouped_mm_masked", x, w, masked_m, "masked_m", w_layout, 3)
    gated, _ = _epilogue.check_gate(gate, gate_limit, n)
    _epilogue.grouped_epilogue(bias, activation, groups, n, _device_index(x), gated=bool(gated))
    return x.new_empty((x.shape[0], x.shape[1], n // 2 if gated else n), dtype=_out_dtype(x.dtype, out_dtype))


@torch.library.custom_op("tessera::quantize_fp8", mutates_args=(), device_types="cuda")
def quantize_fp8(x: torch.Tensor, recipe: str = "1x128", dtype: str = "e4m3") -> Tuple[torch.Tensor, torch.Tensor]:
    """(q, scales) of tessera.quantize_fp8: x ~ q * scales per block, scales in the layout gemm reads fastest."""
    return _quantize_fp8_call(x, recipe, dtype)


@quantize_fp8.register_fake
def _quantize_fp8_fake(x, recipe="1x128", dtype="e4m3"):
    """q: x's shape in FP8; scales: (1,) per tensor, else tess_scale_layout_query's packed layout.
    Refuses what the real one refuses before it reads x."""
    if x.dim() != 2 or x.stride(1) != 1:
        raise InvalidValueError("quantize_fp8: x must be a 2-D row-major tensor (contiguous rows)")
    mode = _scales.RECIPES.get(recipe)
    if mode not in (_scales.TENSOR, _scales.BLOCK_1x128, _scales.BLOCK_128x128):
        raise InvalidValueError(f"quantize_fp8: recipe {recipe!r}: one of 'tensor', '1x128', '128x128'")
    if dtype not in ("e4m3", "e5m2"):
        raise InvalidValueError(f"quantize_fp8: dtype {dtype!r}: 'e4m3' or 'e5m2'")
    rows, cols = x.shape
    q = x.new_empty((rows, cols), dtype=torch.float8_e4m3fn if dtype == "e4m3" else torch.float8_e5m2)
    if mode == _scales.TENSOR:
        return q, x.new_empty((1,), dtype=torch.float32)
    block_rows = rows if mode == _scales.BLOCK_1x128 else _scales.ceil_div(rows, _scales.BLOCK)
    stride_mn, stride_k = _scales.packed_strides(mode, rows, cols)
    return q, x.new_empty_strided((block_rows, _scales.ceil_div(cols, _scales.BLOCK)),
                                  (max(stride_mn, 1), max(stride_k, 1)), dtype=torch.float32)


__all__: List[str] = ["gemm", "grouped_mm", "grouped_mm_masked", "grouped_mm_wgrad", "quantize_fp8"]


# ---- autograd: bf16/f16 GEMMs differentiate through tessera's own kernels -------------------------

_SIXTEEN = (torch.bfloat16, torch.float16)


def _check_differentiable(what, scaled, *tensors):
    """Refuses a gradient through FP8 operands or dequantization factors (no FP8 backward here)."""
    if scaled or any(t.dtype not in _SIXTEEN for t in tensors):
        raise NotImplementedError(f"tessera.ops.{what}: gradients flow through bf16/f16 GEMMs only, not FP8 "
                                  "operands or scale factors")


def _sum_to(t, shape):
    """t summed over the batch dimension that `shape` (a broadcast operand's) lacks or has as 1."""
    if t.dim() == 3 and len(shape) == 2:
        return t.sum(0)
    if t.dim() == 3 and shape[0] == 1 and t.shape[0] != 1:
        return t.sum(0, keepdim=True)
    return t.reshape(shape)


def _gemm_setup(ctx, inputs, output):
    a, b, c, alpha, beta = inputs[:5]
    # with an activation, what recomputing the values before it needs (_before_activation)
    act = _epilogue.activation_code(inputs[12]) != 0
    ctx.save_for_backward(a, b, c if act else None, inputs[11] if act else None)
    ctx.alpha, ctx.beta = alpha, beta
    ctx.c_dtype, ctx.c_shape = (c.dtype, tuple(c.shape)) if c is not None else (None, None)
    ctx.scaled = inputs[6] is not None or inputs[7] is not None
    _epilogue_setup(ctx, inputs[11], inputs[12])
    ctx.bias_along = inputs[13]
    residual = inputs[14] if len(inputs) > 14 else None
    ctx.residual_dtype, ctx.residual_shape = (residual.dtype, tuple(residual.shape)) if residual is not None \
        else (None, None)
    ctx.gate = inputs[15] if len(inputs) > 15 else "none"


def _epilogue_setup(ctx, bias, activation):
    """Keeps what a fused epilogue's gradient needs: the bias's dtype and shape, the activation."""
    ctx.bias_dtype, ctx.bias_shape = (bias.dtype, tuple(bias.shape)) if bias is not None else (None, None)
    ctx.activation = activation


def _check_no_gate(what, gate):
    """Refuses a gradient through a gate (its derivative needs the gate and up values, which the
    fused GEMM never stores)."""
    if _epilogue.gate_code(gate) != 0:
        raise NotImplementedError(f"tessera.ops.{what}: a gated epilogue (gate={gate!r}) has no autograd; where "
                                  f"gradients are needed, compute the product without the gate and apply it "
                                  f"outside (e.g. v = torch.ops.tessera.{what}(...); F.silu(v[..., 0::2]) * "
                                  f"v[..., 1::2])")


def _bias_grad(sums, shape, dtype):
    """A bias's gradient from `sums`, dD summed over the dimension the bias is broadcast along
    ((L,) or (batch, L)): summed over the batch too where the bias is shared ((L,) or (1, L))."""
    sums = sums.reshape(-1, sums.shape[-1])
    if len(shape) == 1:
        sums = sums.sum(0)
    elif shape[0] == 1:
        sums = sums.sum(0, keepdim=True)
    return sums.reshape(shape).to(dtype)


# GELU's tanh form: sqrt(2 / pi) and the cubic term's weight (as the kernels' TESS_GELU_TANH_*);
# its erf form: 1 / sqrt(2) (TESS_RSQRT2) and the normal density's 1 / sqrt(2 pi).
_GELU_TANH_SCALE, _GELU_TANH_CUBIC = 0.7978845608028654, 0.044715
_RSQRT2, _RSQRT_2PI = 0.7071067811865476, 0.3989422804014327


def _activation_grad(activation, before, grad):
    """grad times the activation's derivative at `before` (the values before it), in float32:
    ReLU's step (0 at 0, as torch's), GELU's erf form Phi(x) + x phi(x), its tanh form
    0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2) with t = tanh(k (x + c x^3)), SiLU's
    s (1 + x (1 - s)) with s = sigmoid(x); closed forms, so that no autograd graph is built in
    a backward pass (and fake tensors trace it)."""
    x, code, codes = before.float(), _epilogue.activation_code(activation), _epilogue.ACTIVATIONS
    if code == codes["relu"]:
        d = (x > 0).float()
    elif code == codes["gelu_tanh"]:
        t = torch.tanh(_GELU_TANH_SCALE * (x + _GELU_TANH_CUBIC * x * x * x))
        d = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * _GELU_TANH_SCALE * (1 + 3 * _GELU_TANH_CUBIC * x * x)
    elif code == codes["gelu_erf"]:
        d = 0.5 * (1 + torch.erf(x * _RSQRT2)) + x * torch.exp(-0.5 * x * x) * _RSQRT_2PI
    else:  # SiLU
        s = torch.sigmoid(x)
        d = s * (1 + x * (1 - s))
    return grad.float() * d


def _before_activation(ctx, a, b, c, bias):
    """The forward's values before its activation, alpha a b + beta c + bias, recomputed by one
    tessera GEMM without the activation (and without the residual, which comes after it), in
    float32 so that the derivative sees them unrounded."""
    return gemm(a, b, c, ctx.alpha, ctx.beta, torch.float32, bias=bias, bias_along=ctx.bias_along)


def _gemm_backward(ctx, grad):
    """dA = alpha dV B^T, dB = alpha A^T dV (batched as D is, summed over a broadcast operand's
    batch), dC = beta dV; each product a tessera GEMM on transposed views (no copies), where dV =
    dD times the fused activation's derivative at the values before it (recomputed by one more
    GEMM; dD itself without an activation). dV is taken in A's type (an f32 D of bf16 inputs gives
    bf16 gradients). A fused bias gets dV summed over the rows (bias_along="columns") or the
    columns ("rows"), in float32; a residual gets dD (summed over the batch where it is shared); a
    gate has no gradient here (NotImplementedError)."""
    a, b, c, bias = ctx.saved_tensors
    _check_no_gate("gemm", getattr(ctx, "gate", "none"))
    _check_differentiable("gemm", ctx.scaled, a, b)
    dres_from = grad  # the residual is added after the activation: its gradient is dD
    if _epilogue.activation_code(ctx.activation) != 0:
        grad = _activation_grad(ctx.activation, _before_activation(ctx, a, b, c, bias), grad)
    g = grad.to(a.dtype).contiguous()
    if g.dim() == 2 and (a.dim() == 3 or b.dim() == 3):  # a batch of one gave a 2-D D
        g = g.unsqueeze(0)
    da = db = dc = None
    if ctx.needs_input_grad[0]:
        da = _sum_to(gemm(g, b.transpose(-1, -2), alpha=ctx.alpha), a.shape)
    if ctx.needs_input_grad[1]:
        db = _sum_to(gemm(a.transpose(-1, -2), g, alpha=ctx.alpha), b.shape)
    if ctx.c_dtype is not None and ctx.needs_input_grad[2]:
        dg = grad.unsqueeze(0) if grad.dim() == 2 and len(ctx.c_shape) == 3 else grad
        dc = _sum_to(dg * ctx.beta, ctx.c_shape).to(ctx.c_dtype)
    dbias = None
    if ctx.bias_dtype is not None and ctx.needs_input_grad[11]:
        dbias = _bias_grad(grad.float().sum(-2 if ctx.bias_along == "columns" else -1), ctx.bias_shape,
                           ctx.bias_dtype)
    dres = None
    if getattr(ctx, "residual_dtype", None) is not None and ctx.needs_input_grad[14]:
        dg = dres_from.unsqueeze(0) if dres_from.dim() == 2 and len(ctx.residual_shape) == 3 else dres_from
        dres = _sum_to(dg, ctx.residual_shape).to(ctx.residual_dtype)
    return da, db, dc, None, None, None, None, None, None, None, None, dbias, None, None, dres, None, None


torch.library.register_autograd("tessera::gemm", _gemm_backward, setup_context=_gemm_setup)


def _grouped_setup(ctx, inputs, output):
    x, w, offs = inputs[:3]
    act = _epilogue.activation_code(inputs[11]) != 0  # the bias is then needed to recompute the values before it
    ctx.save_for_backward(x, w, offs, inputs[10] if act else None)
    ctx.scaled = inputs[3] is not None or inputs[4] is not None
    ctx.w_layout = inputs[9]
    _epilogue_setup(ctx, inputs[10], inputs[11])
    ctx.gate = inputs[12] if len(inputs) > 12 else "none"


def _wgrad_in_one_launch(dy, x, offs, groups):
    """dw by tessera.grouped_mm_wgrad (one k-grouped kernel for every expert, no host
    synchronization), or None where it does not apply: operands the k-grouped kernels cannot
    read (not bf16/f16 of one type, rows not whole 16 bytes or misaligned, offs not int32 [G]),
    or no k-grouped kernel for this build and device (NotSupportedError)."""
    if dy.dtype != x.dtype or dy.dtype not in (torch.bfloat16, torch.float16) or offs.dtype != torch.int32:
        return None
    if offs.dim() != 1 or offs.shape[0] != groups or groups < 1 or (groups > 1 and offs.stride(0) != 1):
        return None
    for t in (dy, x):
        if t.dim() != 2 or (t.shape[1] > 1 and t.stride(1) != 1) or (t.shape[0] > 1 and t.stride(0) % 8) or (
                t.shape[0] > 0 and t.data_ptr() % 16):
            return None
    try:
        return _grouped_mm_wgrad_call(dy, x, offs)
    except NotSupportedError:
        return None


@torch.library.custom_op("tessera::grouped_mm_wgrad", mutates_args=(), device_types="cuda")
def grouped_mm_wgrad(dy: torch.Tensor, x: torch.Tensor, offs: torch.Tensor, groups: int) -> torch.Tensor:
    """dw[g] = dy[rows of g]^T @ x[rows of g], [G, N, K]: grouped_mm's weight gradient, zero for an
    expert without rows: one k-grouped kernel for every expert (tessera.grouped_mm_wgrad) where it
    applies, else one tessera GEMM per expert (the group ends read once on the host: not for CUDA
    graph capture). One operator, so that torch.compile sees no data-dependent loop."""
    dw = _wgrad_in_one_launch(dy, x, offs, groups)
    if dw is not None:
        return dw
    ends = [0] + offs.tolist()
    dw = torch.zeros((groups, dy.shape[1], x.shape[1]), dtype=x.dtype, device=x.device)
    for e in range(groups):
        if ends[e + 1] > ends[e]:
            dw[e] = gemm(dy[ends[e]:ends[e + 1]].T, x[ends[e]:ends[e + 1]])
    return dw


@grouped_mm_wgrad.register_fake
def _grouped_mm_wgrad_fake(dy, x, offs, groups):
    return x.new_empty((groups, dy.shape[1], x.shape[1]))


def _grouped_backward(ctx, grad):
    """dx[rows of g] = dy[rows of g] @ w[g] (a grouped GEMM reading the experts' weights in place,
    as its K x N operand with N contiguous: no transposed copy), zero in rows past offs[-1]
    (which no group owns); dw by grouped_mm_wgrad ([G, N, K], transposed back to [G, K, N] for
    w_layout="kn"); a fused bias dy summed over each group's rows ((G, N)) or over every owned
    row ((N,)), in float32. With a fused activation dy is first multiplied by its derivative at
    the values before it (recomputed by one grouped GEMM without it, f32; rows past offs[-1],
    undefined there, give 0); a gate has no gradient here (NotImplementedError)."""
    x, w, offs, bias = ctx.saved_tensors
    _check_no_gate("grouped_mm", getattr(ctx, "gate", "none"))
    _check_differentiable("grouped_mm", ctx.scaled, x, w)
    w_nk = w if ctx.w_layout == "nk" else w.transpose(1, 2)  # each expert's N x K weight
    if _epilogue.activation_code(ctx.activation) != 0:
        before = grouped_mm(x, w, offs, out_dtype=torch.float32, w_layout=ctx.w_layout, bias=bias)
        owned = torch.arange(grad.shape[0], device=grad.device).unsqueeze(1) < offs[-1:].to(torch.int64)
        grad = torch.where(owned, _activation_grad(ctx.activation, before, grad), 0.0)
    g = grad.to(x.dtype).contiguous()
    dx = dw = None
    if ctx.needs_input_grad[0]:
        dx = grouped_mm(g, w_nk, offs, w_layout="kn")  # dy @ w[g]: the weights as they are (16-bit: either major)
        unowned = torch.arange(dx.shape[0], device=dx.device).unsqueeze(1) >= offs[-1:].to(torch.int64)
        dx = dx.masked_fill(unowned, 0)
    if ctx.needs_input_grad[1]:
        dw = grouped_mm_wgrad(g, x, offs, w.shape[0])
        if ctx.w_layout == "kn":
            dw = dw.transpose(1, 2)
    dbias = None
    if ctx.bias_dtype is not None and ctx.needs_input_grad[10]:
        groups = w.shape[0]
        rows = torch.arange(grad.shape[0], device=grad.device, dtype=offs.dtype)
        group = torch.searchsorted(offs, rows, right=True)  # the group owning each row; G past offs[-1]
        sums = grad.new_zeros((groups + 1, grad.shape[1]), dtype=torch.float32)
        sums = sums.index_add(0, group, grad.float())[:groups]
        dbias = _bias_grad(sums, ctx.bias_shape, ctx.bias_dtype)
    return dx, dw, None, None, None, None, None, None, None, None, dbias, None, None, None


torch.library.register_autograd("tessera::grouped_mm", _grouped_backward, setup_context=_grouped_setup)
