"""FP8 training: a linear layer whose three GEMMs (forward, input gradient,
weight gradient) run in FP8 on tessera's kernels, with DeepSeek-V3's
fine-grained recipe: activations and gradients in 1x128 blocks along the
reduced dimension, weights in 128x128 blocks.

Hopper's FP8 tensor cores read only K-major operands, and each GEMM of the
step reduces over a different dimension, so every tensor is quantized along
the dimension its GEMM reduces over:

  forward  Y  = X W^T      X (T x Din) 1x128 along Din, W (Dout x Din) 128x128
  dgrad    dX = dY W       dY 1x128 along Dout, W^T in 128x128 blocks: the
                           forward's factors, W^T quantized in the same read
                           as W (cast-transpose)
  wgrad    dW = dY^T X     dY^T and X^T 1x128 along the tokens T, both made
                           by the cast-transpose in the same read as the
                           row-wise copies

The master weight and the gradients stay in the caller's precision (bf16,
f16 or f32); the quantized copies live only for the step."""
import torch

from .errors import InvalidValueError
from .gemm import gemm, quantize_fp8, quantize_fp8_transposed

_FP8 = ("e4m3", "e5m2")
_HIGH = (torch.bfloat16, torch.float16, torch.float32)


class _FP8Linear(torch.autograd.Function):
    """Y = X W^T (+ bias) with the three GEMMs in FP8 (see the module's docstring)."""

    @staticmethod
    def forward(ctx, x2, weight, bias, grad_dtype):
        if ctx.needs_input_grad[1]:  # X^T (1x128 along the tokens) for the weight gradient, in the same read
            xq, xs, xqt, xst = quantize_fp8_transposed(x2)
        else:
            xq, xs = quantize_fp8(x2, "1x128")
            xqt = xst = None
        if ctx.needs_input_grad[0]:  # W^T, K-major for the input gradient, in the same read
            wq, ws, wqt, wst = quantize_fp8_transposed(weight, "128x128")
        else:
            wq, ws = quantize_fp8(weight, "128x128")
            wqt = wst = None
        y = gemm(xq, wq.T, scale_a=xs, scale_b=ws, scale_recipe_a="1x128", scale_recipe_b="128x128",
                 out_dtype=x2.dtype, bias=bias)
        ctx.save_for_backward(wqt, wst, xqt, xst)
        ctx.grad_dtype, ctx.x_dtype, ctx.w_dtype = grad_dtype, x2.dtype, weight.dtype
        ctx.bias_dtype = bias.dtype if bias is not None else None
        return y

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dy):
        wqt, wst, xqt, xst = ctx.saved_tensors
        need_dx, need_dw, need_db = ctx.needs_input_grad[0], ctx.needs_input_grad[1], ctx.needs_input_grad[2]
        dy = dy.contiguous()
        dx = dw = db = None
        if need_dw:
            parts = quantize_fp8_transposed(dy, "1x128", ctx.grad_dtype, rowwise=need_dx)
            dyq, dys, dyqt, dyst = parts if need_dx else (None, None) + parts
        elif need_dx:
            dyq, dys = quantize_fp8(dy, "1x128", ctx.grad_dtype)
        if need_dx:
            # dX = dY W: B = W (Dout x Din) read K-major, i.e. W^T row-major
            dx = gemm(dyq, wqt.T, scale_a=dys, scale_b=wst, scale_recipe_a="1x128", scale_recipe_b="128x128",
                      out_dtype=ctx.x_dtype)
        if need_dw:
            dw = gemm(dyqt, xqt.T, scale_a=dyst, scale_b=xst, scale_recipe_a="1x128", scale_recipe_b="1x128",
                      out_dtype=ctx.w_dtype)
        if need_db and ctx.bias_dtype is not None:
            db = dy.float().sum(0).to(ctx.bias_dtype)
        return dx, dw, db, None


def fp8_linear(x, weight, bias=None, *, grad_dtype="e4m3"):
    """x @ weight.T + bias with the forward and both backward GEMMs in FP8
    (DeepSeek-V3's recipe: 1x128 blocks for activations and gradients,
    128x128 for the weight; see tessera.fp8_training). x: (..., Din)
    bf16/f16/f32 on a Hopper GPU; weight (Dout, Din) and bias (Dout,) of
    any of those types; Din and Dout multiples of 16. grad_dtype: the FP8
    type of the output gradient ("e4m3", or "e5m2" for its range). Returns
    (..., Dout) in x's type; gradients arrive in each input's type."""
    if grad_dtype not in _FP8:
        raise InvalidValueError(f"fp8_linear: grad_dtype {grad_dtype!r}: 'e4m3' or 'e5m2'")
    if x.dtype not in _HIGH or weight.dtype not in _HIGH:
        raise InvalidValueError(f"fp8_linear: x is {x.dtype} and weight {weight.dtype}; both must be bf16, f16 or "
                                "f32 (the layer quantizes them)")
    if weight.dim() != 2 or x.shape[-1] != weight.shape[1]:
        raise InvalidValueError(f"fp8_linear: x is {tuple(x.shape)} and weight {tuple(weight.shape)}; weight must be "
                                "(Dout, Din) with Din = x.shape[-1]")
    din, dout = weight.shape[1], weight.shape[0]
    if din % 16 or dout % 16:
        raise InvalidValueError(f"fp8_linear: Din={din} and Dout={dout} must be multiples of 16 (FP8 rows are "
                                "whole 16-byte units)")
    if bias is not None and tuple(bias.shape) != (dout,):
        raise InvalidValueError(f"fp8_linear: bias is {tuple(bias.shape)}; it must be ({dout},)")
    lead = x.shape[:-1]
    if x.numel() == 0:  # no tokens: nothing to quantize (torch's linear gives the empty result and gradients)
        return torch.nn.functional.linear(x, weight, bias)
    x2 = x.reshape(-1, din).contiguous()
    y = _FP8Linear.apply(x2, weight.contiguous(), bias, grad_dtype)
    return y.reshape(*lead, dout)


class FP8Linear(torch.nn.Linear):
    """torch.nn.Linear whose forward and backward GEMMs run in FP8 (fp8_linear); the parameters stay
    in their own precision."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None, grad_dtype="e4m3"):
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)
        self.grad_dtype = grad_dtype

    def forward(self, x):
        return fp8_linear(x, self.weight, self.bias, grad_dtype=self.grad_dtype)
