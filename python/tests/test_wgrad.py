"""tessera.grouped_mm_wgrad (an MoE layer's weight gradient): the ctypes struct against the C
layout and Python-side refusals on any machine; results against per-group PyTorch matmuls in
float64 on a GPU, every plan, accumulation into out, empty and clamped groups."""
import ctypes

import pytest

import tessera
from conftest import group_offs, needs_gpu

# ---- any machine -----------------------------------------------------------

# sizeof / offsetof of tess_grouped_wgrad_desc, printed by gcc -Iinclude for x86-64 (LP64).
WGRAD_DESC_SIZE = 216
WGRAD_DESC_OFFSETS = {"struct_size": 0, "groups": 8, "tokens": 16, "n": 24, "k": 32, "expected_tokens": 40,
                      "alpha": 48, "beta": 52, "dy": 56, "x": 96, "c": 136, "dw": 176}


def test_wgrad_desc_struct_matches_header():
    s = tessera._lib.GroupedWgradDescStruct
    assert ctypes.sizeof(s) == WGRAD_DESC_SIZE
    assert {name: getattr(s, name).offset for name, _ in s._fields_} == WGRAD_DESC_OFFSETS
    desc = s()
    assert tessera._lib.lib().tess_grouped_wgrad_desc_init(ctypes.byref(desc)) == 0
    assert desc.struct_size == ctypes.sizeof(s) and desc.groups == 1 and desc.alpha == 1.0 and desc.beta == 0.0


@pytest.fixture
def cpu_torch():
    return pytest.importorskip("torch")


def test_host_tensors_and_shapes_are_refused(cpu_torch):
    torch = cpu_torch
    dy, x = torch.ones(64, 32, dtype=torch.bfloat16), torch.ones(64, 16, dtype=torch.bfloat16)
    offs = torch.tensor([10, 64], dtype=torch.int32)
    with pytest.raises(tessera.InvalidValueError, match="GPU memory"):
        tessera.grouped_mm_wgrad(dy, x, offs)
    with pytest.raises(tessera.InvalidValueError, match=r"dy: expected \[T, N\]"):
        tessera.grouped_mm_wgrad(dy[0], x, offs)
    with pytest.raises(tessera.InvalidValueError, match=r"dy: expected a torch.Tensor \[T, N\]"):
        tessera.grouped_mm_wgrad([[1.0]], x, offs)


# ---- GPU ---------------------------------------------------------------------

SIZES = [1, 63, 64, 65, 127, 200, 0, 1000]


def _reference(torch, dy, x, ends, groups, c=None, alpha=1.0, beta=0.0):
    """dw[g] = alpha dy_g^T x_g + beta c[g] in float64, the groups' ends clamped as the kernels do."""
    t = dy.shape[0]
    n, k = dy.shape[1], x.shape[1]
    out = torch.zeros(groups, n, k, dtype=torch.float64, device=dy.device)
    for g in range(groups):
        first = min(max(ends[g - 1], 0), t) if g else 0
        last = min(max(ends[g], first), t)
        if last > first:
            out[g] = alpha * (dy[first:last].double().T @ x[first:last].double())
        if beta != 0:
            out[g] += beta * c[g].double()
    return out


def _check(torch, got, want, bound):
    assert torch.isfinite(got).all()
    err = (got.double() - want).norm() / max(want.norm().item(), 1e-30)
    assert err.item() <= bound, f"relative error {err.item():.3g} > {bound:.3g}"


def _bound(dtype):
    return {"torch.float32": 2e-5, "torch.bfloat16": 2 ** -8 + 2e-5, "torch.float16": 2 ** -11 + 2e-5}[str(dtype)]


def _tokens(torch, total, cols, dtype, poison_from):
    """Random [total, cols] tokens whose rows from poison_from on hold NaN and Inf (no group owns them)."""
    t = torch.randn(total, cols, device="cuda").to(dtype)
    t[poison_from::2] = float("nan")
    t[poison_from + 1::2] = float("inf")
    return t


@needs_gpu
@pytest.mark.parametrize("dtype,out_dtype", [("bfloat16", None), ("float16", "f32"), ("bfloat16", "f32")])
def test_matches_per_group_matmuls(torch, dtype, out_dtype):
    dt = getattr(torch, dtype)
    n, k, tail = 256, 192, 5
    total = sum(SIZES)
    dy, x = _tokens(torch, total + tail, n, dt, total), _tokens(torch, total + tail, k, dt, total)
    offs = group_offs(torch, SIZES)
    dw = tessera.grouped_mm_wgrad(dy, x, offs, out_dtype=out_dtype)
    assert dw.shape == (len(SIZES), n, k) and dw.dtype == (torch.float32 if out_dtype else dt)
    want = _reference(torch, dy, x, offs.tolist(), len(SIZES))
    _check(torch, dw, want, _bound(dw.dtype))
    assert (dw[6] == 0).all()  # the empty group


@needs_gpu
def test_every_plan_and_accumulation(torch):
    n, k = 320, 136
    total = sum(SIZES)
    dy, x = torch.randn(total, n, device="cuda").bfloat16(), torch.randn(total, k, device="cuda").bfloat16()
    offs = group_offs(torch, SIZES)
    plans = tessera.grouped_wgrad_plans(dy, x, offs, out_dtype="f32")
    assert plans and len({p.name for p in plans}) == len(plans) and all("_wgrad_" in p.name for p in plans)
    for p in plans:
        acc = torch.randn(len(SIZES), n, k, device="cuda")
        start = acc.clone()
        out = tessera.grouped_mm_wgrad(dy, x, offs, acc, c=acc, beta=1.0, alpha=0.5, plan=p)
        assert out is acc
        _check(torch, acc, _reference(torch, dy, x, offs.tolist(), len(SIZES), start, 0.5, 1.0), 2e-5)


@needs_gpu
def test_no_tokens_and_empty_groups(torch):
    g, n, k = 3, 64, 40
    dy, x = torch.empty(0, n, device="cuda").half(), torch.empty(0, k, device="cuda").half()
    offs = torch.zeros(g, dtype=torch.int32, device="cuda")
    dw = tessera.grouped_mm_wgrad(dy, x, offs)
    assert dw.shape == (g, n, k) and (dw == 0).all()
    c = torch.randn(g, n, k, device="cuda")
    dw = tessera.grouped_mm_wgrad(dy, x, offs, c=c, beta=2.0, out_dtype="f32")
    _check(torch, dw, 2.0 * c.double(), 1e-7)


@needs_gpu
def test_bad_offsets_are_clamped(torch):
    t, n, k = 300, 128, 64
    dy, x = torch.randn(t, n, device="cuda").bfloat16(), torch.randn(t, k, device="cuda").bfloat16()
    ends = [100, 50, 7, 1 << 30, -5, 3]
    offs = torch.tensor(ends, dtype=torch.int32, device="cuda")
    dw = tessera.grouped_mm_wgrad(dy, x, offs, out_dtype="f32")
    _check(torch, dw, _reference(torch, dy, x, ends, len(ends)), 2e-5)


@needs_gpu
def test_refusals(torch):
    dy, x = torch.randn(64, 32, device="cuda").bfloat16(), torch.randn(63, 16, device="cuda").bfloat16()
    offs = group_offs(torch, [10, 54])
    with pytest.raises(tessera.InvalidValueError, match="same T rows"):
        tessera.grouped_mm_wgrad(dy, x, offs)
    x = torch.randn(64, 16, device="cuda").bfloat16()
    with pytest.raises(tessera.InvalidValueError, match="int32"):
        tessera.grouped_mm_wgrad(dy, x, offs.long())
    with pytest.raises(tessera.InvalidValueError, match=r"out: expected \[G, N, K\] = \[2, 32, 16\]"):
        tessera.grouped_mm_wgrad(dy, x, offs, torch.empty(2, 16, 32, device="cuda"))
    with pytest.raises(tessera.InvalidValueError, match="reads c"):
        tessera.grouped_mm_wgrad(dy, x, offs, beta=1.0)
    with pytest.raises(tessera.InvalidValueError, match="row-major"):
        tessera.grouped_mm_wgrad(dy.t().contiguous().t(), x, offs)
    with pytest.raises(tessera.NotSupportedError):
        tessera.grouped_mm_wgrad(dy.float(), x.float(), offs)


@needs_gpu
def test_autograd_uses_one_launch_and_matches_the_loop(torch):
    n, k = 128, 96
    sizes = [5, 0, 70, 33]
    x = torch.randn(sum(sizes), k, device="cuda").bfloat16()
    dy = torch.randn(sum(sizes), n, device="cuda").bfloat16()
    offs = group_offs(torch, sizes)
    fast = tessera.ops._wgrad_in_one_launch(dy, x, offs, len(sizes))
    assert fast is not None and fast.dtype == x.dtype
    via_op = torch.ops.tessera.grouped_mm_wgrad(dy, x, offs, len(sizes))
    _check(torch, via_op, _reference(torch, dy, x, offs.tolist(), len(sizes)), _bound(torch.bfloat16))
    # operands the k-grouped kernels cannot read (rows of 12 bytes) take the per-expert loop
    odd = torch.randn(sum(sizes), 6, device="cuda").bfloat16()
    assert tessera.ops._wgrad_in_one_launch(dy, odd, offs, len(sizes)) is None
