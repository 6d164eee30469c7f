"""torch.ops.tessera.*: registration, the fake implementations' outputs (shape, dtype,
strides, device) against what the real ones allocate, their refusals, and full-graph
tracing of a small MLP and an MoE block through them (torch.export on FakeTensors: no
GPU needed); on a GPU, the operators' results against tessera's functions, under
torch.compile(fullgraph=True) and in a captured CUDA graph."""
import ctypes

import pytest

torch = pytest.importorskip("torch")

import tessera  # noqa: E402
from tessera import _lib, scales  # noqa: E402
from tessera.gemm import ScaleDescStruct  # noqa: E402
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402

from conftest import gpu_count  # noqa: E402

OPS = ("gemm", "grouped_mm", "grouped_mm_masked", "grouped_mm_wgrad", "quantize_fp8")


def fake_mode():
    return FakeTensorMode(allow_non_fake_inputs=True)


def grouped_fakes():
    """A grouped problem's inputs inside fake_mode(): 300 bf16 rows of K = 128, 4 experts of N = 256."""
    return (torch.empty(300, 128, device="cuda", dtype=torch.bfloat16),
            torch.empty(4, 256, 128, device="cuda", dtype=torch.bfloat16),
            torch.empty(4, device="cuda", dtype=torch.int32))


def test_registered():
    for name in OPS:
        assert hasattr(torch.ops.tessera, name), name
    assert tessera.ops is not None


def test_operators_call_the_package_functions():
    """The CUDA implementations call tessera's functions themselves: `from . import gemm`
    in ops.py once gave the function `tessera.gemm` (which shadows its module), and every
    operator failed on a GPU with "'function' object has no attribute 'gemm'"."""
    assert tessera.ops._gemm_call is tessera.gemm
    assert tessera.ops._quantize_fp8_call is tessera.quantize_fp8
    assert tessera.ops._grouped_mm_call is tessera.grouped_mm
    assert tessera.ops._grouped_mm_masked_call is tessera.grouped_mm_masked


@pytest.mark.parametrize("shape_a, shape_b, dtype, out_dtype, expected, expected_dtype", [
    ((64, 256), (256, 96), torch.bfloat16, None, (64, 96), torch.bfloat16),
    ((3, 64, 256), (256, 96), torch.float16, None, (3, 64, 96), torch.float16),
    ((1, 64, 256), (1, 256, 96), torch.bfloat16, torch.float32, (64, 96), torch.float32),
    ((128, 512), (512, 80), torch.float8_e4m3fn, None, (128, 80), torch.bfloat16),
])
def test_gemm_fake(shape_a, shape_b, dtype, out_dtype, expected, expected_dtype):
    with fake_mode():
        a = torch.empty(shape_a, device="cuda", dtype=dtype)
        b = torch.empty(shape_b, device="cuda", dtype=dtype)
        y = torch.ops.tessera.gemm(a, b, out_dtype=out_dtype)
    assert tuple(y.shape) == expected and y.dtype == expected_dtype and y.device.type == "cuda"
    assert y.is_contiguous()


def test_grouped_fake():
    with fake_mode():
        x, w, offs = grouped_fakes()
        y = torch.ops.tessera.grouped_mm(x, w, offs)
        ykn = torch.ops.tessera.grouped_mm(x, w.transpose(1, 2), offs, w_layout="kn")
        xm = torch.empty(4, 64, 128, device="cuda", dtype=torch.float8_e4m3fn)
        ym = torch.ops.tessera.grouped_mm_masked(xm, w.to(torch.float8_e4m3fn), offs, 32)
    assert tuple(y.shape) == (300, 256) and y.dtype == torch.bfloat16 and tuple(ykn.shape) == (300, 256)
    assert tuple(ym.shape) == (4, 64, 256) and ym.dtype == torch.bfloat16


def test_fake_refusals():
    """What the real operators refuse from shapes alone, the fakes refuse too (torch.compile says it
    while tracing), with the same sentences."""
    with fake_mode():
        x, w, offs = grouped_fakes()
        a, b = torch.empty(64, 128, device="cuda", dtype=torch.bfloat16), torch.empty(96, 32, device="cuda",
                                                                                     dtype=torch.bfloat16)
        with pytest.raises(tessera.InvalidValueError, match="K and must match"):
            torch.ops.tessera.gemm(a, b)
        with pytest.raises(tessera.InvalidValueError, match="equal, or one of them 1"):
            torch.ops.tessera.gemm(a.expand(3, 64, 128), torch.empty(2, 128, 32, device="cuda", dtype=torch.bfloat16))
        with pytest.raises(tessera.InvalidValueError, match="K = 256"):
            torch.ops.tessera.grouped_mm(x, w, offs, w_layout="kn")  # [G, N, K] read as [G, K, N]
        with pytest.raises(tessera.InvalidValueError, match="w_layout='mk'"):
            torch.ops.tessera.grouped_mm(x, w, offs, w_layout="mk")
        with pytest.raises(tessera.InvalidValueError, match=r"expected shape \(4,\)"):
            torch.ops.tessera.grouped_mm(x, w, offs[:3])
        with pytest.raises(tessera.InvalidValueError, match="one batch of rows per expert"):
            torch.ops.tessera.grouped_mm_masked(x.expand(3, 300, 128), w, torch.empty(4, device="cuda",
                                                                                     dtype=torch.int32), 32)


def query(mode, mn, k):
    """(shape, strides) of tess_scale_layout_query's packed layout, as the real quantize_fp8 allocates it."""
    layout, shape = ScaleDescStruct(), (ctypes.c_int64 * 2)()
    assert _lib.lib().tess_scale_layout_query(mode, mn, k, ctypes.byref(layout), shape, None, None) == 0
    return (shape[0], shape[1]), (max(layout.stride_mn, 1), max(layout.stride_k, 1))


@pytest.mark.parametrize("rows, cols", [(300, 1000), (1, 1), (129, 700), (64, 128), (5, 1300)])
@pytest.mark.parametrize("recipe", ["1x128", "128x128", "tensor"])
def test_quantize_fake_layout(rows, cols, recipe):
    with fake_mode():
        x = torch.empty(rows, cols, device="cuda", dtype=torch.bfloat16)
        q, s = torch.ops.tessera.quantize_fp8(x, recipe, "e5m2")
    assert tuple(q.shape) == (rows, cols) and q.dtype == torch.float8_e5m2
    assert s.dtype == torch.float32
    if recipe == "tensor":
        assert tuple(s.shape) == (1,)
    else:
        shape, strides = query(scales.RECIPES[recipe], rows, cols)
        assert (tuple(s.shape), tuple(s.stride())) == (shape, strides)


@pytest.mark.parametrize("recipe, dtype, shape", [("rowwise", "e4m3", (64, 256)), ("1x128", "e3m4", (64, 256)),
                                                  ("1x128", "e4m3", (4, 64, 256))])
def test_quantize_fake_refusals(recipe, dtype, shape):
    with fake_mode():
        x = torch.empty(shape, device="cuda", dtype=torch.bfloat16)
        with pytest.raises(tessera.InvalidValueError):
            torch.ops.tessera.quantize_fp8(x, recipe, dtype)


class MLP(torch.nn.Module):
    """Two bf16 linear layers on tessera's GEMM."""

    def __init__(self, dim=256, hidden=512):
        super().__init__()
        self.w1 = torch.nn.Parameter(torch.randn(hidden, dim, dtype=torch.bfloat16, device="cuda") / dim ** 0.5)
        self.w2 = torch.nn.Parameter(torch.randn(dim, hidden, dtype=torch.bfloat16, device="cuda") / hidden ** 0.5)

    def forward(self, x):
        return torch.ops.tessera.gemm(torch.ops.tessera.gemm(x, self.w1.T).relu(), self.w2.T)


class MoE(torch.nn.Module):
    """Experts on tessera's grouped GEMM: tokens sorted by expert, rows per expert in offs."""

    def __init__(self, experts=4, dim=128, hidden=256):
        super().__init__()
        self.up = torch.nn.Parameter(torch.randn(experts, hidden, dim, dtype=torch.bfloat16, device="cuda") / dim ** 0.5)
        self.down = torch.nn.Parameter(torch.randn(experts, dim, hidden, dtype=torch.bfloat16, device="cuda") /
                                       hidden ** 0.5)

    def forward(self, x, offs):
        h = torch.ops.tessera.grouped_mm(x, self.up, offs).relu()
        return torch.ops.tessera.grouped_mm(h, self.down, offs)


def traced_ops(program):
    return [str(n.target) for n in program.graph.nodes if n.op == "call_function"]


def test_export_full_graph():
    with fake_mode():
        mlp = MLP()
        x = torch.empty(64, 256, device="cuda", dtype=torch.bfloat16)
        moe = MoE()
        xs = torch.empty(300, 128, device="cuda", dtype=torch.bfloat16)
        offs = torch.empty(4, device="cuda", dtype=torch.int32)
        mlp_ops = traced_ops(torch.export.export(mlp, (x,)))
        moe_ops = traced_ops(torch.export.export(moe, (xs, offs)))
    assert mlp_ops.count("tessera.gemm.default") == 2
    assert moe_ops.count("tessera.grouped_mm.default") == 2


needs_cuda = pytest.mark.skipif(gpu_count() == 0 or not torch.cuda.is_available(), reason="no CUDA device")


@needs_cuda
def test_ops_match_functions_and_compile():
    torch.manual_seed(0)
    mlp = MLP()
    x = torch.randn(96, 256, dtype=torch.bfloat16, device="cuda")
    expected = tessera.gemm(tessera.gemm(x, mlp.w1.T).relu(), mlp.w2.T)
    assert torch.equal(mlp(x), expected)
    compiled = torch.compile(mlp, fullgraph=True)
    assert torch.equal(compiled(x), expected)
    moe = MoE()
    xs = torch.randn(300, 128, dtype=torch.bfloat16, device="cuda")
    offs = torch.tensor([50, 120, 120, 300], dtype=torch.int32, device="cuda")
    ref = torch.cat([(xs[a:b].float() @ moe.up[g].float().T).relu().bfloat16().float() @ moe.down[g].float().T
                     for g, (a, b) in enumerate(zip([0, 50, 120, 120], [50, 120, 120, 300]))])
    got = torch.compile(moe, fullgraph=True)(xs, offs).float()
    assert torch.allclose(got, ref, rtol=2e-2, atol=2e-2)


@needs_cuda
def test_cuda_graph_capture():
    mlp = MLP()
    x = torch.randn(64, 256, dtype=torch.bfloat16, device="cuda")
    expected = mlp(x)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up off the capture, as torch.cuda.graph asks
        mlp(x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = mlp(x)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(y, expected)


def backward_ctx(saved, needs, **fields):
    """What register_autograd's setup_context leaves for the backward, for calling it directly
    (the autograd engine itself needs a GPU for CUDA tensors, fake or not)."""
    import types
    fields = {"activation": "none", "bias_dtype": None, "bias_shape": None, "bias_along": "columns", **fields}
    return types.SimpleNamespace(saved_tensors=saved, needs_input_grad=needs, **fields)


@pytest.mark.parametrize("shape_a, shape_b", [((3, 64, 256), (256, 96)), ((64, 256), (3, 256, 96)),
                                              ((1, 64, 256), (1, 256, 96)), ((64, 256), (256, 96))])
def test_gemm_backward_shapes(shape_a, shape_b):
    with fake_mode():
        a = torch.empty(shape_a, device="cuda", dtype=torch.bfloat16)
        b = torch.empty(shape_b, device="cuda", dtype=torch.bfloat16)
        y = torch.ops.tessera.gemm(a, b)
        c_shape = (1,) + tuple(y.shape[-2:])  # C with a batch of one, whatever D's batch
        ctx = backward_ctx((a, b, None, None), (True, True, True), alpha=0.5, beta=2.0, c_dtype=torch.float32,
                           c_shape=c_shape, scaled=False)
        da, db, dc, *rest = tessera.ops._gemm_backward(ctx, torch.empty_like(y))
    assert tuple(da.shape) == shape_a and tuple(db.shape) == shape_b and da.dtype == torch.bfloat16
    assert tuple(dc.shape) == c_shape and dc.dtype == torch.float32 and all(r is None for r in rest)


@pytest.mark.parametrize("w_layout", ["nk", "kn"])
def test_grouped_backward_shapes(w_layout):
    with fake_mode():
        x, w, offs = grouped_fakes()
        if w_layout == "kn":
            w = w.transpose(1, 2)  # [G, K, N], K contiguous
        y = torch.ops.tessera.grouped_mm(x, w, offs, w_layout=w_layout)
        ctx = backward_ctx((x, w, offs, None), (True, True, False), scaled=False, w_layout=w_layout)
        dx, dw, *rest = tessera.ops._grouped_backward(ctx, torch.empty_like(y))
    assert tuple(dx.shape) == (300, 128) and tuple(dw.shape) == tuple(w.shape) and all(r is None for r in rest)


def test_no_fp8_gradients():
    with fake_mode():
        a = torch.empty(64, 256, device="cuda", dtype=torch.float8_e4m3fn)
        b = torch.empty(256, 96, device="cuda", dtype=torch.float8_e4m3fn)
        ctx = backward_ctx((a, b, None, None), (True, True, False), alpha=1.0, beta=0.0, c_dtype=None, c_shape=None,
                           scaled=True)
        with pytest.raises(NotImplementedError, match="bf16/f16"):
            tessera.ops._gemm_backward(ctx, torch.empty(64, 96, device="cuda", dtype=torch.bfloat16))


@needs_cuda
def test_gemm_gradients_match_float64():
    torch.manual_seed(1)
    a = torch.randn(3, 96, 200, dtype=torch.bfloat16, device="cuda", requires_grad=True)
    b = torch.randn(200, 136, dtype=torch.bfloat16, device="cuda", requires_grad=True)
    y = torch.ops.tessera.gemm(a, b, alpha=0.5, out_dtype=torch.float32)
    g = torch.randn_like(y)
    da, db = torch.autograd.grad(y, (a, b), g)
    a64, b64 = a.detach().double().requires_grad_(), b.detach().double().requires_grad_()
    ra, rb = torch.autograd.grad(0.5 * a64 @ b64, (a64, b64), g.double())
    for got, ref in ((da, ra), (db, rb)):
        assert (got.double() - ref).norm() / ref.norm() < 1e-2


@needs_cuda
@pytest.mark.parametrize("w_layout", ["nk", "kn"])
def test_grouped_gradients_match_float64(w_layout):
    torch.manual_seed(2)
    x = torch.randn(300, 128, dtype=torch.bfloat16, device="cuda", requires_grad=True)
    w = torch.randn(4, 256, 128, dtype=torch.bfloat16, device="cuda")
    if w_layout == "kn":
        w = w.transpose(1, 2)  # [G, K, N] with K contiguous, as torch._grouped_mm's mat_b
    w.requires_grad_()
    ends = [50, 120, 120, 280]  # rows 280.. belong to no expert: no gradient there
    offs = torch.tensor(ends, dtype=torch.int32, device="cuda")
    y = torch.ops.tessera.grouped_mm(x, w, offs, w_layout=w_layout)
    y[280:] = 0  # undefined rows of y, out of the loss
    g = torch.randn_like(y)
    dx, dw = torch.autograd.grad(y, (x, w), g)
    x64, w64 = x.detach().double().requires_grad_(), w.detach().double().requires_grad_()
    expert = (lambda e: w64[e].T) if w_layout == "nk" else (lambda e: w64[e])
    ref = torch.cat([x64[lo:hi] @ expert(e) for e, (lo, hi) in enumerate(zip([0] + ends[:-1], ends))] +
                    [torch.zeros(20, 256, dtype=torch.float64, device="cuda")])
    rx, rw = torch.autograd.grad(ref, (x64, w64), g.double())
    for got, want in ((dx, rx), (dw, rw)):
        assert (got.double() - want).norm() / want.norm() < 1e-2
    assert torch.count_nonzero(dw[2]) == 0  # the expert without rows
