"""bench/energy.py, the NVML meter of bench/grouped.py, without a GPU: a missing NVML measures NaN and
never fails, stop without start is safe, and with the stand-in NVML the C tests build
(tests/unit/fake_nvml.c, found beside $TESSERA_LIBRARY's build) the windows report its 1500 MHz and
400 W. Needs neither torch nor libtessera."""
import math
import os
import sys
import time

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
sys.path.insert(0, os.path.join(REPO, "bench"))

import energy  # noqa: E402


def all_nan(w):
    return math.isnan(w.sm_mhz) and math.isnan(w.board_w) and math.isnan(w.joules) and w.samples == 0


def fake_nvml():
    """The stand-in NVML of the build that $TESSERA_LIBRARY (build/lib/libtessera.so) belongs to."""
    lib = os.environ.get("TESSERA_LIBRARY", os.path.join(REPO, "build", "lib", "libtessera.so"))
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(lib))), "tests", "libfake_nvml.so")
    return path if os.path.exists(path) else None


def test_missing_nvml_measures_nan():
    m = energy.Meter(library="/nonexistent/libnvidia-ml.so.1")
    assert not m.available and "NVML not found" in m.why
    assert all_nan(m.stop())  # stop without start
    assert m.start() is False
    assert all_nan(m.stop())
    assert math.isnan(m.power_limit_w())
    assert math.isnan(energy.per_ghz(100.0, m.stop())) and math.isnan(energy.per_joule(100.0, m.stop()))
    m.close()
    m.close()


def test_system_nvml_does_not_fail():
    m = energy.Meter()
    assert all_nan(m.stop())
    if m.start():
        time.sleep(0.03)
        w = m.stop()
        assert w.samples >= 2 and w.sm_mhz > 0 and w.board_w > 0
    else:
        assert m.why
    m.close()


def test_fake_nvml_windows(monkeypatch):
    path = fake_nvml()
    if path is None:
        pytest.skip("no build/tests/libfake_nvml.so (build the C tests first)")
    m = energy.Meter(library=path)
    assert m.available, m.why
    assert m.power_limit_w() == 700.0
    assert m.start() and not m.start()  # one window at a time
    w = m.stop()  # shorter than a period: the first and last samples
    assert w.samples >= 2 and w.sm_mhz == 1500.0 and abs(w.board_w - 400.0) < 1e-6 and not w.from_counter
    m.start()
    time.sleep(0.2)
    w = m.stop()
    assert w.from_counter and abs(w.board_w - 400.0) < 8.0 and w.samples >= 5
    assert abs(energy.per_ghz(750.0, w) - 500.0) < 1e-9
    monkeypatch.setenv("FAKE_NVML_NO_ENERGY", "1")  # a board without the counter
    m.start()
    time.sleep(0.12)
    w = m.stop()
    assert not w.from_counter and abs(w.board_w - 400.0) < 1e-6
    m.close()


def test_merge():
    a = energy.Window(1000.0, 300.0, 30.0, 0.1, 10, True)
    b = energy.Window(2000.0, 600.0, 180.0, 0.3, 30, True)
    total = energy.EMPTY.merge(a).merge(b)
    assert total.samples == 40 and abs(total.sm_mhz - 1750.0) < 1e-9 and abs(total.board_w - 525.0) < 1e-9
    assert total.from_counter
    unmeasured_first = energy.EMPTY.merge(energy.Window()).merge(a)
    assert math.isnan(unmeasured_first.sm_mhz) and math.isnan(unmeasured_first.board_w)
    assert math.isnan(total.merge(energy.Window()).board_w)
