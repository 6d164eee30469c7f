"""CuTe's layout algebra, with pycute's API, computed by libtessera.

    from tessera.layout import Layout, composition, logical_divide
    A = Layout((6, 2), (8, 2))
    composition(A, Layout((4, 3), (3, 1)))      # ((2,2),3):((24,2),8)

Shapes and strides are ints or nested tuples, as in pycute; `None` in a
coordinate or a tiler is CuTe's underscore. Results follow C++ CuTe (see
tessera/layout.h): where pycute and C++ differ, tessera answers as C++ does,
and inputs with no valid answer raise tessera.TesseraError (a ValueError)
carrying the library's sentence. Every operation runs in the C library: this
module only converts Python values to CuTe text and back.
"""
import ctypes

from . import _lib
from .errors import check

__all__ = [
    "Layout", "Swizzle", "ComposedLayout", "ScaledBasis", "make_layout", "make_identity_layout", "size", "cosize",
    "rank", "depth", "shape", "stride", "coalesce", "filter", "composition", "complement", "right_inverse",
    "left_inverse", "logical_divide", "zipped_divide", "tiled_divide", "flat_divide", "logical_product",
    "zipped_product", "tiled_product", "flat_product", "blocked_product", "raked_product", "max_common_vector",
    "idx2crd", "crd2idx", "flatten", "prefix_product", "product", "shape_div", "mma_atom", "mma_atoms",
    "mma_atom_thr_id", "mma_atom_shape", "print_layout", "latex", "svg", "explain", "evaluate",
]


class ScaledBasis:
    """A stride k * e_i of a coordinate-valued layout (CuTe's ScaledBasis), written k@i."""

    def __init__(self, value, index):
        self.value, self.index = int(value), int(index)

    def __eq__(self, other):
        return isinstance(other, ScaledBasis) and (self.value, self.index) == (other.value, other.index)

    def __hash__(self):
        return hash((self.value, self.index))

    def __repr__(self):
        return f"{self.value}@{self.index}"


# ---- CuTe text <-> Python values ------------------------------------------

def _tuple_text(t):
    if t is None:
        return "_"
    if isinstance(t, bool):
        raise TypeError("a bool is not an integer tuple")
    if isinstance(t, int):
        return str(t)
    if isinstance(t, ScaledBasis):
        return repr(t)
    if isinstance(t, (tuple, list)):
        if len(t) == 0:
            raise ValueError("an empty tuple is not a shape")
        return "(" + ",".join(_tuple_text(x) for x in t) + ")"
    raise TypeError(f"expected an int or a tuple of ints, got {type(t).__name__}")


def _text(x):
    """The CuTe text of any value the algebra takes (a tuple or int is a tuple, not a layout)."""
    if isinstance(x, (Layout, Swizzle, ComposedLayout)):
        return str(x)
    if isinstance(x, list):  # pycute users write tilers as lists too
        x = tuple(x)
    if isinstance(x, tuple) and any(isinstance(e, (Layout, ComposedLayout)) for e in _leaves(x)):
        return _tiler_text(x)
    return _tuple_text(x)


def _tiler_text(x):
    if x is None:
        return "_"
    if isinstance(x, int):
        return f"{x}:1"
    if isinstance(x, Layout):
        return str(x)
    if isinstance(x, (tuple, list)):
        return "<" + ",".join(_tiler_text(e) for e in x) + ">"
    raise TypeError(f"a tiler holds layouts, ints, None or tuples of them, not {type(x).__name__}")


def _as_tiler_text(x):
    """Tilers: a Layout, an int n (n:1), None ('_'), or a tuple of tilers (mode by mode)."""
    if isinstance(x, (tuple, list)):
        return _tiler_text(x)
    return _text(x)


def _leaves(t):
    if isinstance(t, (tuple, list)):
        for e in t:
            yield from _leaves(e)
    else:
        yield t


class _Reader:
    """Reads the CuTe text libtessera prints back into Python values."""

    def __init__(self, text):
        self.s, self.i = text, 0

    def peek(self, k=1):
        return self.s[self.i:self.i + k]

    def expect(self, c):
        if self.s[self.i] != c:
            raise ValueError(f"unexpected text from libtessera: {self.s!r} at {self.i}")
        self.i += 1

    def number(self):
        j = self.i
        if self.s[j] == "-":
            j += 1
        while j < len(self.s) and self.s[j].isdigit():
            j += 1
        v = int(self.s[self.i:j])
        self.i = j
        if self.peek() == "@":
            self.i += 1
            return ScaledBasis(v, self.number())
        return v

    def items(self, read, close):
        """The comma-separated items after an opening bracket, each read with `read`, up to `close`."""
        self.i += 1
        items = [read()]
        while self.peek() == ",":
            self.i += 1
            items.append(read())
        self.expect(close)
        return tuple(items)

    def tuple(self):
        if self.peek() == "_":
            self.i += 1
            return None
        if self.peek() != "(":
            return self.number()
        return self.items(self.tuple, ")")

    def layout_or_tuple(self):
        first = self.tuple()
        if self.peek() == ":":
            self.i += 1
            return Layout(first, self.tuple(), _checked=True)
        return first

    def value(self):
        if self.s.startswith("Sw<", self.i):
            j = self.s.index(">", self.i)
            b, m, sh = (int(x) for x in self.s[self.i + 3:j].split(","))
            self.i = j + 1
            sw = Swizzle(b, m, sh)
            if not self.s.startswith(" o ", self.i):
                return sw
            self.i += 3
            offset = self.number()
            self.i += 3  # " o "
            return ComposedLayout(sw, offset, self.layout_or_tuple())
        if self.peek() == "<":
            return self.items(self.tiler_item, ">")
        return self.layout_or_tuple()

    def tiler_item(self):
        if self.peek() == "<":
            return self.value()
        return self.layout_or_tuple()


def _read(text):
    r = _Reader(text)
    v = r.value()
    if r.i != len(text):
        raise ValueError(f"unexpected text from libtessera: {text!r}")
    return v


def _call_text(fn, *args):
    """Runs a text-producing C function, growing the buffer to the length it reports."""
    length = ctypes.c_size_t(0)
    cap = 256
    while True:
        buf = ctypes.create_string_buffer(cap)
        check(fn(*args, buf, cap, ctypes.byref(length)))
        if length.value < cap:
            return buf.value.decode()
        cap = length.value + 1


def evaluate(expr):
    """Evaluates a calculator expression (as `tessera layout` does) and returns the value."""
    return _read(_call_text(_lib.lib().tess_layout_eval_expr, expr.encode()))


def _op(name, *args):
    return evaluate(f"{name}(" + ", ".join(args) + ")")


# ---- the value types --------------------------------------------------------

def _apply(self, *coord):
    """L(i), L(i, j, ...) or L((i, (j, k))): the value; with None somewhere, the sliced layout."""
    crd = coord[0] if len(coord) == 1 else tuple(coord)
    if any(x is None for x in _leaves(crd)):
        return _op("slice", str(self), _tuple_text(crd))
    return _op("eval", str(self), _tuple_text(crd))


class Layout:
    """shape:stride; stride None means compact column-major (CuTe's LayoutLeft)."""

    def __init__(self, shape, stride=None, _checked=False):
        if not _checked:
            if stride is None:
                made = _op("make_layout", _tuple_text(shape))
            else:
                made = _op("make_layout", _tuple_text(shape), _tuple_text(stride))
            shape, stride = made.shape, made.stride
        self.shape, self.stride = shape, stride

    def __str__(self):
        return _tuple_text(self.shape) + ":" + _tuple_text(self.stride)

    def __repr__(self):
        return f"Layout({self.shape!r}, {self.stride!r})"

    def __eq__(self, other):
        return isinstance(other, Layout) and self.shape == other.shape and self.stride == other.stride

    def __hash__(self):
        return hash(str(self))

    def __len__(self):
        return rank(self)

    def __getitem__(self, i):
        if not isinstance(self.shape, tuple):
            if i not in (0, -1):
                raise IndexError(f"mode {i} of a rank-1 layout")
            return self
        return Layout(self.shape[i], self.stride[i], _checked=True)

    __call__ = _apply

    def size(self):
        return size(self)

    def cosize(self):
        return cosize(self)


class _Printed:
    """A value that is its CuTe text: repr, equality and hash all go by str()."""

    def __repr__(self):
        return str(self)

    def __eq__(self, other):
        return isinstance(other, type(self)) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))


class Swizzle(_Printed):
    """Sw<bits,base,shift>: offset -> offset ^ ((offset & yyy_mask) >> shift)."""

    def __init__(self, bits, base, shift):
        self.bits, self.base, self.shift = int(bits), int(base), int(shift)
        _op("size", str(self))  # the library validates the parameters

    def __str__(self):
        return f"Sw<{self.bits},{self.base},{self.shift}>"

    def __call__(self, offset):
        return _op("eval", str(self), str(int(offset)))

    @property
    def yyy_msk(self):
        return ((1 << self.bits) - 1) << (self.base + max(0, self.shift))

    @property
    def zzz_msk(self):
        return ((1 << self.bits) - 1) << (self.base - min(0, self.shift))

    def size(self):
        return 1 << (self.bits + self.base + abs(self.shift))

    cosize = size


class ComposedLayout(_Printed):
    """layoutB o offset o layoutA, pycute's argument order: a swizzle applied after a layout."""

    def __init__(self, layoutB, offset, layoutA):
        if not isinstance(layoutB, Swizzle):
            raise TypeError("ComposedLayout: tessera composes a Swizzle with a layout")
        if not isinstance(layoutA, Layout):
            layoutA = Layout(layoutA)
        self.layoutB, self.offset, self.layoutA = layoutB, int(offset), layoutA

    def __str__(self):
        return f"{self.layoutB} o {self.offset} o {self.layoutA}"

    __call__ = _apply

    def __len__(self):
        return len(self.layoutA)

    def size(self):
        return size(self)


# ---- functions ------------------------------------------------------------

def make_layout(*layouts):
    """make_layout(L0, L1, ...) (pycute's form; a single list of layouts works too)."""
    if len(layouts) == 1 and not isinstance(layouts[0], Layout):
        layouts = tuple(layouts[0])
    return _op("make_layout", *(str(x) if isinstance(x, Layout) else str(Layout(x)) for x in layouts))


def make_identity_layout(shape_):
    """The coordinate-valued identity layout: its strides are ScaledBasis e_i."""
    return _op("make_identity_layout", _tuple_text(shape_))


def _query(name, x):
    return _op(name, _text(x))


def size(x):
    return _query("size", x)


product = size  # pycute's name for the same query


def cosize(x):
    return _query("cosize", x)


def rank(x):
    return _query("rank", x)


def depth(x):
    return _query("depth", x)


def shape(x):
    return _query("shape", x)


def stride(x):
    return _query("stride", x)


def coalesce(layout, profile=None):
    if profile is None:
        return _op("coalesce", _text(layout))
    return _op("coalesce", _text(layout), _tuple_text(profile))


def filter(layout, profile=None):  # noqa: A001 (pycute's name)
    if profile is None:
        return _op("filter", _text(layout))
    return _op("filter", _text(layout), _tuple_text(profile))


def composition(layoutA, layoutB):
    if layoutB is None:
        return layoutA
    return _op("composition", _text(layoutA), _as_tiler_text(layoutB))


def complement(layout, cotarget=None):
    """C++'s complement: cotarget defaults to cosize(filter(layout)) (pycute's default is 1)."""
    if cotarget is None:
        return _op("complement", _text(layout))
    return _op("complement", _text(layout), _tuple_text(cotarget))


def right_inverse(layout):
    return None if layout is None else _op("right_inverse", _text(layout))


def left_inverse(layout):
    return None if layout is None else _op("left_inverse", _text(layout))


def _tiled(name):
    def fn(layoutA, tiler):
        if tiler is None:
            return layoutA
        return _op(name, _text(layoutA), _as_tiler_text(tiler))
    fn.__name__ = name
    fn.__doc__ = f"{name}(A, tiler): a tiler is a Layout, an int n (n:1), None, or a tuple of tilers."
    return fn


logical_divide = _tiled("logical_divide")
zipped_divide = _tiled("zipped_divide")
tiled_divide = _tiled("tiled_divide")
flat_divide = _tiled("flat_divide")
logical_product = _tiled("logical_product")
zipped_product = _tiled("zipped_product")
tiled_product = _tiled("tiled_product")
flat_product = _tiled("flat_product")


def blocked_product(block, tiler):
    return _op("blocked_product", _text(block), _text(tiler))


def raked_product(block, tiler):
    return _op("raked_product", _text(block), _text(tiler))


def max_common_vector(a, b):
    return _op("max_common_vector", _text(a), _text(b))


def idx2crd(idx, shape_, stride_=None):
    args = [str(int(idx)), _tuple_text(shape_)] + ([] if stride_ is None else [_tuple_text(stride_)])
    return _op("idx2crd", *args)


def crd2idx(crd, shape_, stride_=None):
    args = [_tuple_text(crd), _tuple_text(shape_)] + ([] if stride_ is None else [_tuple_text(stride_)])
    return _op("crd2idx", *args)


def flatten(t):
    r = _op("flatten", _text(t))
    return r if isinstance(r, (tuple, Layout)) else (r,)


def prefix_product(t):
    return _op("prefix_product", _tuple_text(t))


def shape_div(a, b):
    return _op("shape_div", _tuple_text(a), _tuple_text(b))


# ---- atoms and pictures -----------------------------------------------------

def mma_atoms():
    """Names of the MMA atoms whose thread-value layouts the library knows."""
    lib = _lib.lib()
    return [lib.tess_layout_mma_atom_name(i).decode() for i in range(lib.tess_layout_mma_atom_count())]


def _handle(x):
    """A C tess_layout* for x, freed by the caller with _free."""
    out = ctypes.c_void_p()
    check(_lib.lib().tess_layout_parse(_text(x).encode(), ctypes.byref(out)))
    return out


def _free(h):
    _lib.lib().tess_layout_free(h)


def mma_atom(name, operand="C"):
    """(TV layout, (rows, cols)) of an MMA atom's operand 'A', 'B' or 'C'."""
    out, rows, cols = ctypes.c_void_p(), ctypes.c_int64(), ctypes.c_int64()
    lib = _lib.lib()
    check(lib.tess_layout_mma_atom(name.encode(), "ABC".index(operand), ctypes.byref(out), ctypes.byref(rows),
                                   ctypes.byref(cols)))
    try:
        return _printed(out), (rows.value, cols.value)
    finally:
        _free(out)


def _printed(h):
    """The value of a C tess_layout*, read back from its CuTe text."""
    lib = _lib.lib()
    n = lib.tess_layout_print(h, None, 0)
    buf = ctypes.create_string_buffer(n + 1)
    lib.tess_layout_print(h, buf, n + 1)
    return _read(buf.value.decode())


def mma_atom_thr_id(name):
    """CuTe's ThrID of an MMA atom: what its TV layouts' first mode counts. Layout(128, 1)
    for wgmma (threads), Layout(1, 0) or Layout(2, 1) for the umma atoms (the CTAs of a pair)."""
    out = ctypes.c_void_p()
    check(_lib.lib().tess_layout_mma_atom_thr_id(name.encode(), ctypes.byref(out)))
    try:
        return _printed(out)
    finally:
        _free(out)


def mma_atom_shape(name):
    """((M, N, K), per-CTA (M, N, K)) of an MMA atom: the per-CTA tile is (M / size(ThrID), N, K)
    where ThrID counts CTAs (umma_2cta_256x256x16_f32: (128, 256, 16)), the whole shape otherwise."""
    mnk, cta = (ctypes.c_int64 * 3)(), (ctypes.c_int64 * 3)()
    check(_lib.lib().tess_layout_mma_atom_shape(name.encode(), mnk, cta))
    return tuple(mnk), tuple(cta)


def _render(fn, x, *extra):
    h = _handle(x)
    try:
        return _call_text(fn, h, *extra)
    finally:
        _free(h)


def print_layout(layout):
    """CuTe's print_layout table, as a string."""
    return _render(_lib.lib().tess_layout_render_table, layout)


def latex(layout):
    """CuTe's print_latex TikZ text, as a string."""
    return _render(_lib.lib().tess_layout_render_latex, layout)


def svg(layout, tile=None):
    """An SVG picture; tile=(rows, cols) draws a TV layout over its tile, coloured by thread."""
    rows, cols = tile if tile else (0, 0)
    return _render(_lib.lib().tess_layout_render_svg, layout, ctypes.c_int64(rows), ctypes.c_int64(cols))


def explain(layout, coord, rows=0):
    """Walks one coordinate through the layout, step by step."""
    c = _handle(coord)
    try:
        return _render(_lib.lib().tess_layout_explain, layout, c, ctypes.c_int64(rows))
    finally:
        _free(c)
