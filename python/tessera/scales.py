"""Checking dequantization-factor tensors against their recipes, before any call.

The C library takes any non-negative strides for a scale tensor (tess_scale_desc)
and trusts them: a tensor of the wrong shape would be read past its end. So every
scale tensor is matched here, in Python and before anything touches the device,
against the shapes its recipe addresses, and its strides go to C only once every
factor the recipe reads is known to lie inside the tensor's storage.

The checks are pure functions of shapes, strides and storage extents
(gemm_scale_layout, grouped_scale_layout), testable without a GPU or torch;
tensor_geometry reads those three from a tensor-like object (torch.Tensor).

Factor (mn, k) of batch b is read at (tessera.h, tess_scale_desc)
    b * batch_stride + row(mn) * stride_mn + (k / 128) * stride_k
with row(mn) = 0 (TENSOR), mn (OUTER_VEC, BLOCK_1x128) or mn / 128 (BLOCK_128x128).
"""
import collections

from .errors import InvalidValueError

BLOCK = 128  # TESS_SCALE_BLOCK: elements of K (and of M or N for 128x128) per block factor

# tess_scale_mode values
TENSOR, OUTER_VEC, BLOCK_1x128, BLOCK_128x128 = 0, 3, 4, 5

# Recipe names (tessera.gemm's scale_recipe_a / _b) and their modes.
RECIPES = {"tensor": TENSOR, "rowwise": OUTER_VEC, "outer": OUTER_VEC, "1x128": BLOCK_1x128,
           "128x128": BLOCK_128x128}
_MODE_NAME = {TENSOR: "tensor", OUTER_VEC: "rowwise", BLOCK_1x128: "1x128", BLOCK_128x128: "128x128"}


class ScaleLayout(collections.namedtuple("ScaleLayout", "mode stride_mn stride_k batch_stride")):
    """A tess_scale_desc as plain integers (mode, strides in float32 elements)."""

    def desc(self):
        """The ctypes tess_scale_desc (ScaleDescStruct) of this layout."""
        from ._lib import ScaleDescStruct
        d = ScaleDescStruct()
        d.mode, d.stride_mn, d.stride_k, d.batch_stride = self
        return d


def ceil_div(a, b):
    return -(-a // b)


def packed_strides(mode, mn, k):
    """(stride_mn, stride_k) of tess_scale_layout_query's packed layout: the strides given to
    dimensions of extent 1, whose stride is never multiplied by anything but 0."""
    if mode == OUTER_VEC:
        return 1, 0
    if mode == BLOCK_1x128:
        return 1, mn
    if mode == BLOCK_128x128:
        return ceil_div(k, BLOCK), 1
    return 0, 0


def _fmt(shape):
    return "(" + ", ".join(str(e) for e in shape) + ("," if len(shape) == 1 else "") + ")"


# A candidate reading of a tensor: a recipe's mode, the shape it needs, and the role of each
# dimension: "b" batch / group, "m" rows of A (columns of B; in blocks of 128 for 128x128),
# "k" blocks of 128 along K, "1" a dimension of extent 1.
_Candidate = collections.namedtuple("_Candidate", "mode shape roles")


def _reading(cand, strides, mn, k, batched):
    """The ScaleLayout a candidate reads from these strides, and the largest offset it addresses."""
    smn, sk = packed_strides(cand.mode, mn, k)
    bs, top = 0, 0
    for extent, role, stride in zip(cand.shape, cand.roles, strides):
        if role == "1" or extent == 1:
            continue  # only index 0 is read along this dimension
        top += (extent - 1) * stride
        if role == "m":
            smn = stride
        elif role == "k":
            sk = stride
        elif role == "b":
            bs = stride
    if cand.mode == TENSOR:
        smn, sk = 0, 0
    if not batched:
        bs = 0
    return ScaleLayout(cand.mode, smn, sk, bs), top


def _resolve(arg, recipe, candidates, shape, strides, extent, *, infer, batched, mn, k, expected, context,
             advice=None):
    """The one reading of `shape` / `strides` among `candidates` (recipe given: those of its mode, the
    first where several fit; recipe None: those of the modes in `infer`, the only one), checked to
    read inside `extent` floats. InvalidValueError naming the argument, recipe and shapes otherwise.
    `expected(mode)` says which shapes a mode takes; `context` is "M=64, K=256" and the like;
    `advice(mode, shape)`, if given, a hint for a shape the mode refuses ("" for none)."""
    shape, strides = tuple(int(e) for e in shape), tuple(int(s) for s in strides)
    if len(strides) != len(shape):
        raise InvalidValueError(f"{arg}: {len(strides)} strides for a {len(shape)}-D shape {_fmt(shape)}")
    numel = 1
    for e in shape:
        numel *= e
    modes = [RECIPES[recipe]] if recipe is not None else list(infer)
    if recipe is None and numel == 1 and any(c.mode == TENSOR and c.shape == shape for c in candidates):
        modes = [TENSOR]  # a single factor without a recipe is per tensor where its shape allows
    fits = [c for c in candidates if c.mode in modes and c.shape == shape]
    if not fits:
        if recipe is not None:
            hint = advice(RECIPES[recipe], shape) if advice else ""
            raise InvalidValueError(f"{arg}: recipe {recipe!r} for {context} needs {expected(RECIPES[recipe])}; "
                                    f"got {_fmt(shape)}" + (f" ({hint})" if hint else ""))
        others = sorted({_MODE_NAME[c.mode] for c in candidates if c.shape == shape and c.mode not in modes})
        if others:
            raise InvalidValueError(
                f"{arg}: shape {_fmt(shape)} without scale_recipe_{arg[6:]}: for {context} a scale tensor of "
                f"several factors is read without a recipe only as {expected(OUTER_VEC)}; name the recipe "
                f"(scale_recipe_{arg[6:]}=" + " or ".join(repr(o) for o in others) + " fits this shape)")
        raise InvalidValueError(
            f"{arg}: shape {_fmt(shape)} fits no scale recipe for {context}: "
            + "; ".join(f"{_MODE_NAME[m]!r} needs {expected(m)}" for m in _modes_of(candidates)))
    readings = []
    for c in fits:
        r = _reading(c, strides, mn, k, batched)
        if r not in readings:
            readings.append(r)
    if recipe is None and len(readings) > 1:
        names = sorted({_MODE_NAME[r[0].mode] for r in readings})
        how = " or ".join(repr(n) for n in names)
        if len(names) == 1:  # one block recipe, two orders of a square tensor's dimensions
            how += "; an explicit recipe reads a square tensor as (rows, K blocks)"
        raise InvalidValueError(f"{arg}: shape {_fmt(shape)} is ambiguous for {context}: it fits several factor "
                                f"layouts; say which with scale_recipe_{arg[6:]}= ({how})")
    layout, top = readings[0]
    used = [s for e, role, s in zip(shape, fits[0].roles, strides) if e > 1 and role != "1"]
    if any(s < 0 for s in used):
        raise InvalidValueError(f"{arg}: negative strides {_fmt(strides)} are not supported")
    if extent is not None and top >= extent:
        raise InvalidValueError(
            f"{arg}: recipe {_MODE_NAME[layout.mode]!r} for {context} reads factors up to element {top} of shape "
            f"{_fmt(shape)} with strides {_fmt(strides)}, but the tensor's storage holds only {max(extent, 0)} "
            "float32 factors from its first element; pass a tensor whose storage covers every factor "
            "(e.g. .contiguous())")
    return layout


def _modes_of(candidates):
    seen = []
    for c in candidates:
        if c.mode not in seen:
            seen.append(c.mode)
    return seen


def _check_recipe(arg, recipe, allowed):
    if recipe is not None and recipe not in allowed:
        raise InvalidValueError(f"scale_recipe_{arg[6:]}={recipe!r}: one of {sorted(allowed)}")


# ---- dense GEMM (tessera.gemm) --------------------------------------------------

def _gemm_expected(operand, mode, mn, k, batch):
    """The sentence of shapes tessera.gemm takes for a mode."""
    kb, nb = ceil_div(k, BLOCK), ceil_div(mn, BLOCK)
    row = "row of a" if operand == "a" else "column of b"
    if mode == TENSOR:
        return "shape (), (1,) or (1, 1) (one factor for the whole operand)" + (
            f", or ({batch},) / ({batch}, 1, 1) (one per batch)" if batch > 1 else "")
    if mode == OUTER_VEC:
        first = f"({mn}, 1)" if operand == "a" else f"(1, {mn})"
        second = f"(1, {mn})" if operand == "a" else f"({mn}, 1)"
        return (f"shape {first}, ({mn},) or {second} (one factor per {row})"
                + (f", or ({batch}, {mn}) / ({batch}, {mn}, 1) / ({batch}, 1, {mn}) (one set per batch)"
                   if batch > 1 else ""))
    if mode == BLOCK_1x128:
        per, base = f"one factor per {row} per 128 of K", (mn, kb)
    else:
        per = f"one factor per 128 {'rows of a' if operand == 'a' else 'columns of b'} per 128 of K"
        base = (nb, kb)
    more = f", or {_fmt((batch,) + base)} (one set per batch)" if batch > 1 else ""
    return f"shape {_fmt(base)} ({per}){more}"


def _gemm_advice(operand, mode, mn, k, batch, shape):
    """A hint for a block-factor tensor with its K blocks first (torch._scaled_mm's scale_b)."""
    if mode not in (BLOCK_1x128, BLOCK_128x128):
        return ""
    kb = ceil_div(k, BLOCK)
    rows = mn if mode == BLOCK_1x128 else ceil_div(mn, BLOCK)
    if rows != kb and shape[-2:] == (kb, rows) and len(shape) in (2, 3):
        whose = "torch._scaled_mm's scale_b, " if operand == "b" and len(shape) == 2 else ""
        index = "rows of a" if operand == "a" else "columns of b"
        return f"this is {whose}K blocks first; tessera indexes factors ({index}, K blocks): pass its .mT"
    return ""


def _gemm_candidates(operand, mn, k, batch):
    kb, nb = ceil_div(k, BLOCK), ceil_div(mn, BLOCK)
    base = [_Candidate(TENSOR, (), ""), _Candidate(TENSOR, (1,), "1"), _Candidate(TENSOR, (1, 1), "11")]
    rowwise = [(mn, 1), (mn,), (1, mn)] if operand == "a" else [(1, mn), (mn,), (mn, 1)]
    base += [_Candidate(OUTER_VEC, s, {(mn, 1): "m1", (mn,): "m", (1, mn): "1m"}[s]) for s in rowwise]
    base += [_Candidate(BLOCK_1x128, (mn, kb), "mk"), _Candidate(BLOCK_128x128, (nb, kb), "mk")]
    out = list(base)
    for lead in sorted({1, batch}, reverse=True):  # a batch first: one set per batch, or one shared (1)
        out += [_Candidate(c.mode, (lead,) + c.shape, "b" + c.roles) for c in base if len(c.shape) == 2]
    if batch > 1:
        out += [_Candidate(TENSOR, (batch,), "b"), _Candidate(OUTER_VEC, (batch, mn), "bm")]
    return out


def gemm_scale_layout(operand, recipe, mn, k, shape, strides, extent=None, batch=1):
    """The ScaleLayout of tessera.gemm's scale_a (operand "a", mn = M) or scale_b ("b", mn = N)
    for a problem of depth k and `batch` matrices, from a tensor's shape, element strides and
    `extent` (float32 elements its storage holds from its first element; None: unknown, not checked).
    recipe None reads one factor as "tensor" and (M, 1) / (M,) for A, (1, N) / (N,) for B as
    "rowwise"; block factors need their recipe named. InvalidValueError where the tensor does not
    fit the recipe or would be read outside its storage."""
    arg = f"scale_{operand}"
    _check_recipe(arg, recipe, RECIPES)
    context = f"{'M' if operand == 'a' else 'N'}={mn}, K={k}" + (f", batch={batch}" if batch > 1 else "")
    return _resolve(arg, recipe, _gemm_candidates(operand, mn, k, batch), shape, strides, extent,
                    infer=(TENSOR, OUTER_VEC), batched=batch > 1, mn=mn, k=k,
                    expected=lambda mode: _gemm_expected(operand, mode, mn, k, batch), context=context,
                    advice=lambda mode, got: _gemm_advice(operand, mode, mn, k, batch, got))


# ---- grouped GEMM (tessera.grouped_mm, grouped_mm_masked) -----------------------

X_RECIPES = {"tensor": TENSOR, "rowwise": OUTER_VEC, "outer": OUTER_VEC, "1x128": BLOCK_1x128}
W_RECIPES = {"tensor": TENSOR, "rowwise": OUTER_VEC, "outer": OUTER_VEC, "128x128": BLOCK_128x128}


def _grouped_candidates(operand, masked, groups, mn, k):
    kb = ceil_div(k, BLOCK)
    per_group = operand == "w" or masked
    lead, lr = ((groups,), "b") if per_group else ((), "")
    block_mode = BLOCK_1x128 if operand == "x" else BLOCK_128x128
    block_mn = mn if operand == "x" else ceil_div(mn, BLOCK)
    out = [_Candidate(TENSOR, (), ""), _Candidate(TENSOR, (1,), "1"), _Candidate(TENSOR, (groups,), "b"),
           _Candidate(OUTER_VEC, lead + (mn,), lr + "m"),
           _Candidate(block_mode, lead + (block_mn, kb), lr + "mk")]
    if operand == "x":  # also (K blocks, rows): hpc-ops' MN-major x factors
        out.append(_Candidate(block_mode, lead + (kb, block_mn), lr + "km"))
    return out


def _grouped_expected(operand, masked, mode, groups, mn, k):
    kb = ceil_div(k, BLOCK)
    if mode == TENSOR:
        return f"shape (1,) or () (one factor for all) or ({groups},) (one per group)"
    if operand == "w":
        if mode == OUTER_VEC:
            return f"shape ({groups}, {mn}) (one factor per output column of each expert)"
        return f"shape ({groups}, {ceil_div(mn, BLOCK)}, {kb}) (one factor per 128x128 block of each expert)"
    g = f"{groups}, " if masked else ""
    if mode == OUTER_VEC:
        return f"shape ({g}{mn}{',' if not masked else ''}) (one factor per row of x)"
    return f"shape ({g}{mn}, {kb}) or ({g}{kb}, {mn}) (one factor per row of x per 128 of K)"


def grouped_scale_layout(operand, recipe, masked, groups, mn, k, shape, strides, extent=None):
    """The ScaleLayout of a grouped GEMM's scale_x (operand "x", mn = total_M, or M_max when
    masked) or scale_w ("w", mn = N), from a tensor's shape, strides and storage extent (see
    gemm_scale_layout). The mode follows from the shape (grouped_mm's docstring), or from
    `recipe` where a shape could be read two ways. Contiguous x's per-row factors follow x's rows
    (no batch stride); masked x's and w's carry the group first; per-tensor factors of shape (G,)
    are one per group."""
    arg = f"scale_{operand}"
    recipes = X_RECIPES if operand == "x" else W_RECIPES
    _check_recipe(arg, recipe, recipes)
    context = f"G={groups}, {'M' if operand == 'x' else 'N'}={mn}, K={k}" + (", masked" if masked else "")
    cands = _grouped_candidates(operand, masked, groups, mn, k)
    # per-tensor factors are one per group (batch_stride); contiguous x's others ignore the batch stride
    return _resolve(arg, recipe, cands, shape, strides, extent,
                    infer=tuple(recipes.values()), batched=True, mn=mn, k=k,
                    expected=lambda mode: _grouped_expected(operand, masked, mode, groups, mn, k), context=context)


# ---- tensors ---------------------------------------------------------------------

def _span(shape, strides):
    """Elements from a tensor's first to past its last (its own extent), 0 if empty."""
    if any(e == 0 for e in shape):
        return 0
    return 1 + sum((e - 1) * s for e, s in zip(shape, strides) if s > 0)


def storage_extent(t):
    """float32 elements of t's storage from its first element on, or None where it cannot be told."""
    try:
        nbytes = t.untyped_storage().nbytes()
    except Exception:  # torch < 2.0, or no storage (a tensor-like object)
        try:
            st = t.storage()
            nbytes = st.nbytes() if hasattr(st, "nbytes") else st.size() * st.element_size()
        except Exception:
            return None
    try:
        offset = int(t.storage_offset())
    except Exception:
        return None
    return int(nbytes) // 4 - offset


def tensor_geometry(t, arg, device):
    """(pointer, shape, strides, extent) of a float32 scale tensor in the memory of CUDA device
    `device`; InvalidValueError naming `arg` otherwise. The extent is the storage's (see
    storage_extent), else the tensor's own span."""
    if not (hasattr(t, "data_ptr") and hasattr(t, "dtype") and hasattr(t, "device") and hasattr(t, "shape")
            and hasattr(t, "stride")):
        raise InvalidValueError(f"{arg}: expected a torch.Tensor of float32 factors in GPU memory, "
                                f"got {type(t).__name__}")
    dev = getattr(t, "device", None)
    dev_type, dev_index = getattr(dev, "type", str(dev)), getattr(dev, "index", None) or 0
    if str(t.dtype) not in ("torch.float32", "float32"):
        raise InvalidValueError(f"{arg}: dequantization factors are float32; got {t.dtype} "
                                "(convert with .float())")
    if dev_type != "cuda":
        raise InvalidValueError(f"{arg}: float32 factors in GPU memory; got a tensor in {dev_type} memory "
                                f"(move it with .to('cuda:{device}'))")
    if dev_index != device:
        raise InvalidValueError(f"{arg} is on cuda:{dev_index}; it must be on the operands' device cuda:{device}")
    shape = tuple(int(e) for e in t.shape)
    strides = tuple(int(s) for s in t.stride())
    if any(e == 0 for e in shape):
        raise InvalidValueError(f"{arg}: shape {_fmt(shape)} holds no factors")
    ptr = int(t.data_ptr())
    if ptr % 4:
        raise InvalidValueError(f"{arg}: its data pointer {ptr:#x} is not 4-byte aligned float32")
    extent = storage_extent(t)
    if extent is None:
        extent = _span(shape, strides)
    return ptr, shape, strides, extent


# names_fp8's answers by dtype object (torch dtypes, DTypes, names): a call asks on every call,
# and a model uses a handful of dtypes. Bounded, so that arbitrary names cannot grow it.
_names_fp8_seen = {}
_NAMES_FP8_SEEN_MAX = 64


def names_fp8(dtype):
    """Whether dtype (a name such as "e4m3", a tessera DType, a torch dtype, or None) is FP8."""
    if dtype is None:
        return False
    try:
        return _names_fp8_seen[dtype]
    except (KeyError, TypeError):  # not seen yet, or unhashable
        pass
    from .dtypes import DType, as_dtype
    try:
        fp8 = as_dtype(dtype) in (DType.E4M3, DType.E5M2)
    except Exception:  # a name or type tessera does not know: not FP8 (the call's checks name it)
        fp8 = False
    try:
        if len(_names_fp8_seen) < _NAMES_FP8_SEEN_MAX:
            _names_fp8_seen[dtype] = fp8
    except TypeError:
        pass
    return fp8


def check_fp8_gate(fp8, gated, gate):
    """Refuses a gate with an FP8 out (the kernels have no gated FP8 store)."""
    if fp8 and gated:
        raise InvalidValueError(f"gate={gate!r} with an FP8 out is not supported; write out in bf16 and quantize it "
                                "(tessera.quantize_fp8)")


def fp8_output_form(fp8, out_dtype_name, out_scale, amax):
    """The form an FP8 out's arguments ask for: None (no FP8 out), "tensor" or "1x128"; refuses
    out_scale or amax without an FP8 out (fp8 false; out_dtype_name names out's type), a recipe
    name other than "1x128", and an amax beside 1x128 factors."""
    if not fp8:
        if out_scale is not None or amax is not None:
            raise InvalidValueError(f"out_scale and amax belong to an FP8 out (out_dtype='e4m3' or 'e5m2'); out is "
                                    f"{out_dtype_name}")
        return None
    if isinstance(out_scale, str):
        if out_scale != "1x128":
            raise InvalidValueError(f"out_scale={out_scale!r}: '1x128' (a factor per row and 128 columns, returned "
                                    "with out) or a float32 tensor of one factor")
        if amax is not None:
            raise InvalidValueError("amax is written for a per-tensor FP8 out; out_scale='1x128' writes a factor "
                                    "per row and 128 columns instead")
        return "1x128"
    return "tensor"


def wants_fp8_out(out_dtype, out, out_scale, amax):
    """Whether a call asks for an FP8 out (by out_dtype, out's dtype, out_scale or amax): such calls
    skip the prepared-call cache, their factor tensors being new or written on every call."""
    return (out_scale is not None or amax is not None or names_fp8(out_dtype) or
            names_fp8(getattr(out, "dtype", None)))


def fp8_output(out, device, out_scale, amax):
    """An FP8 D's form for tessera.gemm: (ScaleLayout of tess_gemm_desc.d_scale, the pointers
    (d_scale, d_amax, d_scale_out) of tess_epilogue_ptrs, the block factors' tensor it allocates
    or None). `out` is D's Matrix view on CUDA device `device`. Per tensor, out_scale is a float32
    tensor of one factor (or None: 1) and amax a float32 tensor whose first element is written
    (or None); out_scale="1x128" allocates the (batch,) M x ceil(N/128) factors, M contiguous
    (tess_scale_layout_query's packed layout, what a 1x128 scale_a reads). Without an FP8 D,
    out_scale and amax are refused."""
    from .dtypes import DType
    none = ScaleLayout(TENSOR, 0, 0, 0)
    form = fp8_output_form(out.dtype in (DType.E4M3, DType.E5M2), out.dtype.name.lower(), out_scale, amax)
    if form is None:
        return none, (None, None, None), None
    if form == "1x128":
        import torch
        m, blocks, batch = out.rows, ceil_div(out.cols, BLOCK), out.batch
        factors = torch.empty((batch, blocks, m), dtype=torch.float32, device=f"cuda:{device}").transpose(1, 2)
        layout = ScaleLayout(BLOCK_1x128, 1, m, blocks * m if batch > 1 else 0)
        return layout, (None, None, factors.data_ptr()), factors if batch > 1 else factors[0]
    d_scale = d_amax = None
    if out_scale is not None:
        ptr, shape, _, _ = tensor_geometry(out_scale, "out_scale", device)
        if _count(shape) != 1:
            raise InvalidValueError(f"out_scale: shape {_fmt(shape)}; the per-tensor factor is one float32 "
                                    "(or out_scale='1x128' for block factors)")
        d_scale = ptr
    if amax is not None:
        d_amax = tensor_geometry(amax, "amax", device)[0]
    return none, (d_scale, d_amax, None), None


def _count(shape):
    """Elements of a shape."""
    n = 1
    for e in shape:
        n *= e
    return n
