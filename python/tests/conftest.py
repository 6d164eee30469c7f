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
