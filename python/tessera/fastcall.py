"""The hot path of a prepared call (tessera.call_cache): its key's tensor part and its launch,
through tessera._fastcall (python/ext/fastcall.c, CPython's stable ABI) where it was built, else
the same steps in Python and ctypes.

The module is looked for in the package (`pip install ./python` puts it there), then beside the
loaded libtessera (a CMake build tree's build/lib). TESSERA_FASTCALL=0 in the environment turns
it off (the Python steps then run: tests compare the two)."""
import ctypes
import glob
import importlib.machinery
import importlib.util
import os
import threading

from . import _lib

_lock = threading.Lock()
_module = None  # the loaded module; False once looked for and not found (or turned off)
_addresses = {}  # C function name -> its address in the loaded libtessera
_gemm_prepared = None  # the module's gemm_prepared once set up; False where it cannot be


def _find():
    """tessera._fastcall, or None."""
    if os.environ.get("TESSERA_FASTCALL", "1") == "0":
        return None
    try:
        from . import _fastcall
        return _fastcall
    except ImportError:
        pass
    try:
        folder = os.path.dirname(_lib.library_path())
    except OSError:
        return None
    if ".abi3.so" not in importlib.machinery.EXTENSION_SUFFIXES:
        return None  # an interpreter that does not load stable-ABI modules (free-threaded 3.13t)
    for path in sorted(glob.glob(os.path.join(folder, "_fastcall*.abi3.so"))):
        try:
            spec = importlib.util.spec_from_file_location("tessera._fastcall", path)
            found = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(found)
            return found
        except ImportError:
            continue
    return None


def module():
    """The loaded tessera._fastcall, or None where there is none (found once)."""
    global _module
    if _module is None:
        with _lock:
            if _module is None:
                _module = _find() or False
    return _module or None


def reset():
    """Looks for the module again on next use (tests that change TESSERA_FASTCALL)."""
    global _module, _gemm_prepared
    with _lock:
        _module = _gemm_prepared = None


def gemm_prepared():
    """The module's gemm_prepared (a whole prepared tessera.gemm call in C: key, lookup, launch),
    set up with torch's tensor type, its current-stream accessor and tess_gemm_fused; None where
    there is no module, no torch, or no such accessor in this torch."""
    global _gemm_prepared
    if _gemm_prepared is None:
        import sys
        fast, torch = module(), sys.modules.get("torch")
        raw = getattr(getattr(torch, "_C", None), "_cuda_getCurrentRawStream", None)
        if fast is None or raw is None:
            return None  # looked for again next time (torch may be imported later)
        fast.setup(torch.Tensor, raw, address("tess_gemm_fused"))
        _gemm_prepared = fast.gemm_prepared
    return _gemm_prepared or None


def address(name):
    """The address of libtessera's function `name` (which the module calls through)."""
    found = _addresses.get(name)
    if found is None:
        found = _addresses[name] = ctypes.cast(getattr(_lib.lib(), name), ctypes.c_void_p).value
    return found
