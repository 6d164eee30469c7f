"""An expert-parallel Mixture-of-Experts layer (DeepSeek-V3's routed experts) on tessera's
grouped GEMM.

Each of the group's `world` ranks owns num_experts / world experts (rank r: experts
r*E_local .. (r+1)*E_local - 1). A forward pass, per micro-batch of tokens:

  1. prepare  (compute)  softmax router, top-k, sort the token copies by expert, exchange the
                         per-expert counts (all_to_all_single; one exchange and one host
                         synchronization for all micro-batches), build the receiver's permutation
                         and the grouped GEMM's `offs`.
  2. dispatch (comm)     the rows to send, gathered in expert order (FP8: the tokens quantized
                         (1x128) first, so that dispatch moves 1 byte per element plus the
                         factors), then all_to_all_single of them, uneven splits. On the
                         communication stream, so that a later micro-batch's gather runs under
                         an earlier one's GEMMs rather than before the first dispatch.
  3. experts  (compute)  sort the received rows by local expert, grouped_mm (gate_up), swiglu,
                         grouped_mm (down), rows back to the received order.
  4. combine  (comm)     all_to_all_single of the expert outputs back to the senders.
  5. finish   (compute)  unpermute and sum the k outputs of each token weighted by the router.

Routing, sorting and permutations are plain torch; only the expert GEMMs (and FP8
quantization) go to the backend.

forward() runs them in order on the current stream; forward_overlapped() runs several
micro-batches through tessera.parallel.comm.run_pipeline, one micro-batch's dispatch/combine
on a communication stream while another's GEMMs run on the compute stream with the backend's
SM budget. The layer is inference only (no autograd through the exchanges).
"""
import dataclasses
import math
from typing import List, Optional

import torch
import torch.distributed as dist
import torch.nn.functional as F

from .backends import BLOCK, FP8, dequantize, make_backend
from .comm import (CommStreamOwner, Streams, check_positive, check_sm_budget, exchange_rows, group_info,
                   local_share, resolve_device, run_pipeline)
from .peer_copy import check_transport, peer_copies_for

DTYPES = ("bf16", "fp8")


def swiglu(h):
    """silu(gate) * up for h [rows, 2*I] holding the gate projection in its first I columns and
    the up projection in the last I (w1 and w3 stacked, as gate_up's rows are), in h's dtype
    (torch evaluates silu in float32 and rounds it; the product rounds once more). The one
    function a fused SwiGLU epilogue of tessera.grouped_mm is to replace."""
    gate, up = h.chunk(2, dim=-1)
    return F.silu(gate) * up


def _exclusive_cumsum(v):
    """[0, v0, v0+v1, ...] without the total."""
    return torch.cumsum(v, 0) - v


def _inverse_permutation(p):
    """q with q[p[i]] = i, so that rows.index_select(0, q) puts rows[i] at position p[i]: a gather
    (16-byte vector loads along each row) instead of index_copy_'s scatter, which torch runs
    element by element: 0.40 ms a call against 0.13 ms for a gather of as many rows of 7168 bf16
    (2 x H100 profile, dev/results/parallel-h100x2/profile-ep-overlapped-rank0.txt)."""
    q = torch.empty_like(p)
    q[p] = torch.arange(p.numel(), device=p.device, dtype=p.dtype)
    return q


@dataclasses.dataclass
class Dispatch:
    """One micro-batch on its way through the layer; prepare() makes it, the later stages fill
    in their results. Rows sorted by expert are the T*k token copies in expert order."""
    tokens: int                      # T, this rank's tokens
    dtype: torch.dtype               # x's dtype (the output's)
    weights: torch.Tensor            # [T, k] float32 router weights
    order: torch.Tensor              # [T*k] the (token * k + slot) copy at each expert-sorted position
    unorder: torch.Tensor            # [T*k] the expert-sorted position of each (token * k + slot) copy
    x: torch.Tensor                  # [T, H] the micro-batch's tokens (dispatch gathers the rows it sends)
    send_splits: List[int]           # rows sent to each rank
    recv_splits: List[int]           # rows received from each rank
    perm: torch.Tensor               # [R] for each row in local-expert order, its row as received
    unperm: torch.Tensor             # [R] for each row as received, its row in local-expert order
    offs: torch.Tensor               # [E_local] int32 cumulative ends of the local experts' rows
    # received and returned: with transport="copy_engine", views of the layer's per-micro-batch
    # buffers, overwritten by the next exchange of the same micro-batch index
    received: Optional[torch.Tensor] = None    # [R, ...] as received (source-rank major)
    expert_out: Optional[torch.Tensor] = None  # [R, H] bf16, in the received order
    returned: Optional[torch.Tensor] = None    # [T*k, H] bf16, expert-sorted, back on the sender
    # transport="copy_engine" only (PeerCopies.exchange): the micro-batch's index (its buffers'
    # names), the row where this rank's rows land in each rank's dispatch and combine buffers, and
    # those buffers' rows (the most any rank receives)
    slot: int = 0
    dispatch_at: Optional[List[int]] = None
    combine_at: Optional[List[int]] = None
    dispatch_rows: int = 0
    combine_rows: int = 0


class ExpertParallelMoE(CommStreamOwner, torch.nn.Module):
    """Routed experts of a MoE layer spread over a process group (expert parallelism).

    hidden, intermediate: the experts' H and I (gate_up [E_local, 2I, H], down [E_local, H, I],
    nn.Linear layout, K contiguous). num_experts: E in all; must divide by the group's size.
    top_k: experts per token. group: a torch.distributed process group (None: WORLD, or a
    world of one without torch.distributed initialized). dtype: "bf16", or "fp8" (weights
    quantized once, 128x128 blocks; activations per call, 1x128 blocks). sm_budget: SMs the
    GEMMs of forward_overlapped may use (tessera backend; None: all). backend: see
    tessera.parallel.backends (None: tessera on CUDA, torch elsewhere). transport: "nccl"
    (all_to_all_single) or "copy_engine" (rows written into the peers' symmetric memory by the
    copy engines, peer_copy.PeerCopies: GPUs of one host, CUDA only). Weights are random
    (seeded per global expert, so any world size makes the same experts) until load_experts."""

    def __init__(self, hidden, intermediate, num_experts, top_k, group=None, dtype="bf16", sm_budget=None,
                 device=None, backend=None, seed=0, normalize_weights=True, transport="nccl"):
        super().__init__()
        check_positive(hidden=hidden, intermediate=intermediate, num_experts=num_experts, top_k=top_k)
        if top_k > num_experts:
            raise ValueError(f"top_k={top_k} exceeds num_experts={num_experts}")
        if dtype not in DTYPES:
            raise ValueError(f"dtype={dtype!r}: one of {DTYPES}")
        check_sm_budget(sm_budget)
        check_transport(transport)
        self.group, self.world, self.rank = group_info(group)
        self.device = resolve_device(device)
        self.transport = transport
        self.peer_copies = peer_copies_for(transport, self.group, self.world, self.rank, self.device)
        self.hidden, self.intermediate, self.top_k = hidden, intermediate, top_k
        self.num_experts = num_experts
        self.local_experts = local_share("num_experts", num_experts, self.world, "num_experts / world experts")
        self.first_expert = self.rank * self.local_experts
        self.dtype, self.normalize_weights = dtype, normalize_weights
        self.backend = make_backend(backend, self.device, sm_budget)
        gen = torch.Generator().manual_seed(seed)  # on the CPU: every rank draws the same router
        self.register_buffer("router", (torch.randn(num_experts, hidden, generator=gen) / math.sqrt(hidden))
                             .to(self.device))
        self.load_experts(*self._random_experts(seed))

    # ---- weights ---------------------------------------------------------------------

    def _random_experts(self, seed):
        """bf16 gate_up [E_local, 2I, H] and down [E_local, H, I] of this rank, each expert drawn
        from its own generator (seeded by its global index), scaled by 1/sqrt(fan-in)."""
        H, I = self.hidden, self.intermediate
        gate_up = torch.empty(self.local_experts, 2 * I, H, dtype=torch.bfloat16, device=self.device)
        down = torch.empty(self.local_experts, H, I, dtype=torch.bfloat16, device=self.device)
        for g in range(self.local_experts):
            gen = torch.Generator(device=self.device).manual_seed(seed * 1_000_003 + self.first_expert + g + 1)
            gate_up[g] = torch.randn(2 * I, H, generator=gen, device=self.device) / math.sqrt(H)
            down[g] = torch.randn(H, I, generator=gen, device=self.device) / math.sqrt(I)
        return gate_up, down

    @torch.no_grad()
    def load_experts(self, gate_up, down):
        """Sets this rank's experts from gate_up [E_local, 2I, H] and down [E_local, H, I] (any
        float type); FP8 layers quantize each expert's weights with 128x128 block factors."""
        El, H, I = self.local_experts, self.hidden, self.intermediate
        for name, t, shape in (("gate_up", gate_up, (El, 2 * I, H)), ("down", down, (El, H, I))):
            if tuple(t.shape) != shape:
                raise ValueError(f"{name}: expected shape {shape} (E_local, N, K), got {tuple(t.shape)}")
        gate_up = gate_up.to(self.device, torch.bfloat16).contiguous()
        down = down.to(self.device, torch.bfloat16).contiguous()
        if self.dtype == "bf16":
            self.register_buffer("gate_up", gate_up)
            self.register_buffer("down", down)
            return
        for name, w in (("gate_up", gate_up), ("down", down)):
            parts = [self.backend.quantize_fp8(w[g], "128x128") for g in range(El)]
            self.register_buffer(name, torch.stack([q for q, _ in parts]))
            self.register_buffer(name + "_scale", torch.stack([s.contiguous() for _, s in parts]))

    def local_experts_f32(self):
        """This rank's experts as float32 (gate_up, down), dequantized for an FP8 layer."""
        if self.dtype == "bf16":
            return self.gate_up.float(), self.down.float()
        return tuple(torch.stack([dequantize(w[g], s[g], "128x128") for g in range(self.local_experts)])
                     for w, s in ((self.gate_up, self.gate_up_scale), (self.down, self.down_scale)))

    def gathered_experts_f32(self):
        """Every rank's experts as float32 (gate_up [E, 2I, H], down [E, H, I]), gathered from the
        group (small layers only: the reference's weights)."""
        local = self.local_experts_f32()
        if self.group is None:
            return local
        out = []
        for t in local:
            full = torch.empty((self.world * t.shape[0],) + tuple(t.shape[1:]), dtype=t.dtype, device=t.device)
            dist.all_gather_into_tensor(full, t.contiguous(), group=self.group)
            out.append(full)
        return tuple(out)

    # ---- routing -----------------------------------------------------------------------

    def _check_tokens(self, x, router_logits):
        """x must be [T, H] on the layer's device; router_logits, if given, [T, E]."""
        if x.dim() != 2 or x.shape[1] != self.hidden:
            raise ValueError(f"x: expected [tokens, {self.hidden}], got {tuple(x.shape)}")
        if x.device != self.device:
            raise ValueError(f"x is on {x.device}, the layer on {self.device}")
        if router_logits is not None:
            if tuple(router_logits.shape) != (x.shape[0], self.num_experts):
                raise ValueError(f"router_logits: expected {(x.shape[0], self.num_experts)}, "
                                 f"got {tuple(router_logits.shape)}")
            if router_logits.device != self.device:
                raise ValueError(f"router_logits are on {router_logits.device}, the layer on {self.device}")

    def route(self, x, router_logits=None):
        """(weights [T, k] float32, experts [T, k] int64): softmax over all experts' logits
        (x @ router.T in float32, unless router_logits are given), top-k, and the k weights
        renormalized to sum to 1 when normalize_weights (DeepSeek-V3's norm_topk_prob)."""
        logits = router_logits.float() if router_logits is not None else x.float() @ self.router.t()
        weights, experts = torch.softmax(logits, dim=-1).topk(self.top_k, dim=-1)
        if self.normalize_weights:
            weights = weights / weights.sum(dim=-1, keepdim=True)
        return weights, experts

    # ---- the stages ----------------------------------------------------------------------
    # Public so that benchmarks can time communication and GEMMs alone (examples/ep_moe.py).

    def _quantize_rows(self, x, budgeted):
        """FP8 (q, 1x128 factors (rows, K/128)) of bf16 rows x; empty for no rows."""
        if x.shape[0] == 0:
            kb = -(-x.shape[1] // BLOCK)
            return (torch.empty(x.shape, dtype=FP8, device=x.device),
                    torch.empty((0, kb), dtype=torch.float32, device=x.device))
        return self.backend.quantize_fp8(x, "1x128", budgeted=budgeted)

    @torch.no_grad()
    def prepare(self, x, router_logits=None):
        """Stage 1 of one micro-batch: prepare_many([x], [router_logits])[0]."""
        return self.prepare_many([x], None if router_logits is None else [router_logits])[0]

    def _sort_tokens(self, x, router_logits):
        """Routing and the sender's sort of one micro-batch: (weights, order, its inverse, per-expert
        counts)."""
        self._check_tokens(x, router_logits)
        weights, experts = self.route(x, router_logits)
        flat = experts.reshape(-1)
        order = torch.argsort(flat, stable=True)  # expert-sorted copies; rank-sorted too
        counts = torch.zeros(self.num_experts, dtype=torch.int64, device=x.device)
        counts.index_add_(0, flat, torch.ones_like(flat))
        return weights, order, _inverse_permutation(order), counts

    def _payload(self, d):
        """The rows a micro-batch sends, in expert order: bf16 tokens, or FP8 bytes with their 1x128
        factors beside them (each token quantized once, before its k copies are gathered)."""
        xb = d.x.to(torch.bfloat16)
        if self.dtype == "fp8":
            q, s = self._quantize_rows(xb, budgeted=False)
            rows = torch.cat([q.view(torch.uint8), s.contiguous().view(torch.uint8)], dim=1)
        else:
            rows = xb
        return rows.index_select(0, d.order // self.top_k)

    def _receiver_order(self, c, rows):
        """(perm, offs) of the rows a rank receives, from c [world, E_local] (c[s, e]: rows
        source s sends to local expert e) and their number: rows arrive source-major ((s, e)
        blocks), the grouped GEMM wants them expert-major ((e, s))."""
        sizes = c.t().reshape(-1)
        start_received = _exclusive_cumsum(c.reshape(-1)).view(self.world, self.local_experts).t().reshape(-1)
        perm = torch.arange(rows, device=c.device) + torch.repeat_interleave(
            start_received - _exclusive_cumsum(sizes), sizes, output_size=rows)
        return perm, torch.cumsum(c.sum(0), 0).to(torch.int32)

    @torch.no_grad()
    def prepare_many(self, x_list, router_logits_list=None):
        """Stage 1 (compute stream) of several micro-batches: routing and the sender's sort of
        each, then one exchange of all their per-expert counts (all_to_all_single) and one host
        synchronization (all_to_all_single of the rows needs its splits on the host), and each
        one's receiver permutation and offs. Returns a Dispatch per micro-batch."""
        if router_logits_list is None:
            router_logits_list = [None] * len(x_list)
        if len(router_logits_list) != len(x_list):
            raise ValueError(f"{len(x_list)} micro-batches but {len(router_logits_list)} router_logits")
        if not x_list:
            return []
        n, W, El = len(x_list), self.world, self.local_experts
        sorted_ = [self._sort_tokens(x, r) for x, r in zip(x_list, router_logits_list)]
        send = torch.stack([counts for _, _, _, counts in sorted_]).view(n, W, El).transpose(0, 1).contiguous()
        recv = send  # [world, n, E_local]: recv[s, i, e] rows of micro-batch i from source s for expert e
        if self.group is not None:
            recv = torch.empty_like(send)
            dist.all_to_all_single(recv, send, group=self.group)
        parts = [send.sum(2).t().reshape(-1), recv.sum(2).t().reshape(-1)]
        if self.peer_copies is not None:  # every rank's rows to every rank: [source, dest, micro-batch]
            every = torch.empty((W * W, n), dtype=send.dtype, device=send.device)  # (gloo wants it flat)
            dist.all_gather_into_tensor(every, send.sum(2).contiguous(), group=self.group)
            parts.append(every.view(W, W, n).permute(2, 0, 1).reshape(-1))  # micro-batch major
        host = torch.cat(parts).tolist()
        out = []
        for i, (x, (weights, order, unorder, _)) in enumerate(zip(x_list, sorted_)):
            send_splits, recv_splits = host[i * W:(i + 1) * W], host[(n + i) * W:(n + i + 1) * W]
            perm, offs = self._receiver_order(recv[:, i], sum(recv_splits))
            d = Dispatch(x.shape[0], x.dtype, weights, order, unorder, x, send_splits, recv_splits, perm,
                         _inverse_permutation(perm), offs, slot=i)
            if self.peer_copies is not None:
                first = 2 * n * W + i * W * W
                self._place_rows(d, [host[first + s * W:first + (s + 1) * W] for s in range(W)])
            out.append(d)
        return out

    def _place_rows(self, d, rows):
        """The copy-engine exchange's rows of micro-batch d, from rows[s][p] (rows rank s sends rank
        p): rank p receives the senders' rows in rank order, so this rank's land after those of
        the ranks before it (dispatch_at[p]); back in combine, rank s gets the rows it sent to each
        rank in rank order, so the rows this rank returns to s land after those s sent to the
        ranks before this one (combine_at[s]). The buffers hold the most any rank receives, in
        1024-row steps (they are made again, collectively, when a call needs more)."""
        W, r = self.world, self.rank
        d.dispatch_at = [sum(rows[s][p] for s in range(r)) for p in range(W)]
        d.combine_at = [sum(rows[s][q] for q in range(r)) for s in range(W)]
        most_in = max(sum(rows[s][p] for s in range(W)) for p in range(W))
        most_back = max(sum(rows[s]) for s in range(W))
        d.dispatch_rows, d.combine_rows = -(-most_in // 1024) * 1024, -(-most_back // 1024) * 1024

    @torch.no_grad()
    def dispatch(self, d, streams=None):
        """Stage 2 (communication stream): the token rows gathered in expert order (_payload) and
        sent to the experts' ranks."""
        streams = streams or Streams(self.device, enabled=False)
        streams.used_on_comm(d.x, d.order)
        payload = self._payload(d)
        if self.peer_copies is not None:  # a view of the micro-batch's receive buffer
            d.received = self.peer_copies.exchange(payload, d.send_splits, d.dispatch_at, sum(d.recv_splits),
                                                   d.dispatch_rows, f"dispatch{d.slot}")
            return
        d.received = exchange_rows(payload, sum(d.recv_splits), d.send_splits, d.recv_splits, self.group)
        streams.used_on_compute(d.received)

    @torch.no_grad()
    def experts(self, d, budgeted=False):
        """Stage 3 (compute stream): the local experts on the received rows: rows sorted by
        expert, grouped_mm (gate_up), swiglu, grouped_mm (down), outputs back in the received
        order. budgeted: run the GEMMs with the backend's SM budget."""
        rows = d.received.index_select(0, d.perm)
        mm = self.backend.grouped_mm
        if self.dtype == "fp8":
            H = self.hidden
            q = rows[:, :H].contiguous().view(FP8)
            s = rows[:, H:].contiguous().view(torch.float32)
            s = s.t().contiguous().t()  # rows contiguous: the layout the kernels load by TMA
            h = mm(q, self.gate_up, d.offs, scale_x=s, scale_w=self.gate_up_scale, budgeted=budgeted)
            qa, sa = self._quantize_rows(swiglu(h), budgeted)
            y = mm(qa, self.down, d.offs, scale_x=sa, scale_w=self.down_scale, budgeted=budgeted)
        else:
            h = mm(rows, self.gate_up, d.offs, budgeted=budgeted)
            y = mm(swiglu(h), self.down, d.offs, budgeted=budgeted)
        d.expert_out = y.index_select(0, d.unperm)

    @torch.no_grad()
    def combine(self, d, streams=None):
        """Stage 4 (communication stream): the expert outputs back to the tokens' ranks."""
        streams = streams or Streams(self.device, enabled=False)
        streams.used_on_comm(d.expert_out)
        if self.peer_copies is not None:
            d.returned = self.peer_copies.exchange(d.expert_out, d.recv_splits, d.combine_at, d.tokens * self.top_k,
                                                   d.combine_rows, f"combine{d.slot}")
            return
        d.returned = exchange_rows(d.expert_out, d.tokens * self.top_k, d.recv_splits, d.send_splits, self.group)
        streams.used_on_compute(d.returned)

    @torch.no_grad()
    def finish(self, d):
        """Stage 5 (compute stream): each token's k outputs back in token order and summed,
        weighted by the router (one batched GEMM, bf16 weights, float32 accumulation);
        [T, H] in x's dtype."""
        T, k, H = d.tokens, self.top_k, self.hidden
        copies = d.returned.index_select(0, d.unorder).view(T, k, H)
        out = torch.bmm(d.weights.to(copies.dtype).unsqueeze(1), copies).squeeze(1)
        return out.to(d.dtype)

    # ---- forward passes ------------------------------------------------------------------

    @torch.no_grad()
    def forward(self, x, router_logits=None):
        """The layer on x [T, H] (this rank's tokens): every stage in order on the current
        stream, GEMMs on all SMs. Every rank of the group must call it (T may differ)."""
        d = self.prepare(x, router_logits)
        self.dispatch(d)
        self.experts(d)
        self.combine(d)
        return self.finish(d)

    @torch.no_grad()
    def forward_overlapped(self, x_list, router_logits_list=None):
        """The layer on several micro-batches (a list of [T_i, H]; outputs in a list): all are
        prepared first (prepare_many), then one micro-batch's dispatch / combine run on the
        communication stream while another's GEMMs run on the compute stream (the current one)
        with the backend's SM budget, and each one's finish once the next has computed. Without
        CUDA the same schedule runs in order. Every rank must pass the same number of
        micro-batches."""
        streams = Streams(self.device, self.comm_stream() if self.device.type == "cuda" else None)
        ds = self.prepare_many(x_list, router_logits_list)
        return run_pipeline(ds, lambda d: self.dispatch(d, streams), lambda d: self.experts(d, budgeted=True),
                            lambda d: self.combine(d, streams), streams, post=self.finish)

    @torch.no_grad()
    def reference_forward(self, x, router_logits=None):
        """The same layer on this process alone, float32 torch, with every expert's weights
        gathered from the group (dequantized for FP8; activations unquantized): the check of
        forward's result. Returns [T, H] float32. All ranks must call it (the gather)."""
        self._check_tokens(x, router_logits)
        gate_up, down = self.gathered_experts_f32()
        weights, experts = self.route(x, router_logits)
        xf = x.float()
        out = torch.zeros_like(xf)
        for e in range(self.num_experts):
            token, slot = (experts == e).nonzero(as_tuple=True)
            if token.numel() == 0:
                continue
            y = swiglu(xf[token] @ gate_up[e].t()) @ down[e].t()
            out.index_add_(0, token, y * weights[token, slot].unsqueeze(-1))
        return out
