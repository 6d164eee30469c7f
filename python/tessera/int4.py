"""4-bit weights (W4A16): a checkpoint's codes packed once, then products with bf16 or f16
activations that stream the 4-bit weight.

    w = tessera.pack_int4(qweight, "awq")                  # AutoAWQ's qweight [K, N/8] int32
    zeros = tessera.unpack_int4_zeros(qzeros, "awq")       # [K/G, N/8] int32 -> [K/G, N] uint8
    y = tessera.w4a16_gemm(x, w, scales, zeros)            # x [M, K] bf16/f16, scales [K/G, N]
    y = tessera.w4a16_gemm_masked(x, w, scales, masked_m)  # experts: x [E, M, K], w [E, N, K/2], ...

The weight W (N x K, N output features) is W[n, k] = (q - z) * s with the code q (0..15) and
the zero point z (0..15) and scale s of (k // G, n), G the group size (64 or 128); without zeros
every zero point is 8 (symmetric codes). GPTQ checkpoints with act-order (g_idx) are not read.
For M <= 16 one kernel streams the packed weight (the decode GEMV) and computes with W exactly:
float32 sums of (q - z) x over each group, times the group's scale. For larger M the weight is
dequantized (dequantize_int4: rounded once to x's type) and multiplied by tessera.gemm.

Formats of the codes (int32 words, eight 4-bit codes each, the i-th in bits 4i..4i+3):
"rows" [N, K/8] (k = 8j + i), "gptq" [K/8, N] (GPTQ's qweight, k = 8j + i), "awq" [K, N/8]
(AutoAWQ's, n = 8j + (0, 2, 4, 6, 1, 3, 5, 7)[i]). The packed weight is a uint8 tensor of
shape (N, K/2) whose bytes are in tessera's own order (tess_pack_int4).
"""
import ctypes

from . import _lib, epilogue
from ._lib import EpilogueDescStruct, TesseraDesc
from .dtypes import DType, as_dtype
from .errors import InvalidValueError, check

FORMATS = {"rows": 0, "gptq": 1, "awq": 2}
MAX_DECODE_M = 16  # the GEMV's tokens (TESS_W4A16_MAX_M)
_AWQ_NIBBLE = (0, 4, 1, 5, 2, 6, 3, 7)  # column 8j + c of an AWQ word lies in nibble _AWQ_NIBBLE[c]


class W4A16DescStruct(ctypes.Structure):
    """tess_w4a16_desc."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("m", ctypes.c_int64), ("n", ctypes.c_int64), ("k", ctypes.c_int64),
                ("group_size", ctypes.c_int64), ("x", TesseraDesc), ("d", TesseraDesc), ("scale_type", ctypes.c_int),
                ("ld_scales", ctypes.c_int64), ("zero_points", ctypes.c_int32), ("ld_zeros", ctypes.c_int64),
                ("epilogue", EpilogueDescStruct), ("groups", ctypes.c_int64), ("w_group_stride", ctypes.c_int64),
                ("scales_group_stride", ctypes.c_int64), ("zeros_group_stride", ctypes.c_int64),
                ("expected_groups", ctypes.c_int64)]


def _tensor(t, what):
    """t: a torch tensor (its shape and type are checked next, its place last, so that every
    refusal of a shape shows on any machine)."""
    if not all(hasattr(t, a) for a in ("shape", "stride", "dtype", "device", "data_ptr")):
        raise InvalidValueError(f"{what}: expected a torch.Tensor, got {type(t).__name__}")


def _out_dtype(x, out_dtype):
    """The W4A16 products' D type: out_dtype (None: x's), refused unless bf16, f16 or f32."""
    import torch
    out_dtype = x.dtype if out_dtype is None else out_dtype
    if out_dtype not in (torch.bfloat16, torch.float16, torch.float32):
        raise InvalidValueError(f"out_dtype {out_dtype}: torch.bfloat16, torch.float16 or torch.float32")
    return out_dtype


def _on_gpu(device, *named):
    """Each (tensor, name) of `named` (None skipped) in the memory of CUDA device `device`."""
    for t, what in named:
        if t is None:
            continue
        if t.device.type != "cuda":
            raise InvalidValueError(f"{what} is in {t.device.type} memory; the 4-bit kernels run on the GPU")
        if (t.device.index or 0) != device:
            raise InvalidValueError(f"{what} is on {t.device}; the other operands on cuda:{device}")


def _format_code(fmt):
    code = FORMATS.get(fmt) if isinstance(fmt, str) else None
    if code is None:
        raise InvalidValueError(f"format={fmt!r}: one of 'rows' ([N, K/8]), 'gptq' ([K/8, N]), 'awq' ([K, N/8])")
    return code


def _weight_shape(qweight, fmt):
    """(n, k) of a weight stored as `fmt`'s int32 words, from qweight's shape."""
    rows, cols = (int(e) for e in qweight.shape)
    return {"rows": (rows, 8 * cols), "gptq": (cols, 8 * rows), "awq": (8 * cols, rows)}[fmt]


def _handle(t, handle):
    from .gemm import _torch_handle
    if handle is not None:
        if (t.device.index or 0) != handle.device:
            raise InvalidValueError(f"the tensors are on {t.device}, the handle on cuda:{handle.device}")
        return handle
    return _torch_handle(t)


def pack_int4(qweight, format="rows", *, handle=None):
    """The packed form (uint8, shape (N, K/2), tessera's byte order) of a 4-bit weight stored as
    `format`'s int32 words: "rows" [N, K/8], "gptq" [K/8, N] or "awq" [K, N/8] (contiguous, in
    GPU memory). N must be a multiple of 16 and K of 64. Done once per weight."""
    import torch
    code = _format_code(format)
    _tensor(qweight, "qweight")
    if qweight.dtype != torch.int32 or qweight.dim() != 2:
        raise InvalidValueError(f"qweight: expected a 2-D int32 tensor of packed codes, got {qweight.dtype} of shape "
                                f"{tuple(qweight.shape)}")
    if not qweight.is_contiguous():
        raise InvalidValueError("qweight: must be contiguous (pass qweight.contiguous())")
    n, k = _weight_shape(qweight, format)
    _on_gpu(qweight.device.index or 0, (qweight, "qweight"))
    packed = torch.empty((n, k // 2), dtype=torch.uint8, device=qweight.device)
    h = _handle(qweight, handle)
    check(_lib.lib().tess_pack_int4(h._h, code, n, k, ctypes.c_void_p(qweight.data_ptr()),
                                    ctypes.c_void_p(packed.data_ptr())))
    return packed


def unpack_int4_zeros(qzeros, format="gptq", *, offset=0):
    """A checkpoint's packed zero points (int32 [K/G, N/8]: "gptq" and "rows" in natural order,
    "awq" in AWQ's) as the uint8 [K/G, N] tensor w4a16_gemm takes; offset is added to each
    (1 for GPTQ's v1 checkpoints, which store z - 1). Plain torch: runs anywhere."""
    import torch
    _format_code(format)
    if qzeros.dtype != torch.int32 or qzeros.dim() != 2:
        raise InvalidValueError(f"qzeros: expected a 2-D int32 tensor, got {qzeros.dtype} of shape "
                                f"{tuple(qzeros.shape)}")
    shifts = torch.arange(0, 32, 4, device=qzeros.device, dtype=torch.int32)
    nibbles = (qzeros.unsqueeze(-1) >> shifts) & 0xF  # [groups, N/8, 8]: nibble i of each word
    if format == "awq":
        nibbles = nibbles[..., list(_AWQ_NIBBLE)]  # column 8j + c from its nibble
    zeros = nibbles.reshape(qzeros.shape[0], -1) + int(offset)
    if int(zeros.min()) < 0 or int(zeros.max()) > 15:
        raise InvalidValueError(f"unpack_int4_zeros: offset={offset} puts zero points outside 0..15")
    return zeros.to(torch.uint8)


def _checked_weight(w, scales, zeros, group_size):
    """(n, k, group, scale DType, ld_scales, ld_zeros) of a packed weight and its scales and
    zero points, each checked against the others (not their device)."""
    import torch
    _tensor(w, "w")
    if w.dtype != torch.uint8 or w.dim() != 2 or not w.is_contiguous():
        raise InvalidValueError(f"w: expected pack_int4's output (a contiguous uint8 tensor of shape (N, K/2)), got "
                                f"{w.dtype} of shape {tuple(w.shape)}")
    n, k = int(w.shape[0]), 2 * int(w.shape[1])
    _tensor(scales, "scales")
    if scales.dim() != 2 or int(scales.shape[1]) != n or (scales.stride(1) != 1 and n > 1):
        raise InvalidValueError(f"scales: expected shape (K/G, N) = (K/G, {n}) with N contiguous (AWQ's and GPTQ's "
                                f"layout), got {tuple(scales.shape)} with strides {tuple(scales.stride())}")
    groups = int(scales.shape[0])
    group = group_size if group_size is not None else (k // groups if groups and k % groups == 0 else 0)
    if group not in (64, 128) or groups * group != k:
        raise InvalidValueError(f"scales: {groups} groups for K={k} make a group of {k / max(groups, 1):g}; the "
                                "4-bit kernels take groups of 64 or 128 k (scales of shape (K/64, N) or (K/128, N))")
    stype = {torch.float32: DType.F32, torch.float16: DType.F16, torch.bfloat16: DType.BF16}.get(scales.dtype)
    if stype is None:
        raise InvalidValueError(f"scales: expected float32, float16 or bfloat16, got {scales.dtype}")
    ld_zeros = 0
    if zeros is not None:
        _tensor(zeros, "zeros")
        if zeros.dtype != torch.uint8 or tuple(zeros.shape) != (groups, n) or (zeros.stride(1) != 1 and n > 1):
            raise InvalidValueError(f"zeros: expected uint8 of shape (K/G, N) = ({groups}, {n}) with N contiguous "
                                    f"(unpack_int4_zeros makes it from a checkpoint's qzeros), got {zeros.dtype} of "
                                    f"shape {tuple(zeros.shape)}")
        ld_zeros = zeros.stride(0) if groups > 1 else n
    return n, k, group, stype, (scales.stride(0) if groups > 1 else n), ld_zeros


def _desc(m, n, k, group, stype, ld_scales, ld_zeros, zeros, x_dtype):
    d = W4A16DescStruct()
    check(_lib.lib().tess_w4a16_desc_init(ctypes.byref(d)))
    d.m, d.n, d.k, d.group_size = m, n, k, group
    d.x = TesseraDesc(int(x_dtype), 1, m, k, k, 0)
    d.scale_type, d.ld_scales = int(stype), ld_scales
    d.zero_points, d.ld_zeros = (1, ld_zeros) if zeros is not None else (0, 0)
    return d


def dequantize_int4(w, scales, zeros=None, *, group_size=None, dtype=None, handle=None):
    """The weight (N x K, row-major) of a packed 4-bit weight, in dtype (torch.bfloat16, the
    default, or torch.float16): (q - z) times the scale rounded to dtype, the product rounded to
    dtype, as w4a16_gemm takes the weight for more than 16 rows of x of that type."""
    import torch
    dtype = torch.bfloat16 if dtype is None else dtype
    if dtype not in (torch.bfloat16, torch.float16):
        raise InvalidValueError(f"dequantize_int4: dtype {dtype}: torch.bfloat16 or torch.float16")
    n, k, group, stype, ld_scales, ld_zeros = _checked_weight(w, scales, zeros, group_size)
    _on_gpu(w.device.index or 0, (w, "w"), (scales, "scales"), (zeros, "zeros"))
    out = torch.empty((n, k), dtype=dtype, device=w.device)
    d = _desc(1, n, k, group, stype, ld_scales, ld_zeros, zeros, as_dtype(dtype))
    h = _handle(w, handle)
    check(_lib.lib().tess_dequantize_int4(h._h, ctypes.byref(d), ctypes.c_void_p(w.data_ptr()),
                                          ctypes.c_void_p(scales.data_ptr()),
                                          ctypes.c_void_p(zeros.data_ptr() if zeros is not None else None),
                                          int(as_dtype(dtype)), ctypes.c_void_p(out.data_ptr()), k))
    return out


def w4a16_gemm(x, w, scales, zeros=None, *, group_size=None, bias=None, activation=None, out_dtype=None,
               handle=None):
    """activation(x @ W.T + bias) for x (M x K, bf16 or f16, rows contiguous) and the packed 4-bit
    weight w (pack_int4) with its scales ((K/G, N): float32, float16 or bfloat16) and zero points
    (uint8 (K/G, N), or None: 8). bias: (N,) bf16/f16/f32; activation as tessera.gemm's;
    out_dtype: x's (default), torch.float16, bfloat16 or float32. M <= 16 runs the decode GEMV;
    larger M dequantizes the weight into a temporary (N x K) and calls tessera.gemm."""
    import torch
    from .gemm import _epilogue_ptrs, _ptr, gemm
    _tensor(x, "x")
    if x.dtype not in (torch.bfloat16, torch.float16) or x.dim() != 2:
        raise InvalidValueError(f"x: expected a 2-D bfloat16 or float16 tensor, got {x.dtype} of shape "
                                f"{tuple(x.shape)}")
    n, k, group, stype, ld_scales, ld_zeros = _checked_weight(w, scales, zeros, group_size)
    m = int(x.shape[0])
    if int(x.shape[1]) != k:
        raise InvalidValueError(f"x has {int(x.shape[1])} columns but the weight has K={k} (w's shape is (N, K/2))")
    out_dtype = _out_dtype(x, out_dtype)
    device = x.device.index or 0
    _on_gpu(device, (x, "x"), (w, "w"), (scales, "scales"), (zeros, "zeros"))
    if m == 0:
        return torch.empty((0, n), dtype=out_dtype, device=x.device)
    if m > MAX_DECODE_M:
        weight = dequantize_int4(w, scales, zeros, group_size=group, dtype=x.dtype, handle=handle)
        if handle is not None:  # the temporary is read on the handle's stream, not only torch's
            weight.record_stream(torch.cuda.ExternalStream(handle.stream, device=x.device))
        return gemm(x, weight.t(), bias=bias, activation=activation, out_dtype=out_dtype, handle=handle)
    ep = epilogue.dense_epilogue(bias, activation, "columns", m, n, 1, device)
    # rows 16-byte aligned with a leading dimension of whole 16 bytes (the staging's vector loads)
    if x.stride(1) != 1 or x.data_ptr() % 16 or (m > 1 and (x.stride(0) % 8 or x.stride(0) < k)):
        x = x.clone(memory_format=torch.contiguous_format)
    ld_x = x.stride(0) if m > 1 else k
    out = torch.empty((m, n), dtype=out_dtype, device=x.device)
    d = _desc(m, n, k, group, stype, ld_scales, ld_zeros, zeros, as_dtype(x.dtype))
    d.x.ld = ld_x
    d.d = TesseraDesc(int(as_dtype(out_dtype)), 1, m, n, n, 0)
    d.epilogue = ep.desc()
    h = _handle(x, handle)
    check(_lib.lib().tess_gemm_w4a16(h._h, ctypes.byref(d), ctypes.c_void_p(x.data_ptr()),
                                     ctypes.c_void_p(w.data_ptr()), ctypes.c_void_p(scales.data_ptr()),
                                     ctypes.c_void_p(zeros.data_ptr() if zeros is not None else None),
                                     ctypes.c_void_p(out.data_ptr()), _epilogue_ptrs(_ptr(bias))))
    return out


def w4a16_gemm_masked(x, w, scales, masked_m, zeros=None, *, group_size=None, bias=None, activation=None,
                      out_dtype=None, expected_experts=None, handle=None):
    """Experts' decode products with 4-bit weights (Mixture-of-Experts decoding; DeepGEMM's masked
    layout): out[e, :masked_m[e]] = activation(x[e, :masked_m[e]] @ W_e.T + bias[e]) for x
    (E, M, K) bf16 or f16 with M <= 16, w (E, N, K/2) uint8 (each expert's pack_int4; a "rows"
    weight of all E experts, (E N, K/8), packs in one call), scales (E, K/G, N), zeros (E, K/G, N)
    uint8 or None, masked_m (E,) int32 on the GPU (values outside [0, M] clamped), bias (N,) or
    (E, N). One kernel, no host synchronization (CUDA graphs); an expert with no rows reads
    nothing. Rows of the output past masked_m[e] are not written (torch.empty's contents).
    expected_experts: how many experts are expected to have rows (the grid's K split; None: E)."""
    import torch
    _tensor(x, "x")
    if x.dtype not in (torch.bfloat16, torch.float16) or x.dim() != 3:
        raise InvalidValueError(f"x: expected a 3-D (E, M, K) bfloat16 or float16 tensor, got {x.dtype} of shape "
                                f"{tuple(x.shape)}")
    for t, what, dims in ((w, "w", 3), (scales, "scales", 3), (masked_m, "masked_m", 1)) + \
            (((zeros, "zeros", 3),) if zeros is not None else ()):
        _tensor(t, what)
        if t.dim() != dims:
            raise InvalidValueError(f"{what}: expected {dims} dimensions with the experts first, got shape "
                                    f"{tuple(t.shape)}")
    experts, m = int(x.shape[0]), int(x.shape[1])
    for t, what in ((w, "w"), (scales, "scales"), (masked_m, "masked_m")) + (((zeros, "zeros"),) if zeros is not None
                                                                              else ()):
        if int(t.shape[0]) != experts:
            raise InvalidValueError(f"{what} has {int(t.shape[0])} experts but x has {experts}")
    if experts < 1 or experts > 65535:
        raise InvalidValueError(f"x: {experts} experts; 1 to 65535")
    if masked_m.dtype != torch.int32 or masked_m.stride(0) != 1:
        raise InvalidValueError(f"masked_m: expected a contiguous int32 tensor of shape (E,), got {masked_m.dtype} "
                                f"with stride {tuple(masked_m.stride())}")
    if w.dtype != torch.uint8 or w.stride(2) != 1 or w.stride(1) != int(w.shape[2]) or w.stride(0) % 16 or \
            w.stride(0) < int(w.shape[1]) * int(w.shape[2]):
        raise InvalidValueError(f"w: expected packed experts (uint8 (E, N, K/2), each expert's rows contiguous and "
                                f"the experts 16 bytes apart at least), got {w.dtype} of shape {tuple(w.shape)} and "
                                f"strides {tuple(w.stride())}")
    n, k, group, stype, ld_scales, ld_zeros = _checked_weight(w[0], scales[0], zeros[0] if zeros is not None else None,
                                                              group_size)
    for t, what in ((scales, "scales"), (zeros, "zeros")):
        if t is not None and experts > 1 and t.stride(0) < (int(t.shape[1]) - 1) * t.stride(1) + n:
            raise InvalidValueError(f"{what}: the experts' tables overlap (stride {t.stride(0)} along the experts, "
                                    f"e.g. one table expanded to all); pass one per expert ({what}.contiguous())")
    if int(x.shape[2]) != k:
        raise InvalidValueError(f"x has K={int(x.shape[2])} but the experts' weights K={k} (w's shape is (E, N, K/2))")
    if m < 1 or m > MAX_DECODE_M:
        raise InvalidValueError(f"x: M={m} rows an expert; the masked 4-bit GEMV takes 1 to {MAX_DECODE_M}")
    if expected_experts is not None and not 0 <= int(expected_experts) <= experts:
        raise InvalidValueError(f"expected_experts={expected_experts}: 0 to E={experts}")
    out_dtype = _out_dtype(x, out_dtype)
    device = x.device.index or 0
    _on_gpu(device, (x, "x"), (w, "w"), (scales, "scales"), (zeros, "zeros"), (masked_m, "masked_m"))
    ep = epilogue.grouped_epilogue(bias, activation, experts, n, device)
    # rows 16-byte aligned with leading dimensions and expert strides of whole 16 bytes (the staging's loads)
    if x.stride(2) != 1 or x.data_ptr() % 16 or x.stride(1) % 8 or x.stride(0) % 8 or \
            (m > 1 and x.stride(1) < k) or (experts > 1 and x.stride(0) < (m - 1) * x.stride(1) + k):
        x = x.clone(memory_format=torch.contiguous_format)
    out = torch.empty((experts, m, n), dtype=out_dtype, device=x.device)
    d = _desc(m, n, k, group, stype, ld_scales, ld_zeros, zeros, as_dtype(x.dtype))
    d.x = TesseraDesc(int(as_dtype(x.dtype)), 1, m, k, x.stride(1) if m > 1 else k, x.stride(0))
    d.d = TesseraDesc(int(as_dtype(out_dtype)), 1, m, n, n, m * n)
    d.epilogue = ep.desc()
    d.groups, d.w_group_stride = experts, w.stride(0)
    d.scales_group_stride = scales.stride(0)
    d.zeros_group_stride = zeros.stride(0) if zeros is not None else 0
    d.expected_groups = int(expected_experts) if expected_experts is not None else 0
    h = _handle(x, handle)
    from .gemm import _epilogue_ptrs, _ptr
    check(_lib.lib().tess_gemm_w4a16_masked(h._h, ctypes.byref(d), ctypes.c_void_p(masked_m.data_ptr()),
                                            ctypes.c_void_p(x.data_ptr()), ctypes.c_void_p(w.data_ptr()),
                                            ctypes.c_void_p(scales.data_ptr()),
                                            ctypes.c_void_p(zeros.data_ptr() if zeros is not None else None),
                                            ctypes.c_void_p(out.data_ptr()), _epilogue_ptrs(_ptr(bias))))
    return out
