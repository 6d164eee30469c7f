"""Conformance of the layout algebra with ../shared/layout-vectors/vectors.json
(CuTe's answers, verified by brute force). Rules, from that suite's README:
follow C++ CuTe; where a case carries `cxx`, either answer is accepted unless
`cxx_invalid` is set; strides of size-1 modes are free, and a 1-tuple may
stand for an int; every input in `rejected[]` must be refused with an error.
"""
import gzip
import json
import os

import pytest

import tessera
from tessera.layout import evaluate

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
# The project's shared copy first; else the copy committed beside the tests
# (tests/data, gzip of the same file) so that CI runs the suite too.
CANDIDATES = [os.path.join(REPO, os.pardir, "shared", "layout-vectors", "vectors.json"),
              os.path.join(REPO, "shared", "layout-vectors", "vectors.json"),
              os.path.join(REPO, "tests", "data", "layout-vectors.json.gz")]
PATH = next((p for p in CANDIDATES if os.path.exists(p)), None)

pytestmark = pytest.mark.skipif(PATH is None, reason="layout vectors not found (../shared/layout-vectors or tests/data)")


@pytest.fixture(scope="module")
def vectors():
    opener = gzip.open if PATH.endswith(".gz") else open
    with opener(PATH, "rt") as f:
        return json.load(f)


# ---- comparison -----------------------------------------------------------

def canon(shape, stride):
    """(shape, stride) with 1-tuples unwrapped and the strides of size-1 modes set to 0."""
    if isinstance(shape, list):
        if len(shape) == 1:
            return canon(shape[0], stride[0])
        return ("T",) + tuple(canon(s, d) for s, d in zip(shape, stride))
    return (shape, 0 if shape == 1 else stride)


def canon_value(v):
    """canon() of a value tessera returned."""
    if not isinstance(v, tessera.layout.Layout):
        return ("value", v)
    return canon(to_lists(v.shape), to_lists(v.stride))


def to_lists(t):
    return [to_lists(x) for x in t] if isinstance(t, tuple) else t


def accepted(op):
    """The canonical answers an op result object accepts."""
    out = [canon(op["result"]["shape"], op["result"]["stride"])]
    if "cxx" in op and "cxx_invalid" not in op and isinstance(op["cxx"], dict) and "shape" in op["cxx"]:
        out.append(canon(op["cxx"]["shape"], op["cxx"]["stride"]))
    return out


def tiler_text(t):
    """A tiler of the vectors as CuTe text: null is '_', n is n:1, a layout its cute_str, a list a tiler."""
    if isinstance(t, list):
        return "<" + ",".join(tiler_text(x) for x in t) + ">"
    return "_" if t is None else f"{t}:1" if isinstance(t, int) else t["cute_str"]


def tuple_text(t):
    if isinstance(t, list):
        return "(" + ",".join(tuple_text(x) for x in t) + ")"
    return "_" if t is None else str(t)


class Failures:
    """Collects mismatches so one run reports all of them."""

    def __init__(self):
        self.items, self.count = [], 0

    def check(self, ok, what):
        self.count += 1
        if not ok:
            self.items.append(what)

    def expect(self, expr, op):
        try:
            got = canon_value(evaluate(expr))
        except tessera.TesseraError as e:
            # Refusing is C++'s own answer where its static checks reject the input.
            self.check("cxx_error" in op, f"{expr}: raised {e}")
            return
        want = accepted(op)
        self.check(got in want, f"{expr}: got {got}, want one of {want}")

    def done(self):
        assert self.count > 0, "no cases ran"
        assert not self.items, f"{len(self.items)} of {self.count} failed; first ones:\n" + "\n".join(self.items[:15])


def value(text):
    return evaluate(text)


# ---- categories -----------------------------------------------------------

def test_layouts(vectors):
    f = Failures()
    for e in vectors["layouts"]:
        L = e["layout"]["cute_str"]
        f.check(value(f"size({L})") == e["size"], f"size {L}")
        f.check(value(f"cosize({L})") == e["cosize"], f"cosize {L}")
        f.check(value(f"rank({L})") == e["rank"], f"rank {L}")
        f.check(value(f"depth({L})") == e["depth"], f"depth {L}")
        pairs = list(enumerate(e["values"])) if "values" in e else e["value_samples"]
        for i, v in pairs:
            f.check(value(f"eval({L}, {i})") == v, f"{L}({i}) != {v}")
        for c in e.get("crd2idx", []):
            f.check(value(f"eval({L}, {tuple_text(c['coord'])})") == c["index"], f"{L} at {c['coord']}")
        ic = e["idx2crd"]
        got = value(f"idx2crd({ic['index']}, shape({L}))")
        f.check(to_lists(got) == ic["coord"], f"idx2crd({ic['index']}) of {L}: {got}")
        rank = e["rank"]
        profile = "(" + ",".join(["1"] * rank) + ")" if isinstance(e["layout"]["shape"], list) else "1"
        for name, expr in (("coalesce", f"coalesce({L})"), ("coalesce_bymode", f"coalesce({L}, {profile})"),
                           ("filter", f"filter({L})"), ("right_inverse", f"right_inverse({L})"),
                           ("left_inverse", f"left_inverse({L})"), ("complement", f"complement({L})")):
            if name in e:
                f.expect(expr, e[name])
    f.done()


def test_negative_strides(vectors):
    f = Failures()
    for e in vectors["negative_stride_layouts"]:
        L = e["layout"]["cute_str"]
        for i, v in enumerate(e["values"]):
            f.check(value(f"eval({L}, {i})") == v, f"{L}({i})")
        f.check(value(f"cosize({L})") == e["cosize_cxx"], f"cosize {L}")
        f.check(canon_value(evaluate(f"coalesce({L})")) == canon(e["coalesce"]["shape"], e["coalesce"]["stride"]),
                f"coalesce {L}")
    f.done()


def test_int_tuples(vectors):
    f = Failures()
    for e in vectors["int_tuple"]:
        op = e["op"]
        if op == "idx2crd":
            expr = f"idx2crd({e['index']}, {tuple_text(e['shape'])})"
        elif op == "shape_div":
            expr = f"shape_div({tuple_text(e['a'])}, {tuple_text(e['b'])})"
        elif op == "product":
            expr = f"size({tuple_text(e['a'])})"
        else:
            expr = f"{op}({tuple_text(e['a'])})"
        try:
            got = to_lists(value(expr))
        except tessera.TesseraError as err:
            f.check(bool(e.get("raises")), f"{expr}: raised {err}")
            continue
        want = e["result"]
        if op == "flatten" and not isinstance(got, list):
            got = [got]
        f.check(not e.get("raises") and got == want, f"{expr}: got {got}, want {want} (raises={e.get('raises')})")
    f.done()


@pytest.mark.parametrize("category, expr", [
    ("composition", lambda e: f"composition({e['A']['cute_str']}, {e['B']['cute_str']})"),
    ("composition_bymode", lambda e: f"composition({e['A']['cute_str']}, {tiler_text(e['tiler'])})"),
    ("complement", lambda e: f"complement({e['A']['cute_str']}, {tuple_text(e['cotarget'])})"),
])
def test_one_operation(vectors, category, expr):
    f = Failures()
    for e in vectors[category]:
        f.expect(expr(e), e)
    f.done()


@pytest.mark.parametrize("category, tiler, ops", [
    ("divide", "tiler", ("logical_divide", "zipped_divide", "tiled_divide", "flat_divide")),
    ("product", "B", ("logical_product", "zipped_product", "tiled_product", "flat_product", "blocked_product",
                      "raked_product")),
])
def test_divides_and_products(vectors, category, tiler, ops):
    f = Failures()
    for e in vectors[category]:
        for op in ops:
            if op in e:
                f.expect(f"{op}({e['A']['cute_str']}, {tiler_text(e[tiler])})", e[op])
    f.done()


def test_swizzle(vectors):
    f = Failures()
    for e in vectors["swizzle"]:
        sw = tessera.layout.Swizzle(e["B"], e["M"], e["S"])
        f.check(str(sw) == e["cute_str"], f"{sw} printed")
        f.check(sw.yyy_msk == e["yyy_mask"] and sw.zzz_msk == e["zzz_mask"], f"{sw} masks")
        f.check(value(f"size({sw})") == e["size"], f"{sw} size")
        for x, y in zip(e["inputs"], e["outputs"]):
            f.check(value(f"eval({sw}, {x})") == y, f"{sw}({x}) != {y}")
    f.done()


def test_swizzled_layouts(vectors):
    f = Failures()
    for e in vectors["swizzle_layout"]:
        text = e["cute_str"]
        f.check(str(evaluate(text)) == text, f"{text} printed as {evaluate(text)}")
        f.check(value(f"size({text})") == e["size"], f"size {text}")
        for i, v in enumerate(e["values"]):
            f.check(value(f"eval({text}, {i})") == v, f"{text}({i}) != {v}")
    f.done()


def test_print_layout_and_latex(vectors):
    f = Failures()
    for e in vectors["print_layout"]:
        got = tessera.layout.print_layout(tessera.layout._read(e["layout"]["cute_str"]))
        f.check(got == e["text"], f"print_layout {e['layout']['cute_str']}:\n{got}\nwant\n{e['text']}")
    for e in vectors["print_latex"]:
        got = tessera.layout.latex(tessera.layout._read(e["layout"]["cute_str"]))
        f.check(got == e["text"], f"print_latex {e['layout']['cute_str']}")
    f.done()


def test_printing_round_trips(vectors):
    f = Failures()
    for e in vectors["layouts"]:
        f.check(str(evaluate(e["layout"]["cute_str"])) == e["layout"]["cute_str"], e["layout"]["cute_str"])
        f.check(str(evaluate(e["pycute_str"])) == e["layout"]["cute_str"], "pycute notation " + e["pycute_str"])
    f.done()


def arg_text(a):
    if isinstance(a, dict):
        return a["cute_str"]
    if isinstance(a, list) and any(isinstance(x, dict) or x is None for x in a):
        return tiler_text(a)
    return tuple_text(a)


def test_rejected_inputs_are_refused(vectors):
    f = Failures()
    for e in vectors["rejected"]:
        expr = f"{e['op']}(" + ", ".join(arg_text(a) for a in e["args"]) + ")"
        try:
            got = evaluate(expr)
        except tessera.TesseraError as err:
            f.check(len(str(err)) > 10, f"{expr}: an empty sentence")
            continue
        f.check(False, f"{expr} returned {got} instead of refusing")
    f.done()
