"""The prepared calls of tessera.gemm: a model calls the same few shapes again and again, so a
call on torch tensors remembers what its checks and descriptor came to, keyed by everything
they read (each tensor's shape, strides, dtype and device, a scale tensor's storage extent, the
scalars, the recipes, PyTorch's current stream or the caller's handle), and a later call with an equal key passes
only its pointers to the C library, which checks those (alignment) itself on every call."""
import sys
import threading
import weakref

from . import fastcall
from .scales import storage_extent

# Prepared calls kept (distinct layer shapes of a model, prefill and decode, with room to
# spare); past it the oldest goes first.
MAX_ENTRIES = 256

_lock = threading.Lock()
_entries = {}


def tensor_key(t):
    """What a call's checks read of one torch tensor (None stays None)."""
    if t is None:
        return None
    return (t.shape, t.stride(), t.dtype, t.device)


def scale_key(t):
    """A scale tensor's key: tensor_key plus its storage's extent, which bounds the factors the
    kernels may read."""
    if t is None:
        return None
    return (t.shape, t.stride(), t.dtype, t.device, storage_extent(t))


def current_stream(torch, device):
    """PyTorch's current stream on CUDA device `device` (an index or a torch.device) as a
    cudaStream_t int. torch._C._cuda_getCurrentRawStream (the accessor TorchInductor's generated
    code calls) returns it without building a torch.cuda.Stream object, a few microseconds less
    per call; torch.cuda.current_stream where a torch build lacks it."""
    index = device if isinstance(device, int) else (device.index if device.index is not None else
                                                    torch.cuda.current_device())
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw(index)
    return torch.cuda.current_stream(index).cuda_stream


def tensor_keys(tensors, scales):
    """The tensor part of a call's key: tensor_key of each of `tensors`, then scale_key of each of
    `scales`, as one tuple; where tessera._fastcall was built, its flat form of the same facts
    (plain ints and dtypes, which hash and compare faster than torch.Size and torch.device)."""
    fast = fastcall.module()
    if fast is not None:
        return fast.keys(tensors, scales)
    return tuple(tensor_key(t) for t in tensors) + tuple(scale_key(t) for t in scales)


def call_selector(handle, tensors, optional):
    """What selects a call's handle, where the call may be prepared: with the default handle
    (handle None), PyTorch's current stream (its cudaStream_t as an int) on the device of
    tensors[0]; with a tessera.Handle, a weak reference to it (the call runs on the handle's
    own stream, whatever it is then; a handle closed and replaced by another never matches).
    `tensors` must be torch tensors on a CUDA device and each of `optional` None or a torch
    tensor. None otherwise: the call is checked in full."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    tensor = torch.Tensor
    for t in tensors:
        if not isinstance(t, tensor):
            return None
    if tensors[0].device.type != "cuda":
        return None
    for t in optional:
        if t is not None and not isinstance(t, tensor):
            return None
    if handle is not None:
        try:
            return ("handle", weakref.ref(handle))
        except TypeError:  # not a weakly referable handle: checked in full
            return None
    return current_stream(torch, tensors[0].device)


def find(key):
    """The prepared call remembered for `key`, or None (also for a key that cannot be hashed:
    an unhashable recipe, activation or dtype, whose call is then checked in full)."""
    try:
        return _entries.get(key)
    except TypeError:
        return None


def put(key, prepared):
    """Remembers a prepared call, forgetting the oldest when full (an unhashable key: not at all)."""
    try:
        hash(key)
    except TypeError:
        return
    with _lock:
        if len(_entries) >= MAX_ENTRIES:
            _entries.pop(next(iter(_entries)))
        _entries[key] = prepared


def clear():
    """Forgets every prepared call (tests; a device reset)."""
    with _lock:
        _entries.clear()
