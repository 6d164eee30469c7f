"""FP8 training: the cast-transpose (quantize_fp8_transposed) bit for bit against quantize_fp8 of x
and of x.T, and fp8_linear's forward and gradients against float64 torch and against the same
GEMMs called by hand."""
import pytest

import tessera
from conftest import needs_gpu


def _bits(q):
    """An FP8 tensor's bytes (torch.equal compares them exactly, -0 and +0 apart)."""
    import torch
    return q.view(torch.uint8)


@needs_gpu
@pytest.mark.parametrize("rows,cols", [(128, 256), (1, 16), (300, 1000), (4097, 520), (77, 33)])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
def test_cast_transpose_matches_quantize(torch, rows, cols, dtype):
    x = torch.randn(rows, cols, device="cuda", dtype=getattr(torch, dtype)) * 3
    x[: min(rows, 5)] = 0  # all-zero rows: factors of 1
    for qtype, recipe in (("e4m3", "1x128"), ("e5m2", "1x128"), ("e4m3", "128x128")):
        q, s, qt, st = tessera.quantize_fp8_transposed(x, recipe, qtype)
        want_q, want_s = tessera.quantize_fp8(x, recipe, qtype)
        want_qt, want_st = tessera.quantize_fp8(x.T.contiguous(), recipe, qtype)
        assert q.shape == (rows, cols) and qt.shape == (cols, rows)
        assert q.stride(0) % 16 == 0 and qt.stride(0) % 16 == 0
        assert torch.equal(_bits(q), _bits(want_q)) and torch.equal(s, want_s)
        assert torch.equal(_bits(qt), _bits(want_qt)) and torch.equal(st, want_st)
        only_t = tessera.quantize_fp8_transposed(x, recipe, qtype, rowwise=False)
        assert len(only_t) == 2 and torch.equal(_bits(only_t[0]), _bits(want_qt))


@needs_gpu
def test_cast_transpose_refusals(torch):
    with pytest.raises(tessera.InvalidValueError, match="2-D row-major"):
        tessera.quantize_fp8_transposed(torch.randn(4, 8, 8, device="cuda"))
    with pytest.raises(tessera.InvalidValueError, match="e4m3"):
        tessera.quantize_fp8_transposed(torch.randn(16, 16, device="cuda"), dtype="int8")
    with pytest.raises(tessera.InvalidValueError, match="recipe"):
        tessera.quantize_fp8_transposed(torch.randn(16, 16, device="cuda"), recipe="tensor")
    with pytest.raises(tessera.InvalidValueError, match="unknown data type"):
        tessera.quantize_fp8_transposed(torch.zeros(16, 16, device="cuda", dtype=torch.int32))


def _relative(torch, got, want):
    return ((got.double() - want).norm() / want.norm()).item()


@needs_gpu
@pytest.mark.parametrize("tokens,din,dout", [(256, 512, 384), (200, 1024, 272), (4096, 1536, 2048)])
@pytest.mark.parametrize("grad_dtype", ["e4m3", "e5m2"])
def test_fp8_linear_gradients(torch, tokens, din, dout, grad_dtype):
    """Forward and gradients within FP8's quantization error of float64 (e4m3 keeps 3 mantissa bits:
    about 2.5% per element, less in sums of random terms; e5m2 gradients about twice that)."""
    torch.manual_seed(tokens + din)
    # Rows and columns of very different magnitudes (powers of 2 from 2^-4 to 2^4 on each side): a
    # factor applied to the wrong row or block would be off by up to 2^8, far outside the bounds.
    def powers(*shape):
        return 2.0 ** torch.randint(-4, 5, shape, device="cuda")

    x = (torch.randn(tokens, din, device="cuda") * powers(tokens, 1) * powers(1, din)).to(torch.bfloat16)
    x.requires_grad_()
    w = (torch.randn(dout, din, device="cuda") / din ** 0.5 * powers(dout, 1) * powers(1, din)).to(torch.bfloat16)
    w.requires_grad_()
    b = torch.randn(dout, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    y = tessera.fp8_linear(x, w, b, grad_dtype=grad_dtype)
    dy = (torch.randn(tokens, dout, device="cuda") * powers(tokens, 1) * powers(1, dout)).to(torch.bfloat16)
    y.backward(dy)
    x64, w64, dy64 = x.detach().double(), w.detach().double(), dy.double()
    bound = 0.06 if grad_dtype == "e4m3" else 0.12
    assert y.dtype == torch.bfloat16 and y.shape == (tokens, dout)
    assert _relative(torch, y, x64 @ w64.T + b.detach().double()) < 0.06
    assert x.grad.dtype == torch.bfloat16 and _relative(torch, x.grad, dy64 @ w64) < bound
    assert w.grad.dtype == torch.bfloat16 and _relative(torch, w.grad, dy64.T @ x64) < bound
    assert torch.allclose(b.grad.float(), dy.float().sum(0), rtol=1e-2, atol=1e-2)


@needs_gpu
@pytest.mark.parametrize("x_grad,w_grad", [(True, True), (True, False), (False, True)])
def test_fp8_linear_is_the_recipe(torch, x_grad, w_grad):
    """The gradients are exactly the FP8 GEMMs of the recipe, called by hand, whichever of x and w
    wants one (a frozen weight, a frozen input)."""
    x = torch.randn(384, 256, device="cuda", dtype=torch.bfloat16, requires_grad=x_grad)
    w = torch.randn(128, 256, device="cuda", dtype=torch.float32, requires_grad=w_grad)
    y = tessera.fp8_linear(x, w)
    dy = torch.randn_like(y)
    y.backward(dy)
    xq, xs = tessera.quantize_fp8(x.detach(), "1x128")
    wq, ws = tessera.quantize_fp8(w.detach(), "128x128")
    assert torch.equal(y, tessera.gemm(xq, wq.T, scale_a=xs, scale_b=ws, scale_recipe_a="1x128",
                                       scale_recipe_b="128x128"))
    dyq, dys, dyqt, dyst = tessera.quantize_fp8_transposed(dy)
    xqt, xst = tessera.quantize_fp8_transposed(x.detach(), rowwise=False)
    # W's K-major transpose and its block factors are W's, transposed (128x128 blocks are symmetric)
    _, _, wqt, wst = tessera.quantize_fp8_transposed(w.detach(), "128x128")
    assert torch.equal(_bits(wqt), _bits(tessera.transpose(wq))) and torch.equal(wst, ws.T)
    dx = tessera.gemm(dyq, wqt.T, scale_a=dys, scale_b=wst, scale_recipe_a="1x128", scale_recipe_b="128x128")
    dw = tessera.gemm(dyqt, xqt.T, scale_a=dyst, scale_b=xst, scale_recipe_a="1x128", scale_recipe_b="1x128",
                      out_dtype=torch.float32)
    assert (torch.equal(x.grad, dx) if x_grad else x.grad is None)
    assert (torch.equal(w.grad, dw) and w.grad.dtype == torch.float32) if w_grad else w.grad is None


@needs_gpu
def test_fp8_linear_module_and_batches(torch):
    layer = tessera.FP8Linear(256, 128, device="cuda", dtype=torch.bfloat16)
    x = torch.randn(2, 3, 256, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    y = layer(x)
    assert y.shape == (2, 3, 128)
    y.sum().backward()
    assert x.grad.shape == x.shape and layer.weight.grad.shape == (128, 256) and layer.bias.grad.shape == (128,)
    with torch.no_grad():  # without autograd: the same forward
        assert torch.equal(layer(x), y.detach())


@needs_gpu
def test_fp8_linear_refusals(torch):
    x = torch.randn(16, 64, device="cuda", dtype=torch.bfloat16)
    with pytest.raises(tessera.InvalidValueError, match="multiples of 16"):
        tessera.fp8_linear(x[:, :40], torch.randn(32, 40, device="cuda", dtype=torch.bfloat16))
    with pytest.raises(tessera.InvalidValueError, match="Din"):
        tessera.fp8_linear(x, torch.randn(32, 48, device="cuda", dtype=torch.bfloat16))
    with pytest.raises(tessera.InvalidValueError, match="grad_dtype"):
        tessera.fp8_linear(x, torch.randn(32, 64, device="cuda", dtype=torch.bfloat16), grad_dtype="fp8")
    with pytest.raises(tessera.InvalidValueError, match="bias"):
        tessera.fp8_linear(x, torch.randn(32, 64, device="cuda", dtype=torch.bfloat16),
                           torch.zeros(16, device="cuda"))


def test_fp8_linear_refuses_before_any_gpu_work():
    """The argument checks need no GPU: CPU tensors reach them, and each names what is wrong."""
    torch = pytest.importorskip("torch")
    x = torch.zeros(16, 64, dtype=torch.bfloat16)
    w = torch.zeros(32, 64, dtype=torch.bfloat16)
    cases = [
        ((x, w), {"grad_dtype": "int8"}, "grad_dtype"),
        ((x.int(), w), {}, "bf16, f16 or f32"),
        ((x, w[:, :48]), {}, "Din"),
        ((x, w.reshape(32, 64, 1)), {}, "Din"),
        ((x[:, :40], w[:, :40]), {}, "multiples of 16"),
        ((x, w[:24]), {}, "multiples of 16"),
        ((x, w, torch.zeros(16)), {}, "bias"),
    ]
    for args, kwargs, phrase in cases:
        with pytest.raises(tessera.InvalidValueError, match=phrase):
            tessera.fp8_linear(*args, **kwargs)


def test_quantize_transposed_refuses_before_any_gpu_work():
    torch = pytest.importorskip("torch")
    with pytest.raises(tessera.InvalidValueError, match="2-D row-major"):
        tessera.quantize_fp8_transposed(torch.zeros(4, 4, 4))
    with pytest.raises(tessera.InvalidValueError, match="2-D row-major"):
        tessera.quantize_fp8_transposed(torch.zeros(8, 8).T)
    with pytest.raises(tessera.InvalidValueError, match="recipe"):
        tessera.quantize_fp8_transposed(torch.zeros(8, 8), recipe="rowwise")
    with pytest.raises(tessera.InvalidValueError, match="e4m3"):
        tessera.quantize_fp8_transposed(torch.zeros(8, 8), dtype="fp8")
