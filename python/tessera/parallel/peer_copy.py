"""Row all-gather and reduce-scatter by the copy engines, for the GPUs of one host.

NCCL's collectives run as kernels on the SMs, so beside a GEMM they take SMs from it and get
few themselves: on two H100s the tensor-parallel pair's GEMMs ran 21% slower overlapped and
NCCL twice as slow (dev/NOTES.md, issue 36). A device-to-device copy between GPUs of one host
is a cudaMemcpyAsync, which the copy engines carry over NVLink without an SM, so a gather made
of copies leaves the GEMM its SMs: dev/results/parallel-h100x2/ce-*.log measured a GEMM with
an all-gather beside it at 1.14 of the longer alone by copies against 1.22 by NCCL.

Each rank writes its rows straight into every peer's copy of a buffer in symmetric memory
(torch.distributed._symmetric_memory: one allocation a rank, each mapped into the others), so
no rank stages anything: the gather's rows land in the peers' gathered buffers, the
reduce-scatter's in the peers' inboxes, one slot a sender, summed by the owner. A barrier
before the copies keeps a rank from overwriting rows a peer still reads; one after them makes
every peer's rows visible before they are used. Everything is queued on the current stream.
"""
import warnings

import torch
import torch.distributed as dist

TRANSPORTS = ("nccl", "copy_engine")  # the layers' transport= choices


def check_transport(transport):
    """Refuses a transport= other than TRANSPORTS'."""
    if transport not in TRANSPORTS:
        raise ValueError(f"transport={transport!r}: one of {', '.join(TRANSPORTS)}")


def peer_copies_for(transport, group, world, rank, device):
    """A layer's PeerCopies where transport="copy_engine" has peers to copy to, else None
    (NCCL's collectives, or a world of one with nothing to exchange)."""
    has_peers = group is not None and world > 1
    return PeerCopies(group, world, rank, device) if transport == "copy_engine" and has_peers else None


class PeerCopies:
    """Copy-engine collectives along rows over `group` (None: the world), ranks on GPUs of one
    host. The buffers are made on first use and grow to the largest call; making them is a
    collective, so every rank must make the same calls with the same sizes in the same order
    (as the layers do: every rank passes the same rows)."""

    def __init__(self, group, world, rank, device):
        if device.type != "cuda":
            raise ValueError(f"transport='copy_engine' needs CUDA devices, not {device}")
        try:
            import torch.distributed._symmetric_memory as symm_mem
        except ImportError:
            symm_mem = None
        if symm_mem is None or not hasattr(symm_mem, "empty"):
            raise RuntimeError("transport='copy_engine' needs torch.distributed._symmetric_memory's empty and "
                               "rendezvous (PyTorch 2.6 or later)")
        self._symm = symm_mem
        self.group = group if group is not None else dist.group.WORLD
        self.world, self.rank, self.device = world, rank, device
        self._buffers = {}  # name -> (this rank's buffer, the symmetric-memory handle, every rank's buffer)
        if torch.torch_version.TorchVersion(torch.__version__) < (2, 11):
            with warnings.catch_warnings():  # before a rendezvous in PyTorch 2.6-2.10; deprecated since
                warnings.simplefilter("ignore", FutureWarning)
                symm_mem.enable_symm_mem_for_group(self.group.group_name)

    def _buffer(self, name, rows, cols, dtype):
        """Buffer `name` of at least rows x cols: (this rank's, its handle, each rank's as a
        tensor of this process). Collective when it is made or grown."""
        have = self._buffers.get(name)
        if have is None or have[0].shape[0] < rows or have[0].shape[1] != cols or have[0].dtype != dtype:
            buf = self._symm.empty(rows, cols, dtype=dtype, device=self.device)
            # The allocation zeroes its signal pad with a memset queued behind this device's
            # work in flight, while rendezvous lines up the hosts only: a peer's first barrier
            # signal could land before that memset and be erased (every later barrier one
            # short: a hang). The device finishes the memset first; this runs only when a
            # buffer is made or grown.
            torch.cuda.synchronize(self.device)
            handle = self._symm.rendezvous(buf, self.group.group_name)
            # get_buffer counts from the allocation's segment, where the buffer starts handle.offset bytes in
            start = handle.offset // buf.element_size()
            peers = [buf if p == self.rank else handle.get_buffer(p, (rows, cols), dtype, start)
                     for p in range(self.world)]
            have = self._buffers[name] = (buf, handle, peers)
        return have

    def _push(self, handle, peers, pieces):
        """The copies of one collective, between its two barriers: each (rank p, row, rows) of
        `pieces` written into p's buffer from that row on (empty pieces skipped). The barrier
        before keeps a rank from overwriting rows a peer still reads; the one after makes every
        sender's rows visible before they are used."""
        handle.barrier()
        for p, row, src in pieces:
            if src.shape[0]:
                peers[p][row:row + src.shape[0]].copy_(src)
        handle.barrier()

    def all_gather(self, x, offset, rows):
        """Every rank's x ([m, cols], the same m everywhere; rows `offset` .. of `rows` that this
        rank passes in one pass, so that the pieces of one pass use disjoint buffer rows) as one
        [world * m, cols] tensor, rank-major: a view of the gather buffer, valid until the next
        all_gather of the same rows."""
        m, cols = x.shape
        buf, handle, peers = self._buffer("gather", self.world * rows, cols, x.dtype)
        base, src = self.world * offset, x.contiguous()
        self._push(handle, peers, [(p, base + self.rank * m, src) for p in range(self.world)])
        return buf[base:base + self.world * m]

    def reduce_scatter(self, out, partial, offset, rows):
        """out ([m, cols]) = the sum over the ranks of their partial's ([world * m, cols]) block of
        rows owned by this rank (block r for rank r), summed in float32 and rounded once (out
        contiguous); offset and rows as all_gather's."""
        m, cols = out.shape
        if tuple(partial.shape) != (self.world * m, cols):
            raise ValueError(f"partial: expected {(self.world * m, cols)}, got {tuple(partial.shape)}")
        buf, handle, peers = self._buffer("scatter", self.world * rows, cols, partial.dtype)
        base, src = self.world * offset, partial.contiguous()
        # rank p's block into slot `rank` of p's inbox
        self._push(handle, peers, [(p, base + self.rank * m, src[p * m:(p + 1) * m]) for p in range(self.world)])
        inbox = buf[base:base + self.world * m].view(self.world, m, cols)
        torch.sum(inbox, dim=0, out=out)  # torch accumulates 16-bit sums in float32

    def exchange(self, inp, send_splits, at_peers, out_rows, capacity, name):
        """all_to_all of inp's rows (2-D, any dtype; they travel as bytes): rows
        sum(send_splits[:p]) .. + send_splits[p] go to rank p, landing at row at_peers[p] of its
        buffer `name`. Returns this rank's first out_rows rows of its own buffer, in inp's dtype:
        a view, valid until the next exchange through `name`. capacity: the buffer's rows, the
        same on every rank (the most any rank receives); the caller computes at_peers from every
        rank's splits, so that the senders' rows land side by side in rank order."""
        rows = inp.contiguous().view(torch.uint8)  # bytes as they are (a copy_ would convert an FP8's values)
        buf, handle, peers = self._buffer(name, max(capacity, 1), rows.shape[1], torch.uint8)
        starts = [sum(send_splits[:p]) for p in range(self.world)]
        self._push(handle, peers, [(p, at_peers[p], rows[starts[p]:starts[p] + send_splits[p]])
                                   for p in range(self.world)])
        return buf[:out_rows].view(inp.dtype)

