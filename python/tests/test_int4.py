"""4-bit weights (tessera.int4): the descriptor's ctypes layout and the argument checks on any
machine with torch; packing from AWQ/GPTQ/rows, the decode GEMV, the dequantizing path for larger
M and the dequantizer against a torch reference of the same rounding on a GPU."""
import ctypes

import pytest

import tessera
from tessera import int4
from tessera.errors import InvalidValueError
from conftest import needs_gpu

AWQ_ORDER = (0, 2, 4, 6, 1, 3, 5, 7)  # AutoAWQ's pack order: nibble i holds column 8j + AWQ_ORDER[i]


def pack_words(t, codes, fmt):
    """codes (N x K, int 0..15) as `fmt`'s int32 words, written as the module docstring says."""
    n, k = codes.shape
    if fmt == "rows":
        groups = codes.reshape(n, k // 8, 8)
    elif fmt == "gptq":
        groups = codes.t().reshape(k // 8, 8, n).permute(0, 2, 1)
    else:
        groups = codes.t().reshape(k, n // 8, 8)[..., list(AWQ_ORDER)]
    words = t.zeros(groups.shape[:-1], dtype=t.int64, device=codes.device)
    for i in range(8):
        words |= groups[..., i].to(t.int64) << (4 * i)
    return as_int32(t, words)


def as_int32(t, words):
    """int64 words of 32 bits as the int32 tensor of the same bits."""
    return (words - ((words >> 31) << 32)).to(t.int32)


def reference_weight(t, codes, scales, zeros, group, dtype):
    """W[n, k] = (q - z) * s with s rounded to dtype and the product rounded to dtype (as dequantize_int4,
    and so w4a16_gemm above 16 rows); dtype None: exact, in float64 (as the decode GEMV computes)."""
    n, k = codes.shape
    z = (zeros.double() if zeros is not None else t.full((k // group, n), 8.0, device=codes.device).double())
    s = scales.double() if dtype is None else scales.to(dtype).double()
    w = (codes.double() - z.t().repeat_interleave(group, dim=1)) * s.t().repeat_interleave(group, dim=1)
    return w if dtype is None else w.to(dtype)


def gemm_weight(t, m, codes, scales, zeros, group, dtype):
    """The weight w4a16_gemm computes with for m rows: exact up to 16 (the GEMV), else dequantize_int4's."""
    return reference_weight(t, codes, scales, zeros, group, None if m <= int4.MAX_DECODE_M else dtype)


def test_desc_layout_matches_the_library():
    """tess_w4a16_desc_init's struct_size (C's sizeof) is the ctypes struct's size."""
    d = int4.W4A16DescStruct()
    tessera.errors.check(tessera._lib.lib().tess_w4a16_desc_init(ctypes.byref(d)))
    assert d.struct_size == ctypes.sizeof(int4.W4A16DescStruct)
    assert d.group_size == 128


def test_refusals_before_the_device():
    t = pytest.importorskip("torch")
    x = t.zeros(4, 256, dtype=t.bfloat16)
    w = t.zeros(64, 128, dtype=t.uint8)
    s = t.zeros(2, 64, dtype=t.float16)
    with pytest.raises(InvalidValueError, match="format="):
        tessera.pack_int4(t.zeros(64, 32, dtype=t.int32), "marlin")
    with pytest.raises(InvalidValueError, match="int32"):
        tessera.pack_int4(t.zeros(64, 32, dtype=t.int64), "rows")
    with pytest.raises(InvalidValueError, match=r"\(K/G, N\) = \(K/G, 64\)"):
        tessera.w4a16_gemm(x, w, s.t().contiguous())
    with pytest.raises(InvalidValueError, match="groups of 64 or 128"):
        tessera.w4a16_gemm(x, w, t.zeros(8, 64, dtype=t.float16))
    with pytest.raises(InvalidValueError, match="uint8 of shape"):
        tessera.w4a16_gemm(x, w, s, t.zeros(2, 64, dtype=t.int32))
    with pytest.raises(InvalidValueError, match="columns but the weight has K=256"):
        tessera.w4a16_gemm(t.zeros(4, 128, dtype=t.bfloat16), w, s)
    with pytest.raises(InvalidValueError, match="bfloat16 or float16"):
        tessera.w4a16_gemm(x.float(), w, s)
    with pytest.raises(InvalidValueError, match="cpu memory"):
        tessera.w4a16_gemm(x, w, s)


def test_unpack_zeros_reads_awq_and_gptq_order():
    """qzeros [K/G, N/8] pack N along each word as AWQ's qweight does (AWQ order) or GPTQ's
    (natural order); offset adds GPTQ v1's 1."""
    t = pytest.importorskip("torch")
    z = t.randint(0, 15, (4, 64), generator=t.Generator().manual_seed(3))
    for fmt, order in (("gptq", tuple(range(8))), ("awq", AWQ_ORDER)):
        groups = z.reshape(4, 8, 8)[..., list(order)]
        words = t.zeros((4, 8), dtype=t.int64)
        for i in range(8):
            words |= groups[..., i] << (4 * i)
        assert t.equal(tessera.unpack_int4_zeros(as_int32(t, words), fmt), z.to(t.uint8))
    assert t.equal(tessera.unpack_int4_zeros(as_int32(t, words), "awq", offset=1), (z + 1).to(t.uint8))


@needs_gpu
@pytest.mark.parametrize("fmt", ["rows", "gptq", "awq"])
def test_pack_formats_agree(torch, fmt):
    g = torch.Generator(device="cuda").manual_seed(1)
    codes = torch.randint(0, 16, (272, 448), generator=g, device="cuda")
    base = tessera.pack_int4(pack_words(torch, codes, "rows"), "rows")
    assert torch.equal(tessera.pack_int4(pack_words(torch, codes, fmt), fmt), base)


@needs_gpu
@pytest.mark.parametrize("m", [1, 5, 16, 40])
@pytest.mark.parametrize("dtype,group,with_zeros", [("bfloat16", 128, True), ("float16", 64, False),
                                                    ("bfloat16", 64, False), ("float16", 128, True)])
def test_w4a16_gemm_against_torch(torch, m, dtype, group, with_zeros):
    dt = getattr(torch, dtype)
    g = torch.Generator(device="cuda").manual_seed(m + group)
    n, k = 528, 1536
    codes = torch.randint(0, 16, (n, k), generator=g, device="cuda")
    scales = (0.004 + 0.03 * torch.rand(k // group, n, generator=g, device="cuda")).to(torch.float16)
    zeros = torch.randint(0, 16, (k // group, n), generator=g, device="cuda").to(torch.uint8) if with_zeros else None
    x = torch.randn(m, k, generator=g, device="cuda").to(dt)
    bias = torch.randn(n, generator=g, device="cuda")
    w = tessera.pack_int4(pack_words(torch, codes, "gptq"), "gptq")
    weight = reference_weight(torch, codes, scales, zeros, group, dt)
    assert torch.equal(tessera.dequantize_int4(w, scales, zeros, dtype=dt), weight)
    weight = gemm_weight(torch, m, codes, scales, zeros, group, dt)
    want = torch.nn.functional.silu(x.double() @ weight.double().t() + bias.double())
    y = tessera.w4a16_gemm(x, w, scales, zeros, bias=bias, activation="silu", out_dtype=torch.float32)
    assert y.shape == (m, n) and y.dtype == torch.float32
    err = ((y.double() - want).norm() / want.norm()).item()
    assert err < 1e-5, err
    y16 = tessera.w4a16_gemm(x, w, scales, zeros)
    assert y16.dtype == dt
    err16 = ((y16.double() - x.double() @ weight.double().t()).norm() / (x.double() @ weight.double().t()).norm())
    assert err16.item() < 1e-2


@needs_gpu
def test_w4a16_gemm_any_x_layout(torch):
    """x misaligned, with padded rows, or a single row: copied where the kernel's loads need it;
    M = 0 gives an empty output."""
    g = torch.Generator(device="cuda").manual_seed(7)
    n, k = 256, 512
    codes = torch.randint(0, 16, (n, k), generator=g, device="cuda")
    scales = (0.01 + 0.02 * torch.rand(k // 128, n, generator=g, device="cuda")).to(torch.bfloat16)
    w = tessera.pack_int4(pack_words(torch, codes, "rows"), "rows")
    flat = torch.randn(3 * k + 9, generator=g, device="cuda").to(torch.bfloat16)
    wide = torch.randn(3, k + 24, generator=g, device="cuda").to(torch.bfloat16)
    weight = reference_weight(torch, codes, scales, None, 128, None)  # M <= 16: the GEMV, exact weights
    for x in (flat[1:1 + 3 * k].view(3, k), wide[:, 5:5 + k], flat[:k].view(1, k)):
        want = x.double() @ weight.t()
        y = tessera.w4a16_gemm(x, w, scales, out_dtype=torch.float32)
        assert ((y.double() - want).norm() / want.norm()).item() < 1e-5
    assert tessera.w4a16_gemm(flat[:0].view(0, k), w, scales).shape == (0, n)


def test_masked_refusals_before_the_device():
    """w4a16_gemm_masked checks every tensor's shape against the others before the device."""
    t = pytest.importorskip("torch")
    x = t.zeros(3, 4, 256, dtype=t.bfloat16)
    w = t.zeros(3, 64, 128, dtype=t.uint8)
    s = t.zeros(3, 2, 64, dtype=t.float16)
    mm = t.zeros(3, dtype=t.int32)
    with pytest.raises(InvalidValueError, match=r"3-D \(E, M, K\)"):
        tessera.w4a16_gemm_masked(x[0], w, s, mm)
    with pytest.raises(InvalidValueError, match="w has 2 experts but x has 3"):
        tessera.w4a16_gemm_masked(x, w[:2], s, mm)
    with pytest.raises(InvalidValueError, match="masked_m: expected a contiguous int32"):
        tessera.w4a16_gemm_masked(x, w, s, mm.long())
    with pytest.raises(InvalidValueError, match="M=17 rows an expert"):
        tessera.w4a16_gemm_masked(t.zeros(3, 17, 256, dtype=t.bfloat16), w, s, mm)
    with pytest.raises(InvalidValueError, match="K=128 but the experts' weights K=256"):
        tessera.w4a16_gemm_masked(t.zeros(3, 4, 128, dtype=t.bfloat16), w, s, mm)
    with pytest.raises(InvalidValueError, match="expected_experts=4"):
        tessera.w4a16_gemm_masked(x, w, s, mm, expected_experts=4)
    with pytest.raises(InvalidValueError, match="packed experts"):
        tessera.w4a16_gemm_masked(x, w.transpose(1, 2), s, mm)
    with pytest.raises(InvalidValueError, match="scales: the experts' tables overlap"):
        tessera.w4a16_gemm_masked(x, w, s[:1].expand(3, 2, 64), mm)
    with pytest.raises(InvalidValueError, match="cpu memory"):
        tessera.w4a16_gemm_masked(x, w, s, mm)


@needs_gpu
@pytest.mark.parametrize("with_zeros", [True, False])
def test_w4a16_gemm_masked_against_torch(torch, with_zeros):
    """Each expert's first masked_m rows (clamped to [0, M]) against float64 with its exact weight;
    experts packed in one call of the stacked "rows" codes."""
    g = torch.Generator(device="cuda").manual_seed(11 + with_zeros)
    experts, m, n, k, group = 5, 6, 272, 768, 128
    codes = torch.randint(0, 16, (experts, n, k), generator=g, device="cuda")
    scales = (0.004 + 0.03 * torch.rand(experts, k // group, n, generator=g, device="cuda")).to(torch.bfloat16)
    zeros = (torch.randint(0, 16, (experts, k // group, n), generator=g, device="cuda").to(torch.uint8)
             if with_zeros else None)
    x = torch.randn(experts, m, k, generator=g, device="cuda").to(torch.bfloat16)
    bias = torch.randn(experts, n, generator=g, device="cuda")
    w = tessera.pack_int4(pack_words(torch, codes.reshape(experts * n, k), "rows"), "rows").reshape(experts, n, k // 2)
    masked = torch.tensor([0, 6, 3, 9, -1], dtype=torch.int32, device="cuda")
    flat = torch.empty(x.numel() + 8, dtype=x.dtype, device="cuda")
    x = flat[1:1 + x.numel()].view(x.shape).copy_(x)  # misaligned by 2 bytes: the wrapper copies it
    y = tessera.w4a16_gemm_masked(x, w, scales, masked, zeros, bias=bias, activation="silu",
                                  out_dtype=torch.float32, expected_experts=2)
    assert y.shape == (experts, m, n) and y.dtype == torch.float32
    for e in range(experts):
        rows = max(0, min(m, int(masked[e])))
        weight = reference_weight(torch, codes[e], scales[e], zeros[e] if zeros is not None else None, group, None)
        want = torch.nn.functional.silu(x[e, :rows].double() @ weight.t() + bias[e].double())
        if rows:
            err = ((y[e, :rows].double() - want).norm() / want.norm()).item()
            assert err < 1e-5, (e, err)
