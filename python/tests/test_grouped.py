"""tessera.grouped_mm / grouped_mm_masked (Mixture-of-Experts): the ctypes structs against the C
layout, Python-side refusals and the scale-shape rule on any machine; results against a float32
PyTorch reference per group on a GPU."""
import ctypes
import os
import re
import types

import pytest

import tessera
from tessera import grouped
from conftest import REPO, group_offs, needs_gpu

# ---- any machine -----------------------------------------------------------

# sizeof / offsetof of the C structs, printed by gcc -Iinclude for x86-64 (LP64).
GROUPED_DESC_SIZE = 296
GROUPED_DESC_OFFSETS = {"struct_size": 0, "layout": 4, "groups": 8, "m": 16, "n": 24, "k": 32, "expected_m": 40,
                        "x": 48, "w": 88, "y": 128, "x_scale": 168, "w_scale": 200, "epilogue": 232, "gate": 256,
                        "gate_limit": 260, "y_scale": 264}
PLAN_SIZE, PLAN_GROUP_ORDER_OFFSET = 136, 112


def test_grouped_desc_struct_matches_header():
    s = tessera._lib.GroupedGemmDescStruct
    assert ctypes.sizeof(s) == GROUPED_DESC_SIZE
    assert {name: getattr(s, name).offset for name, _ in s._fields_} == GROUPED_DESC_OFFSETS
    assert ctypes.sizeof(tessera._lib.PlanStruct) == PLAN_SIZE
    assert tessera._lib.PlanStruct.group_order.offset == PLAN_GROUP_ORDER_OFFSET
    assert tessera._lib.PlanStruct.large_min_rows.offset == PLAN_GROUP_ORDER_OFFSET + 8
    # and the library's own sizeof, which tess_grouped_gemm_desc_init stores in struct_size
    desc = s()
    assert tessera._lib.lib().tess_grouped_gemm_desc_init(ctypes.byref(desc)) == 0
    assert desc.struct_size == ctypes.sizeof(s) and desc.groups == 1 and desc.layout == 0


def test_enums_match_header():
    text = open(os.path.join(REPO, "include", "tessera.h")).read()
    orders = {name: int(v) for name, v in re.findall(r"TESS_GROUP_ORDER_(\w+) = (\d+)", text)}
    assert orders == {o.name: int(o) for o in tessera.GroupOrder}
    layouts = {name: int(v) for name, v in re.findall(r"TESS_GROUP_(CONTIGUOUS|MASKED) = (\d+)", text)}
    assert layouts == {o.name: int(o) for o in tessera.GroupLayout}


@pytest.fixture
def np():
    return pytest.importorskip("numpy")


def test_host_memory_is_refused(np):
    x = np.ones((64, 64), dtype=np.float16)
    w = np.ones((2, 64, 64), dtype=np.float16)
    with pytest.raises(tessera.InvalidValueError, match="GPU memory"):
        tessera.grouped_mm(x, w, np.array([32, 64], dtype=np.int32))


def test_dimensions_are_checked(np):
    x2, x3 = np.ones((64, 64), dtype=np.float16), np.ones((2, 64, 64), dtype=np.float16)
    with pytest.raises(ValueError, match=r"x: expected \[total_M, K\]"):
        tessera.grouped_mm(x3, x3, None)
    with pytest.raises(ValueError, match=r"w: expected \[G, N, K\]"):
        tessera.grouped_mm(x2, x2, None)
    with pytest.raises(ValueError, match=r"x: expected \[G, M_max, K\]"):
        tessera.grouped_mm_masked(x2, x3, None, 0)


class _FakeFactors:
    """Just enough of a float32 CUDA torch tensor for the scale-shape rule (no torch needed)."""

    def __init__(self, shape, strides=None):
        self.shape, self.dtype = tuple(shape), "torch.float32"
        self.device = types.SimpleNamespace(type="cuda", index=0)
        if strides is None:  # compact row-major
            strides, step = [], 1
            for e in reversed(self.shape):
                strides.insert(0, step)
                step *= e
        self._strides = tuple(strides)

    def stride(self, dim=None):
        return self._strides if dim is None else self._strides[dim]

    def numel(self):
        n = 1
        for e in self.shape:
            n *= e
        return n

    def dim(self):
        return len(self.shape)

    def data_ptr(self):
        return 0x1000


def _mode(t, what, layout=grouped.GroupLayout.CONTIGUOUS, groups=8, mn=300, k=7168, recipe=None):
    recipes = grouped._X_RECIPES if what == "x" else grouped._W_RECIPES
    _, d = grouped._scale(t, what, recipe, recipes, layout, groups, mn, k, 0)
    return d.mode, d.stride_mn, d.stride_k, d.batch_stride


def test_scale_shapes_choose_the_mode():
    f = _FakeFactors
    kb, masked = 56, grouped.GroupLayout.MASKED  # K = 7168
    # contiguous x (total_M = 300, G = 8)
    assert _mode(f(()), "x") == (0, 0, 0, 0) and _mode(f((1,)), "x") == (0, 0, 0, 0)
    assert _mode(f((8,)), "x") == (0, 0, 0, 1)                      # one per group
    assert _mode(f((300,)), "x") == (3, 1, 0, 0)                    # one per row
    assert _mode(f((kb, 300)), "x") == (4, 1, 300, 0)               # 1x128, rows contiguous
    assert _mode(f((300, kb)), "x") == (4, kb, 1, 0)                # 1x128, K blocks contiguous
    assert _mode(f((300, kb), (1, 304)), "x") == (4, 1, 304, 0)     # real strides (quantize_fp8's layout)
    # masked x (M_max = 300): the group first
    assert _mode(f((8,)), "x", masked) == (0, 0, 0, 1)
    assert _mode(f((8, 300)), "x", masked) == (3, 1, 0, 300)
    assert _mode(f((8, kb, 300)), "x", masked) == (4, 1, 300, kb * 300)
    # w (N = 4096): per tensor, per expert, per column, 128x128 blocks
    assert _mode(f((1,)), "w", mn=4096) == (0, 0, 0, 0)
    assert _mode(f((8,)), "w", mn=4096) == (0, 0, 0, 1)
    assert _mode(f((8, 4096)), "w", mn=4096) == (3, 1, 0, 4096)
    assert _mode(f((8, 32, kb)), "w", mn=4096) == (5, kb, 1, 32 * kb)
    assert _mode(f((8, 32, kb), (32 * 64, 64, 1)), "w", mn=4096) == (5, 64, 1, 2048)  # rows padded to 64


def test_ambiguous_and_wrong_scale_shapes():
    f = _FakeFactors
    with pytest.raises(ValueError, match="ambiguous.*scale_recipe_x"):
        _mode(f((8,)), "x", groups=8, mn=8)                        # G == total_M
    assert _mode(f((8,)), "x", groups=8, mn=8, recipe="rowwise") == (3, 1, 0, 0)
    assert _mode(f((8,)), "x", groups=8, mn=8, recipe="tensor") == (0, 0, 0, 1)
    with pytest.raises(ValueError, match="ambiguous"):
        _mode(f((56, 56)), "x", mn=56)                             # square (K/128, total_M)
    assert _mode(f((56, 56)), "x", mn=56, recipe="1x128") == (4, 56, 1, 0)  # read as (rows, K blocks)
    with pytest.raises(ValueError, match=r"fits no scale recipe.*'1x128' needs shape \(300, 56\)"):
        _mode(f((300, 57)), "x")
    with pytest.raises(ValueError, match=r"'128x128' needs shape \(8, 32, 56\) \(one factor per 128x128 block"):
        _mode(f((8, 4096, 56)), "w", mn=4096)
    with pytest.raises(ValueError, match="needs scale_x"):
        _mode(None, "x", recipe="tensor")
    with pytest.raises(ValueError, match="float32"):
        t = f((8,))
        t.dtype = "torch.bfloat16"
        _mode(t, "x")


# ---- on a GPU ----------------------------------------------------------------


def _close(torch, got, want, bound, what=""):
    got, want = got.float(), want.float()
    assert torch.isfinite(got).all(), f"{what}: non-finite output"
    rel = ((got - want).norm() / want.norm().clamp_min(1e-30)).item()
    assert rel < bound, f"{what}: relative error {rel:.3g} (bound {bound})"


def _check_contiguous(torch, y, want_rows, sizes, bound, tail):
    """Each group's rows of y against its reference rows; the `tail` rows after the last group untouched (NaN)."""
    row = 0
    for g, s in enumerate(sizes):
        if s:
            _close(torch, y[row:row + s], want_rows(g, row, s), bound, f"group {g} ({s} rows)")
        row += s
    assert torch.isnan(y[row:row + tail].float()).all(), "rows of no group were written"


# Group sizes: empty groups, a group of one row, ragged and whole 128-row tiles.
SIZES = [0, 1, 37, 128, 0, 300, 5, 256]
BF16_BOUND = 8e-3      # bf16 rounding of Y, other summation order (test_gemm's bound)
FP8_BOUND = 2 ** -8 + 2 ** -12  # bf16 rounding of Y + FP8 accumulation (test_gemm's FP8 bound)


@needs_gpu
@pytest.mark.parametrize("dtype,out_dtype", [("bfloat16", None), ("float16", "f32")])
def test_contiguous_16bit_matches_torch(torch, dtype, out_dtype):
    dt = getattr(torch, dtype)
    g, n, k, tail = len(SIZES), 384, 512, 3
    total = sum(SIZES)
    x = torch.randn(total + tail, k, device="cuda").to(dt)
    w = torch.randn(g, n, k, device="cuda").to(dt)
    want_type = torch.float32 if out_dtype else dt
    out = torch.full((total + tail, n), float("nan"), device="cuda", dtype=want_type)
    y = tessera.grouped_mm(x, w, group_offs(torch, SIZES), out, out_dtype=out_dtype)
    assert y is out and y.dtype == want_type
    _check_contiguous(torch, y, lambda gi, r, s: x[r:r + s].float() @ w[gi].float().T, SIZES, BF16_BOUND, tail)
    y2 = tessera.grouped_mm(x[:total], w, group_offs(torch, SIZES))  # a new output, of x's type
    assert y2.shape == (total, n) and y2.dtype == dt
    if hasattr(torch, "_grouped_mm") and dt == torch.bfloat16:
        ref = torch._grouped_mm(x[:total], w.transpose(-2, -1), offs=group_offs(torch, SIZES))
        _close(torch, y2, ref, 2 ** -7, "vs torch._grouped_mm")


@needs_gpu
def test_every_plan_and_order(torch):
    g, n, k = len(SIZES), 512, 1024
    x = torch.randn(sum(SIZES), k, device="cuda").bfloat16()
    w = torch.randn(g, n, k, device="cuda").bfloat16()
    plans = tessera.grouped_plans(x, w)
    assert plans and len({p.name for p in plans}) == len(plans)
    assert {p.group_order for p in plans} == {tessera.GroupOrder.N_FASTEST, tessera.GroupOrder.M_FASTEST,
                                              tessera.GroupOrder.BANDED}
    offs = group_offs(torch, SIZES)
    for p in plans:
        y = tessera.grouped_mm(x, w, offs, plan=p)
        _check_contiguous(torch, y, lambda gi, r, s: x[r:r + s].float() @ w[gi].float().T, SIZES, BF16_BOUND, 0)


@needs_gpu
def test_prepared_calls_match_fresh_ones(torch):
    """Grouped calls repeated with new data and new group sizes of the same layouts take the prepared
    path (tessera.call_cache) and give what fresh calls give: contiguous bf16 (a new output each
    time, and the "kn" weight layout), masked FP8 with block factors."""
    from tessera import call_cache
    call_cache.clear()
    g, n, k, m_max = len(SIZES), 256, 512, 320
    for trial in range(2):
        sizes = SIZES if trial == 0 else SIZES[::-1]
        x = torch.randn(sum(SIZES), k, device="cuda").bfloat16()
        w = torch.randn(g, n, k, device="cuda").bfloat16()
        y = tessera.grouped_mm(x, w, group_offs(torch, sizes))
        _check_contiguous(torch, y, lambda gi, r, s: x[r:r + s].float() @ w[gi].float().T, sizes, BF16_BOUND, 0)
        wkn = w.transpose(1, 2)  # [G, K, N], K contiguous
        y = tessera.grouped_mm(x, wkn, group_offs(torch, sizes), w_layout="kn")
        _check_contiguous(torch, y, lambda gi, r, s: x[r:r + s].float() @ wkn[gi].float(), sizes, BF16_BOUND, 0)
        counts = [min(s, m_max) for s in sizes]
        xm = torch.randn(g, m_max, k, device="cuda")
        qx, sx = zip(*(tessera.quantize_fp8(xm[gi], "1x128") for gi in range(g)))
        qx, sx = torch.stack(qx), torch.stack(sx)
        qw, sw = _quantize_experts(torch, torch.randn(g, n, k, device="cuda"), "128x128")
        out = tessera.grouped_mm_masked(qx, qw, torch.tensor(counts, dtype=torch.int32, device="cuda"), 64,
                                        scale_x=sx, scale_w=sw, scale_recipe_x="1x128", scale_recipe_w="128x128")
        for gi, c in enumerate(counts):
            if c:
                want = _dequantize(torch, qx[gi, :c], sx[gi], 1) @ _dequantize(torch, qw[gi], sw[gi], 128).T
                _close(torch, out[gi, :c], want, FP8_BOUND, f"masked group {gi}")
        if trial == 0:  # the "kn" view is the same [G, N, K] matrices as w: one prepared call for both
            prepared = len(call_cache._entries)
            assert prepared == 2
    assert len(call_cache._entries) == prepared


@needs_gpu
def test_masked_leaves_rows_past_masked_m(torch):
    counts, m_max, n, k = [0, 1, 200, 64, 129, 7], 200, 256, 384
    g = len(counts)
    x = torch.randn(g, m_max, k, device="cuda").bfloat16()
    w = torch.randn(g, n, k, device="cuda").bfloat16()
    masked_m = torch.tensor(counts, dtype=torch.int32, device="cuda")
    out = torch.full((g, m_max, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    for p in [None] + tessera.grouped_plans(x, w, expected_m=64):
        out.fill_(float("nan"))
        tessera.grouped_mm_masked(x, w, masked_m, 64, out, plan=p)
        for gi, c in enumerate(counts):
            if c:
                _close(torch, out[gi, :c], x[gi, :c].float() @ w[gi].float().T, BF16_BOUND, f"group {gi}")
            assert torch.isnan(out[gi, c:].float()).all(), f"group {gi}: rows past masked_m={c} were written"


def _dequantize(torch, q, factors, rows_per_factor):
    """q (rows x K, FP8) times its factors, indexed (row block, K block), in float32."""
    f = factors.repeat_interleave(rows_per_factor, 0)[:q.shape[0]].repeat_interleave(128, 1)[:, :q.shape[1]]
    return q.float() * f


def _quantize_experts(torch, w, recipe):
    """Each expert's weight quantized with `recipe`: (q [G, N, K], factors [G, ...])."""
    qs, fs = zip(*(tessera.quantize_fp8(w[g], recipe) for g in range(w.shape[0])))
    return torch.stack(qs), torch.stack(fs)


@needs_gpu
@pytest.mark.parametrize("x_layout", ["rows", "kblocks"])
def test_contiguous_fp8_block_scales(torch, x_layout):
    g, n, k, tail = len(SIZES), 320, 1152, 2
    total = sum(SIZES)
    xf = torch.randn(total + tail, k, device="cuda")
    qx, sx = tessera.quantize_fp8(xf, "1x128")          # (rows, K/128), rows contiguous
    qw, sw = _quantize_experts(torch, torch.randn(g, n, k, device="cuda"), "128x128")  # (G, N/128, K/128)
    scale_x = sx if x_layout == "rows" else sx.T.contiguous()  # the (K/128, rows) shape, same memory order
    out = torch.full((total + tail, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    tessera.grouped_mm(qx, qw, group_offs(torch, SIZES), out, scale_x=scale_x, scale_w=sw)
    xd = _dequantize(torch, qx, sx, 1)
    _check_contiguous(torch, out, lambda gi, r, s: xd[r:r + s] @ _dequantize(torch, qw[gi], sw[gi], 128).T, SIZES,
                      FP8_BOUND, tail)


# A child process for a case that once faulted: a kernel fault poisons the CUDA context of the
# process it happens in, and would fail every later GPU test of this pytest run.
_CHILD = """
import sys, torch, tessera
n, k, sizes = {n}, {k}, {sizes}
qx, sx = tessera.quantize_fp8(torch.randn(sum(sizes), k, device="cuda"), "1x128")
qw, sw = zip(*(tessera.quantize_fp8(torch.randn(n, k, device="cuda"), "128x128") for _ in sizes))
qw, sw = torch.stack(qw), torch.stack(sw)
ends = torch.tensor(sizes, dtype=torch.int32).cumsum(0).int().cuda()
y = tessera.grouped_mm(qx, qw, ends, scale_x=sx, scale_w=sw)
torch.cuda.synchronize()
worst, row = 0.0, 0
for g, s in enumerate(sizes):
    if s:
        fx = sx[row:row + s].repeat_interleave(128, 1)[:, :k]
        fw = sw[g].repeat_interleave(128, 0)[:n].repeat_interleave(128, 1)[:, :k]
        want = (qx[row:row + s].float() * fx) @ (qw[g].float() * fw).T
        worst = max(worst, ((y[row:row + s].float() - want).norm() / want.norm()).item())
    row += s
print("worst", worst)
sys.exit(0 if worst < {bound} else 1)
"""


@needs_gpu
@pytest.mark.parametrize("k", [1152, 2048])
def test_fp8_block_scales_groups_at_unaligned_rows(torch, k):
    """Groups starting at rows that are not multiples of 4 while x's 1x128 factors (total_M = 128,
    rows contiguous) have whole 16-byte strides, so that the kernels may load them by TMA. Faulted
    (illegal instruction) with K >= 2048 when first run; K = 1152 passed."""
    import subprocess
    import sys
    code = _CHILD.format(n=320, k=k, sizes=[14, 68, 10, 6, 0, 23, 0, 7], bound=FP8_BOUND)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(REPO, "python"), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "worst" in r.stdout, (r.stdout + r.stderr)[-2000:]


@needs_gpu
def test_contiguous_fp8_tensor_and_rowwise_scales(torch):
    g, n, k = len(SIZES), 256, 512
    total = sum(SIZES)
    qx = torch.randn(total, k, device="cuda").to(torch.float8_e4m3fn)
    qw = torch.randn(g, n, k, device="cuda").to(torch.float8_e4m3fn)
    offs = group_offs(torch, SIZES)
    # per-tensor x, one factor per expert
    sx1 = torch.tensor([0.5], device="cuda")
    sw_g = torch.rand(g, device="cuda") + 0.5
    y = tessera.grouped_mm(qx, qw, offs, scale_x=sx1, scale_w=sw_g)
    assert y.dtype == torch.bfloat16
    _check_contiguous(torch, y, lambda gi, r, s: 0.5 * sw_g[gi] * (qx[r:r + s].float() @ qw[gi].float().T), SIZES,
                      FP8_BOUND, 0)
    # per row of x, per column of each expert (torch._scaled_grouped_mm's rowwise recipe)
    sx = torch.rand(total, device="cuda") + 0.5
    sw = torch.rand(g, n, device="cuda") + 0.5
    y = tessera.grouped_mm(qx, qw, offs, scale_x=sx, scale_w=sw)
    _check_contiguous(torch, y, lambda gi, r, s: (sx[r:r + s, None] * qx[r:r + s].float()) @
                      (sw[gi, :, None] * qw[gi].float()).T, SIZES, FP8_BOUND, 0)


@needs_gpu
def test_masked_fp8_block_scales(torch):
    counts, m_max, n, k = [3, 0, 128, 1, 77], 128, 256, 640
    g = len(counts)
    qx, sx = tessera.quantize_fp8(torch.randn(g * m_max, k, device="cuda"), "1x128")
    qx, sx = qx.view(g, m_max, k), sx.unflatten(0, (g, m_max))  # (G, M_max, K/128), strides (M_max, 1, G*M_max)
    qw, sw = _quantize_experts(torch, torch.randn(g, n, k, device="cuda"), "128x128")
    out = torch.full((g, m_max, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    tessera.grouped_mm_masked(qx, qw, torch.tensor(counts, dtype=torch.int32, device="cuda"), 64, out,
                              scale_x=sx, scale_w=sw)
    for gi, c in enumerate(counts):
        if c:
            want = _dequantize(torch, qx[gi, :c], sx[gi, :c], 1) @ _dequantize(torch, qw[gi], sw[gi], 128).T
            _close(torch, out[gi, :c], want, FP8_BOUND, f"group {gi}")
        assert torch.isnan(out[gi, c:].float()).all(), f"group {gi}: rows past masked_m were written"


@needs_gpu
@pytest.mark.parametrize("masked", [False, True])
def test_fp8_y(torch, masked):
    """An FP8 y from the grouped kernels (bf16 inputs): per tensor, fp8(v * 0.5) with max |v| of
    the groups' rows in amax, and with a bias per group and SiLU before it; with 1x128 factors,
    each row's 128-column blocks dequantize to v.
    Each element within half an e4m3 ulp of the float64 product (plus 2^-9 absolute)."""
    gen = torch.Generator(device="cuda").manual_seed(61)
    counts, n, k = [100, 0, 177, 129], 384, 256
    g = len(counts)
    ws = torch.randn(g, n, k, device="cuda", generator=gen).bfloat16()
    if masked:
        x = torch.randn(g, 200, k, device="cuda", generator=gen).bfloat16()
        rows = torch.tensor(counts, dtype=torch.int32, device="cuda")
        call = lambda **kw: tessera.grouped_mm_masked(x, ws, rows, 128, **kw)
        parts = [(x[gi, :c], gi, (gi, slice(0, c))) for gi, c in enumerate(counts)]
    else:
        x = torch.randn(sum(counts), k, device="cuda", generator=gen).bfloat16()
        ends = torch.tensor(counts).cumsum(0)
        call = lambda **kw: tessera.grouped_mm(x, ws, ends.to(torch.int32).cuda(), **kw)
        parts = [(x[e - c:e], gi, (slice(e - c, e),)) for gi, (c, e) in enumerate(zip(counts, ends.tolist()))]
    want = [(xs.double() @ ws[gi].double().T, at) for xs, gi, at in parts if xs.shape[0]]
    groups = [gi for xs, gi, _ in parts if xs.shape[0]]
    largest = max(v.abs().max().item() for v, _ in want)

    def close(got, v, what):
        err = (got.double() - v.clamp(-448.0, 448.0)).abs()
        assert (err <= 2.0 ** -4 * (1 + 2.0 ** -3) * v.abs() + 2.0 ** -9).all(), what

    amax = torch.full((1,), 7.0, device="cuda")
    y = call(out_dtype="e4m3", out_scale=torch.tensor([0.5], device="cuda"), amax=amax)
    assert y.dtype == torch.float8_e4m3fn
    assert abs(amax.item() - largest) <= 1e-3 * largest
    for v, at in want:
        close(y[at].float(), v * 0.5, f"per tensor, rows {at}")
    # with a bias per group and SiLU (the fused steps before the FP8 code): fp8(silu(v + bias) * 0.5)
    bias = torch.randn(g, n, device="cuda", generator=gen)
    y = call(out_dtype="e4m3", out_scale=torch.tensor([0.5], device="cuda"), bias=bias, activation="silu")
    for (v, at), gi in zip(want, groups):
        u = v + bias[gi].double()
        close(y[at].float(), u * torch.sigmoid(u) * 0.5, f"bias and SiLU, rows {at}")
    y, f = call(out_dtype="e4m3", out_scale="1x128")
    assert f.shape == (y.shape[:-1] + (3,)) and f.dtype == torch.float32
    for v, at in want:
        fa = f[at].double()
        assert ((fa - v.abs().reshape(v.shape[0], 3, 128).amax(-1) / 448.0).abs() <= 1e-3 * fa).all()
        close(y[at].float(), v / fa.repeat_interleave(128, 1), f"1x128, rows {at}")


@needs_gpu
def test_refusals_reach_python(torch):
    w = torch.randn(2, 64, 64, device="cuda").bfloat16()
    offs = torch.tensor([3, 8], dtype=torch.int32, device="cuda")
    with pytest.raises(tessera.InvalidValueError, match="int32"):
        tessera.grouped_mm(torch.randn(8, 64, device="cuda").bfloat16(), w, offs.long())
    with pytest.raises(tessera.InvalidValueError, match=r"shape \(2,\)"):
        tessera.grouped_mm(torch.randn(8, 64, device="cuda").bfloat16(), w, offs[:1])
    # the C library's sentences: rows of 100 bf16 elements are not whole 16 bytes; an N-major W
    with pytest.raises(tessera.InvalidValueError, match="pad the leading dimension to 104"):
        tessera.grouped_mm(torch.randn(8, 100, device="cuda").bfloat16(),
                           torch.randn(2, 64, 100, device="cuda").bfloat16(), offs)
    with pytest.raises(tessera.NotSupportedError, match="K-major"):  # an FP8 W read N-major
        tessera.grouped_mm(torch.zeros(8, 64, device="cuda").to(torch.float8_e4m3fn),
                           w.transpose(1, 2).contiguous().mT.to(torch.float8_e4m3fn), offs,
                           scale_x=torch.ones(1, device="cuda"), scale_w=torch.ones(1, device="cuda"))
    with pytest.raises(tessera.TesseraError, match="block"):  # 1x128 x factors with per-tensor w factors
        q = torch.zeros(8, 128, device="cuda").to(torch.float8_e4m3fn)
        tessera.grouped_mm(q, torch.zeros(2, 64, 128, device="cuda").to(torch.float8_e4m3fn), offs,
                           scale_x=torch.ones(8, 1, device="cuda"), scale_w=torch.ones(1, device="cuda"))
    with pytest.raises(tessera.InvalidValueError, match="plan"):  # a dense plan is not a grouped one
        a = torch.randn(64, 64, device="cuda").bfloat16()
        tessera.grouped_mm(torch.randn(8, 64, device="cuda").bfloat16(), w, offs,
                           plan=tessera.gemm_plans(a, a.T)[0])


@needs_gpu
def test_no_tokens(torch):
    w = torch.randn(4, 64, 64, device="cuda").bfloat16()
    y = tessera.grouped_mm(torch.empty(0, 64, device="cuda").bfloat16(), w,
                           torch.zeros(4, dtype=torch.int32, device="cuda"))
    assert y.shape == (0, 64) and y.dtype == torch.bfloat16


def test_weight_layouts_are_explicit():
    """w_layout names what w means ('nk': y = x @ w[g].T; 'kn': y = x @ w[g], torch._grouped_mm's
    mat_b); 'kn' takes a [G, K, N] as a view, K or (16-bit) N contiguous, and refuses an
    N-contiguous FP8 one, never copying or transposing in silence. Checked before anything touches
    a GPU."""
    torch = pytest.importorskip("torch")
    x = torch.zeros(300, 128, dtype=torch.bfloat16)
    offs = torch.zeros(4, dtype=torch.int32)
    w_kn = torch.zeros(4, 128, 256, dtype=torch.bfloat16)  # [G, K, N], N contiguous
    with pytest.raises(tessera.InvalidValueError, match="w_layout='xy'"):
        tessera.grouped_mm(x, w_kn, offs, w_layout="xy")
    with pytest.raises(tessera.InvalidValueError, match="N contiguous"):
        tessera.grouped_mm(x.to(torch.float8_e4m3fn), w_kn.to(torch.float8_e4m3fn), offs, w_layout="kn")
    w_view = torch.zeros(4, 256, 128, dtype=torch.bfloat16).transpose(1, 2)  # [G, K, N], K contiguous
    for w in (w_view, w_kn):  # past the layout check: the host tensors
        with pytest.raises(tessera.InvalidValueError, match="cpu memory"):
            tessera.grouped_mm(x, w, offs, w_layout="kn")


def test_weight_layout_kn_matches_nk(torch):
    """The same experts given as [G, N, K] ('nk') and as its [G, K, N] view ('kn') give the same y;
    an N-contiguous [G, K, N] copy of them (the grouped_f16_nmajor kernels, another summation
    order) and the [G, N, K] tensor's N-contiguous view give it within bf16's rounding."""
    g = torch.Generator(device="cuda").manual_seed(11)
    x = torch.randn(300, 128, device="cuda", generator=g).bfloat16()
    w = torch.randn(4, 256, 128, device="cuda", generator=g).bfloat16()
    offs = torch.tensor([50, 120, 120, 300], dtype=torch.int32, device="cuda")
    want = tessera.grouped_mm(x, w, offs)
    assert torch.equal(want, tessera.grouped_mm(x, w.transpose(1, 2), offs, w_layout="kn"))
    w_kn = w.transpose(1, 2).contiguous()  # [G, K, N], N contiguous
    for got in (tessera.grouped_mm(x, w_kn, offs, w_layout="kn"),
                tessera.grouped_mm(x, w_kn.transpose(1, 2), offs)):  # 'nk' view, N contiguous
        err = (got.float() - want.float()).norm() / want.float().norm()
        assert err < 1e-2, err
