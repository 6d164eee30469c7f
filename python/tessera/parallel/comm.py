"""Process groups, streams and the overlap schedule shared by the parallel layers.

A layer's forward is a list of items (micro-batches, or chunks of rows), each
taken through three stages: comm_in (communication), compute (GEMMs) and
comm_out (communication). `run_pipeline` orders them so that the
communication of one item runs on a dedicated stream while another item's
GEMMs run on the compute stream; `Streams` holds the two streams and the
events between them, and does nothing where there is no CUDA (gloo on CPU:
the same schedule then simply runs in order).
"""
import contextlib

import torch
import torch.distributed as dist


def group_info(group):
    """(group, world size, rank). group None means WORLD when torch.distributed is initialized,
    and a world of one process with no collectives at all when it is not."""
    if dist.is_available() and dist.is_initialized():
        g = group if group is not None else dist.group.WORLD
        return g, dist.get_world_size(g), dist.get_rank(g)
    if group is not None:
        raise ValueError("a process group was given but torch.distributed is not initialized "
                         "(call torch.distributed.init_process_group first)")
    return None, 1, 0


def resolve_device(device):
    """The layer's torch.device: `device`, with a CUDA device's index filled in (the current
    one), or the current CUDA device where CUDA is available and device is None, else the CPU."""
    if device is None:
        return torch.device("cuda", torch.cuda.current_device()) if torch.cuda.is_available() else torch.device("cpu")
    device = torch.device(device)
    if device.type == "cuda" and device.index is None:
        return torch.device("cuda", torch.cuda.current_device())
    return device


def exchange_rows(inp, out_rows, in_splits, out_splits, group):
    """all_to_all_single of the rows (dim 0) of `inp` with uneven splits: in_splits[r] rows go to
    rank r, out_splits[r] rows come from it; returns the [out_rows, ...] result. The rows travel
    as bytes (a uint8 view), so any dtype works on NCCL and gloo alike. In a world of one (no
    group) the input is returned as it is."""
    if group is None:
        return inp
    out = torch.empty((out_rows,) + tuple(inp.shape[1:]), dtype=inp.dtype, device=inp.device)
    if inp.dim() == 1 or inp.element_size() == 1:
        dist.all_to_all_single(out, inp, out_splits, in_splits, group=group)
    else:
        dist.all_to_all_single(out.view(torch.uint8), inp.view(torch.uint8), out_splits, in_splits, group=group)
    return out


class Streams:
    """The compute stream (PyTorch's current stream when made) and a communication stream of
    one CUDA device, and the events and record_stream calls that order work between them.
    Disabled (not CUDA, or enabled=False), every method is a no-op and everything runs on the
    current stream in program order."""

    def __init__(self, device, comm_stream=None, enabled=True):
        device = torch.device(device)
        self.enabled = bool(enabled) and device.type == "cuda"
        if self.enabled:
            self.compute_stream = torch.cuda.current_stream(device)
            self.comm_stream = comm_stream if comm_stream is not None else torch.cuda.Stream(device)

    def on_comm(self):
        """Context: work queued inside goes to the communication stream."""
        return torch.cuda.stream(self.comm_stream) if self.enabled else contextlib.nullcontext()

    def mark(self):
        """An event recorded on the current stream (None when disabled)."""
        if not self.enabled:
            return None
        ev = torch.cuda.Event()
        ev.record()
        return ev

    def wait(self, event):
        """The current stream waits for `event` (recorded on another stream)."""
        if event is not None:
            torch.cuda.current_stream().wait_event(event)

    def used_on_comm(self, *tensors):
        """Tensors made on the compute stream and read or written on the communication stream:
        the caching allocator must not reuse their memory before the latter is done."""
        if self.enabled:
            for t in tensors:
                if t is not None and t.device.type == "cuda":
                    t.record_stream(self.comm_stream)

    def used_on_compute(self, *tensors):
        """Tensors made on the communication stream and used on the compute stream."""
        if self.enabled:
            for t in tensors:
                if t is not None and t.device.type == "cuda":
                    t.record_stream(self.compute_stream)


def check_positive(**values):
    """Refuses any of the named values that is not a positive integer."""
    for name, v in values.items():
        if not isinstance(v, int) or v <= 0:
            raise ValueError(f"{name}={v!r}: a positive integer")


def check_sm_budget(sm_budget):
    """Refuses an SM budget other than None, 0 (all SMs) or a positive count."""
    if sm_budget is not None and (not isinstance(sm_budget, int) or sm_budget < 0):
        raise ValueError(f"sm_budget={sm_budget!r}: None, 0 (all SMs) or a positive number of SMs")


def local_share(name, total, world, owns):
    """total / world, what each rank of a world owns of `name`; refused, naming the numbers,
    where it does not divide (owns: what a rank holds, for the sentence)."""
    if total % world:
        raise ValueError(f"{name}={total} is not divisible by the world size {world}: each rank owns {owns} "
                         f"(use a multiple of {world})")
    return total // world


class CommStreamOwner:
    """A layer's communication stream, made on first use (CUDA only): the layers keep one each,
    so that their collectives queue behind one another and beside the compute stream. It has a
    high priority, so that the block scheduler places NCCL's CTAs first on the SMs that the GEMMs'
    budget leaves free or that a finishing GEMM releases."""

    _comm_stream = None

    def comm_stream(self):
        """The layer's communication stream on its device (self.device)."""
        if self._comm_stream is None:
            self._comm_stream = torch.cuda.Stream(self.device, priority=-1)  # -1: torch's high priority
        return self._comm_stream


def run_pipeline(items, comm_in, compute, comm_out, streams, post=None):
    """Runs comm_in(item) -> compute(item) -> comm_out(item) [-> post(item)] for every item
    (each stage mutates its item), queued so that communication on the communication stream
    overlaps computation on the compute stream:

        comm:     in0 in1 out0 in2 out1 in3 ...
        compute:      c0      c1      c2  p0  c3  p1 ...

    item i+1's comm_in and item i-1's comm_out run while item i computes; post(i) (compute
    stream, after comm_out(i)) is queued after compute(i+1), so it waits for nothing that
    compute(i+1) does not hide. Each stage waits for its predecessor by an event; on return the
    compute stream (the current one) has waited for every comm_out. Returns [post(item)] (None
    without post). Call it with the compute stream current; every rank must call it with the
    same number of items (the collectives are issued in the same order everywhere)."""
    n = len(items)
    ready = streams.mark()  # what the items' inputs need, queued on the compute stream so far
    done_in = [None] * n
    done_out = [None] * n
    results = [None] * n

    def launch_in(i):
        with streams.on_comm():
            streams.wait(ready)
            comm_in(items[i])
            done_in[i] = streams.mark()

    def finish(i):
        streams.wait(done_out[i])
        if post is not None:
            results[i] = post(items[i])

    if n:
        launch_in(0)
    for i in range(n):
        if i + 1 < n:
            launch_in(i + 1)
        streams.wait(done_in[i])
        compute(items[i])
        done_compute = streams.mark()
        with streams.on_comm():
            streams.wait(done_compute)
            comm_out(items[i])
            done_out[i] = streams.mark()
        if i >= 1:
            finish(i - 1)
    if n:
        finish(n - 1)
    return results
