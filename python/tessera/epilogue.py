"""Fused epilogues (tess_epilogue_desc): a bias vector and an activation applied to a GEMM's
result in float32, in this order:

    v = alpha * sum + beta * C;  v += bias;  D = activation(v)

Activations by name: "none" (or None), "relu", "gelu" (erf, PyTorch's F.gelu default),
"gelu_tanh" (the tanh approximation, F.gelu(approximate="tanh"), cuBLASLt's GELU), "silu".

A gate (tess_gate), gate="interleaved": the product's N columns are (gate, up) pairs, column 2j
gate_j and 2j + 1 up_j, and the output has N / 2 columns, activation(gate_j) * up_j after the
bias (N values) is added to both: SwiGLU with "silu", GeGLU with the GELUs, ReGLU with "relu", a
bilinear GLU with none. gate_limit > 0 clamps first: gate_j to at most L, up_j to [-L, L].

The C library reads a bias through its pointer and the length the descriptor implies, so every
bias tensor is matched here, before anything touches the device, against the shapes the problem
allows: its type (bf16, f16, f32), its device, its shape and that it is contiguous. The checks
read only a tensor's shape, strides, dtype and device, so they serve the fake implementations of
tessera.ops too, and run without a GPU.
"""
import collections

from .dtypes import DType
from .errors import InvalidValueError

# tess_bias_mode values
BIAS_NONE, BIAS_COLUMNS, BIAS_ROWS = 0, 1, 2

# tess_activation values by name (tessera.gemm's activation=).
ACTIVATIONS = {"none": 0, "relu": 1, "gelu_tanh": 2, "gelu": 3, "gelu_erf": 3, "silu": 4}

# bias_along= names (tessera.gemm's) and their bias modes.
BIAS_ALONG = {"columns": BIAS_COLUMNS, "rows": BIAS_ROWS}

# The bias types the kernels read, by the str() of a torch dtype.
_BIAS_DTYPES = {"torch.bfloat16": DType.BF16, "torch.float16": DType.F16, "torch.float32": DType.F32}

_ACTIVATION_LIST = "'none', 'relu', 'gelu' (erf, as F.gelu), 'gelu_tanh' (F.gelu(approximate='tanh')), 'silu'"

# tess_gate values by name (gate=; None is "none").
GATE_NONE, GATE_INTERLEAVED = 0, 1
GATES = {"none": GATE_NONE, "interleaved": GATE_INTERLEAVED}

# The largest finite float32 (gate_limit travels as one).
_FLOAT32_MAX = 3.4028234663852886e38


class Epilogue(collections.namedtuple("Epilogue", "bias bias_type bias_batch_stride activation")):
    """A tess_epilogue_desc as plain integers (modes, DType, a stride in elements)."""

    def desc(self):
        """The ctypes tess_epilogue_desc (EpilogueDescStruct) of this epilogue."""
        from ._lib import EpilogueDescStruct
        d = EpilogueDescStruct()
        d.bias, d.bias_type, d.bias_batch_stride, d.activation = (int(self.bias), int(self.bias_type),
                                                                   int(self.bias_batch_stride), int(self.activation))
        return d


NONE = Epilogue(BIAS_NONE, DType.F32, 0, 0)


def activation_code(activation):
    """The tess_activation value of an activation name (None: "none"); InvalidValueError
    listing the names otherwise."""
    if activation is None:
        return 0
    code = ACTIVATIONS.get(activation) if isinstance(activation, str) else None
    if code is None:
        raise InvalidValueError(f"activation={activation!r}: one of {_ACTIVATION_LIST}")
    return code


def gate_code(gate):
    """The tess_gate value of a gate name (None: "none"); InvalidValueError listing the names
    otherwise."""
    if gate is None:
        return GATE_NONE
    code = GATES.get(gate) if isinstance(gate, str) else None
    if code is None:
        raise InvalidValueError(f"gate={gate!r}: None (or 'none': no gate) or 'interleaved' (the product's columns "
                                "2j and 2j+1 are gate_j and up_j; the output has N/2 columns)")
    return code


def check_gate(gate, gate_limit, n):
    """(tess_gate value, gate_limit as a float) of a problem whose product has N = n columns:
    the name known, N even with a gate, gate_limit a finite float32 >= 0, and nonzero only with
    a gate."""
    code = gate_code(gate)
    try:
        if isinstance(gate_limit, (str, bytes)):
            raise TypeError
        limit = float(gate_limit)
    except (TypeError, ValueError):
        raise InvalidValueError(f"gate_limit={gate_limit!r}: expected a number (0: no clamp)") from None
    if not (0.0 <= limit <= _FLOAT32_MAX):
        raise InvalidValueError(f"gate_limit={gate_limit!r}: must be finite and >= 0 (0: no clamp)")
    if code == GATE_NONE:
        if limit != 0.0:
            raise InvalidValueError(f"gate_limit={gate_limit!r} clamps a gate's inputs: it needs gate='interleaved'")
        return code, 0.0
    if n % 2:
        raise InvalidValueError(f"gate={gate!r} pairs the product's columns (gate, up), so N (b's columns) must be "
                                f"even; N={n}")
    return code, limit


def check_gate_reads_no_c(gate, beta, c):
    """A gated problem reads no C: InvalidValueError for a nonzero beta or a given c."""
    if float(beta) != 0.0:
        raise InvalidValueError(f"beta={beta} with gate={gate!r}: a gated epilogue reads no C (pass beta=0; a C "
                                "can be added after the gate as residual=)")
    if c is not None:
        raise InvalidValueError(f"c with gate={gate!r}: a gated epilogue reads no C (it can be added after the gate "
                                "as residual=)")


def bias_mode(bias_along):
    """The tess_bias_mode of a bias_along name: "columns" (one value per column of D, length
    N: a linear layer's bias) or "rows" (one per row, length M)."""
    mode = BIAS_ALONG.get(bias_along) if isinstance(bias_along, str) else None
    if mode is None:
        raise InvalidValueError(f"bias_along={bias_along!r}: 'columns' (a bias of length N, added to every row of "
                                "the output) or 'rows' (a bias of length M, added to every column)")
    return mode


def _fmt(shape):
    return "(" + ", ".join(str(e) for e in shape) + ("," if len(shape) == 1 else "") + ")"


def _device_of(t):
    """("cuda", index) or ("cpu", 0) of a torch-like tensor."""
    d = t.device
    return (d.type, d.index or 0)


def _checked_vector(t, what, shapes, describe, device):
    """The shape of bias tensor t, checked: a torch tensor of bf16, f16 or f32 on CUDA device
    `device`, of one of `shapes`, contiguous. `describe` says what its shapes mean (it ends the
    sentence about a wrong shape). Returns (DType, shape)."""
    if not all(hasattr(t, name) for name in ("shape", "stride", "dtype", "device")):
        raise InvalidValueError(f"{what}: expected a torch.Tensor of bfloat16, float16 or float32 in GPU memory, "
                                f"got {type(t).__name__}")
    dtype = _BIAS_DTYPES.get(str(t.dtype))
    if dtype is None:
        raise InvalidValueError(f"{what}: expected bfloat16, float16 or float32, got {t.dtype}")
    if _device_of(t) != ("cuda", device):
        place = f"cuda:{t.device.index or 0}" if t.device.type == "cuda" else t.device.type
        raise InvalidValueError(f"{what} is on {place}; it must be on the operands' device cuda:{device}")
    shape = tuple(int(e) for e in t.shape)
    if shape not in shapes:
        expected = " or ".join(_fmt(s) for s in shapes)
        raise InvalidValueError(f"{what}: expected shape {expected} ({describe}), got {_fmt(shape)}")
    strides = tuple(int(s) for s in t.stride())
    step = 1
    for extent, stride in reversed(list(zip(shape, strides))):
        if extent > 1 and stride != step:
            raise InvalidValueError(f"{what}: must be contiguous; shape {_fmt(shape)} has strides {_fmt(strides)} "
                                    "(pass bias.contiguous())")
        step *= extent
    return dtype, shape


def dense_epilogue(bias, activation, bias_along, m, n, batch, device, what="bias", gated=False):
    """The Epilogue of a dense GEMM of `batch` M x N products on CUDA device `device`, its bias
    checked: bias_along "columns" takes (N,) or (1, N), one vector for all batches, or
    (batch, N), one per batch; "rows" the same with M. gated: N is the product's width (a gate
    halves the output's)."""
    code = activation_code(activation)
    mode = bias_mode(bias_along)
    if bias is None:
        return Epilogue(BIAS_NONE, DType.F32, 0, code)
    length, name = (n, "N") if mode == BIAS_COLUMNS else (m, "M")
    shapes = [(length,), (1, length)] + ([(batch, length)] if batch > 1 else [])
    per = "column" if mode == BIAS_COLUMNS else "row"
    of = "the product (gate and up interleaved)" if gated and mode == BIAS_COLUMNS else "the output"
    describe = f"one value per {per} of {of}, {name}={length}"
    if batch > 1:
        describe += f"; shared by the batch, or one vector per batch of {batch}"
    shape = tuple(int(e) for e in getattr(bias, "shape", ()) or ())
    if mode == BIAS_COLUMNS and m != n and shape[-1:] == (m,):
        describe += "; a bias per row of the output, of length M, takes bias_along='rows'"
    dtype, shape = _checked_vector(bias, what, shapes, describe, device)
    stride = length if len(shape) == 2 and shape[0] > 1 else 0
    return Epilogue(mode, dtype, stride, code)


def grouped_epilogue(bias, activation, groups, n, device, what="bias", gated=False):
    """The Epilogue of a grouped GEMM of `groups` experts with N product columns, its bias
    checked: (N,) or (1, N), one vector for all groups, or (G, N), one per group (per column
    only: a grouped GEMM's rows are different groups' tokens)."""
    code = activation_code(activation)
    if bias is None:
        return Epilogue(BIAS_NONE, DType.F32, 0, code)
    shapes = [(n,), (1, n)] + ([(groups, n)] if groups > 1 else [])
    column = "product column (gate and up interleaved)" if gated else "output column"
    describe = f"one value per {column}, N={n}, shared by the groups, or one vector per group of {groups}"
    dtype, shape = _checked_vector(bias, what, shapes, describe, device)
    stride = n if len(shape) == 2 and shape[0] > 1 else 0
    return Epilogue(BIAS_COLUMNS, dtype, stride, code)
