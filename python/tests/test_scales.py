"""Scale tensors checked against their recipes before any call (tessera.scales): shapes, strides,
storage extents, dtype and device. The pure checks run on any machine, without torch or a GPU;
tessera.gemm / grouped_mm are driven to their refusals with tessera.Matrix views of made-up device
memory, which nothing reads; results against PyTorch with real tensors on a GPU."""
import types

import pytest

import tessera
from tessera import scales
from tessera.dtypes import DType
from tessera.scales import gemm_scale_layout as dense
from conftest import needs_gpu, packed_strides

TENSOR, ROWWISE, B1x128, B128x128 = 0, 3, 4, 5


class FakeFactors:
    """Just enough of a torch tensor of factors for the checks (no torch needed): a view of
    `storage` float elements from `offset` on."""

    def __init__(self, shape, strides=None, *, storage=None, offset=0, dtype="torch.float32", device=("cuda", 0),
                 ptr=0x10000):
        self.shape, self.dtype = tuple(shape), dtype
        self.device = types.SimpleNamespace(type=device[0], index=device[1])
        self._strides = tuple(strides) if strides is not None else packed_strides(self.shape)
        self._storage, self._offset, self._ptr = storage, offset, ptr

    def stride(self, dim=None):
        return self._strides if dim is None else self._strides[dim]

    def dim(self):
        return len(self.shape)

    def data_ptr(self):
        return self._ptr + 4 * self._offset

    def storage_offset(self):
        return self._offset

    def untyped_storage(self):
        if self._storage is None:
            raise RuntimeError("no storage")  # as a tensor subclass without one
        return types.SimpleNamespace(nbytes=lambda: 4 * self._storage)


def layout(*args, **kwargs):
    return tuple(dense(*args, **kwargs))


# ---- the pure check: tessera.gemm's scale_a / scale_b ---------------------------------

def test_tensor_recipe_shapes():
    for shape in [(), (1,), (1, 1)]:
        for recipe in (None, "tensor"):
            assert layout("a", recipe, 64, 256, shape, packed_strides(shape), 1) == (TENSOR, 0, 0, 0)
            assert layout("b", recipe, 1, 16, shape, packed_strides(shape), 1) == (TENSOR, 0, 0, 0)
    # one factor without a recipe is per tensor even where M = 1 makes it a per-row shape too
    assert layout("a", None, 1, 256, (1, 1), (1, 1), 1) == (TENSOR, 0, 0, 0)
    assert layout("a", "rowwise", 1, 256, (1, 1), (1, 1), 1) == (ROWWISE, 1, 0, 0)


def test_rowwise_shapes_torch_scaled_mm_convention():
    # scale_a (M, 1), scale_b (1, N): torch._scaled_mm's rowwise recipe, inferred without a recipe
    assert layout("a", None, 64, 256, (64, 1), (1, 1), 64) == (ROWWISE, 1, 0, 0)
    assert layout("b", None, 128, 256, (1, 128), (128, 1), 128) == (ROWWISE, 1, 0, 0)
    # (1, N) is read along its columns (stride 1), not its rows (stride 128): the old bug
    assert layout("b", "rowwise", 128, 256, (1, 128), (128, 1), 128) == (ROWWISE, 1, 0, 0)
    # a (1, N) row of a larger tensor, and an every-other-element view: the tensor's own strides
    assert layout("b", None, 128, 256, (1, 128), (512, 2), 512) == (ROWWISE, 2, 0, 0)
    # the other orientations, and vectors
    assert layout("a", None, 64, 256, (64,), (1,), 64) == (ROWWISE, 1, 0, 0)
    assert layout("a", "rowwise", 64, 256, (1, 64), (64, 1), 64) == (ROWWISE, 1, 0, 0)
    assert layout("b", None, 128, 256, (128, 1), (1, 1), 128) == (ROWWISE, 1, 0, 0)
    assert layout("b", "outer", 128, 256, (128,), (3,), 382) == (ROWWISE, 3, 0, 0)
    # an expanded single factor (stride 0) reads one factor for every row
    assert layout("a", "rowwise", 64, 256, (64, 1), (0, 1), 1) == (ROWWISE, 0, 0, 0)


def test_block_recipe_shapes():
    m, n, k = 300, 500, 1000  # K blocks: 8; N blocks: 4; M blocks: 3
    # 1x128 for a: (M, K/128), any strides; tess_scale_layout_query's packed layout is rows contiguous
    assert layout("a", "1x128", m, k, (300, 8), (1, 300), 2400) == (B1x128, 1, 300, 0)
    assert layout("a", "1x128", m, k, (300, 8), (8, 1), 2400) == (B1x128, 8, 1, 0)
    # 128x128 for b: (N/128, K/128), K blocks contiguous ...
    assert layout("b", "128x128", n, k, (4, 8), (8, 1), 32) == (B128x128, 8, 1, 0)
    # ... or the transposed view a PyTorch user passes: scale_b.T of a (K/128, N/128) tensor
    assert layout("b", "128x128", n, k, (4, 8), (1, 4), 32) == (B128x128, 1, 4, 0)
    # the other block pairs: 1x128 x 1x128 and 128x128 x 1x128
    assert layout("b", "1x128", n, k, (500, 8), (1, 500), 4000) == (B1x128, 1, 500, 0)
    assert layout("a", "128x128", m, k, (3, 8), (8, 1), 24) == (B128x128, 8, 1, 0)
    # K <= 128: one K block; its stride is never used and becomes the packed one
    assert layout("a", "1x128", 64, 100, (64, 1), (1, 1), 64) == (B1x128, 1, 64, 0)


def test_the_reported_bad_cases_are_refused():
    with pytest.raises(tessera.InvalidValueError) as e:  # 1x128 for K = 256 needs two K blocks
        dense("a", "1x128", 64, 256, (64, 1), (1, 1), 64)
    assert str(e.value).startswith("scale_a: recipe '1x128' for M=64, K=256 needs shape (64, 2) (one factor per "
                                   "row of a per 128 of K)") and str(e.value).endswith("got (64, 1)")
    with pytest.raises(tessera.InvalidValueError, match=r"scale_b: recipe '128x128' for N=128, K=256 needs shape "
                                                         r"\(1, 2\).*got \(1, 1\)"):
        dense("b", "128x128", 128, 256, (1, 1), (1, 1), 1)
    with pytest.raises(tessera.InvalidValueError, match=r"scale_a: shape \(63,\) fits no scale recipe for M=64, "
                                                         r"K=256: .*'rowwise' needs shape \(64, 1\), \(64,\)"):
        dense("a", None, 64, 256, (63,), (1,), 63)  # 63 factors for 64 rows
    with pytest.raises(tessera.InvalidValueError, match=r"scale_a: recipe 'rowwise' for M=64, K=256 needs shape "
                                                         r"\(64, 1\), \(64,\) or \(1, 64\) .*; got \(63,\)"):
        dense("a", "rowwise", 64, 256, (63,), (1,), 63)


def test_block_shape_without_recipe_asks_for_one():
    with pytest.raises(tessera.InvalidValueError, match=r"scale_a: shape \(64, 2\) without scale_recipe_a.*"
                                                         r"scale_recipe_a='1x128'"):
        dense("a", None, 64, 256, (64, 2), (1, 64), 128)
    with pytest.raises(tessera.InvalidValueError, match=r"scale_recipe_b='128x128'"):
        dense("b", None, 500, 1000, (4, 8), (8, 1), 32)
    with pytest.raises(tessera.InvalidValueError, match="fits no scale recipe"):
        dense("a", None, 64, 256, (64, 3), (3, 1), 192)


def test_torch_orientation_of_block_scale_b_points_to_transpose():
    with pytest.raises(tessera.InvalidValueError, match=r"needs shape \(4, 8\).*got \(8, 4\).*_scaled_mm.*\.mT"):
        dense("b", "128x128", 500, 1000, (8, 4), (4, 1), 32)
    with pytest.raises(tessera.InvalidValueError, match=r"needs shape \(500, 8\).*got \(8, 500\).*\.mT"):
        dense("b", "1x128", 500, 1000, (8, 500), (500, 1), 4000)


def test_strides_must_stay_inside_the_storage():
    # a valid-looking (64, 2) shape whose strides reach element 127, over a storage of 100 factors
    with pytest.raises(tessera.InvalidValueError, match=r"reads factors up to element 127.*holds only 100"):
        dense("a", "1x128", 64, 256, (64, 2), (1, 64), 100)
    # a column slice t[:, 1:3] of a (64, 4) tensor: the storage (256 floats from offset 1) covers it
    assert layout("a", "1x128", 64, 256, (64, 2), (4, 1), 255) == (B1x128, 4, 1, 0)
    with pytest.raises(tessera.InvalidValueError, match="storage"):
        dense("a", "1x128", 64, 256, (64, 2), (4, 1), 253)
    with pytest.raises(tessera.InvalidValueError, match="negative strides"):
        dense("a", "rowwise", 64, 256, (64,), (-1,), 64)
    # 1x128 over (M, K blocks) that overlap (stride_mn 1, stride_k 1): reading is fine where in bounds
    assert layout("a", "1x128", 64, 256, (64, 2), (1, 1), 65) == (B1x128, 1, 1, 0)


def test_batched_problems():
    # one set per batch (batch first, its stride), or one set for all (2-D, or a batch of 1)
    assert layout("a", "1x128", 64, 256, (3, 64, 2), (128, 1, 64), 384, batch=3) == (B1x128, 1, 64, 128)
    assert layout("a", "1x128", 64, 256, (1, 64, 2), (128, 1, 64), 128, batch=3) == (B1x128, 1, 64, 0)
    assert layout("a", "1x128", 64, 256, (64, 2), (1, 64), 128, batch=3) == (B1x128, 1, 64, 0)
    assert layout("b", "128x128", 500, 1000, (3, 4, 8), (32, 8, 1), 96, batch=3) == (B128x128, 8, 1, 32)
    assert layout("a", None, 64, 256, (3, 64, 1), (64, 1, 1), 192, batch=3) == (ROWWISE, 1, 0, 64)
    assert layout("b", None, 128, 256, (3, 1, 128), (128, 128, 1), 384, batch=3) == (ROWWISE, 1, 0, 128)
    assert layout("a", None, 64, 256, (3, 64), (64, 1), 192, batch=3) == (ROWWISE, 1, 0, 64)
    assert layout("a", None, 64, 256, (3,), (1,), 3, batch=3) == (TENSOR, 0, 0, 1)  # one factor per batch
    assert layout("a", None, 64, 256, (3, 1, 1), (1, 1, 1), 3, batch=3) == (TENSOR, 0, 0, 1)
    # a batch of 1 problem ignores the batch stride
    assert layout("a", "1x128", 64, 256, (1, 64, 2), (999, 1, 64), 128) == (B1x128, 1, 64, 0)
    with pytest.raises(tessera.InvalidValueError, match=r"batch=3 needs shape \(64, 2\).*\(3, 64, 2\).*got \(2, 64"):
        dense("a", "1x128", 64, 256, (2, 64, 2), (128, 1, 64), 256, batch=3)
    with pytest.raises(tessera.InvalidValueError, match="storage"):  # the third batch past the storage's end
        dense("a", "1x128", 64, 256, (3, 64, 2), (128, 1, 64), 300, batch=3)
    with pytest.raises(tessera.InvalidValueError, match=r"ambiguous.*scale_recipe_a.*'rowwise' or 'tensor'"):
        dense("a", None, 3, 256, (3,), (1,), 3, batch=3)  # batch == M: per batch or per row?
    assert layout("a", "tensor", 3, 256, (3,), (1,), 3, batch=3) == (TENSOR, 0, 0, 1)
    assert layout("a", "rowwise", 3, 256, (3,), (1,), 3, batch=3) == (ROWWISE, 1, 0, 0)


def test_unknown_recipe():
    with pytest.raises(tessera.InvalidValueError, match=r"scale_recipe_a='blockwise': one of"):
        dense("a", "blockwise", 64, 256, (64, 2), (1, 64), 128)


def test_layout_desc_is_the_c_struct():
    d = scales.ScaleLayout(B1x128, 1, 64, 128).desc()
    assert (d.mode, d.stride_mn, d.stride_k, d.batch_stride) == (B1x128, 1, 64, 128)


# ---- what is read from a tensor ---------------------------------------------------------

def test_tensor_geometry():
    t = FakeFactors((64, 2), (1, 64), storage=130, offset=2)
    assert scales.tensor_geometry(t, "scale_a", 0) == (0x10000 + 8, (64, 2), (1, 64), 128)
    assert scales.tensor_geometry(FakeFactors((64, 2), (1, 64)), "scale_a", 0)[3] == 128  # its own span
    with pytest.raises(tessera.InvalidValueError, match="scale_a: dequantization factors are float32; got "
                                                        "torch.bfloat16"):
        scales.tensor_geometry(FakeFactors((64,), dtype="torch.bfloat16"), "scale_a", 0)
    with pytest.raises(tessera.InvalidValueError, match="scale_b: float32 factors in GPU memory"):
        scales.tensor_geometry(FakeFactors((64,), device=("cpu", None)), "scale_b", 0)
    with pytest.raises(tessera.InvalidValueError, match="scale_b is on cuda:1; .* cuda:0"):
        scales.tensor_geometry(FakeFactors((64,), device=("cuda", 1)), "scale_b", 0)
    with pytest.raises(tessera.InvalidValueError, match="expected a torch.Tensor"):
        scales.tensor_geometry([1.0], "scale_a", 0)
    with pytest.raises(tessera.InvalidValueError, match="4-byte aligned"):
        scales.tensor_geometry(FakeFactors((64,), ptr=0x10002), "scale_a", 0)


# ---- tessera.gemm refuses before anything touches the device ----------------------------

class _NoDevice:
    """A handle that fails the test if a call gets as far as using it."""

    @property
    def device(self):
        raise AssertionError("the call reached the device")


def _fp8_problem(m, n, k, batch=1):
    """Matrix views of made-up device memory (never read): a M x K row-major, b K x N column-major, out."""
    ab = ((batch,) if batch > 1 else ())
    a = tessera.from_parts(0x100000, DType.E4M3, ab + (m, k), ((m * k,) if batch > 1 else ()) + (k, 1), ("cuda", 0))
    b = tessera.from_parts(0x200000, DType.E4M3, (k, n), (1, k), ("cuda", 0))
    out = tessera.from_parts(0x300000, DType.BF16, ab + (m, n), ((m * n,) if batch > 1 else ()) + (n, 1), ("cuda", 0))
    return a, b, out


@pytest.mark.parametrize("kwargs,match", [
    (dict(scale_a=FakeFactors((64, 1)), scale_recipe_a="1x128"), r"scale_a: recipe '1x128' .*\(64, 2\).*\(64, 1\)"),
    (dict(scale_b=FakeFactors((1, 1)), scale_recipe_b="128x128"), r"scale_b: recipe '128x128' .*\(1, 2\)"),
    (dict(scale_a=FakeFactors((63,))), r"scale_a: shape \(63,\) fits no scale recipe for M=64"),
    (dict(scale_a=FakeFactors((64, 2))), r"scale_recipe_a='1x128'"),
    (dict(scale_a=FakeFactors((64, 1), dtype="torch.float16")), "float32"),
    (dict(scale_a=FakeFactors((64, 1), device=("cuda", 1))), "cuda:0"),
    (dict(scale_a=FakeFactors((64, 2), (1, 64), storage=100), scale_recipe_a="1x128"), "storage"),
    (dict(scale_recipe_a="1x128"), "needs scale_a"),
])
def test_gemm_refuses_before_the_call(kwargs, match):
    a, b, out = _fp8_problem(64, 128, 256)
    with pytest.raises(tessera.InvalidValueError, match=match):
        tessera.gemm(a, b, out, handle=_NoDevice(), **kwargs)


def test_gemm_batched_refusal():
    a, b, out = _fp8_problem(64, 128, 256, batch=3)
    with pytest.raises(tessera.InvalidValueError, match=r"batch=3.*\(3, 64, 2\).*got \(2, 64, 2\)"):
        tessera.gemm(a, b, out, handle=_NoDevice(), scale_a=FakeFactors((2, 64, 2)), scale_recipe_a="1x128",
                     scale_b=FakeFactors((3, 1, 2)), scale_recipe_b="128x128")


def test_gemm_accepted_scales_reach_the_handle():
    """A fitting pair passes the checks (the next step is the handle, which _NoDevice refuses)."""
    a, b, out = _fp8_problem(64, 128, 256)
    with pytest.raises(AssertionError, match="reached the device"):
        tessera.gemm(a, b, out, handle=_NoDevice(), scale_a=FakeFactors((64, 2), (1, 64)), scale_recipe_a="1x128",
                     scale_b=FakeFactors((1, 2)), scale_recipe_b="128x128")
    with pytest.raises(AssertionError, match="reached the device"):
        tessera.gemm(a, b, out, handle=_NoDevice(), scale_a=FakeFactors((64, 1)), scale_b=FakeFactors((1, 128)))


def test_grouped_refuses_before_the_call():
    g, m, n, k = 4, 100, 256, 512
    x = tessera.from_parts(0x100000, DType.E4M3, (m, k), (k, 1), ("cuda", 0))
    w = tessera.from_parts(0x200000, DType.E4M3, (g, n, k), (n * k, k, 1), ("cuda", 0))
    out = tessera.from_parts(0x300000, DType.BF16, (m, n), (n, 1), ("cuda", 0))
    with pytest.raises(tessera.InvalidValueError, match=r"scale_x: shape \(99, 4\) fits no scale recipe"):
        tessera.grouped_mm(x, w, None, out, handle=_NoDevice(), scale_x=FakeFactors((99, 4)),
                           scale_w=FakeFactors((g, 2, 4)))
    with pytest.raises(tessera.InvalidValueError, match=r"scale_w: .*storage holds only 20"):
        tessera.grouped_mm(x, w, None, out, handle=_NoDevice(), scale_x=FakeFactors((m, 4), (1, m)),
                           scale_w=FakeFactors((g, 2, 4), (8, 4, 1), storage=20))
    with pytest.raises(tessera.InvalidValueError, match=r"scale_w is on cuda:1"):
        tessera.grouped_mm(x, w, None, out, handle=_NoDevice(), scale_x=FakeFactors((m, 4), (1, m)),
                           scale_w=FakeFactors((g, 2, 4), device=("cuda", 1)))
    with pytest.raises(AssertionError, match="reached the device"):
        tessera.grouped_mm(x, w, None, out, handle=_NoDevice(), scale_x=FakeFactors((m, 4), (1, m)),
                           scale_w=FakeFactors((g, 2, 4)))


def test_grouped_fp8_out_refused_before_the_call():
    """grouped_mm's FP8 y: out_scale and amax checked as gemm's (before the handle is touched)."""
    g, m, n, k = 4, 100, 256, 512
    x = tessera.from_parts(0x100000, DType.E4M3, (m, k), (k, 1), ("cuda", 0))
    w = tessera.from_parts(0x200000, DType.E4M3, (g, n, k), (n * k, k, 1), ("cuda", 0))
    scales_xw = dict(scale_x=FakeFactors((m, 4), (1, m)), scale_w=FakeFactors((g, 2, 4)))

    def out(dtype, cols=n):
        return tessera.from_parts(0x300000, dtype, (m, cols), (cols, 1), ("cuda", 0))

    for dtype, kwargs, match in [
        (DType.BF16, dict(out_scale=FakeFactors((1,))), "belong to an FP8 out"),
        (DType.E4M3, dict(out_scale="2x2"), r"out_scale='2x2': '1x128'"),
        (DType.E4M3, dict(out_scale="1x128", amax=FakeFactors((1,))), "amax is written for a per-tensor FP8 out"),
        (DType.E5M2, dict(out_scale=FakeFactors((3,))), r"out_scale: shape \(3,\)"),
    ]:
        with pytest.raises(tessera.InvalidValueError, match=match):
            tessera.grouped_mm(x, w, None, out(dtype), handle=_NoDevice(), **scales_xw, **kwargs)
    with pytest.raises(tessera.InvalidValueError, match="gate='interleaved' with an FP8 out"):
        tessera.grouped_mm(x, w, None, out(DType.E4M3, n // 2), handle=_NoDevice(), gate="interleaved",
                           activation="silu", **scales_xw)
    with pytest.raises(AssertionError, match="reached the device"):
        tessera.grouped_mm(x, w, None, out(DType.E4M3), handle=_NoDevice(), out_scale=FakeFactors((1,)),
                           amax=FakeFactors((1,)), **scales_xw)


# ---- on a GPU -----------------------------------------------------------------------------

def _close(torch, got, want, bound):
    got, want = got.float(), want.float()
    rel = (got - want).norm() / want.norm()
    assert torch.isfinite(got).all() and rel < bound, f"relative error {rel:.3g} (bound {bound})"


FP8_BOUND = 2 ** -8 + 2 ** -12


@needs_gpu
def test_rowwise_scales_as_torch_scaled_mm_takes_them(torch):
    m, n, k = 192, 320, 512
    qa = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
    qb = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)
    sa = torch.rand(m, 1, device="cuda") + 0.5          # (M, 1)
    sb = torch.rand(1, n, device="cuda") + 0.5          # (1, N), torch._scaled_mm's scale_b
    got = tessera.gemm(qa, qb.T, scale_a=sa, scale_b=sb)
    want = (sa * qa.float()) @ (sb.T * qb.float()).T
    _close(torch, got, want, FP8_BOUND)
    if hasattr(torch, "_scaled_mm"):
        try:
            ref = torch._scaled_mm(qa, qb.T, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
        except RuntimeError:  # a torch without rowwise _scaled_mm
            ref = None
        if ref is not None:
            _close(torch, got, ref, 2 ** -7)


@needs_gpu
def test_transposed_block_scale_b_view(torch):
    m, n, k = 256, 384, 640
    x, w = torch.randn(m, k, device="cuda"), torch.randn(n, k, device="cuda")
    qa, sa = tessera.quantize_fp8(x, "1x128")
    qw, sw = tessera.quantize_fp8(w, "128x128")          # (N/128, K/128)
    want = tessera.gemm(qa, qw.T, scale_a=sa, scale_b=sw, scale_recipe_a="1x128", scale_recipe_b="128x128")
    torch_b = sw.T.contiguous()                          # a (K/128, N/128) tensor, as torch._scaled_mm takes it
    got = tessera.gemm(qa, qw.T, scale_a=sa, scale_b=torch_b.T, scale_recipe_a="1x128", scale_recipe_b="128x128")
    assert torch.equal(got, want)
    with pytest.raises(tessera.InvalidValueError, match=r"\.mT"):
        tessera.gemm(qa, qw.T, scale_a=sa, scale_b=torch_b, scale_recipe_a="1x128", scale_recipe_b="128x128")
    # the same factors as a row-major copy of (M, K/128): another stride, the same result
    got = tessera.gemm(qa, qw.T, scale_a=sa.contiguous(), scale_b=sw, scale_recipe_a="1x128",
                       scale_recipe_b="128x128")
    assert torch.equal(got, want)


@needs_gpu
def test_bad_scales_are_refused_on_the_gpu(torch):
    qa = torch.zeros(64, 256, device="cuda").to(torch.float8_e4m3fn)
    qb = torch.zeros(128, 256, device="cuda").to(torch.float8_e4m3fn)
    one = torch.ones(1, 1, device="cuda")
    with pytest.raises(tessera.InvalidValueError, match=r"\(64, 2\).*got \(64, 1\)"):
        tessera.gemm(qa, qb.T, scale_a=torch.ones(64, 1, device="cuda"), scale_b=torch.ones(1, 2, device="cuda"),
                     scale_recipe_a="1x128", scale_recipe_b="128x128")
    with pytest.raises(tessera.InvalidValueError, match=r"\(1, 2\).*got \(1, 1\)"):
        tessera.gemm(qa, qb.T, scale_a=torch.ones(64, 2, device="cuda"), scale_b=one, scale_recipe_a="1x128",
                     scale_recipe_b="128x128")
    with pytest.raises(tessera.InvalidValueError, match=r"\(63,\)"):
        tessera.gemm(qa, qb.T, scale_a=torch.ones(63, device="cuda"), scale_b=one)
    with pytest.raises(tessera.InvalidValueError, match="scale_recipe_a='1x128'"):
        tessera.gemm(qa, qb.T, scale_a=torch.ones(64, 2, device="cuda"), scale_b=torch.ones(1, 2, device="cuda"))
    with pytest.raises(tessera.InvalidValueError, match="float32"):
        tessera.gemm(qa, qb.T, scale_a=torch.ones(64, 1, device="cuda").double(), scale_b=one)
    with pytest.raises(tessera.InvalidValueError, match="GPU memory"):
        tessera.gemm(qa, qb.T, scale_a=torch.ones(64, 1), scale_b=one)


@needs_gpu
def test_batched_block_scales(torch):
    batch, m, n, k = 3, 128, 256, 384
    xs = [torch.randn(m, k, device="cuda") for _ in range(batch)]
    w = torch.randn(n, k, device="cuda")
    qs, ss = zip(*(tessera.quantize_fp8(x, "1x128") for x in xs))
    qa, sa = torch.stack(qs), torch.stack(ss)            # (B, M, K/128), one set per batch
    qw, sw = tessera.quantize_fp8(w, "128x128")          # (N/128, K/128), shared by the batch
    got = tessera.gemm(qa, qw.T, scale_a=sa, scale_b=sw, scale_recipe_a="1x128", scale_recipe_b="128x128")
    assert got.shape == (batch, m, n)
    wd = qw.float() * sw.repeat_interleave(128, 0)[:n].repeat_interleave(128, 1)[:, :k]
    for i in range(batch):
        xd = qs[i].float() * ss[i].repeat_interleave(128, 1)[:, :k]
        _close(torch, got[i], xd @ wd.T, FP8_BOUND)
    # one set of factors for every batch: a 2-D scale_a
    got = tessera.gemm(qa, qw.T, scale_a=ss[0], scale_b=sw, scale_recipe_a="1x128", scale_recipe_b="128x128")
    xd = qa[1].float() * ss[0].repeat_interleave(128, 1)[:, :k]
    _close(torch, got[1], xd @ wd.T, FP8_BOUND)


# ---- an FP8 out: its form checked before the call -------------------------------------

def _fp8_out_problem(out_dtype=DType.E4M3):
    a, b, _ = _fp8_problem(64, 256, 256)
    out = tessera.from_parts(0x300000, out_dtype, (64, 256), (256, 1), ("cuda", 0))
    return a, b, out


def test_names_fp8():
    for name in ("e4m3", "e5m2", "float8_e4m3fn", DType.E4M3, DType.E5M2):
        assert scales.names_fp8(name)
    for name in (None, "bf16", DType.BF16, "float32"):
        assert not scales.names_fp8(name)


@pytest.mark.parametrize("out_dtype,kwargs,match", [
    (DType.BF16, dict(out_scale=FakeFactors((1,))), "belong to an FP8 out"),
    (DType.BF16, dict(amax=FakeFactors((1,))), "belong to an FP8 out"),
    (DType.E4M3, dict(out_scale="2x2"), r"out_scale='2x2': '1x128'"),
    (DType.E4M3, dict(out_scale="1x128", amax=FakeFactors((1,))), "amax is written for a per-tensor FP8 out"),
    (DType.E4M3, dict(out_scale=FakeFactors((2,))), r"out_scale: shape \(2,\); the per-tensor factor is one"),
    (DType.E5M2, dict(out_scale=FakeFactors((1,), dtype="torch.float16")), "float32"),
    (DType.E4M3, dict(amax=FakeFactors((1,), device=("cuda", 1))), "amax is on cuda:1"),
])
def test_fp8_out_refused_before_the_call(out_dtype, kwargs, match):
    a, b, out = _fp8_out_problem(out_dtype)
    with pytest.raises(tessera.InvalidValueError, match=match):
        tessera.gemm(a, b, out, handle=_NoDevice(), **kwargs)


def test_fp8_out_accepted_reaches_the_handle():
    """A per-tensor FP8 out with a factor and an amax passes the checks (the handle is next)."""
    a, b, out = _fp8_out_problem()
    with pytest.raises(AssertionError, match="reached the device"):
        tessera.gemm(a, b, out, handle=_NoDevice(), out_scale=FakeFactors((1,)), amax=FakeFactors((1,)))
