"""Fused epilogues (bias + activation) of tessera.gemm, grouped_mm and grouped_mm_masked: the
ctypes structs and enums against the header, and every bias refusal before any call (the pure
checks of tessera.epilogue; tessera.gemm / grouped_mm driven with tessera.Matrix views of
made-up device memory; the torch.ops fakes), on any machine; results against a float64 PyTorch
reference (x @ w.T + bias, then the activation) on a GPU, bf16 and FP8 block-scaled."""
import ctypes
import os
import re
import types

import pytest

import tessera
from tessera import epilogue
from tessera.dtypes import DType
from conftest import REPO, dequantize, group_offs, needs_gpu, packed_strides

COLUMNS, ROWS = epilogue.BIAS_COLUMNS, epilogue.BIAS_ROWS
ACTIVATIONS = ["none", "relu", "gelu", "gelu_tanh", "silu"]


class FakeBias:
    """Just enough of a torch tensor for the bias checks (no torch needed)."""

    def __init__(self, shape, strides=None, *, dtype="torch.bfloat16", device=("cuda", 0), ptr=0x40000):
        self.shape, self.dtype = tuple(shape), dtype
        self.device = types.SimpleNamespace(type=device[0], index=device[1])
        self._strides = tuple(strides) if strides is not None else packed_strides(self.shape)
        self._ptr = ptr

    def stride(self, dim=None):
        return self._strides if dim is None else self._strides[dim]

    def dim(self):
        return len(self.shape)

    def data_ptr(self):
        return self._ptr


class _NoDevice:
    """A handle that fails the test if a call gets as far as using it."""

    @property
    def device(self):
        raise AssertionError("the call reached the device")


# ---- the C structs and enums ------------------------------------------------------------------

# sizeof / offsetof printed by gcc -Iinclude for x86-64 (LP64).
EPILOGUE_OFFSETS = {"bias": 0, "bias_type": 4, "bias_batch_stride": 8, "activation": 16}


def test_structs_match_header():
    lib = tessera._lib
    assert ctypes.sizeof(lib.EpilogueDescStruct) == 24
    assert {name: getattr(lib.EpilogueDescStruct, name).offset for name, _ in lib.EpilogueDescStruct._fields_} == \
        EPILOGUE_OFFSETS
    assert ctypes.sizeof(lib.EpiloguePtrsStruct) == 56 and lib.EpiloguePtrsStruct.bias.offset == 8
    assert lib.EpiloguePtrsStruct.residual.offset == 16
    assert (lib.EpiloguePtrsStruct.d_scale.offset, lib.EpiloguePtrsStruct.d_amax.offset,
            lib.EpiloguePtrsStruct.d_scale_out.offset, lib.EpiloguePtrsStruct.aux.offset) == (24, 32, 40, 48)
    assert lib.GemmDescStruct.epilogue.offset == 280 and lib.GemmDescStruct.allow_tf32.offset == 304
    assert lib.GemmDescStruct.residual.offset == 312
    assert [name for name, _ in lib.GemmDescStruct._fields_[-4:]] == ["gate", "gate_limit", "d_scale", "aux"]
    assert (lib.GemmDescStruct.gate.offset, lib.GemmDescStruct.gate_limit.offset) == (352, 356)
    assert lib.GemmDescStruct.d_scale.offset == 360 and lib.GemmDescStruct.aux.offset == 392
    assert ctypes.sizeof(lib.GemmDescStruct) == 432
    assert lib.GroupedGemmDescStruct.epilogue.offset == 232
    assert [name for name, _ in lib.GroupedGemmDescStruct._fields_[-3:]] == ["gate", "gate_limit", "y_scale"]
    assert (lib.GroupedGemmDescStruct.gate.offset, lib.GroupedGemmDescStruct.gate_limit.offset) == (256, 260)
    assert lib.GroupedGemmDescStruct.y_scale.offset == 264 and ctypes.sizeof(lib.GroupedGemmDescStruct) == 296
    # and the library's own sizeofs, which the _init functions store in struct_size; the epilogue starts zeroed
    for struct, init in ((lib.GemmDescStruct, "tess_gemm_desc_init"),
                         (lib.GroupedGemmDescStruct, "tess_grouped_gemm_desc_init")):
        desc = struct()
        desc.epilogue.activation, desc.gate, desc.gate_limit = 7, 1, 2.0  # init must clear them
        if struct is lib.GemmDescStruct:
            desc.aux.rows, desc.aux.cols = 3, 4
        assert getattr(lib.lib(), init)(ctypes.byref(desc)) == 0
        assert desc.struct_size == ctypes.sizeof(struct)
        assert (desc.epilogue.bias, desc.epilogue.bias_batch_stride, desc.epilogue.activation) == (0, 0, 0)
        assert (desc.gate, desc.gate_limit) == (0, 0.0)
        if struct is lib.GemmDescStruct:
            assert (desc.aux.rows, desc.aux.cols) == (0, 0)  # no aux output


def test_enums_match_header():
    text = open(os.path.join(REPO, "include", "tessera.h")).read()
    biases = {name: int(v) for name, v in re.findall(r"TESS_BIAS_(\w+) = (\d+)", text)}
    assert biases == {"NONE": epilogue.BIAS_NONE, "COLUMNS": COLUMNS, "ROWS": ROWS}
    acts = {name: int(v) for name, v in re.findall(r"TESS_ACT_(\w+) = (\d+)", text)}
    assert acts == {"NONE": 0, "RELU": epilogue.ACTIVATIONS["relu"], "GELU_TANH": epilogue.ACTIVATIONS["gelu_tanh"],
                    "GELU_ERF": epilogue.ACTIVATIONS["gelu"], "SILU": epilogue.ACTIVATIONS["silu"]}
    gates = {name: int(v) for name, v in re.findall(r"TESS_GATE_(\w+) = (\d+)", text)}
    assert gates == {"NONE": epilogue.GATE_NONE, "INTERLEAVED": epilogue.GATE_INTERLEAVED}


# ---- the pure checks ------------------------------------------------------------------------------

def test_activation_names():
    assert epilogue.activation_code(None) == 0 and epilogue.activation_code("none") == 0
    assert epilogue.activation_code("gelu") == epilogue.activation_code("gelu_erf") == 3  # F.gelu's default
    assert epilogue.activation_code("gelu_tanh") == 2
    for bad in ("GELU", "tanh", "", "swish"):
        with pytest.raises(tessera.InvalidValueError, match=r"activation=.*one of 'none', 'relu', 'gelu'"):
            epilogue.activation_code(bad)
    with pytest.raises(tessera.InvalidValueError, match="activation=3"):
        epilogue.activation_code(3)  # names only: enum values are not taken


def dense(bias, m=64, n=96, batch=1, along="columns", activation="relu", device=0):
    return tuple(epilogue.dense_epilogue(bias, activation, along, m, n, batch, device))


def test_dense_bias_shapes():
    assert dense(None) == (0, DType.F32, 0, 1)
    assert dense(None, activation=None) == (0, DType.F32, 0, 0)
    assert dense(FakeBias((96,))) == (COLUMNS, DType.BF16, 0, 1)
    assert dense(FakeBias((1, 96), dtype="torch.float32")) == (COLUMNS, DType.F32, 0, 1)
    assert dense(FakeBias((64,), dtype="torch.float16"), along="rows") == (ROWS, DType.F16, 0, 1)
    # batches: one vector for all, or one per batch (their stride a whole vector)
    assert dense(FakeBias((96,)), batch=3) == (COLUMNS, DType.BF16, 0, 1)
    assert dense(FakeBias((3, 96)), batch=3) == (COLUMNS, DType.BF16, 96, 1)
    assert dense(FakeBias((3, 64)), batch=3, along="rows") == (ROWS, DType.BF16, 64, 1)
    # M = 1, N = 1
    assert dense(FakeBias((1,)), m=1, along="rows") == (ROWS, DType.BF16, 0, 1)
    assert dense(FakeBias((2, 1)), n=1, batch=2) == (COLUMNS, DType.BF16, 1, 1)


@pytest.mark.parametrize("bias,kwargs,match", [
    (FakeBias((64,)), {}, r"bias: expected shape \(96,\) or \(1, 96\) \(one value per column of the output, N=96; "
                          r"a bias per row of the output, of length M, takes bias_along='rows'\), got \(64,\)"),
    (FakeBias((96,)), dict(along="rows"), r"expected shape \(64,\) or \(1, 64\) \(one value per row.*M=64"),
    (FakeBias((2, 96)), dict(batch=3), r"\(96,\) or \(1, 96\) or \(3, 96\) .*one vector per batch of 3.*got \(2, 96\)"),
    (FakeBias((3, 96)), {}, r"got \(3, 96\)"),  # one vector per batch, without a batch
    (FakeBias((96, 1)), {}, r"got \(96, 1\)"),
    (FakeBias(()), {}, r"got \(\)"),
    (FakeBias((96,), dtype="torch.float8_e4m3fn"), {}, "expected bfloat16, float16 or float32, got torch.float8"),
    (FakeBias((96,), dtype="torch.int32"), {}, "expected bfloat16, float16 or float32"),
    (FakeBias((96,), device=("cpu", 0)), {}, "bias is on cpu; it must be on the operands' device cuda:0"),
    (FakeBias((96,), device=("cuda", 1)), {}, "bias is on cuda:1; it must be on the operands' device cuda:0"),
    (FakeBias((96,), (2,)), {}, r"bias: must be contiguous; shape \(96,\) has strides \(2,\)"),
    (FakeBias((3, 96), (1, 3)), dict(batch=3), "must be contiguous"),
    (FakeBias((3, 96), (128, 1)), dict(batch=3), "must be contiguous"),
    ([0.0] * 96, {}, "bias: expected a torch.Tensor of bfloat16, float16 or float32 in GPU memory, got list"),
    (FakeBias((96,)), dict(along="cols"), r"bias_along='cols': 'columns' .* or 'rows'"),
    (FakeBias((96,)), dict(activation="gelu_erff"), "activation='gelu_erff'"),
])
def test_dense_bias_refusals(bias, kwargs, match):
    with pytest.raises(tessera.InvalidValueError, match=match):
        dense(bias, **kwargs)


def test_grouped_bias_shapes():
    g = epilogue.grouped_epilogue
    assert tuple(g(None, "silu", 8, 320, 0)) == (0, DType.F32, 0, 4)
    assert tuple(g(FakeBias((320,)), None, 8, 320, 0)) == (COLUMNS, DType.BF16, 0, 0)
    assert tuple(g(FakeBias((1, 320)), None, 8, 320, 0)) == (COLUMNS, DType.BF16, 0, 0)
    assert tuple(g(FakeBias((8, 320), dtype="torch.float32"), "gelu", 8, 320, 0)) == (COLUMNS, DType.F32, 320, 3)
    with pytest.raises(tessera.InvalidValueError, match=r"expected shape \(320,\) or \(1, 320\) or \(8, 320\) "
                                                        r"\(one value per output column, N=320.*got \(7, 320\)"):
        g(FakeBias((7, 320)), None, 8, 320, 0)
    with pytest.raises(tessera.InvalidValueError, match=r"got \(8, 300\)"):
        g(FakeBias((8, 300)), None, 8, 320, 0)
    with pytest.raises(tessera.InvalidValueError, match="must be contiguous"):
        g(FakeBias((8, 320), (1, 8)), None, 8, 320, 0)
    with pytest.raises(tessera.InvalidValueError, match="activation='relu6'"):
        g(None, "relu6", 8, 320, 0)


# ---- tessera.gemm / grouped_mm refuse before the call ----------------------------------------------

def _bf16_problem(m, n, k, batch=1):
    """Matrix views of made-up device memory (never read): a M x K row-major, b K x N column-major, out."""
    ab = (batch,) if batch > 1 else ()
    a = tessera.from_parts(0x100000, DType.BF16, ab + (m, k), ((m * k,) if batch > 1 else ()) + (k, 1), ("cuda", 0))
    b = tessera.from_parts(0x200000, DType.BF16, (k, n), (1, k), ("cuda", 0))
    out = tessera.from_parts(0x300000, DType.BF16, ab + (m, n), ((m * n,) if batch > 1 else ()) + (n, 1), ("cuda", 0))
    return a, b, out


@pytest.mark.parametrize("kwargs,match", [
    (dict(bias=FakeBias((64,))), r"bias: expected shape \(128,\) or \(1, 128\)"),
    (dict(bias=FakeBias((128,)), bias_along="rows"), r"bias: expected shape \(64,\)"),
    (dict(bias=FakeBias((128,), dtype="torch.float64")), "expected bfloat16, float16 or float32, got torch.float64"),
    (dict(bias=FakeBias((128,), device=("cuda", 1))), "operands' device cuda:0"),
    (dict(bias=FakeBias((128,), (2,))), "must be contiguous"),
    (dict(activation="gelu_approx"), "activation='gelu_approx'"),
    (dict(bias=FakeBias((128,)), bias_along="column"), "bias_along='column'"),
])
def test_gemm_refuses_before_the_call(kwargs, match):
    a, b, out = _bf16_problem(64, 128, 256)
    with pytest.raises(tessera.InvalidValueError, match=match):
        tessera.gemm(a, b, out, handle=_NoDevice(), **kwargs)
    with pytest.raises(tessera.InvalidValueError, match=match):  # the plan queries check it the same way
        tessera.gemm_plans(a, b, out, handle=_NoDevice(), **kwargs)


@pytest.mark.parametrize("residual,match", [
    (tessera.from_parts(0x500000, DType.BF16, (64, 64), (64, 1), ("cuda", 0)), r"residual: 64 x 64; it must be M x N = 64 x 128"),
    (tessera.from_parts(0x500000, DType.E4M3, (64, 128), (128, 1), ("cuda", 0)), "a residual is bf16, f16 or f32"),
    (tessera.from_parts(0x500000, DType.BF16, (2, 64, 128), (8192, 128, 1), ("cuda", 0)), "residual: a batch of 2"),
    (tessera.from_parts(0x500000, DType.BF16, (64, 128), (128, 1), ("cuda", 1)), "CUDA devices"),
])
def test_gemm_residual_refused_before_the_call(residual, match):
    a, b, out = _bf16_problem(64, 128, 256)
    with pytest.raises(tessera.InvalidValueError, match=match):
        tessera.gemm(a, b, out, handle=_NoDevice(), residual=residual)
    for query in (tessera.gemm_plans, tessera.gemm_workspace_size):  # the queries check it the same way
        with pytest.raises(tessera.InvalidValueError, match=match):
            query(a, b, out, handle=_NoDevice(), residual=residual)


@pytest.mark.parametrize("aux,match", [
    (tessera.from_parts(0x500000, DType.BF16, (64, 64), (64, 1), ("cuda", 0)),
     r"aux: 64 x 64 bf16; it must be M x N = 64 x 128 bf16, as out"),
    (tessera.from_parts(0x500000, DType.F32, (64, 128), (128, 1), ("cuda", 0)), r"aux: 64 x 128 f32; it must be"),
    (tessera.from_parts(0x500000, DType.BF16, (64, 128), (128, 1), ("cuda", 1)), "CUDA devices"),
    (True, "aux=True allocates a torch tensor"),
    (False, "leave aux=None"),
])
def test_gemm_aux_refused_before_the_call(aux, match):
    a, b, out = _bf16_problem(64, 128, 256)
    with pytest.raises(tessera.InvalidValueError, match=match):
        tessera.gemm(a, b, out, handle=_NoDevice(), activation="gelu", aux=aux)


def test_gemm_batched_bias():
    a, b, out = _bf16_problem(64, 128, 256, batch=3)
    with pytest.raises(tessera.InvalidValueError, match=r"\(3, 128\) .*got \(2, 128\)"):
        tessera.gemm(a, b, out, handle=_NoDevice(), bias=FakeBias((2, 128)))
    for shape in [(128,), (1, 128), (3, 128)]:  # fitting biases pass the checks (the next step is the handle)
        with pytest.raises(AssertionError, match="reached the device"):
            tessera.gemm(a, b, out, handle=_NoDevice(), bias=FakeBias(shape), activation="silu")
    with pytest.raises(AssertionError, match="reached the device"):
        tessera.gemm(a, b, out, handle=_NoDevice(), bias=FakeBias((3, 64), dtype="torch.float32"), bias_along="rows")


def test_grouped_refuses_before_the_call():
    g, m, n, k = 4, 100, 256, 512
    x = tessera.from_parts(0x100000, DType.BF16, (m, k), (k, 1), ("cuda", 0))
    w = tessera.from_parts(0x200000, DType.BF16, (g, n, k), (n * k, k, 1), ("cuda", 0))
    out = tessera.from_parts(0x300000, DType.BF16, (m, n), (n, 1), ("cuda", 0))
    call = lambda **kw: tessera.grouped_mm(x, w, None, out, handle=_NoDevice(), **kw)  # noqa: E731
    with pytest.raises(tessera.InvalidValueError, match=r"bias: expected shape \(256,\) or \(1, 256\) or \(4, 256\)"):
        call(bias=FakeBias((m,)))  # per row: not for a grouped GEMM
    with pytest.raises(tessera.InvalidValueError, match=r"got \(3, 256\)"):
        call(bias=FakeBias((3, 256)))
    with pytest.raises(tessera.InvalidValueError, match="bias is on cuda:1"):
        call(bias=FakeBias((g, n), device=("cuda", 1)))
    with pytest.raises(tessera.InvalidValueError, match="got torch.int8"):
        call(bias=FakeBias((g, n), dtype="torch.int8"))
    with pytest.raises(tessera.InvalidValueError, match="activation='Relu'"):
        call(activation="Relu")
    for shape in [(n,), (1, n), (g, n)]:
        with pytest.raises(AssertionError, match="reached the device"):
            call(bias=FakeBias(shape), activation="gelu_tanh")
    xm = tessera.from_parts(0x100000, DType.BF16, (g, 64, k), (64 * k, k, 1), ("cuda", 0))
    with pytest.raises(tessera.InvalidValueError, match=r"got \(5, 256\)"):
        tessera.grouped_mm_masked(xm, w, None, 32, handle=_NoDevice(), bias=FakeBias((5, n)))
    with pytest.raises(tessera.InvalidValueError, match="must be contiguous"):  # the plan queries check it too
        tessera.grouped_plans(x, w, out, handle=_NoDevice(), bias=FakeBias((g, n), (1, g)))


# ---- torch.ops fakes (no GPU) ---------------------------------------------------------------------

def _fake_mode():
    from torch._subclasses.fake_tensor import FakeTensorMode
    return FakeTensorMode(allow_non_fake_inputs=True)


def _fake_operands(torch):
    """bf16 a (64 x 256) and b (256 x 96) on a fake CUDA device (call inside _fake_mode())."""
    bf16 = torch.bfloat16
    return torch.empty(64, 256, device="cuda", dtype=bf16), torch.empty(256, 96, device="cuda", dtype=bf16)


def test_ops_fakes_check_the_bias():
    torch = pytest.importorskip("torch")
    bf16 = torch.bfloat16
    with _fake_mode():
        a, b = _fake_operands(torch)
        y = torch.ops.tessera.gemm(a, b, bias=torch.empty(96, device="cuda", dtype=bf16), activation="gelu")
        assert tuple(y.shape) == (64, 96) and y.dtype == bf16
        y = torch.ops.tessera.gemm(a, b, bias=torch.empty(64, device="cuda"), bias_along="rows", activation="relu")
        assert tuple(y.shape) == (64, 96)
        a3 = torch.empty(3, 64, 256, device="cuda", dtype=bf16)
        assert tuple(torch.ops.tessera.gemm(a3, b, bias=torch.empty(3, 96, device="cuda", dtype=bf16)).shape) == \
            (3, 64, 96)
        with pytest.raises(tessera.InvalidValueError, match=r"bias: expected shape \(96,\) or \(1, 96\)"):
            torch.ops.tessera.gemm(a, b, bias=torch.empty(64, device="cuda", dtype=bf16))
        with pytest.raises(tessera.InvalidValueError, match=r"got \(2, 96\)"):
            torch.ops.tessera.gemm(a3, b, bias=torch.empty(2, 96, device="cuda", dtype=bf16))
        with pytest.raises(tessera.InvalidValueError, match="got torch.float64"):
            torch.ops.tessera.gemm(a, b, bias=torch.empty(96, device="cuda", dtype=torch.float64))
        with pytest.raises(tessera.InvalidValueError, match="must be contiguous"):
            torch.ops.tessera.gemm(a, b, bias=torch.empty(192, device="cuda", dtype=bf16)[::2])
        with pytest.raises(tessera.InvalidValueError, match="bias is on cpu"):
            torch.ops.tessera.gemm(a, b, bias=torch.empty(96, dtype=bf16))
        with pytest.raises(tessera.InvalidValueError, match="activation='softplus'"):
            torch.ops.tessera.gemm(a, b, activation="softplus")
        y = torch.ops.tessera.gemm(a3, b, residual=torch.empty(64, 96, device="cuda", dtype=bf16))  # shared
        assert tuple(y.shape) == (3, 64, 96)
        with pytest.raises(tessera.InvalidValueError, match=r"residual: expected shape \(64, 96\)"):
            torch.ops.tessera.gemm(a, b, residual=torch.empty(96, 64, device="cuda", dtype=bf16))
        with pytest.raises(tessera.InvalidValueError, match=r"residual: expected shape \(3, 64, 96\)"):
            torch.ops.tessera.gemm(a3, b, residual=torch.empty(2, 64, 96, device="cuda", dtype=bf16))
        x = torch.empty(300, 128, device="cuda", dtype=bf16)
        w = torch.empty(4, 256, 128, device="cuda", dtype=bf16)
        offs = torch.empty(4, device="cuda", dtype=torch.int32)
        y = torch.ops.tessera.grouped_mm(x, w, offs, bias=torch.empty(4, 256, device="cuda"), activation="silu")
        assert tuple(y.shape) == (300, 256)
        with pytest.raises(tessera.InvalidValueError, match=r"\(256,\) or \(1, 256\) or \(4, 256\).*got \(300,\)"):
            torch.ops.tessera.grouped_mm(x, w, offs, bias=torch.empty(300, device="cuda", dtype=bf16))
        with pytest.raises(tessera.InvalidValueError, match="activation='gelu_fast'"):
            torch.ops.tessera.grouped_mm(x[:0], w, offs, activation="gelu_fast")  # even with no tokens
        xm = torch.empty(4, 64, 128, device="cuda", dtype=bf16)
        y = torch.ops.tessera.grouped_mm_masked(xm, w, offs, 32, bias=torch.empty(256, device="cuda", dtype=bf16))
        assert tuple(y.shape) == (4, 64, 256)
        with pytest.raises(tessera.InvalidValueError, match=r"got \(3, 256\)"):
            torch.ops.tessera.grouped_mm_masked(xm, w, offs, 32, bias=torch.empty(3, 256, device="cuda"))


def _backward_ctx(saved, needs, **fields):
    return types.SimpleNamespace(saved_tensors=saved, needs_input_grad=needs, **fields)


def test_bias_gradient_shapes_and_activation_gradients():
    torch = pytest.importorskip("torch")
    bf16 = torch.bfloat16
    needs = (True, True, False) + (False,) * 8 + (True, False, False, False)  # a, b and the bias (input 11)
    with _fake_mode():
        a = torch.empty(3, 64, 256, device="cuda", dtype=bf16)
        b = torch.empty(256, 96, device="cuda", dtype=bf16)
        grad = torch.empty(3, 64, 96, device="cuda", dtype=bf16)
        for shape, along in [((96,), "columns"), ((1, 96), "columns"), ((3, 96), "columns"), ((64,), "rows"),
                             ((3, 64), "rows")]:
            ctx = _backward_ctx((a, b, None, None), needs, alpha=1.0, beta=0.0, c_dtype=None, c_shape=None,
                                scaled=False,
                                activation="none", bias_dtype=torch.float32, bias_shape=shape, bias_along=along)
            grads = tessera.ops._gemm_backward(ctx, grad)
            assert len(grads) == 17 and tuple(grads[11].shape) == shape and grads[11].dtype == torch.float32
        rneeds = needs[:14] + (True,)  # and the residual (input 14): dD, summed over a shared one's batch
        for shape in [(3, 64, 96), (1, 64, 96), (64, 96)]:
            ctx = _backward_ctx((a, b, None, None), rneeds, alpha=1.0, beta=0.0, c_dtype=None, c_shape=None,
                                scaled=False,
                                activation="none", bias_dtype=None, bias_shape=None, bias_along="columns",
                                residual_dtype=bf16, residual_shape=shape)
            grads = tessera.ops._gemm_backward(ctx, grad)
            assert tuple(grads[14].shape) == shape and grads[14].dtype == bf16
        for act in ("relu", "gelu", "gelu_tanh", "silu"):  # through the activation: the values before it recomputed
            ctx = _backward_ctx((a, b, None, torch.empty(96, device="cuda", dtype=bf16)), needs, alpha=1.0, beta=0.0,
                                c_dtype=None, c_shape=None, scaled=False, activation=act, bias_dtype=bf16,
                                bias_shape=(96,), bias_along="columns")
            grads = tessera.ops._gemm_backward(ctx, grad)
            assert grads[0].shape == a.shape and grads[1].shape == b.shape and tuple(grads[11].shape) == (96,)
        x = torch.empty(300, 128, device="cuda", dtype=bf16)
        w = torch.empty(4, 256, 128, device="cuda", dtype=bf16)
        offs = torch.empty(4, device="cuda", dtype=torch.int32)
        gneeds = (True, True, False) + (False,) * 7 + (True, False)  # x, w and the bias (input 10)
        for shape in [(256,), (1, 256), (4, 256)]:
            ctx = _backward_ctx((x, w, offs, None), gneeds, scaled=False, w_layout="nk", activation=None,
                                bias_dtype=bf16, bias_shape=shape)
            grads = tessera.ops._grouped_backward(ctx, torch.empty(300, 256, device="cuda", dtype=bf16))
            assert len(grads) == 14 and tuple(grads[10].shape) == shape and grads[10].dtype == bf16
        for act in ("relu", "gelu", "silu"):  # through the activation: the values before it recomputed
            bias = torch.empty(4, 256, device="cuda", dtype=bf16)
            ctx = _backward_ctx((x, w, offs, bias), gneeds, scaled=False, w_layout="nk", activation=act,
                                bias_dtype=bf16, bias_shape=(4, 256))
            grads = tessera.ops._grouped_backward(ctx, torch.empty(300, 256, device="cuda", dtype=bf16))
            assert grads[0].shape == x.shape and grads[1].shape == w.shape and tuple(grads[10].shape) == (4, 256)


def test_export_with_fused_epilogue():
    torch = pytest.importorskip("torch")

    class Linear(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.empty(512, 256, dtype=torch.bfloat16, device="cuda"))
            self.b = torch.nn.Parameter(torch.empty(512, dtype=torch.bfloat16, device="cuda"))

        def forward(self, x):
            return torch.ops.tessera.gemm(x, self.w.T, bias=self.b, activation="gelu_tanh")

    with _fake_mode():
        program = torch.export.export(Linear(), (torch.empty(64, 256, device="cuda", dtype=torch.bfloat16),))
    calls = [n for n in program.graph.nodes if n.op == "call_function" and str(n.target) == "tessera.gemm.default"]
    assert len(calls) == 1 and "gelu_tanh" in list(calls[0].args) + list(calls[0].kwargs.values())


# ---- on a GPU -----------------------------------------------------------------------------------

BF16_BOUND = 8e-3               # bf16 rounding of D (test_gemm's bound)
F32_BOUND = 1e-3                # f32 D of bf16 inputs: the activations' float32 math
FP8_BOUND = 2 ** -8 + 2 ** -12  # bf16 rounding of D + FP8 accumulation (test_gemm's FP8 bound)


def _activate(torch, v, activation):
    """The float64 reference of an activation."""
    F = torch.nn.functional
    return {"none": lambda t: t, "relu": torch.relu, "gelu": lambda t: F.gelu(t, approximate="none"),
            "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"), "silu": F.silu}[activation](v)


def _close(torch, got, want, bound, what=""):
    got = got.double()
    assert torch.isfinite(got).all(), f"{what}: non-finite output"
    rel = ((got - want).norm() / want.norm().clamp_min(1e-30)).item()
    assert rel < bound, f"{what}: relative error {rel:.3g} (bound {bound})"


def _inputs(torch, g, *shape):
    """Random normal values scaled by 1/sqrt(K) (the last dimension), so that a product's entries are
    about as large as a bias's and the activations' curved parts are exercised."""
    return torch.randn(*shape, device="cuda", generator=g) * shape[-1] ** -0.5


# N not a multiple of 128 (but of 8: D's rows are whole 16 bytes), M = 1 (the decode GEMVs), ragged M.
DENSE_SHAPES = [(1, 200, 256), (7, 328, 512), (129, 904, 1024), (1000, 1160, 2048)]


@needs_gpu
@pytest.mark.parametrize("m,n,k", DENSE_SHAPES)
@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("bias_dtype", ["bfloat16", "float32", None])
def test_dense_bf16_matches_float64(torch, m, n, k, activation, bias_dtype):
    g = torch.Generator(device="cuda").manual_seed(m + n + k)
    a = _inputs(torch, g, m, k).bfloat16()
    w = _inputs(torch, g, n, k).bfloat16()
    bias = torch.randn(n, device="cuda", generator=g).to(getattr(torch, bias_dtype)) if bias_dtype else None
    d = tessera.gemm(a, w.T, bias=bias, activation=activation)
    assert d.shape == (m, n) and d.dtype == torch.bfloat16
    v = a.double() @ w.double().T + (bias.double() if bias is not None else 0)
    _close(torch, d, _activate(torch, v, activation), BF16_BOUND, f"{activation} bias {bias_dtype}")


@needs_gpu
@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_dense_rows_bias_batches_and_f32_out(torch, activation):
    """A bias per row; per batch and shared; f32 D; alpha and beta before the bias; every plan."""
    g = torch.Generator(device="cuda").manual_seed(11)
    m, n, k = 96, 200, 384
    a = _inputs(torch, g, 3, m, k).bfloat16()
    w = _inputs(torch, g, n, k).bfloat16()
    ref = a.double() @ w.double().T
    rows = torch.randn(m, device="cuda", generator=g).half()
    d = tessera.gemm(a, w.T, bias=rows, bias_along="rows", activation=activation, out_dtype="f32")
    assert d.dtype == torch.float32 and d.shape == (3, m, n)
    _close(torch, d, _activate(torch, ref + rows.double()[:, None], activation), F32_BOUND, "rows, shared")
    per_batch = torch.randn(3, n, device="cuda", generator=g).bfloat16()
    d = tessera.gemm(a, w.T, bias=per_batch, activation=activation)
    _close(torch, d, _activate(torch, ref + per_batch.double()[:, None, :], activation), BF16_BOUND, "per batch")
    per_batch_rows = torch.randn(3, m, device="cuda", generator=g)
    d = tessera.gemm(a, w.T, bias=per_batch_rows, bias_along="rows", activation=activation)
    _close(torch, d, _activate(torch, ref + per_batch_rows.double()[:, :, None], activation), BF16_BOUND,
           "rows per batch")
    c = torch.randn(m, n, device="cuda", generator=g)
    cols = torch.randn(n, device="cuda", generator=g)
    d = tessera.gemm(a[0], w.T, c=c, alpha=0.5, beta=-1.0, bias=cols, activation=activation, out_dtype="f32")
    _close(torch, d, _activate(torch, 0.5 * ref[0] - c.double() + cols.double(), activation), F32_BOUND,
           "alpha, beta")
    want = _activate(torch, ref[0] + cols.double(), activation)
    plans = tessera.gemm_plans(a[0], w.T, bias=cols, activation=activation, limit=64)
    assert plans
    for p in plans:
        _close(torch, tessera.gemm(a[0], w.T, bias=cols, activation=activation, plan=p), want, BF16_BOUND, p.name)


@needs_gpu
@pytest.mark.parametrize("m,n,k", [(1, 200, 256), (300, 520, 1024)])
@pytest.mark.parametrize("recipes", [("1x128", "128x128"), ("tensor", "tensor")])
@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_dense_fp8_matches_float64(torch, m, n, k, recipes, activation):
    g = torch.Generator(device="cuda").manual_seed(m * 3 + n)
    qa, sa = tessera.quantize_fp8(_inputs(torch, g, m, k), recipes[0])
    qw, sw = tessera.quantize_fp8(_inputs(torch, g, n, k), recipes[1])
    bias = torch.randn(n, device="cuda", generator=g).bfloat16()
    d = tessera.gemm(qa, qw.T, scale_a=sa, scale_b=sw, scale_recipe_a=recipes[0], scale_recipe_b=recipes[1],
                     bias=bias, activation=activation)
    assert d.dtype == torch.bfloat16 and d.shape == (m, n)
    v = dequantize(torch, qa, sa, recipes[0], torch.float64) @ dequantize(torch, qw, sw, recipes[1], torch.float64).T + bias.double()
    _close(torch, d, _activate(torch, v, activation), FP8_BOUND, f"{recipes} {activation}")
    if activation != "none":  # aux beside it, every plan (the promoting and block-scaled FP8 kernels)
        for p in tessera.gemm_plans(qa, qw.T, scale_a=sa, scale_b=sw, scale_recipe_a=recipes[0],
                                    scale_recipe_b=recipes[1], bias=bias, activation=activation, limit=64):
            aux = torch.full((m, n), float("nan"), device="cuda").bfloat16()
            d, aux = tessera.gemm(qa, qw.T, scale_a=sa, scale_b=sw, scale_recipe_a=recipes[0],
                                  scale_recipe_b=recipes[1], bias=bias, activation=activation, plan=p, aux=aux)
            _close(torch, aux, v, FP8_BOUND, f"{recipes} {activation} aux, {p.name}")
            _close(torch, d, _activate(torch, v, activation), FP8_BOUND, f"{recipes} {activation} D, {p.name}")


@needs_gpu
@pytest.mark.parametrize("m,n,k", DENSE_SHAPES)
@pytest.mark.parametrize("activation", ["none", "gelu", "silu"])
def test_dense_residual_matches_float64(torch, m, n, k, activation):
    """D = activation(a @ w.T + bias) + residual: a residual of each type, row- or column-major,
    and D itself as the residual (in place); every plan of the problem."""
    g = torch.Generator(device="cuda").manual_seed(3 * m + n + k)
    a, w = _inputs(torch, g, m, k).bfloat16(), _inputs(torch, g, n, k).bfloat16()
    bias = torch.randn(n, device="cuda", generator=g).bfloat16()
    v = _activate(torch, a.double() @ w.double().T + bias.double(), activation)
    for rtype in ["bfloat16", "float16", "float32"]:
        r = torch.randn(m, n, device="cuda", generator=g).to(getattr(torch, rtype))
        d = tessera.gemm(a, w.T, bias=bias, activation=activation, residual=r)
        _close(torch, d, v + r.double(), BF16_BOUND, f"{activation} residual {rtype}")
        rt = r.T.contiguous().T  # column-major
        d = tessera.gemm(a, w.T, bias=bias, activation=activation, residual=rt, out_dtype="f32")
        _close(torch, d, v + r.double(), F32_BOUND, f"{activation} residual {rtype} column-major")
    out = torch.randn(m, n, device="cuda", generator=g).bfloat16()
    want = v + out.double()
    for p in tessera.gemm_plans(a, w.T, bias=bias, activation=activation, limit=64):
        d = out.clone()
        tessera.gemm(a, w.T, d, bias=bias, activation=activation, residual=d, plan=p)
        _close(torch, d, want, BF16_BOUND, f"{activation} residual is out, {p.name}")


@needs_gpu
@pytest.mark.parametrize("m,n,k", DENSE_SHAPES)
@pytest.mark.parametrize("activation", ["gelu_tanh", "relu"])
def test_dense_aux_matches_float64(torch, m, n, k, activation):
    """aux = a @ w.T + bias (the values before the activation) beside D = activation(aux) +
    residual: bf16 and f32 outs, a column-major aux given, every plan of the problem."""
    g = torch.Generator(device="cuda").manual_seed(7 * m + n + k)
    a, w = _inputs(torch, g, m, k).bfloat16(), _inputs(torch, g, n, k).bfloat16()
    bias = torch.randn(n, device="cuda", generator=g).bfloat16()
    v = a.double() @ w.double().T + bias.double()
    r = torch.randn(m, n, device="cuda", generator=g).bfloat16()
    d, aux = tessera.gemm(a, w.T, bias=bias, activation=activation, residual=r, aux=True)
    _close(torch, aux, v, BF16_BOUND, f"{activation} aux")
    _close(torch, d, _activate(torch, v, activation) + r.double(), BF16_BOUND, f"{activation} D beside aux")
    out = torch.empty(n, m, device="cuda").T  # column-major f32 D and aux
    given = torch.empty(n, m, device="cuda").T
    d, aux = tessera.gemm(a, w.T, out, bias=bias, activation=activation, aux=given)
    assert aux is given
    _close(torch, aux, v, F32_BOUND, f"{activation} f32 aux, column-major")
    d, aux = tessera.gemm(a, w.T, out, bias=bias, activation=activation, aux=True)  # allocated in out's order
    # out's order (one row: both orders hold, so the strides may differ where a dimension is 1)
    assert aux.is_contiguous() == out.is_contiguous() and aux.T.is_contiguous() == out.T.is_contiguous()
    _close(torch, aux, v, F32_BOUND, f"{activation} f32 aux=True, column-major")
    for p in tessera.gemm_plans(a, w.T, bias=bias, activation=activation, limit=64):
        aux = torch.full((m, n), float("nan"), device="cuda").bfloat16()  # a plan that skips aux leaves NaN
        d, aux = tessera.gemm(a, w.T, bias=bias, activation=activation, plan=p, aux=aux)
        _close(torch, aux, v, BF16_BOUND, f"{activation} aux, {p.name}")
        _close(torch, d, _activate(torch, v, activation), BF16_BOUND, f"{activation} D, {p.name}")


@needs_gpu
def test_ops_residual_and_its_gradient(torch):
    """torch.ops.tessera.gemm with a residual: the value, and the gradients (the residual's is dD
    itself; a shared residual's is dD summed over the batch)."""
    g = torch.Generator(device="cuda").manual_seed(5)
    a = _inputs(torch, g, 2, 64, 256).bfloat16().requires_grad_()
    w = _inputs(torch, g, 96, 256).bfloat16().requires_grad_()
    r = torch.randn(64, 96, device="cuda", generator=g).bfloat16().requires_grad_()
    d = torch.ops.tessera.gemm(a, w.T, residual=r)
    _close(torch, d, a.double() @ w.double().T + r.double(), BF16_BOUND, "value")
    dd = torch.randn(d.shape, device="cuda", generator=g).bfloat16()
    d.backward(dd)
    _close(torch, r.grad, dd.double().sum(0), BF16_BOUND, "residual's gradient")
    _close(torch, a.grad, dd.double() @ w.double(), BF16_BOUND, "a's gradient")


@needs_gpu
def test_prepared_calls_pass_each_bias(torch):
    """Calls of one layout take the prepared path (tessera.call_cache) with each call's own bias;
    another activation, bias dtype or bias shape is prepared anew, and no bias is not a bias."""
    from tessera import call_cache
    call_cache.clear()
    g = torch.Generator(device="cuda").manual_seed(5)
    a, w = _inputs(torch, g, 64, 256).bfloat16(), _inputs(torch, g, 200, 256).bfloat16()
    ref = a.double() @ w.double().T
    for _ in range(3):
        bias = torch.randn(200, device="cuda", generator=g).bfloat16()
        _close(torch, tessera.gemm(a, w.T, bias=bias, activation="silu"),
               _activate(torch, ref + bias.double(), "silu"), BF16_BOUND, "prepared")
    assert len(call_cache._entries) == 1
    _close(torch, tessera.gemm(a, w.T, bias=bias, activation="relu"), torch.relu(ref + bias.double()), BF16_BOUND)
    _close(torch, tessera.gemm(a, w.T, bias=bias.float(), activation="relu"), torch.relu(ref + bias.double()),
           BF16_BOUND)
    _close(torch, tessera.gemm(a, w.T, bias=bias[None], activation="relu"), torch.relu(ref + bias.double()),
           BF16_BOUND)
    _close(torch, tessera.gemm(a, w.T, activation="relu"), torch.relu(ref), BF16_BOUND)
    _close(torch, tessera.gemm(a, w.T), ref, BF16_BOUND)
    assert len(call_cache._entries) == 6


# Group sizes: empty groups, a group of one row, ragged and whole 128-row tiles.
SIZES = [0, 1, 37, 128, 0, 300, 5, 256]


def _check_groups(torch, y, want_rows, sizes, bound, what):
    row = 0
    for gi, s in enumerate(sizes):
        if s:
            _close(torch, y[row:row + s], want_rows(gi, row, s), bound, f"{what}: group {gi} ({s} rows)")
        row += s


def _grouped_bias_case(torch, seed, n, shared):
    """A bf16 grouped problem of SIZES tokens, K = 512, N = n, with a bias shared by the groups or one
    per group: x, w, bias and the bias of group gi in float64 (per(gi))."""
    gen = torch.Generator(device="cuda").manual_seed(seed)
    g, k = len(SIZES), 512
    x = _inputs(torch, gen, sum(SIZES), k).bfloat16()
    w = _inputs(torch, gen, g, n, k).bfloat16()
    bias = torch.randn(*((n,) if shared else (g, n)), device="cuda", generator=gen).bfloat16()
    per = (lambda gi: bias.double()) if shared else (lambda gi: bias[gi].double())
    return x, w, bias, per


@needs_gpu
@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("shared", [False, True])
def test_grouped_bf16_matches_float64(torch, activation, shared):
    x, w, bias, per = _grouped_bias_case(torch, 7, 200, shared)
    want = lambda gi, r, s: _activate(torch, x[r:r + s].double() @ w[gi].double().T + per(gi), activation)  # noqa
    y = tessera.grouped_mm(x, w, group_offs(torch, SIZES), bias=bias, activation=activation)
    _check_groups(torch, y, want, SIZES, BF16_BOUND, activation)
    for p in tessera.grouped_plans(x, w, bias=bias, activation=activation)[:6]:
        y = tessera.grouped_mm(x, w, group_offs(torch, SIZES), bias=bias, activation=activation, plan=p)
        _check_groups(torch, y, want, SIZES, BF16_BOUND, p.name)


def _dequantize_rows(torch, q, factors, rows_per_factor):
    """q (rows x K, FP8) times its factors, indexed (row block, K block), in float64."""
    f = factors.repeat_interleave(rows_per_factor, 0)[:q.shape[0]].repeat_interleave(128, 1)[:, :q.shape[1]]
    return q.double() * f.double()


@needs_gpu
@pytest.mark.parametrize("activation", ["relu", "gelu", "silu"])
def test_grouped_fp8_and_masked_match_float64(torch, activation):
    gen = torch.Generator(device="cuda").manual_seed(9)
    g, n, k = len(SIZES), 320, 1152
    qx, sx = tessera.quantize_fp8(_inputs(torch, gen, sum(SIZES), k), "1x128")
    qw, sw = zip(*(tessera.quantize_fp8(_inputs(torch, gen, n, k), "128x128") for _ in range(g)))
    qw, sw = torch.stack(qw), torch.stack(sw)
    bias = torch.randn(g, n, device="cuda", generator=gen)
    y = tessera.grouped_mm(qx, qw, group_offs(torch, SIZES), scale_x=sx, scale_w=sw, bias=bias, activation=activation)
    xd = _dequantize_rows(torch, qx, sx, 1)
    _check_groups(torch, y, lambda gi, r, s: _activate(
        torch, xd[r:r + s] @ _dequantize_rows(torch, qw[gi], sw[gi], 128).T + bias[gi].double(), activation),
        SIZES, FP8_BOUND, "fp8")
    counts, m_max = [3, 0, 128, 1, 77, 64, 2, 100], 128
    xm = _inputs(torch, gen, g, m_max, k).bfloat16()
    wm = _inputs(torch, gen, g, n, k).bfloat16()
    shared = torch.randn(n, device="cuda", generator=gen).half()
    out = torch.full((g, m_max, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    tessera.grouped_mm_masked(xm, wm, torch.tensor(counts, dtype=torch.int32, device="cuda"), 64, out, bias=shared,
                              activation=activation)
    for gi, c in enumerate(counts):
        if c:
            want = _activate(torch, xm[gi, :c].double() @ wm[gi].double().T + shared.double(), activation)
            _close(torch, out[gi, :c], want, BF16_BOUND, f"masked group {gi}")
        assert torch.isnan(out[gi, c:].float()).all(), f"masked group {gi}: rows past masked_m were written"


@needs_gpu
def test_bias_gradients_match_float64(torch):
    gen = torch.Generator(device="cuda").manual_seed(3)
    a = torch.randn(3, 96, 200, device="cuda", generator=gen).bfloat16().requires_grad_()
    b = torch.randn(200, 136, device="cuda", generator=gen).bfloat16().requires_grad_()
    bias = torch.randn(136, device="cuda", generator=gen).requires_grad_()
    y = torch.ops.tessera.gemm(a, b, bias=bias, out_dtype=torch.float32)
    grad = torch.randn_like(y)
    da, db, dbias = torch.autograd.grad(y, (a, b, bias), grad)
    a64, b64 = a.detach().double().requires_grad_(), b.detach().double().requires_grad_()
    bias64 = bias.detach().double().requires_grad_()
    want = torch.autograd.grad(a64 @ b64 + bias64, (a64, b64, bias64), grad.double())
    for got, ref in zip((da, db, dbias), want):
        assert (got.double() - ref).norm() / ref.norm() < 1e-2
    assert dbias.dtype == torch.float32 and dbias.shape == (136,)
    for act in ("relu", "gelu", "gelu_tanh", "silu"):  # through a fused activation (the values before it recomputed)
        y = torch.ops.tessera.gemm(a, b, bias=bias, activation=act, out_dtype=torch.float32)
        da, db, dbias = torch.autograd.grad(y, (a, b, bias), grad)
        want = torch.autograd.grad(_activate(torch, a64 @ b64 + bias64, act), (a64, b64, bias64), grad.double())
        for got, ref in zip((da, db, dbias), want):
            assert (got.double() - ref).norm() / ref.norm() < 1e-2, act
    # grouped: a bias per expert gets its own rows' sum; rows past offs[-1] give none
    x = torch.randn(300, 128, device="cuda", generator=gen).bfloat16().requires_grad_()
    w = torch.randn(4, 256, 128, device="cuda", generator=gen).bfloat16()
    gbias = torch.randn(4, 256, device="cuda", generator=gen).bfloat16().requires_grad_()
    ends = [50, 120, 120, 280]
    y = torch.ops.tessera.grouped_mm(x, w, torch.tensor(ends, dtype=torch.int32, device="cuda"), bias=gbias)
    grad = torch.randn_like(y)
    (dgb,) = torch.autograd.grad(y, (gbias,), grad)
    want = torch.stack([grad[lo:hi].double().sum(0) for lo, hi in zip([0] + ends[:-1], ends)])
    assert dgb.dtype == torch.bfloat16 and (dgb.double() - want).norm() / want.norm() < 1e-2
    assert torch.count_nonzero(dgb[2]) == 0  # the expert without rows
    # and through a fused activation: x's, w's and the bias's gradients against float64 (owned rows)
    w.requires_grad_()
    offs = torch.tensor(ends, dtype=torch.int32, device="cuda")
    x64, w64, gb64 = (t.detach().double().requires_grad_() for t in (x, w, gbias))
    for act in ("gelu", "silu"):
        y = torch.ops.tessera.grouped_mm(x, w, offs, bias=gbias, activation=act, out_dtype=torch.float32)
        grad = torch.randn_like(y)
        grad[ends[-1]:] = 0  # rows no group owns: undefined in y
        got = torch.autograd.grad(y, (x, w, gbias), grad)
        y64 = torch.cat([x64[lo:hi] @ w64[e].T + gb64[e] for e, (lo, hi) in enumerate(zip([0] + ends[:-1], ends))])
        want = torch.autograd.grad(_activate(torch, y64, act), (x64, w64, gb64), grad[:ends[-1]].double())
        assert torch.count_nonzero(got[0][ends[-1]:]) == 0, act
        for gt, ref in zip((got[0][:ends[-1]], got[1], got[2]), (want[0][:ends[-1]], want[1], want[2])):
            assert (gt.double() - ref).norm() / ref.norm() < 1e-2, act


# ---- gated activations (gate="interleaved") -----------------------------------------------------

def test_gate_names_and_limits():
    assert epilogue.gate_code(None) == epilogue.gate_code("none") == 0
    assert epilogue.gate_code("interleaved") == 1
    for bad in ("Interleaved", "swiglu", "", 1):
        with pytest.raises(tessera.InvalidValueError, match=r"gate=.*None \(or 'none': no gate\) or 'interleaved'"):
            epilogue.gate_code(bad)
    assert epilogue.check_gate("interleaved", 7, 96) == (1, 7.0)
    assert epilogue.check_gate(None, 0.0, 95) == (0, 0.0)  # N is free without a gate
    for bad in (-1.0, float("nan"), float("inf"), -float("inf"), 1e39):
        with pytest.raises(tessera.InvalidValueError, match=r"gate_limit=.*: must be finite and >= 0 \(0: no clamp\)"):
            epilogue.check_gate("interleaved", bad, 96)
    with pytest.raises(tessera.InvalidValueError, match="gate_limit='7': expected a number"):
        epilogue.check_gate("interleaved", "7", 96)
    with pytest.raises(tessera.InvalidValueError, match="gate_limit=7.0 clamps a gate's inputs: it needs gate="):
        epilogue.check_gate(None, 7.0, 96)
    with pytest.raises(tessera.InvalidValueError, match=r"pairs the product's columns \(gate, up\), so N \(b's "
                                                        r"columns\) must be even; N=95"):
        epilogue.check_gate("interleaved", 0.0, 95)


def _gated_problem(m, n, k, batch=1):
    """_bf16_problem with out M x N/2."""
    a, b, _ = _bf16_problem(m, n, k, batch)
    ab = (batch,) if batch > 1 else ()
    h = n // 2
    out = tessera.from_parts(0x300000, DType.BF16, ab + (m, h), ((m * h,) if batch > 1 else ()) + (h, 1), ("cuda", 0))
    return a, b, out


def _matrix(shape, dtype=DType.BF16, device=("cuda", 0)):
    strides = packed_strides(shape)
    return tessera.from_parts(0x500000, dtype, shape, strides, device)


@pytest.mark.parametrize("n,kwargs,match", [
    (127, {}, r"gate='interleaved' pairs the product's columns \(gate, up\), so N \(b's columns\) must be even; N=127"),
    (128, dict(gate="swiglu"), r"gate='swiglu': None \(or 'none': no gate\) or 'interleaved'"),
    (128, dict(gate_limit=-1.0), r"gate_limit=-1.0: must be finite and >= 0"),
    (128, dict(gate_limit=float("nan")), r"gate_limit=nan: must be finite and >= 0"),
    (128, dict(gate=None, gate_limit=7.0), r"gate_limit=7.0 clamps a gate's inputs: it needs gate='interleaved'"),
    (128, dict(beta=1.0), r"beta=1.0 with gate='interleaved': a gated epilogue reads no C"),
    (128, dict(c=_matrix((64, 128))), r"c with gate='interleaved': a gated epilogue reads no C"),
    (128, dict(out=_matrix((64, 128))), r"out: 64 x 128; with gate='interleaved' it must be M x N/2 = 64 x 64 "
                                        r"\(b's N=128 columns are \(gate, up\) pairs\)"),
    (128, dict(residual=_matrix((64, 128))), r"residual: 64 x 128; it must be M x N/2 = 64 x 64, as out with "
                                             r"gate='interleaved'"),
    (128, dict(bias=FakeBias((64,))), r"bias: expected shape \(128,\) or \(1, 128\) \(one value per column of the "
                                      r"product \(gate and up interleaved\), N=128"),
    (128, dict(bias=FakeBias((128,)), bias_along="rows"), r"bias: expected shape \(64,\) or \(1, 64\)"),
])
def test_gemm_gate_refused_before_the_call(n, kwargs, match):
    a, b, out = _gated_problem(64, n, 256)
    kwargs = {"gate": "interleaved", "out": out, **kwargs}
    for call in (tessera.gemm, tessera.gemm_plans, tessera.gemm_workspace_size):
        with pytest.raises(tessera.InvalidValueError, match=match):
            call(a, b, handle=_NoDevice(), **kwargs)


def test_gemm_gate_fitting_problems_reach_the_device():
    a, b, out = _gated_problem(64, 128, 256)
    for kwargs in (dict(), dict(gate_limit=7), dict(bias=FakeBias((128,)), activation="silu"),
                   dict(bias=FakeBias((64,), dtype="torch.float32"), bias_along="rows", activation="gelu"),
                   dict(residual=_matrix((64, 64), DType.F32), activation="relu", gate_limit=0.5),
                   dict(residual=out), dict(alpha=0.5, beta=0.0)):
        for call in (tessera.gemm, tessera.gemm_plans, tessera.gemm_workspace_size):
            with pytest.raises(AssertionError, match="reached the device"):
                call(a, b, out, handle=_NoDevice(), gate="interleaved", **kwargs)
    a3, b, out3 = _gated_problem(64, 128, 256, batch=3)  # batches: one bias per batch, a residual per batch
    with pytest.raises(AssertionError, match="reached the device"):
        tessera.gemm(a3, b, out3, handle=_NoDevice(), gate="interleaved", bias=FakeBias((3, 128)),
                     residual=_matrix((3, 64, 64)))
    with pytest.raises(tessera.InvalidValueError, match="residual: 64 x 128; it must be M x N/2 = 64 x 64"):
        tessera.gemm(a3, b, out3, handle=_NoDevice(), gate="interleaved", residual=_matrix((3, 64, 128)))


def test_grouped_gate_refused_before_the_call():
    g, m, n, k = 4, 100, 256, 512
    x = tessera.from_parts(0x100000, DType.BF16, (m, k), (k, 1), ("cuda", 0))
    w = tessera.from_parts(0x200000, DType.BF16, (g, n, k), (n * k, k, 1), ("cuda", 0))
    out = tessera.from_parts(0x300000, DType.BF16, (m, n // 2), (n // 2, 1), ("cuda", 0))
    call = lambda **kw: tessera.grouped_mm(x, w, None, handle=_NoDevice(), **{"out": out, "gate": "interleaved",  # noqa
                                                                                **kw})
    with pytest.raises(tessera.InvalidValueError, match=r"out: 100 x 256; with gate='interleaved' each of its "
                                                        r"matrices must be total_M x N/2 = 100 x 128"):
        call(out=tessera.from_parts(0x300000, DType.BF16, (m, n), (n, 1), ("cuda", 0)))
    with pytest.raises(tessera.InvalidValueError, match="gate='glu'"):
        call(gate="glu")
    with pytest.raises(tessera.InvalidValueError, match="gate_limit=-0.5: must be finite and >= 0"):
        call(gate_limit=-0.5)
    with pytest.raises(tessera.InvalidValueError, match=r"bias: expected shape \(256,\) or \(1, 256\) or \(4, 256\) "
                                                        r"\(one value per product column \(gate and up interleaved\)"):
        call(bias=FakeBias((128,)))
    w_odd = tessera.from_parts(0x200000, DType.BF16, (g, 255, k), (255 * k, k, 1), ("cuda", 0))
    with pytest.raises(tessera.InvalidValueError, match="must be even; N=255"):
        tessera.grouped_mm(x, w_odd, None, out, handle=_NoDevice(), gate="interleaved")
    for kw in (dict(), dict(gate_limit=7.0, activation="silu", bias=FakeBias((g, n)))):
        with pytest.raises(AssertionError, match="reached the device"):
            call(**kw)
    xm = tessera.from_parts(0x100000, DType.BF16, (g, 64, k), (64 * k, k, 1), ("cuda", 0))
    outm = tessera.from_parts(0x300000, DType.BF16, (g, 64, n), (64 * n, n, 1), ("cuda", 0))
    with pytest.raises(tessera.InvalidValueError, match="must be M_max x N/2 = 64 x 128"):
        tessera.grouped_mm_masked(xm, w, None, 32, outm, handle=_NoDevice(), gate="interleaved")
    with pytest.raises(tessera.InvalidValueError, match="gate='up'"):  # the plan queries check it too
        tessera.grouped_plans(x, w, handle=_NoDevice(), gate="up")


def test_ops_fakes_with_a_gate():
    torch = pytest.importorskip("torch")
    bf16 = torch.bfloat16
    with _fake_mode():
        a, b = _fake_operands(torch)
        y = torch.ops.tessera.gemm(a, b, bias=torch.empty(96, device="cuda", dtype=bf16), activation="silu",
                                   gate="interleaved", gate_limit=7.0)
        assert tuple(y.shape) == (64, 48) and y.dtype == bf16
        a3 = torch.empty(3, 64, 256, device="cuda", dtype=bf16)
        y = torch.ops.tessera.gemm(a3, b, gate="interleaved", residual=torch.empty(64, 48, device="cuda", dtype=bf16))
        assert tuple(y.shape) == (3, 64, 48)
        with pytest.raises(tessera.InvalidValueError, match=r"residual: expected shape \(64, 48\)"):
            torch.ops.tessera.gemm(a, b, gate="interleaved", residual=torch.empty(64, 96, device="cuda", dtype=bf16))
        with pytest.raises(tessera.InvalidValueError, match="must be even; N=95"):
            torch.ops.tessera.gemm(a, torch.empty(256, 95, device="cuda", dtype=bf16), gate="interleaved")
        with pytest.raises(tessera.InvalidValueError, match="beta=1.0 with gate='interleaved'"):
            torch.ops.tessera.gemm(a, b, c=torch.empty(64, 48, device="cuda", dtype=bf16), beta=1.0,
                                   gate="interleaved")
        with pytest.raises(tessera.InvalidValueError, match="gate='swiglu'"):
            torch.ops.tessera.gemm(a, b, gate="swiglu")
        with pytest.raises(tessera.InvalidValueError, match="gate_limit=-1.0"):
            torch.ops.tessera.gemm(a, b, gate="interleaved", gate_limit=-1.0)
        x = torch.empty(300, 128, device="cuda", dtype=bf16)
        w = torch.empty(4, 256, 128, device="cuda", dtype=bf16)
        offs = torch.empty(4, device="cuda", dtype=torch.int32)
        y = torch.ops.tessera.grouped_mm(x, w, offs, bias=torch.empty(4, 256, device="cuda"), activation="silu",
                                         gate="interleaved")
        assert tuple(y.shape) == (300, 128)
        assert tuple(torch.ops.tessera.grouped_mm(x[:0], w, offs, gate="interleaved").shape) == (0, 128)
        with pytest.raises(tessera.InvalidValueError, match="gate='fused'"):
            torch.ops.tessera.grouped_mm(x[:0], w, offs, gate="fused")  # even with no tokens
        xm = torch.empty(4, 64, 128, device="cuda", dtype=bf16)
        y = torch.ops.tessera.grouped_mm_masked(xm, w, offs, 32, gate="interleaved", gate_limit=1.5)
        assert tuple(y.shape) == (4, 64, 128)


def test_gate_has_no_gradient():
    torch = pytest.importorskip("torch")
    bf16 = torch.bfloat16
    needs = (True, True) + (False,) * 15
    with _fake_mode():
        a = torch.empty(64, 256, device="cuda", dtype=bf16)
        b = torch.empty(256, 96, device="cuda", dtype=bf16)
        for act in ("none", "silu"):
            ctx = _backward_ctx((a, b, None, None), needs, alpha=1.0, beta=0.0, c_dtype=None, c_shape=None,
                                scaled=False,
                                activation=act, bias_dtype=None, bias_shape=None, bias_along="columns",
                                gate="interleaved")
            with pytest.raises(NotImplementedError, match=r"gemm: a gated epilogue \(gate='interleaved'\) has no "
                                                          "autograd"):
                tessera.ops._gemm_backward(ctx, torch.empty(64, 48, device="cuda", dtype=bf16))
        x = torch.empty(300, 128, device="cuda", dtype=bf16)
        w = torch.empty(4, 256, 128, device="cuda", dtype=bf16)
        offs = torch.empty(4, device="cuda", dtype=torch.int32)
        ctx = _backward_ctx((x, w, offs, None), (True, True) + (False,) * 12, scaled=False, w_layout="nk",
                            activation="silu", bias_dtype=None, bias_shape=None, gate="interleaved")
        with pytest.raises(NotImplementedError, match="grouped_mm: a gated epilogue"):
            tessera.ops._grouped_backward(ctx, torch.empty(300, 128, device="cuda", dtype=bf16))


def _glu(torch, v, activation, limit=0.0):
    """The float64 reference of a gated activation over v's interleaved (gate, up) columns."""
    g, u = v[..., 0::2], v[..., 1::2]
    if limit > 0:
        g, u = g.clamp(max=limit), u.clamp(-limit, limit)
    return _activate(torch, g, activation) * u


# N/2 a multiple of 8 (D's rows whole 16 bytes), M = 1 (decode sizes), ragged M.
GATED_SHAPES = [(1, 208, 256), (7, 336, 512), (129, 912, 1024), (1000, 1168, 2048)]


@needs_gpu
@pytest.mark.parametrize("m,n,k", GATED_SHAPES)
@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("bias_along", [None, "columns", "rows"])
@pytest.mark.parametrize("limit", [0.0, 0.75])
def test_dense_gated_matches_float64(torch, m, n, k, activation, bias_along, limit):
    g = torch.Generator(device="cuda").manual_seed(m + n + k)
    a = _inputs(torch, g, m, k).bfloat16()
    w = _inputs(torch, g, n, k).bfloat16()
    bias = None if bias_along is None else torch.randn(n if bias_along == "columns" else m, device="cuda",
                                                       generator=g).bfloat16()
    d = tessera.gemm(a, w.T, bias=bias, bias_along=bias_along or "columns", activation=activation,
                     gate="interleaved", gate_limit=limit)
    assert d.shape == (m, n // 2) and d.dtype == torch.bfloat16
    v = a.double() @ w.double().T
    if bias is not None:
        v = v + (bias.double() if bias_along == "columns" else bias.double()[:, None])
    _close(torch, d, _glu(torch, v, activation, limit), BF16_BOUND, f"{activation} bias {bias_along} limit {limit}")


@needs_gpu
@pytest.mark.parametrize("activation", ["none", "gelu_tanh", "silu"])
def test_dense_gated_plans_batches_residual(torch, activation):
    """Every plan of a gated problem; batches with a bias per batch; alpha; f32 D; a residual
    M x N/2 of each type, and D itself as the residual."""
    g = torch.Generator(device="cuda").manual_seed(17)
    m, n, k = 96, 400, 384
    a = _inputs(torch, g, 3, m, k).bfloat16()
    w = _inputs(torch, g, n, k).bfloat16()
    ref = a.double() @ w.double().T
    bias = torch.randn(3, n, device="cuda", generator=g)
    d = tessera.gemm(a, w.T, alpha=0.5, bias=bias, activation=activation, gate="interleaved", out_dtype="f32")
    assert d.shape == (3, m, n // 2) and d.dtype == torch.float32
    _close(torch, d, _glu(torch, 0.5 * ref + bias.double()[:, None, :], activation), F32_BOUND, "batches")
    want = _glu(torch, ref[0] + bias[0].double(), activation, 1.0)
    plans = tessera.gemm_plans(a[0], w.T, bias=bias[0], activation=activation, gate="interleaved", gate_limit=1.0,
                               limit=64)
    assert plans
    for p in plans:
        _close(torch, tessera.gemm(a[0], w.T, bias=bias[0], activation=activation, gate="interleaved",
                                   gate_limit=1.0, plan=p), want, BF16_BOUND, p.name)
    for rtype in ["bfloat16", "float16", "float32"]:
        r = torch.randn(m, n // 2, device="cuda", generator=g).to(getattr(torch, rtype))
        d = tessera.gemm(a[0], w.T, bias=bias[0], activation=activation, gate="interleaved", gate_limit=1.0,
                         residual=r)
        _close(torch, d, want + r.double(), BF16_BOUND, f"residual {rtype}")
    out = torch.randn(m, n // 2, device="cuda", generator=g).bfloat16()
    expected = want + out.double()
    tessera.gemm(a[0], w.T, out, bias=bias[0], activation=activation, gate="interleaved", gate_limit=1.0, residual=out)
    _close(torch, out, expected, BF16_BOUND, "residual is out")


@needs_gpu
@pytest.mark.parametrize("recipes", [("1x128", "128x128"), ("tensor", "tensor")])
@pytest.mark.parametrize("activation", ["gelu", "silu"])
def test_dense_fp8_gated_matches_float64(torch, recipes, activation):
    m, n, k = 300, 528, 1024
    g = torch.Generator(device="cuda").manual_seed(23)
    qa, sa = tessera.quantize_fp8(_inputs(torch, g, m, k), recipes[0])
    qw, sw = tessera.quantize_fp8(_inputs(torch, g, n, k), recipes[1])
    bias = torch.randn(n, device="cuda", generator=g).bfloat16()
    d = tessera.gemm(qa, qw.T, scale_a=sa, scale_b=sw, scale_recipe_a=recipes[0], scale_recipe_b=recipes[1],
                     bias=bias, activation=activation, gate="interleaved", gate_limit=2.0)
    assert d.dtype == torch.bfloat16 and d.shape == (m, n // 2)
    v = dequantize(torch, qa, sa, recipes[0], torch.float64) @ \
        dequantize(torch, qw, sw, recipes[1], torch.float64).T + bias.double()
    _close(torch, d, _glu(torch, v, activation, 2.0), FP8_BOUND, f"{recipes} {activation}")


@needs_gpu
def test_prepared_calls_key_on_the_gate(torch):
    """A gated call of one layout is prepared once; another gate_limit, or no gate, is prepared anew
    (and gives its own shape)."""
    from tessera import call_cache
    call_cache.clear()
    g = torch.Generator(device="cuda").manual_seed(29)
    a, w = _inputs(torch, g, 64, 256).bfloat16(), _inputs(torch, g, 208, 256).bfloat16()
    ref = a.double() @ w.double().T
    for _ in range(3):
        _close(torch, tessera.gemm(a, w.T, activation="silu", gate="interleaved"), _glu(torch, ref, "silu"),
               BF16_BOUND, "prepared")
    assert len(call_cache._entries) == 1
    _close(torch, tessera.gemm(a, w.T, activation="silu", gate="interleaved", gate_limit=0.5),
           _glu(torch, ref, "silu", 0.5), BF16_BOUND, "limit")
    d = tessera.gemm(a, w.T, activation="silu")
    assert d.shape == (64, 208)
    _close(torch, d, _activate(torch, ref, "silu"), BF16_BOUND, "no gate")
    assert len(call_cache._entries) == 3


@needs_gpu
def test_ops_gemm_gated(torch):
    g = torch.Generator(device="cuda").manual_seed(31)
    a = _inputs(torch, g, 64, 256).bfloat16().requires_grad_()
    w = _inputs(torch, g, 208, 256).bfloat16()
    d = torch.ops.tessera.gemm(a, w.T, activation="silu", gate="interleaved", gate_limit=1.0)
    _close(torch, d, _glu(torch, a.double() @ w.double().T, "silu", 1.0), BF16_BOUND, "value")
    with pytest.raises(NotImplementedError, match="a gated epilogue"):
        d.sum().backward()


@needs_gpu
@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("shared", [False, True])
@pytest.mark.parametrize("limit", [0.0, 0.75])
def test_grouped_gated_matches_float64(torch, activation, shared, limit):
    n = 208
    x, w, bias, per = _grouped_bias_case(torch, 37, n, shared)
    want = lambda gi, r, s: _glu(torch, x[r:r + s].double() @ w[gi].double().T + per(gi), activation, limit)  # noqa
    y = tessera.grouped_mm(x, w, group_offs(torch, SIZES), bias=bias, activation=activation, gate="interleaved",
                           gate_limit=limit)
    assert y.shape == (sum(SIZES), n // 2)
    _check_groups(torch, y, want, SIZES, BF16_BOUND, activation)
    for p in tessera.grouped_plans(x, w, bias=bias, activation=activation, gate="interleaved", gate_limit=limit)[:6]:
        y = tessera.grouped_mm(x, w, group_offs(torch, SIZES), bias=bias, activation=activation, gate="interleaved",
                               gate_limit=limit, plan=p)
        _check_groups(torch, y, want, SIZES, BF16_BOUND, p.name)


@needs_gpu
def test_grouped_masked_gated_matches_float64(torch):
    gen = torch.Generator(device="cuda").manual_seed(41)
    counts, m_max, n, k = [3, 0, 128, 1, 77, 64, 2, 100], 128, 336, 512
    g = len(counts)
    xm = _inputs(torch, gen, g, m_max, k).bfloat16()
    wm = _inputs(torch, gen, g, n, k).bfloat16()
    bias = torch.randn(n, device="cuda", generator=gen).half()
    out = torch.full((g, m_max, n // 2), float("nan"), device="cuda", dtype=torch.bfloat16)
    tessera.grouped_mm_masked(xm, wm, torch.tensor(counts, dtype=torch.int32, device="cuda"), 64, out, bias=bias,
                              activation="silu", gate="interleaved", gate_limit=1.0)
    for gi, c in enumerate(counts):
        if c:
            want = _glu(torch, xm[gi, :c].double() @ wm[gi].double().T + bias.double(), "silu", 1.0)
            _close(torch, out[gi, :c], want, BF16_BOUND, f"masked group {gi}")
        assert torch.isnan(out[gi, c:].float()).all(), f"masked group {gi}: rows past masked_m were written"


# ---- an FP8 out (out_dtype="e4m3"/"e5m2": out_scale, amax) ------------------------------------

def _fp8_out_close(torch, got, want, largest, what):
    """Each element of an FP8 out (decoded) within half an ulp of `want` (2^-4 of it for e4m3's 3
    mantissa bits, plus 2^-7 of slack for the float32 sums) or within 2^-9 absolute (e4m3's
    smallest subnormal), saturated where |want| passes the type's largest."""
    want = want.double().clamp(-largest, largest)
    err = (got.double() - want).abs()
    bound = 2.0 ** -4 * (1 + 2.0 ** -3) * want.abs() + 2.0 ** -9
    bad = (err > bound).sum().item()
    assert bad == 0, f"{what}: {bad} elements off by more than half an FP8 ulp (worst {err.max().item():.4g})"


@needs_gpu
@pytest.mark.parametrize("bias", [False, True])
def test_fp8_out_per_tensor(torch, bias):
    """D = fp8(v * scale) with v after the bias and GELU, the amax of v beside it; every plan."""
    gen = torch.Generator(device="cuda").manual_seed(51)
    a = _inputs(torch, gen, 300, 512).bfloat16()
    w = _inputs(torch, gen, 640, 512).bfloat16()
    b = torch.randn(640, device="cuda", generator=gen).bfloat16() if bias else None
    v = a.double() @ w.double().T + (b.double() if bias else 0)
    v = _activate(torch, v, "gelu")
    scale = torch.tensor([0.5], device="cuda")
    for plan in [None] + tessera.gemm_plans(a, w.T, out_dtype="e4m3", bias=b, activation="gelu")[:8]:
        amax = torch.full((1,), 7.0, device="cuda")
        out = tessera.gemm(a, w.T, out_dtype="e4m3", bias=b, activation="gelu", out_scale=scale, amax=amax,
                           plan=plan)
        what = plan.name if plan is not None else "heuristic"
        assert out.dtype == torch.float8_e4m3fn and out.shape == (300, 640)
        assert abs(amax.item() - v.abs().max().item()) <= 1e-3 * v.abs().max().item(), what
        _fp8_out_close(torch, out.float(), v * 0.5, 448.0, what)


@needs_gpu
@pytest.mark.parametrize("out_dtype,largest", [("e4m3", 448.0), ("e5m2", 57344.0)])
def test_fp8_out_1x128_feeds_the_next_gemm(torch, out_dtype, largest):
    """out_scale="1x128": a factor per row and 128 columns (the last block cut short) in the layout
    a 1x128 scale_a reads; out and its factors then multiply as the next GEMM's A."""
    gen = torch.Generator(device="cuda").manual_seed(52)
    m, n, k = 200, 576, 384
    a = _inputs(torch, gen, m, k).bfloat16()
    w = _inputs(torch, gen, n, k).bfloat16()
    v = a.double() @ w.double().T
    out, f = tessera.gemm(a, w.T, out_dtype=out_dtype, out_scale="1x128")
    assert f.shape == (m, 5) and f.stride() == (1, m) and f.dtype == torch.float32
    padded = torch.zeros(m, 5 * 128, dtype=torch.float64, device="cuda")
    padded[:, :n] = v.abs()
    want_f = padded.reshape(m, 5, 128).amax(-1) / largest
    assert ((f.double() - want_f).abs() <= 1e-3 * want_f).all()
    deq = out.float().double()
    per_col = f.double().repeat_interleave(128, dim=1)[:, :n]
    if out_dtype == "e4m3":
        _fp8_out_close(torch, deq, v / per_col, largest, "1x128 e4m3")
    # the next GEMM: out (M x N, 1x128 factors f) times an FP8 weight with 128x128 factors
    w2 = _inputs(torch, gen, 256, n).bfloat16()
    q2, s2 = tessera.quantize_fp8(w2, recipe="128x128")
    y = tessera.gemm(out, q2.T, scale_a=f, scale_recipe_a="1x128", scale_b=s2, scale_recipe_b="128x128")
    ref = (deq * per_col) @ (q2.double() * s2.double().repeat_interleave(128, 0).repeat_interleave(128, 1)
                             [:256, :n]).T
    assert torch.allclose(y.double(), ref, rtol=2e-2, atol=1e-2 * ref.abs().max().item())
