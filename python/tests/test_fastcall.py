"""tessera._fastcall (python/ext/fastcall.c): a prepared call's key and launch in C. Its keys must
tell layouts apart as the Python steps' do (call_cache.tensor_keys with TESSERA_FASTCALL=0), its
launches must pass each tensor's pointer where the ctypes path passes it (GPU: the same bits), and
bad arguments raise instead of reaching the library."""
import glob
import os

import pytest

import tessera
from tessera import _lib, call_cache, fastcall

from conftest import needs_gpu


@pytest.fixture
def python_steps(monkeypatch):
    """Runs a test's calls with the module turned off (the Python and ctypes steps)."""
    monkeypatch.setenv("TESSERA_FASTCALL", "0")
    fastcall.reset()
    call_cache.clear()
    yield
    monkeypatch.delenv("TESSERA_FASTCALL")
    fastcall.reset()
    call_cache.clear()


def _module():
    m = fastcall.module()
    if m is None:
        pytest.skip("tessera._fastcall was not built (no CPython headers)")
    return m


def test_module_is_found_where_it_was_built():
    """A build that made _fastcall*.so beside the library, or an install that put it in the
    package, loads it."""
    folder = os.path.dirname(_lib.library_path())
    package = os.path.dirname(tessera.__file__)
    built = glob.glob(os.path.join(folder, "_fastcall*.so")) + glob.glob(os.path.join(package, "_fastcall*.so"))
    if not built:
        pytest.skip("no _fastcall module beside the library or in the package")
    assert fastcall.module() is not None


def test_turned_off_by_the_environment(python_steps):
    assert fastcall.module() is None


def test_keys_tell_layouts_apart(monkeypatch):
    """Two calls' keys are equal exactly when each tensor has the same device, dtype, sizes and
    strides (and each factor tensor the same storage extent), as the Python steps' keys are."""
    torch = pytest.importorskip("torch")
    m = _module()
    g = torch.Generator().manual_seed(3)
    big = torch.rand(40, 24, generator=g)
    a, b = torch.randn(5, 7, generator=g), torch.randn(7, 5, generator=g).T
    base = ((a, b, None), (big, big[3:9, 2:20]))
    variants = [((a.clone(), b.clone(), None), (big.clone(), big[3:9, 2:20])),  # same layouts: equal
                ((a, b.contiguous(), None), base[1]),                           # another stride
                ((a, b, a), base[1]),                                           # a tensor for a None
                ((a.double(), b, None), base[1]),                               # another dtype
                ((a[:4], b, None), base[1]),                                    # another size
                ((a.reshape(35), b, None), base[1]),                            # another rank
                (base[0], (big, big[4:10, 2:20])),                              # another storage extent
                (base[0], (big[None], big[3:9, 2:20]))]                         # a rank more, same extent
    monkeypatch.setenv("TESSERA_FASTCALL", "0")
    fastcall.reset()
    slow = [call_cache.tensor_keys(*v) for v in [base] + variants]
    monkeypatch.delenv("TESSERA_FASTCALL")
    fastcall.reset()
    fast = [m.keys(*v) for v in [base] + variants]
    for keys in (fast, slow):
        assert keys[1] == keys[0] and hash(keys[1]) == hash(keys[0])
        for k in keys[2:]:
            assert k != keys[0]
    assert fast[0][-1] == 40 * 24 - (3 * 24 + 2)  # the last factor tensor's storage extent


def test_keys_refuse_what_is_no_tensor():
    m = _module()
    with pytest.raises(AttributeError):
        m.keys((object(),), ())
    with pytest.raises(TypeError):
        m.keys([None], ())


def test_launch_reports_the_library_status():
    """A NULL handle reaches tess_gemm_fused, which refuses it (NOT_INITIALIZED) with its sentence; the arguments are
    checked before the call (count, NULL function or descriptor, objects without data_ptr)."""
    torch = pytest.importorskip("torch")
    m = _module()
    from tessera.errors import Status
    x = torch.zeros(4, 4)
    desc = _lib.GemmDescStruct()
    import ctypes
    st = m.gemm(fastcall.address("tess_gemm_fused"), None, ctypes.addressof(desc), None, x, None, x, None, None,
                x, None, None)
    assert st == Status.NOT_INITIALIZED
    assert b"handle" in _lib.lib().tess_last_error()
    st = m.grouped(fastcall.address("tess_grouped_gemm_fused"), None, ctypes.addressof(_lib.GroupedGemmDescStruct()),
                   None, x, None, x, None, x, x, None)
    assert st == Status.NOT_INITIALIZED
    with pytest.raises(TypeError):
        m.gemm(1, 2)
    with pytest.raises(ValueError):
        m.gemm(None, None, ctypes.addressof(desc), None, x, None, x, None, None, x, None, None)
    with pytest.raises(ValueError):
        m.gemm(fastcall.address("tess_gemm_fused"), None, None, None, x, None, x, None, None, x, None, None)
    with pytest.raises(AttributeError):
        m.gemm(fastcall.address("tess_gemm_fused"), None, ctypes.addressof(desc), None, x, None, 3, None, None, x,
               None, None)


def _prepared_outputs(torch):
    """Each call twice (the second prepared): dense bf16 with a bias and residual, FP8 block-scaled
    with a bias, grouped bf16 with a bias; the prepared calls' outputs."""
    g = torch.Generator(device="cuda").manual_seed(11)
    a = torch.randn(96, 256, device="cuda", generator=g).bfloat16()
    w = torch.randn(200, 256, device="cuda", generator=g).bfloat16()
    bias = torch.randn(200, device="cuda", generator=g).bfloat16()
    res = torch.randn(96, 200, device="cuda", generator=g).bfloat16()
    a8, w8 = a.to(torch.float8_e4m3fn), w.to(torch.float8_e4m3fn)
    sa = torch.rand(256 // 128, 96, device="cuda", generator=g).T
    sb = torch.rand(2, 256 // 128, device="cuda", generator=g)
    x = torch.randn(300, 256, device="cuda", generator=g).bfloat16()
    wg = torch.randn(3, 200, 256, device="cuda", generator=g).bfloat16()
    offs = torch.tensor([100, 100, 300], dtype=torch.int32, device="cuda")
    gb = torch.randn(3, 200, device="cuda", generator=g).bfloat16()
    y = torch.empty(96, 200, device="cuda", dtype=torch.bfloat16)
    y8 = torch.empty(96, 200, device="cuda", dtype=torch.bfloat16)
    c = torch.randn(96, 200, device="cuda", generator=g).bfloat16()
    plan = tessera.gemm_plans(a, w.T, y, c=c, beta=0.5)[-1]
    calls = [lambda: tessera.gemm(a, w.T, bias=bias, residual=res, activation="gelu_tanh"),
             lambda: tessera.gemm(a8, w8.T, scale_a=sa, scale_b=sb, scale_recipe_a="1x128",
                                  scale_recipe_b="128x128", bias=bias),
             lambda: tessera.grouped_mm(x, wg, offs, bias=gb),
             # with out given: whole in C (gemm_prepared), a plan and C included
             lambda: tessera.gemm(a, w.T, y, bias=bias, residual=res, activation="silu").clone(),
             lambda: tessera.gemm(a8, w8.T, y8, scale_a=sa, scale_b=sb, scale_recipe_a="1x128",
                                  scale_recipe_b="128x128").clone(),
             lambda: tessera.gemm(a, w.T, y, c=c, beta=0.5, plan=plan).clone(),
             lambda: tessera.gemm(a, w.T, y, alpha=2, beta=1).clone()]  # C is out itself
    outs = []
    for call in calls:
        y.fill_(1.0)
        call()
        y.fill_(1.0)
        outs.append(call())
    torch.cuda.synchronize()
    return outs


@pytest.fixture
def c_path_hits(monkeypatch):
    """A list that records, for each tessera.gemm call that tries the whole call in C
    (fastcall.gemm_prepared), whether it was taken there (a hit returns D)."""
    hits = []
    inner = fastcall.gemm_prepared()
    if inner is None:
        pytest.skip("no gemm_prepared (no module, or a torch without _cuda_getCurrentRawStream)")

    def recording(entries, tensors, *rest):
        done = inner(entries, tensors, *rest)
        hits.append(done is not None and not isinstance(done, int))  # a tensor: D, given or new
        return done
    monkeypatch.setattr(fastcall, "gemm_prepared", lambda: recording)
    return hits


@needs_gpu
def test_prepared_calls_match_the_python_steps(torch, c_path_hits):
    _module()
    call_cache.clear()
    fast = _prepared_outputs(torch)
    assert len(call_cache._entries) == 7
    # the six gemm calls (two allocating D, four into out), each twice: the first prepares (a
    # miss), the second runs whole in C
    assert c_path_hits == [False, True] * 6
    os.environ["TESSERA_FASTCALL"] = "0"
    fastcall.reset()
    call_cache.clear()
    try:
        assert fastcall.module() is None
        slow = _prepared_outputs(torch)
    finally:
        del os.environ["TESSERA_FASTCALL"]
        fastcall.reset()
        call_cache.clear()
    for f, s in zip(fast, slow):
        assert torch.equal(f, s)


@needs_gpu
def test_prepared_calls_allocate_a_new_d(torch, c_path_hits):
    """A prepared call without out, whole in C, returns a new D each time (never one it returned
    before), of the first call's shape, dtype and device, holding this call's product."""
    _module()
    call_cache.clear()
    g = torch.Generator(device="cuda").manual_seed(5)
    a = torch.randn(3, 80, 64, device="cuda", generator=g).half()
    w = torch.randn(48, 64, device="cuda", generator=g).half()
    first = tessera.gemm(a, w.T, out_dtype="f32")
    outs = [tessera.gemm(a * k, w.T, out_dtype="f32") for k in (1, 2, -1)]
    assert c_path_hits == [False, True, True, True]
    assert len({o.data_ptr() for o in [first] + outs}) == 4
    for k, o in zip((1, 2, -1), outs):
        assert o.shape == first.shape and o.dtype == torch.float32 and o.device == a.device
        assert o.is_contiguous()
        assert torch.allclose(o, k * first, rtol=1e-5, atol=1e-5)


@needs_gpu
def test_prepared_calls_raise_the_library_error(torch):
    """A prepared call whose new pointer the library refuses (a bf16 A one element off its 16-byte
    alignment, with the same shape and strides) raises the library's error on either path."""
    base = torch.randn(64 * 256 + 8, device="cuda").bfloat16()
    good, bad = base[:64 * 256].view(64, 256), base[1:64 * 256 + 1].view(64, 256)
    w = torch.randn(128, 256, device="cuda").bfloat16()
    y = torch.empty(64, 128, device="cuda", dtype=torch.bfloat16)
    for fast in ("1", "0"):
        os.environ["TESSERA_FASTCALL"] = fast
        fastcall.reset()
        call_cache.clear()
        try:
            tessera.gemm(good, w.T, y)
            tessera.gemm(good, w.T, y)
            with pytest.raises(tessera.TesseraError, match="align"):
                tessera.gemm(bad, w.T, y)
        finally:
            del os.environ["TESSERA_FASTCALL"]
            fastcall.reset()
            call_cache.clear()


@needs_gpu
def test_no_hit_for_another_call(torch, c_path_hits):
    """After a prepared call into out, calls that differ only in what the tensor key does not
    hold (beta with C, alpha, a caller's handle, aux) are not taken for it: each gives its own
    result."""
    _module()
    call_cache.clear()
    g = torch.Generator(device="cuda").manual_seed(21)
    a = torch.randn(64, 128, device="cuda", generator=g).bfloat16()
    w = torch.randn(192, 128, device="cuda", generator=g).bfloat16()
    c = torch.randn(64, 192, device="cuda", generator=g).bfloat16()
    y = torch.empty(64, 192, device="cuda", dtype=torch.bfloat16)
    ref = a.double() @ w.double().T
    for _ in range(2):
        tessera.gemm(a, w.T, y)
    assert c_path_hits == [False, True]

    def close(got, want):
        assert (got.double() - want).abs().max().item() <= 0.02 * want.abs().max().item()
    close(tessera.gemm(a, w.T, y, c=c, beta=0.5), ref + 0.5 * c.double())
    close(tessera.gemm(a, w.T, y, alpha=2.0), 2 * ref)
    close(tessera.gemm(a, w.T, y, alpha=2.0, beta=0.0), 2 * ref)
    with tessera.Handle(0) as h:  # a caller's handle and aux are never taken in C
        close(tessera.gemm(a, w.T, y, handle=h), ref)
    out, aux = tessera.gemm(a, w.T, y, activation="relu", aux=True)
    close(aux, ref)
    close(out, ref.clamp(min=0))
    with pytest.raises(TypeError):  # equal to 1.0, but no float: refused as the Python steps refuse it
        tessera.gemm(a, w.T, y, alpha=1 + 0j)
    assert c_path_hits[2:] == [False, False, True, False]  # beta: new; alpha 2: new, then its own entry
