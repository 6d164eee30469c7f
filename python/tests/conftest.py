import os
import re

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))


@pytest.fixture(scope="session")
def header_version():
    """(major, minor, patch) as include/tessera.h defines them."""
    text = open(os.path.join(REPO, "include", "tessera.h")).read()
    return tuple(int(re.search(rf"#define TESS_VERSION_{p} (\d+)", text).group(1)) for p in ("MAJOR", "MINOR", "PATCH"))


def gpu_count():
    """Number of CUDA devices libtessera sees (0 where there is no driver)."""
    import tessera
    try:
        with tessera.Handle(0):
            return 1
    except tessera.NoDeviceError:
        return 0


needs_gpu = pytest.mark.skipif(gpu_count() == 0, reason="no CUDA device")


@pytest.fixture(scope="module")
def torch():
    """torch with a CUDA device, or the test is skipped."""
    t = pytest.importorskip("torch")
    if gpu_count() == 0 or not t.cuda.is_available():
        pytest.skip("no CUDA device")
    return t


def packed_strides(shape):
    """The strides (in elements) of a packed row-major tensor of `shape`."""
    strides, step = [], 1
    for e in reversed(shape):
        strides.insert(0, step)
        step *= e
    return tuple(strides)


def group_offs(torch, sizes):
    """torch._grouped_mm's offs for groups of `sizes` rows: each group's end, int32 on the GPU."""
    ends, total = [], 0
    for s in sizes:
        total += s
        ends.append(total)
    return torch.tensor(ends, dtype=torch.int32, device="cuda")


def dequantize(torch, q, scales, recipe, dtype):
    """q (rows x cols, FP8) times its factors of `recipe` ("tensor", "1x128", "128x128") in `dtype`."""
    rows, cols = q.shape
    f = scales.reshape(1, 1) if recipe == "tensor" else scales
    if recipe == "128x128":
        f = f.repeat_interleave(128, 0)[:rows]
    if recipe != "tensor":
        f = f.repeat_interleave(128, 1)[:, :cols]
    return q.to(dtype) * f.to(dtype)
