"""The Python package over libtessera: loading, statuses as exceptions, dtypes, handle, version."""
import os
import subprocess
import sys

import pytest

import tessera
from conftest import gpu_count


def test_library_loads_and_versions_agree(header_version):
    assert os.path.exists(tessera.library_path())
    assert tessera.version() == header_version
    assert tessera.__version__ == ".".join(map(str, header_version))
    assert tessera.version_string().startswith(tessera.__version__ + " ")


def test_status_names_match_the_c_library():
    for st in tessera.Status:
        assert tessera.status_name(st) == "TESS_STATUS_" + st.name


def test_errors_are_value_errors_with_the_sentence():
    with pytest.raises(tessera.InvalidValueError) as info:
        tessera.DType.from_name("int4")
    assert "int4" in str(info.value) and "bf16" in str(info.value)
    assert isinstance(info.value, ValueError) and isinstance(info.value, tessera.TesseraError)
    assert info.value.status == tessera.Status.INVALID_VALUE
    assert issubclass(tessera.NoDeviceError, RuntimeError)


def test_dtypes():
    sizes = {tessera.DType.F32: 4, tessera.DType.F16: 2, tessera.DType.BF16: 2, tessera.DType.E4M3: 1,
             tessera.DType.E5M2: 1}
    for dt, size in sizes.items():
        assert dt.size == size
        assert tessera.DType.from_name(dt.short_name) is dt
    assert tessera.as_dtype("float8_e4m3fn") is tessera.DType.E4M3
    assert tessera.as_dtype("bfloat16") is tessera.DType.BF16
    assert tessera.as_dtype(14) is tessera.DType.BF16


def test_handle():
    if gpu_count() == 0:
        with pytest.raises(tessera.NoDeviceError) as info:
            tessera.Handle(0)
        assert len(str(info.value)) > 10
        return
    with tessera.Handle(0) as h:
        info = h.device_info()
        assert info.sm_count > 0 and info.name
        assert h.stream == 0
        h.stream = 0
        with pytest.raises(tessera.InvalidValueError):
            h.set_workspace(0x1010, 4096)  # not 256-byte aligned


def test_bad_device_raises_no_device():
    with pytest.raises(tessera.NoDeviceError):
        tessera.Handle(1 << 20)


def test_missing_library_is_reported_clearly(tmp_path):
    env = dict(os.environ, TESSERA_LIBRARY=str(tmp_path / "nowhere.so"))
    code = "import tessera\ntry:\n    tessera.version()\nexcept OSError as e:\n    print(e)\n"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert "cannot load libtessera.so" in out and "nowhere.so" in out


def test_imports_without_torch():
    """Without PyTorch, tessera imports and registers no operators (tessera.ops is None)."""
    code = "import sys; sys.modules['torch'] = None; import tessera; print(tessera.ops is None, tessera.version_string())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("True ")
