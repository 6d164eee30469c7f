"""A tensor-parallel MLP (Megatron-style, sequence parallel) on tessera's GEMM.

Each rank of the group holds [m, H] rows of the sequence (M = world * m in all), a
column shard of W1 ([F/world, H]: rows of nn.Linear's weight) and the matching row shard of W2
([H, F/world]: columns of its weight). The forward pass:

  all-gather x along M -> h = act(x_all @ W1_shard.T)  (column-parallel, activation fused
  into the GEMM's epilogue) -> y_partial = h @ W2_shard.T (row-parallel) -> reduce-scatter
  y_partial along M (sum), leaving each rank its own [m, H] rows.

Every row is independent, so the rows are cut into `chunks` pieces and pipelined
(tessera.parallel.comm.run_pipeline): chunk i+1's all-gather and chunk i-1's reduce-scatter
run on a communication stream while chunk i's two GEMMs run on the compute stream with the
backend's SM budget. The collectives are NCCL's (transport="nccl") or copies by the copy engines
into the peers' symmetric memory (transport="copy_engine", GPUs of one host: peer_copy.py), which
leave the GEMMs every SM. Inference only (no autograd through the collectives).
"""
import dataclasses
import math
from typing import Optional

import torch
import torch.distributed as dist

from .backends import _activation_fn, make_backend
from .comm import (CommStreamOwner, Streams, check_positive, check_sm_budget, group_info, local_share,
                   resolve_device, run_pipeline)
from .peer_copy import check_transport, peer_copies_for


@dataclasses.dataclass
class Chunk:
    """One chunk of this rank's rows on its way through the pair."""
    x: torch.Tensor                           # [m_i, H], this rank's rows of the chunk
    out: torch.Tensor                         # [m_i, H], where its result goes (a view of the output)
    offset: int = 0                           # the chunk's first row among this rank's m
    rows: int = 0                             # m, this rank's rows in all the chunks
    gathered: Optional[torch.Tensor] = None   # [world * m_i, H], every rank's rows, rank-major
    partial: Optional[torch.Tensor] = None    # [world * m_i, H], this rank's share of the sum


class TensorParallelMLP(CommStreamOwner, torch.nn.Module):
    """Column-parallel then row-parallel linear over a process group (tensor parallelism).

    hidden, ffn: H and F (F must divide by the group's size). activation: the epilogue between
    the two GEMMs: "gelu" (erf), "gelu_tanh", "relu", "silu" or "none". chunks: pieces the
    rows are pipelined in (1: no overlap). group, sm_budget, device, backend: as
    ExpertParallelMoE's. transport: "nccl" (torch.distributed's collectives) or "copy_engine"
    (peer_copy.PeerCopies: GPUs of one host, CUDA only). Weights are bf16, random (seeded per
    rank) until load_shards."""

    def __init__(self, hidden, ffn, group=None, activation="gelu", chunks=2, sm_budget=None, device=None,
                 backend=None, seed=0, transport="nccl"):
        super().__init__()
        check_positive(hidden=hidden, ffn=ffn, chunks=chunks)
        _activation_fn(activation)  # a misspelt name is refused here
        check_sm_budget(sm_budget)
        check_transport(transport)
        self.group, self.world, self.rank = group_info(group)
        self.device = resolve_device(device)
        self.transport = transport
        self.peer_copies = peer_copies_for(transport, self.group, self.world, self.rank, self.device)
        self.hidden, self.ffn = hidden, ffn
        self.local_ffn = local_share("ffn", ffn, self.world, "ffn / world columns of W1 and rows of W2")
        self.activation, self.chunks = activation, chunks
        self.backend = make_backend(backend, self.device, sm_budget)
        gen = torch.Generator(device=self.device).manual_seed(seed * 1_000_003 + self.rank + 1)
        w1 = torch.randn(self.local_ffn, hidden, generator=gen, device=self.device) / math.sqrt(hidden)
        w2 = torch.randn(hidden, self.local_ffn, generator=gen, device=self.device) / math.sqrt(ffn)
        self.load_shards(w1, w2)

    @torch.no_grad()
    def load_shards(self, w1, w2):
        """Sets this rank's shards: w1 [F/world, H] (rows rank*F/world.. of W1) and w2
        [H, F/world] (the same columns of W2); stored bf16, contiguous."""
        for name, t, shape in (("w1", w1, (self.local_ffn, self.hidden)), ("w2", w2, (self.hidden, self.local_ffn))):
            if tuple(t.shape) != shape:
                raise ValueError(f"{name}: expected this rank's shard of shape {shape}, got {tuple(t.shape)}")
        self.register_buffer("w1", w1.to(self.device, torch.bfloat16).contiguous())
        self.register_buffer("w2", w2.to(self.device, torch.bfloat16).contiguous())

    # ---- the stages (public so that benchmarks can time them alone) ------------------------

    def split(self, x, chunks=None):
        """x [m, H] (this rank's rows; every rank must pass the same m) cut into `chunks`
        Chunks of nearly equal rows (sizes differ by at most one when m does not divide), each
        writing into its rows of one [m, H] output. Returns (chunks, output)."""
        chunks = self.chunks if chunks is None else chunks
        if not isinstance(chunks, int) or chunks <= 0:
            raise ValueError(f"chunks={chunks!r}: a positive integer")
        if x.dim() != 2 or x.shape[1] != self.hidden:
            raise ValueError(f"x: expected [rows, {self.hidden}], got {tuple(x.shape)}")
        if x.device != self.device:
            raise ValueError(f"x is on {x.device}, the layer on {self.device}")
        if chunks > x.shape[0]:
            raise ValueError(f"chunks={chunks} exceeds this rank's {x.shape[0]} rows: each chunk needs a row")
        x = x.to(torch.bfloat16).contiguous()
        out = torch.empty_like(x)
        items, offset = [], 0
        for a, b in zip(x.tensor_split(chunks), out.tensor_split(chunks)):
            items.append(Chunk(a, b, offset, x.shape[0]))
            offset += a.shape[0]
        return items, out

    @torch.no_grad()
    def gather(self, c, streams=None):
        """All-gather of the chunk's rows along M (communication stream)."""
        streams = streams or Streams(self.device, enabled=False)
        if self.group is None:
            c.gathered = c.x
            return
        streams.used_on_comm(c.x)
        if self.peer_copies is not None:  # a view of the copies' buffer, whose rows stay the chunk's
            c.gathered = self.peer_copies.all_gather(c.x, c.offset, c.rows)
            return
        c.gathered = torch.empty((self.world * c.x.shape[0], self.hidden), dtype=c.x.dtype, device=c.x.device)
        dist.all_gather_into_tensor(c.gathered, c.x, group=self.group)
        streams.used_on_compute(c.gathered)

    @torch.no_grad()
    def gemms(self, c, budgeted=False):
        """The two GEMMs of the chunk (compute stream): act(gathered @ w1.T) @ w2.T."""
        h = self.backend.gemm(c.gathered, self.w1, activation=self.activation, budgeted=budgeted)
        c.partial = self.backend.gemm(h, self.w2, budgeted=budgeted)

    @torch.no_grad()
    def scatter(self, c, streams=None):
        """Reduce-scatter (sum) of the chunk's partial products along M into its output rows
        (communication stream)."""
        streams = streams or Streams(self.device, enabled=False)
        if self.group is None:
            c.out.copy_(c.partial)
            return
        streams.used_on_comm(c.partial, c.out)
        if self.peer_copies is not None:
            self.peer_copies.reduce_scatter(c.out, c.partial, c.offset, c.rows)
        else:
            dist.reduce_scatter_tensor(c.out, c.partial, group=self.group)

    # ---- forward passes ------------------------------------------------------------------

    @torch.no_grad()
    def forward(self, x, chunks=None):
        """The pair on this rank's rows x [m, H] -> [m, H] (bf16), pipelined in `chunks` pieces
        (default: the layer's): collectives on the communication stream, GEMMs on the current
        stream with the backend's SM budget. Without CUDA the same schedule runs in order."""
        items, out = self.split(x, chunks)
        streams = Streams(self.device, self.comm_stream() if self.device.type == "cuda" else None)
        run_pipeline(items, lambda c: self.gather(c, streams), lambda c: self.gemms(c, budgeted=True),
                     lambda c: self.scatter(c, streams), streams)
        return out

    @torch.no_grad()
    def forward_sequential(self, x):
        """The pair with no overlap: all-gather, both GEMMs on all SMs, reduce-scatter, in order on
        the current stream (the baseline of forward)."""
        (c,), out = self.split(x, 1)
        self.gather(c)
        self.gemms(c)
        self.scatter(c)
        return out

    @torch.no_grad()
    def reference_forward(self, x):
        """The same pair on this process alone in float32 torch, with the full input and weights
        gathered from the group; returns this rank's [m, H] rows (float32). All ranks call it."""
        xs, w1, w2 = x.float().contiguous(), self.w1.float(), self.w2.float()
        if self.group is not None:
            full = torch.empty((self.world * xs.shape[0], self.hidden), device=xs.device)
            dist.all_gather_into_tensor(full, xs, group=self.group)
            w1_all = torch.empty((self.ffn, self.hidden), device=xs.device)
            dist.all_gather_into_tensor(w1_all, w1, group=self.group)
            w2_parts = [torch.empty_like(w2) for _ in range(self.world)]
            dist.all_gather(w2_parts, w2.contiguous(), group=self.group)
            xs, w1, w2 = full, w1_all, torch.cat(w2_parts, dim=1)
        y = _activation_fn(self.activation)(xs @ w1.t()) @ w2.t()
        m = x.shape[0]
        return y[self.rank * m:(self.rank + 1) * m]
