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
            handle = self._symm.rendezvous(buf, self.group.group_name)
            # get_buffer counts from the allocation's segment, where the buffer starts handle.offset bytes in
            start = handle.offset // buf.element_size()
            peers = [buf if p == self.rank else handle.get_buffer(p, (rows, cols), dtype, start)
                     for p in range(self.world)]
            have = self._buffers[name] = (buf, handle, peers)
        return have

    def all_gather(self, x, offset, rows):
        """Every rank's x ([m, cols], the same m everywhere; rows `offset` .. of `rows` that this
        rank passes in one pass, so that the pieces of one pass use disjoint buffer rows) as one
        [world * m, cols] tensor, rank-major: a view of the gather buffer, valid until the next
        all_gather of the same rows."""
        m, cols = x.shape
        buf, handle, peers = self._buffer("gather", self.world * rows, cols, x.dtype)
        base = self.world * offset
        handle.barrier()  # every peer is done with these rows of its buffer
        src = x.contiguous()
        for p in range(self.world):
            peers[p][base + self.rank * m:base + (self.rank + 1) * m].copy_(src)
        handle.barrier()  # every rank's rows have landed in this rank's buffer
        return buf[base:base + self.world * m]

    def reduce_scatter(self, out, partial, offset, rows):
        """out ([m, cols]) = the sum over the ranks of their partial's ([world * m, cols]) block of
        rows owned by this rank (block r for rank r), summed in float32 and rounded once (out
        contiguous); offset and rows as all_gather's."""
        m, cols = out.shape
        if tuple(partial.shape) != (self.world * m, cols):
            raise ValueError(f"partial: expected {(self.world * m, cols)}, got {tuple(partial.shape)}")
        buf, handle, peers = self._buffer("scatter", self.world * rows, cols, partial.dtype)
        base = self.world * offset
        handle.barrier()  # every peer has summed what was in these rows of its inbox
        src = partial.contiguous()
        for p in range(self.world):  # rank p's block into slot `rank` of p's inbox
            peers[p][base + self.rank * m:base + (self.rank + 1) * m].copy_(src[p * m:(p + 1) * m])
        handle.barrier()  # every sender's block has landed in this rank's inbox
        inbox = buf[base:base + self.world * m].view(self.world, m, cols)
        torch.sum(inbox, dim=0, out=out)  # torch accumulates 16-bit sums in float32
