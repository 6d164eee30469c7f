"""tessera.gemm: refusals on any machine; results against PyTorch on a GPU."""
import pytest

import tessera
from conftest import gpu_count

np = pytest.importorskip("numpy")


def test_host_memory_is_refused():
    a = np.ones((64, 64), dtype=np.float16)
    with pytest.raises(tessera.InvalidValueError, match="GPU memory"):
        tessera.gemm(a, a, out=np.zeros((64, 64), dtype=np.float16))


def test_not_a_matrix_is_refused():
    with pytest.raises(tessera.InvalidValueError, match="expected a torch.Tensor"):
        tessera.gemm([[1.0]], [[1.0]])


def test_plan_struct_matches_header():
    import ctypes
    # tess_plan: 10 int32 fields, char[64], int32, then a uint64 at 8-byte alignment.
    assert ctypes.sizeof(tessera._lib.PlanStruct) == 10 * 4 + 64 + 4 + 4 + 8
    # tess_gemm_desc: u32 (+4 padding), 4 int64, 2 floats, 4 tess_matrix_desc of 2 ints + 4 int64.
    assert ctypes.sizeof(tessera._lib.GemmDescStruct) == 8 + 32 + 8 + 4 * 40


needs_gpu = pytest.mark.skipif(gpu_count() == 0, reason="no CUDA device")


@pytest.fixture(scope="module")
def torch():
    t = pytest.importorskip("torch")
    if gpu_count() == 0 or not t.cuda.is_available():
        pytest.skip("no CUDA device")
    return t


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
