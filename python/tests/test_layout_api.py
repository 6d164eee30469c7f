"""tessera.layout: pycute's API over libtessera."""
import pytest

import tessera
from tessera.layout import (ComposedLayout, Layout, ScaledBasis, Swizzle, blocked_product, coalesce, complement,
                            composition, cosize, crd2idx, depth, explain, filter, flat_divide, idx2crd, latex,
                            left_inverse, logical_divide, logical_product, make_identity_layout, make_layout,
                            mma_atom, mma_atom_shape, mma_atom_thr_id, mma_atoms, print_layout, raked_product, rank,
                            right_inverse, shape_div, size, svg, tiled_divide, zipped_divide, zipped_product)


def test_layout_object():
    L = Layout((4, 8), (1, 4))
    assert str(L) == "(4,8):(1,4)" and repr(L) == "Layout((4, 8), (1, 4))"
    assert Layout((4, 8)) == L and hash(Layout((4, 8))) == hash(L)
    assert L.shape == (4, 8) and L.stride == (1, 4)
    assert len(L) == 2 and L[1] == Layout(8, 4) and size(L) == 32 and cosize(L) == 32
    assert L(9) == 9 and L(1, 2) == 9 and L((1, 2)) == 9
    assert L(None, 2) == Layout((4,), (1,))  # a slice, as pycute
    assert Layout(((2, 2), 3))((1, 0), 2) == 1 + 0 * 2 + 2 * 4
    assert rank(Layout(((2, 2), 3))) == 2 and depth(Layout(((2, 2), 3))) == 2
    assert Layout(8)[0] == Layout(8)


def test_algebra_matches_cute():
    assert composition(Layout((6, 2), (8, 2)), Layout((4, 3), (3, 1))) == Layout(((2, 2), 3), ((24, 2), 8))
    assert coalesce(Layout((2, (1, 6)), (1, (6, 2)))) == Layout(12, 1)
    assert coalesce(Layout((2, (1, 6)), (1, (6, 2))), (1, 1)) == Layout((2, 6), (1, 2))
    assert filter(Layout((4, 2), (1, 0))) == Layout(4, 1)
    assert complement(Layout(4, 1), 24) == Layout(6, 4)
    assert complement(Layout((2, 2), (1, 6))) == Layout(3, 2)  # C++'s default cotarget: cosize
    assert right_inverse(Layout((2, 2, 2), (4, 2, 1))) == Layout((2, 2, 2), (4, 2, 1))
    assert left_inverse(Layout(4, 2)) == Layout((2, 4), (0, 1))
    assert logical_divide(Layout((24,), (1,)), Layout((4,), (1,))) == Layout(((4,), 6), ((1,), 4))
    A, T = Layout((9, (4, 8)), (59, (13, 1))), (Layout(3, 3), Layout((2, 4), (1, 8)))
    assert str(zipped_divide(A, T)) == "((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))"
    assert str(tiled_divide(A, T)) == "((3,(2,4)),3,(2,2)):((177,(13,2)),59,(26,1))"
    assert str(flat_divide(A, T)) == "(3,(2,4),3,(2,2)):(177,(13,2),59,(26,1))"
    assert logical_divide(Layout((8, 4), (1, 8)), (2, None)) == Layout(((2, 4), 4), ((1, 2), 8))
    assert logical_product(Layout(4, 1), 2) == Layout((4, 2), (1, 4))  # C++: an int tiler n is n:1
    assert str(zipped_product(Layout((8, 4), (1, 8)), (2, 3))) == "((8,4),(2,3)):((1,8),(8,1))"
    assert str(blocked_product(Layout((2, 2), (4, 1)), Layout(6, 1))) == "((2,(2,3)),(2,1)):((4,(2,8)),(1,0))"
    assert str(raked_product(Layout(4, 1), Layout(3, 1))) == "((3,4)):((4,1))"
    assert make_layout(Layout(4, 1), Layout(8, 4)) == Layout((4, 8), (1, 4))
    assert make_layout([Layout(4, 1), Layout(8, 4)]) == Layout((4, 8), (1, 4))


def test_integer_tuples():
    assert idx2crd(17, (2, (3, 4))) == (1, (2, 2))
    assert crd2idx((1, (2, 2)), (2, (3, 4))) == 17
    assert crd2idx(17, (2, (3, 4))) == 17
    assert shape_div((3, 4), 6) == (1, 2)
    assert tessera.layout.prefix_product((2, (3, 4))) == (1, (2, 6))
    assert tessera.layout.flatten((2, (3, 4))) == (2, 3, 4) and tessera.layout.product((2, (3, 4))) == 24


def test_swizzles():
    sw = Swizzle(3, 4, 3)
    assert str(sw) == "Sw<3,4,3>" and sw.size() == 1024
    assert sw(0b1010000000) == 0b1010000000 ^ 0b0001010000
    C = ComposedLayout(sw, 0, Layout((8, 64), (64, 1)))
    assert str(C) == "Sw<3,4,3> o 0 o (8,64):(64,1)" and C(2) == 144 and C(2, 0) == 144
    assert size(C) == 512
    assert Swizzle(0, 3, 0)(5) == 5  # C++: Sw<0,M,0> is the identity


def test_identity_and_atoms():
    I = make_identity_layout((4, 8))
    assert I.stride == (ScaledBasis(1, 0), ScaledBasis(1, 1)) and I(3, 5) == (3, 5)
    tv, tile = mma_atom("wgmma_64x64x16_f32", "C")
    assert tile == (64, 64) and str(tv) == "((4,8,4),(2,2,8)):((128,1,16),(64,8,512))"
    part = composition(make_identity_layout(tile), tv)
    assert part(37, 5) == (17, 11)  # thread 37, value 5 holds D[17][11] (PTX's figure)
    assert "mma_16x8x16_f32" in mma_atoms() and "mma_16x8x32_f32" in mma_atoms() and len(mma_atoms()) == 178


def test_umma_atoms():
    # CuTe DSL's printed atoms (seed 003): one CTA 128x256x16 and the pair's 256x256x16.
    assert mma_atom_thr_id("umma_128x256x16_f32") == Layout(1, 0)
    assert str(mma_atom("umma_128x256x16_f32", "A")[0]) == "(1,(128,16)):(128,(1,128))"
    assert str(mma_atom("umma_128x256x16_f32", "B")[0]) == "(1,(256,16)):(256,(1,256))"
    assert str(mma_atom("umma_128x256x16_f32", "C")[0]) == "(1,(128,256)):(128,(1,128))"
    assert mma_atom_thr_id("umma_2cta_256x256x16_f32") == Layout(2, 1)
    assert str(mma_atom("umma_2cta_256x256x16_f32", "A")[0]) == "(2,(128,16)):(128,(1,256))"
    assert str(mma_atom("umma_2cta_256x256x16_f32", "B")[0]) == "(2,(128,16)):(128,(1,256))"
    tv, tile = mma_atom("umma_2cta_256x256x16_f32", "C")
    assert str(tv) == "(2,(128,256)):(128,(1,256))" and tile == (256, 256)
    assert tv(1, 0) == 128  # the second CTA's first accumulator is row 128
    assert mma_atom_shape("umma_2cta_256x256x16_f32") == ((256, 256, 16), (128, 256, 16))
    assert mma_atom_shape("umma_128x64x16_f32") == ((128, 64, 16), (128, 64, 16))
    assert mma_atom_thr_id("wgmma_64x64x16_f32") == Layout(128, 1)
    names = mma_atoms()
    assert [n for n in names if n.startswith("umma_128x")] == [f"umma_128x{n}x16_f32" for n in range(8, 257, 8)]
    assert [n for n in names if n.startswith("umma_2cta")] == [f"umma_2cta_256x{n}x16_f32" for n in range(16, 257, 16)]
    with pytest.raises(tessera.InvalidValueError, match="multiple of 16"):
        mma_atom_thr_id("umma_2cta_256x24x16_f32")


def test_pictures():
    table = print_layout(Layout((2, (2, 2)), (4, (2, 1))))
    assert table.splitlines()[3] == " 0  | 0 | 2 | 1 | 3 |"
    assert latex(Layout((4, 2), (2, 1))).startswith("% Layout: (4,2):(2,1)\n\\documentclass")
    tv, tile = mma_atom("wgmma_64x8x16_f32")
    picture = svg(tv, tile)
    assert picture.startswith("<svg") and ">T127<" in picture
    walk = explain(tv, (1, 0), rows=64)
    assert "offset      128" in walk and "(0,2)" in walk


def test_errors_carry_sentences():
    with pytest.raises(tessera.TesseraError, match="not admissible"):
        composition(Layout((8, 8), (8, 1)), Layout(6, 3))
    with pytest.raises(ValueError, match="not injective"):
        complement(Layout((2, 2), (1, 1)), 16)
    with pytest.raises(tessera.InvalidValueError, match="congruent"):
        Layout((4, 8), (1, (4, 2)))
    with pytest.raises(tessera.InvalidValueError, match=r"\|shift\| >= bits"):
        Swizzle(3, 4, 2)
    with pytest.raises(tessera.InvalidValueError, match="unknown MMA atom"):
        mma_atom("wgmma_64x7x16_f32")
