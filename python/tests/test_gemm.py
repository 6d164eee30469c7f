"""tessera.gemm: refusals on any machine; results against PyTorch on a GPU."""
import pytest

import tessera
from conftest import dequantize, needs_gpu

np = pytest.importorskip("numpy")


def test_host_memory_is_refused():
    a = np.ones((64, 64), dtype=np.float16)
    with pytest.raises(tessera.InvalidValueError, match="GPU memory"):
        tessera.gemm(a, a, out=np.zeros((64, 64), dtype=np.float16))


def test_not_a_matrix_is_refused():
    with pytest.raises(tessera.InvalidValueError, match="expected a torch.Tensor"):
        tessera.gemm([[1.0]], [[1.0]])


def test_call_cache_forgets_the_oldest():
    from tessera import call_cache
    call_cache.clear()
    for i in range(call_cache.MAX_ENTRIES + 3):
        call_cache.put(("key", i), i)
    assert call_cache.find(("key", 0)) is None and call_cache.find(("key", 2)) is None
    assert call_cache.find(("key", 3)) == 3 and call_cache.find(("key", call_cache.MAX_ENTRIES + 2)) == \
        call_cache.MAX_ENTRIES + 2
    call_cache.clear()
    assert call_cache.find(("key", 3)) is None


def test_plan_struct_matches_header():
    import ctypes
    # tess_plan: struct_size, char[64], 8 int32 (tiles, stages, cluster_m, grid, tiles, stream_k), padding, a
    # uint64 at 8-byte alignment, 5 int32 (group_order, transposed, large_min_rows, large_order, large_grid), padding.
    assert ctypes.sizeof(tessera._lib.PlanStruct) == 4 + 64 + 8 * 4 + 4 + 8 + 5 * 4 + 4
    # tess_gemm_desc: the library's own sizeof, which tess_gemm_desc_init stores in struct_size.
    desc = tessera._lib.GemmDescStruct()
    assert tessera._lib.lib().tess_gemm_desc_init(ctypes.byref(desc)) == 0
    assert desc.struct_size == ctypes.sizeof(tessera._lib.GemmDescStruct)


def _close(torch, got, want, bound):
    got, want = got.float(), want.float()
    rel = (got - want).norm() / want.norm()
    assert torch.isfinite(got).all() and rel < bound, f"relative error {rel:.3g} (bound {bound})"


@needs_gpu
@pytest.mark.parametrize("m,n,k", [(1, 1, 8), (129, 200, 72), (1000, 3000, 2048), (2304, 4352, 2048)])
@pytest.mark.parametrize("a_t,b_t", [(False, False), (False, True), (True, False), (True, True)])
def test_matches_torch(torch, m, n, k, a_t, b_t):
    g = torch.Generator(device="cuda").manual_seed(m * 7 + n + k)
    a = torch.randn(k, m, device="cuda", generator=g).bfloat16().T if a_t else \
        torch.randn(m, k, device="cuda", generator=g).bfloat16()
    b = torch.randn(n, k, device="cuda", generator=g).bfloat16().T if b_t else \
        torch.randn(k, n, device="cuda", generator=g).bfloat16()
    if tessera.as_matrix(a).ld % 8 or tessera.as_matrix(b).ld % 8:
        with pytest.raises(tessera.InvalidValueError, match="multiple of 8"):
            tessera.gemm(a, b)
        return
    d = tessera.gemm(a, b)
    assert d.shape == (m, n) and d.dtype == torch.bfloat16
    _close(torch, d, a.float() @ b.float(), 8e-3)


@needs_gpu
def test_batch_f32_out_beta(torch):
    a = torch.randn(3, 256, 512, device="cuda").half()
    w = torch.randn(384, 512, device="cuda").half()  # shared by the batch, used as w.T
    c = torch.randn(3, 256, 384, device="cuda")
    out = c.clone()
    tessera.gemm(a, w.T, out, alpha=0.5, beta=2.0)  # beta * C with C = out, in place
    _close(torch, out, 0.5 * (a.float() @ w.float().T) + 2.0 * c, 1e-4)
    d = tessera.gemm(a, w.T, c=c, beta=-1.0, out_dtype="f32")
    assert d.dtype == torch.float32 and d.shape == (3, 256, 384)
    _close(torch, d, a.float() @ w.float().T - c, 1e-4)


@needs_gpu
def test_prepared_calls_match_fresh_ones(torch):
    """Calls repeated with new data of the same layouts take the prepared path (tessera.call_cache)
    and give what fresh calls give; a call that differs in a checked property (here beta) is
    prepared anew."""
    from tessera import call_cache
    call_cache.clear()
    x = lambda *shape: torch.randn(*shape, device="cuda")
    for trial in range(2):
        a, w = x(96, 512).bfloat16(), x(384, 512).bfloat16()
        _close(torch, tessera.gemm(a, w.T), a.float() @ w.float().T, 8e-3)
        c = x(96, 384)
        d = tessera.gemm(a, w.T, c=c, beta=-1.0, out_dtype="f32")
        _close(torch, d, a.float() @ w.float().T - c, 1e-4)
        wt = x(512, 384).bfloat16()  # the same shape as w.T, the other major-ness
        _close(torch, tessera.gemm(a, wt), a.float() @ wt.float(), 8e-3)
        qa, sa = tessera.quantize_fp8(x(96, 512), "1x128")
        qw, sw = tessera.quantize_fp8(x(384, 512), "128x128")
        got = tessera.gemm(qa, qw.T, scale_a=sa, scale_b=sw, scale_recipe_a="1x128", scale_recipe_b="128x128")
        want = dequantize(torch, qa, sa, "1x128", torch.float32) @ dequantize(torch, qw, sw, "128x128", torch.float32).T
        _close(torch, got, want, 2 ** -8 + 2 ** -12)
        qt, st = tessera.quantize_fp8(x(96, 512), "tensor")
        qu, su = tessera.quantize_fp8(x(384, 512), "tensor")
        got = tessera.gemm(qt, qu.T, scale_a=st, scale_b=su)
        want = dequantize(torch, qt, st, "tensor", torch.float32) @ dequantize(torch, qu, su, "tensor", torch.float32).T
        _close(torch, got, want, 2 ** -8 + 2 ** -12)
        if trial == 0:
            prepared = len(call_cache._entries)
            assert prepared == 5
        else:
            out = x(96, 384)
            want = a.float() @ w.float().T + out
            tessera.gemm(a, w.T, out, beta=1.0)  # beta * C with C = out: prepared anew
            _close(torch, out, want, 1e-4)
    assert len(call_cache._entries) == prepared + 1


@needs_gpu
def test_captures_on_streams_without_handles(torch):
    """Captures on streams whose first tessera call is the captured one run on the device's capture
    handle, lent to each capture in turn: such calls are never prepared, so a later capture (or an
    eager call) on either stream gets its own stream again, and every graph replays its GEMM."""
    from tessera import call_cache
    call_cache.clear()
    a, b = torch.randn(64, 256, device="cuda").bfloat16(), torch.randn(256, 128, device="cuda").bfloat16()
    tessera.gemm(a, b)  # the device's handles exist before any capture
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    graphs, outs = [], []
    for stream in (s1, s2, s1):
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=stream):
            outs.append(tessera.gemm(a, b))
        graphs.append(g)
    a.copy_(torch.randn_like(a))
    want = a.float() @ b.float()
    for g, out in zip(graphs, outs):
        g.replay()
        torch.cuda.synchronize()
        _close(torch, out, want, 8e-3)
    import importlib
    lent = importlib.import_module("tessera.gemm").lent_for_capture  # (tessera.gemm is the function)
    assert not any(lent(p.handle) for p in call_cache._entries.values())


@needs_gpu
def test_every_plan(torch):
    a = torch.randn(2304, 2048, device="cuda").bfloat16()
    b = torch.randn(4352, 2048, device="cuda").bfloat16().T
    plans = tessera.gemm_plans(a, b)
    assert len(plans) >= 4 and len({p.name for p in plans}) == len(plans)
    assert plans[0].stream_k and plans[0].workspace_bytes == tessera.gemm_workspace_size(a, b)
    want = a.float() @ b.float()
    for p in plans:
        _close(torch, tessera.gemm(a, b, plan=p), want, 8e-3)


@needs_gpu
def test_refusal_sentences(torch):
    a = torch.randn(64, 100, device="cuda").bfloat16()  # K = 100: rows of 200 bytes
    with pytest.raises(tessera.InvalidValueError, match="pad the leading dimension to 104"):
        tessera.gemm(a, torch.randn(100, 64, device="cuda").bfloat16())
    with pytest.raises(tessera.NotSupportedError, match="one 16-bit type"):
        tessera.gemm(torch.randn(64, 64, device="cuda").half(), torch.randn(64, 64, device="cuda").bfloat16())
    with pytest.raises(tessera.InvalidValueError, match="pass c="):
        tessera.gemm(torch.randn(64, 64, device="cuda").half(), torch.randn(64, 64, device="cuda").half(), beta=1.0)


@needs_gpu
@pytest.mark.parametrize("m,n,k", [(1, 16, 16), (300, 500, 1008), (1024, 2112, 7168)])  # FP8 rows: 16-byte multiples
@pytest.mark.parametrize("recipes", [("1x128", "128x128"), ("1x128", "1x128"), ("tensor", "tensor")])
def test_fp8_block_scales_match_dequantized_reference(torch, m, n, k, recipes):
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    qa, sa = tessera.quantize_fp8(x, recipes[0])
    qw, sw = tessera.quantize_fp8(w, recipes[1])
    got = tessera.gemm(qa, qw.T, scale_a=sa, scale_b=sw, scale_recipe_a=recipes[0], scale_recipe_b=recipes[1])
    assert got.dtype == torch.bfloat16 and got.shape == (m, n)
    want = dequantize(torch, qa, sa, recipes[0], torch.float32) @ dequantize(torch, qw, sw, recipes[1], torch.float32).T
    _close(torch, got, want, 2 ** -8 + 2 ** -12)  # bf16 rounding of D + FP8 accumulation (test_gemm_fp8.c)
    _close(torch, got, x.float() @ w.float().T, 0.08)  # and close to the unquantized product (e4m3: 2^-4 per element)


@needs_gpu
def test_fp8_plans_without_out(torch):
    """gemm_plans and gemm_workspace_size describe the bf16 D gemm allocates for FP8 inputs, and each
    plan they list runs to the heuristic's answer."""
    x = torch.randn(256, 512, device="cuda")
    w = torch.randn(384, 512, device="cuda")
    qa, sa = tessera.quantize_fp8(x, "1x128")
    qw, sw = tessera.quantize_fp8(w, "128x128")
    scales = dict(scale_a=sa, scale_b=sw, scale_recipe_a="1x128", scale_recipe_b="128x128")
    plans = tessera.gemm_plans(qa, qw.T, **scales)
    assert plans and tessera.gemm_workspace_size(qa, qw.T, **scales) >= 0
    want = tessera.gemm(qa, qw.T, **scales)
    for plan in plans:
        got = tessera.gemm(qa, qw.T, plan=plan, **scales)
        assert got.dtype == torch.bfloat16
        _close(torch, got, want, 2 ** -7)


@needs_gpu
def test_fp8_per_tensor_matches_scaled_mm(torch):
    if not hasattr(torch, "_scaled_mm"):
        pytest.skip("torch has no _scaled_mm")
    x = torch.randn(512, 1024, device="cuda")
    w = torch.randn(768, 1024, device="cuda")
    qa, sa = tessera.quantize_fp8(x, "tensor")
    qw, sw = tessera.quantize_fp8(w, "tensor")
    got = tessera.gemm(qa, qw.T, scale_a=sa, scale_b=sw)
    want = torch._scaled_mm(qa, qw.T, scale_a=sa, scale_b=sw, out_dtype=torch.bfloat16)
    _close(torch, got, want, 2 ** -7)


@needs_gpu
def test_fp8_in_every_layout(torch):
    """FP8 operands that are not K-major are copied K-major in the workspace: the same result as the
    TN call on explicit copies; one too big for the workspace is refused with a sentence."""
    x = torch.randn(304, 1008, device="cuda")  # FP8 rows (of K, or of M and N when not K-major): 16-byte multiples
    w = torch.randn(528, 1008, device="cuda")
    qa, sa = tessera.quantize_fp8(x, "1x128")
    qw, sw = tessera.quantize_fp8(w, "128x128")
    want = tessera.gemm(qa, qw.T, scale_a=sa, scale_b=sw, scale_recipe_a="1x128", scale_recipe_b="128x128")
    a_m_major = tessera.transpose(qa).T  # (304, 1008), M contiguous
    b_n_major = tessera.transpose(qw)  # (1008, 528), N contiguous
    for a, b in ((a_m_major, qw.T), (qa, b_n_major), (a_m_major, b_n_major)):
        got = tessera.gemm(a, b, scale_a=sa, scale_b=sw, scale_recipe_a="1x128", scale_recipe_b="128x128")
        assert torch.equal(got, want)
    big = torch.zeros(4096, 8448, device="cuda").to(torch.float8_e4m3fn)  # 34.6 MB N-major: over 32 MiB
    a = torch.zeros(16, 4096, device="cuda").to(torch.float8_e4m3fn)
    with pytest.raises(tessera.InsufficientWorkspaceError, match="K-major"):
        tessera.gemm(a, big)
    assert torch.equal(tessera.transpose(qa).float(), qa.T.float())
    t = torch.randn(37, 1000, device="cuda", dtype=torch.bfloat16)
    assert torch.equal(tessera.transpose(t), t.T.contiguous())


def test_two_streams_at_once(torch):
    """Calls on two torch streams overlap safely: each stream has its own default handle (stream-K
    flags and workspace), checked with a stream-K plan run many times on both streams at once."""
    g = torch.Generator(device="cuda").manual_seed(5)
    problems = []
    for _ in range(2):
        a = torch.randn(1000, 3000, device="cuda", generator=g).bfloat16()
        b = torch.randn(3000, 1504, device="cuda", generator=g).bfloat16()
        problems.append((a, b, (a.float() @ b.float())))
    plans = [p for p in tessera.gemm_plans(problems[0][0], problems[0][1], limit=64) if p.stream_k]
    assert plans, "no stream-K plan for the problem"
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    outs = [[], []]
    torch.cuda.synchronize()
    for _ in range(20):
        for i, s in enumerate(streams):
            with torch.cuda.stream(s):
                outs[i].append(tessera.gemm(problems[i][0], problems[i][1], plan=plans[0]))
    torch.cuda.synchronize()
    for i in range(2):
        for d in outs[i]:
            _close(torch, d, problems[i][2], 8e-3)
    from tessera.gemm import default_handle
    assert default_handle(0, streams[0].cuda_stream) is not default_handle(0, streams[1].cuda_stream)


@needs_gpu
def test_sm_budget(torch):
    """Handle.sm_budget and tessera.set_sm_budget: read back, out-of-range budgets refused, the
    device info unchanged, and a GEMM under a budget equal to one with every SM."""
    with tessera.Handle(0) as h:
        sms = h.device_info().sm_count
        assert h.sm_budget == sms
        h.sm_budget = sms // 2
        assert h.sm_budget == sms // 2 and h.device_info().sm_count == sms
        with pytest.raises(tessera.InvalidValueError, match="streaming multiprocessors"):
            h.sm_budget = sms + 1
        h.sm_budget = 0
        assert h.sm_budget == sms
    a = torch.randn(1024, 512, device="cuda").bfloat16()
    b = torch.randn(512, 768, device="cuda").bfloat16()
    want = tessera.gemm(a, b).float()
    try:
        for budget in (7, 66):
            tessera.set_sm_budget(budget)
            got = tessera.gemm(a, b).float()
            assert ((got - want).norm() / want.norm()).item() < 1e-2, f"budget {budget}"
    finally:
        tessera.set_sm_budget(0)


@needs_gpu
def test_prepared_calls_with_a_handle(torch):
    """Calls given a handle are prepared too (tessera.call_cache), one entry per handle and layout,
    each running on its own handle's stream; the cache keeps no caller's handle alive, and a
    closed handle's prepared call is refused, not run."""
    import gc
    import weakref
    from tessera import call_cache
    call_cache.clear()
    g = torch.Generator(device="cuda").manual_seed(11)
    a = torch.randn(300, 256, device="cuda", generator=g).bfloat16()
    b = torch.randn(256, 520, device="cuda", generator=g).bfloat16()
    want = a.double() @ b.double()
    side = torch.cuda.Stream()
    h1, h2 = tessera.Handle(0), tessera.Handle(0)
    h2.stream = side
    for _ in range(3):
        _close(torch, tessera.gemm(a, b, handle=h1), want, 1e-2)
    assert len(call_cache._entries) == 1
    with torch.cuda.stream(side):
        got = tessera.gemm(a, b, handle=h2)
    side.synchronize()
    _close(torch, got, want, 1e-2)
    assert len(call_cache._entries) == 2
    _close(torch, tessera.gemm(a, b), want, 1e-2)  # the default handle: a third entry
    assert len(call_cache._entries) == 3
    gone = weakref.ref(h2)
    h2.close()
    del h2
    gc.collect()
    assert gone() is None, "the call cache keeps a caller's handle alive"
    h1.close()
    with pytest.raises(tessera.TesseraError):
        tessera.gemm(a, b, handle=h1)
    call_cache.clear()


@needs_gpu
@pytest.mark.parametrize("a_t,b_t", [(False, True), (False, False), (True, True)])
def test_tf32(torch, a_t, b_t):
    """float32 operands multiply as TF32 with allow_tf32=True (any layout: those not K-major are copied
    K-major first), within TF32's rounding of float64; without it they are refused."""
    a = torch.randn(300, 520, device="cuda")
    b = torch.randn(520, 264, device="cuda")
    a_in = a.T.contiguous().T if a_t else a
    b_in = b if not b_t else b.T.contiguous().T
    with pytest.raises(tessera.NotSupportedError, match="allow_tf32"):
        tessera.gemm(a_in, b_in)
    got = tessera.gemm(a_in, b_in, allow_tf32=True)
    assert got.dtype == torch.float32
    _close(torch, got, (a.double() @ b.double()), 2 ** -9)


@needs_gpu
@pytest.mark.parametrize("b_layout", ["k_major", "n_major"])
def test_int8_w8a8(torch, b_layout):
    """int8 x int8 summed exactly in int32, then per-row (token) and per-column (channel) factors; an
    N-major b is copied K-major first."""
    a = torch.randint(-127, 128, (300, 1024), dtype=torch.int8, device="cuda")
    w = torch.randint(-127, 128, (520, 1024), dtype=torch.int8, device="cuda")
    b = w.T if b_layout == "k_major" else w.T.contiguous()
    sa = torch.rand(300, 1, device="cuda") + 0.5
    sb = torch.rand(1, 520, device="cuda") + 0.5
    got = tessera.gemm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.float32)
    want = (a.double() @ w.double().T) * sa.double() * sb.double()
    _close(torch, got, want, 1e-6)
    assert tessera.gemm(a, b).dtype == torch.bfloat16  # int8's default D, as FP8's


@needs_gpu
@pytest.mark.parametrize("recipe", ["rowwise", "tensor"])
def test_quantize_int8(torch, recipe):
    """Symmetric int8: factor = amax / 127 per row (or tensor), q = round(x / factor); then the W8A8
    GEMM of quantized activations and weights within int8's quantization error of float64."""
    x = torch.randn(257, 1000, device="cuda", dtype=torch.bfloat16) * 3
    x[5] = 0  # an all-zero row: factor 1
    q, s = tessera.quantize_int8(x, recipe)
    amax = x.float().abs().amax(dim=1, keepdim=True) if recipe == "rowwise" else x.float().abs().amax().reshape(1)
    want_s = torch.where(amax > 0, amax / 127, torch.ones_like(amax))
    assert q.dtype == torch.int8 and s.shape == want_s.shape and torch.allclose(s, want_s, rtol=1e-6)
    want_q = torch.round(x.float() / want_s.reshape(-1, 1) if recipe == "rowwise" else x.float() / want_s)
    assert (q.float() - want_q).abs().max() <= 1  # the factor's reciprocal may tip a tie
    w = torch.randn(384, 1000, device="cuda", dtype=torch.bfloat16)
    qw, sw = tessera.quantize_int8(w, "rowwise")
    y = tessera.gemm(q, qw.T, scale_a=s, scale_b=sw, out_dtype=torch.float32)
    _close(torch, y, x.double() @ w.double().T, 0.02)


@needs_gpu
@pytest.mark.parametrize("qtype", ["e4m3", "e5m2"])
def test_quantize_fp8_rowwise(torch, qtype):
    """FP8 per row: factor = amax / the format's largest finite value, one per row ((rows, 1), an all-zero
    row gets 1); q * factor within the format's rounding of x; then the rowwise-scaled GEMM
    (torch._scaled_mm's (M, 1) x (1, N) convention) within FP8's error of float64."""
    fmax = 448.0 if qtype == "e4m3" else 57344.0
    x = torch.randn(193, 640, device="cuda", dtype=torch.bfloat16) * 5
    x[7] = 0
    q, s = tessera.quantize_fp8(x, "rowwise", qtype)
    amax = x.float().abs().amax(dim=1, keepdim=True)
    want_s = torch.where(amax > 0, amax / fmax, torch.ones_like(amax))
    assert s.shape == (193, 1) and torch.allclose(s, want_s, rtol=1e-6)
    unit = 2.0 ** -4 if qtype == "e4m3" else 2.0 ** -3  # half a step of the 3 (2) mantissa bits
    err = (q.float() * s - x.float()).abs()
    assert (err <= unit * x.float().abs() + 1e-6 * amax + 2.0 ** -9 * s).all()  # subnormals: an absolute step
    w = torch.randn(320, 640, device="cuda", dtype=torch.bfloat16)
    qw, sw = tessera.quantize_fp8(w, "rowwise", qtype)
    y = tessera.gemm(q, qw.T, scale_a=s, scale_b=sw.T, out_dtype=torch.float32)
    _close(torch, y, (q.double() * s.double()) @ (qw.double() * sw.double()).T, 5e-4)  # promoted f32 sums: ~1.3e-4


def test_quantize_int8_refuses_before_any_gpu_work():
    torch = pytest.importorskip("torch")
    with pytest.raises(tessera.InvalidValueError, match="recipe"):
        tessera.quantize_int8(torch.zeros(8, 8), "1x128")
    with pytest.raises(tessera.InvalidValueError, match="2-D row-major"):
        tessera.quantize_int8(torch.zeros(8, 8, 8))
