"""The library handle, device information and version."""
import ctypes
import dataclasses

from . import _lib
from .errors import check

FAMILIES = {1 << 0: "dense-16bit", 1 << 1: "dense-fp8", 1 << 2: "grouped", 1 << 3: "small-m"}


@dataclasses.dataclass(frozen=True)
class DeviceInfo:
    """tess_device_info as Python values."""
    device: int
    name: str
    compute_capability: tuple
    sm_count: int
    smem_per_block_optin: int
    smem_per_sm: int
    l2_bytes: int
    global_mem_bytes: int
    sm_clock_khz: int
    mem_clock_khz: int
    mem_bus_width_bits: int
    driver_version: int
    runtime_version: int
    has_native_code: bool
    kernel_families: tuple  # names, e.g. ("dense-16bit",)


def version():
    """(major, minor, patch) of the loaded library."""
    v = _lib.lib().tess_version()
    return (v // 10000, v // 100 % 100, v % 100)


def version_string():
    """'0.2.0 (cuda archs 90a)'."""
    return _lib.lib().tess_version_string().decode()


def _stream_pointer(stream):
    """A cudaStream_t as an int from None, an int, or a torch/cupy stream object."""
    if stream is None:
        return 0
    if isinstance(stream, int):
        return stream
    for attr in ("cuda_stream", "ptr", "handle"):
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    raise TypeError(f"cannot use {type(stream).__name__} as a CUDA stream")


class Handle:
    """tessera on one CUDA device: `with tessera.Handle(0) as h: ...`."""

    def __init__(self, device=0):
        self._h = ctypes.c_void_p()
        check(_lib.lib().tess_create(ctypes.byref(self._h), int(device)))
        self.device = int(device)
        self._workspace_owner = None

    def close(self):
        """Destroys the handle (also done when it is garbage-collected)."""
        if self._h:
            check(_lib.lib().tess_destroy(self._h))
            self._h = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    @property
    def stream(self):
        """The cudaStream_t (an int) run calls queue work on; set from an int or a torch/cupy stream."""
        out = ctypes.c_void_p()
        check(_lib.lib().tess_get_stream(self._h, ctypes.byref(out)))
        return out.value or 0

    @stream.setter
    def stream(self, stream):
        check(_lib.lib().tess_set_stream(self._h, ctypes.c_void_p(_stream_pointer(stream))))

    def set_workspace(self, ptr, nbytes=None):
        """Gives tessera scratch device memory: a pointer and a size, or a tensor (kept alive here)."""
        owner = None
        if nbytes is None and hasattr(ptr, "data_ptr"):
            owner, nbytes, ptr = ptr, ptr.numel() * ptr.element_size(), ptr.data_ptr()
        check(_lib.lib().tess_set_workspace(self._h, ctypes.c_void_p(ptr or None), int(nbytes or 0)))
        self._workspace_owner = owner

    @property
    def sm_budget(self):
        """The streaming multiprocessors this handle's GEMMs use (the device's count without a budget)."""
        out = ctypes.c_int()
        check(_lib.lib().tess_get_sm_budget(self._h, ctypes.byref(out)))
        return out.value

    @sm_budget.setter
    def sm_budget(self, sms):
        """Caps the SMs this handle's GEMMs use at `sms` (1 to the device's count; 0 or None: all),
        leaving the rest to kernels on other streams (tess_set_sm_budget)."""
        check(_lib.lib().tess_set_sm_budget(self._h, int(sms or 0)))

    def device_info(self):
        """What the device is and what this build can run on it."""
        raw = _lib.DeviceInfoStruct()
        raw.struct_size = ctypes.sizeof(raw)
        check(_lib.lib().tess_get_device_info(self._h, ctypes.byref(raw)))
        families = tuple(name for bit, name in FAMILIES.items() if raw.kernel_families & bit)
        return DeviceInfo(raw.device, raw.name.decode(), (raw.cc_major, raw.cc_minor), raw.sm_count,
                          raw.smem_per_block_optin, raw.smem_per_sm, raw.l2_bytes, raw.global_mem_bytes,
                          raw.sm_clock_khz, raw.mem_clock_khz, raw.mem_bus_width_bits, raw.driver_version,
                          raw.runtime_version, bool(raw.has_native_code), families)
