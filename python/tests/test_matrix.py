"""Matrix views from NumPy (through DLPack) and PyTorch (when installed)."""
import pytest

import tessera

np = pytest.importorskip("numpy")


def test_row_major():
    a = np.ones((6, 10), dtype=np.float32)
    m = tessera.as_matrix(a)
    assert (m.rows, m.cols, m.ld, m.order, m.dtype) == (6, 10, 10, tessera.Order.ROW, tessera.DType.F32)
    assert m.ptr == a.ctypes.data and m.device == ("cpu", 0) and m.batch == 1


def test_transposed_view_is_column_major():
    w = np.ones((8, 12), dtype=np.float16)  # w[N][K]; w.T is the K x N operand of x @ w.T
    m = tessera.as_matrix(w.T)
    assert (m.rows, m.cols, m.ld, m.order, m.dtype) == (12, 8, 12, tessera.Order.COL, tessera.DType.F16)


def test_padded_leading_dimension():
    big = np.zeros((6, 16), dtype=np.float32)
    m = tessera.as_matrix(big[:, :10])
    assert (m.rows, m.cols, m.ld, m.order) == (6, 10, 16, tessera.Order.ROW)


def test_batch():
    a = np.zeros((3, 4, 5), dtype=np.float32)
    m = tessera.as_matrix(a)
    assert (m.batch, m.batch_stride, m.rows, m.cols) == (3, 20, 4, 5)


def test_desc_round_trip():
    m = tessera.as_matrix(np.zeros((4, 5), dtype=np.float32).T)
    d = m.desc()
    assert (d.dtype, d.order, d.rows, d.cols, d.ld, d.batch_stride) == (0, 0, 5, 4, 5, 0)


def test_refusals_name_the_problem():
    with pytest.raises(tessera.InvalidValueError, match="neither row- nor column-major"):
        tessera.as_matrix(np.zeros((6, 10), dtype=np.float32)[:, ::2])
    with pytest.raises(tessera.InvalidValueError, match="DLPack type"):
        tessera.as_matrix(np.zeros((4, 4), dtype=np.int32))
    with pytest.raises(tessera.InvalidValueError, match="2-D"):
        tessera.as_matrix(np.zeros(4, dtype=np.float32))
    with pytest.raises(tessera.InvalidValueError, match="expected a torch.Tensor"):
        tessera.as_matrix([[1.0]])


def test_view_keeps_its_source_alive():
    m = tessera.as_matrix(np.arange(12, dtype=np.float32).reshape(3, 4))
    import gc
    gc.collect()
    import ctypes
    values = (ctypes.c_float * 12).from_address(m.ptr)
    assert list(values) == list(range(12))


def test_torch_tensors():
    torch = pytest.importorskip("torch")
    x = torch.zeros((5, 7), dtype=torch.bfloat16)
    m = tessera.as_matrix(x)
    assert (m.rows, m.cols, m.ld, m.order, m.dtype) == (5, 7, 7, tessera.Order.ROW, tessera.DType.BF16)
    w = torch.zeros((9, 7), dtype=torch.float16)
    m = tessera.as_matrix(w.t())
    assert (m.rows, m.cols, m.ld, m.order) == (7, 9, 7, tessera.Order.COL)
    if hasattr(torch, "float8_e4m3fn"):
        assert tessera.as_matrix(torch.zeros((2, 16), dtype=torch.float8_e4m3fn)).dtype == tessera.DType.E4M3
