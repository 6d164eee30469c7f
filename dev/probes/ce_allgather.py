#!/usr/bin/env python3
"""Does an all-gather by the copy engines leave the GEMM its SMs? (issue 36, 2 or more GPUs)

    torchrun --nproc-per-node=2 dev/probes/ce_allgather.py [--rows 4096] [--hidden 7168] [--ffn 9216]

The tensor-parallel pair's overlap lost because NCCL's kernels and the GEMM share the SMs (the
GEMMs 21% slower, NCCL 2x slower, thirteenth session). This times, on each rank, in ms (medians;
rank 0 prints the slowest rank's):
  nccl            dist.all_gather_into_tensor of the [rows / world, hidden] bf16 shard
  copy engines    the same gather as copies from the peers' symmetric-memory buffers
                  (torch.distributed._symmetric_memory; a contiguous device copy is a cudaMemcpyAsync,
                  which the copy engines carry over NVLink), then a barrier
  gemm            [rows, hidden] x [hidden, ffn / world] bf16 (torch.mm, or tessera.gemm with --tessera)
  gemm + nccl     both at once on two streams: the pair's wall time, and the GEMM's own
  gemm + copies   the same with the copy-engine gather
If the copy engines' gather leaves the GEMM within a few percent of its time alone while NCCL's
does not, the parallel layers' gather (and reduce-scatter, as copies plus a local sum) should use them.
"""
import argparse
import os
import statistics
import sys

import torch
import torch.distributed as dist


def timed(fn, iters, streams=()):
    """Median ms of fn() over iters runs after 3 warm-ups, with CUDA events on the current stream;
    the other streams are joined before each end event."""
    times = []
    for i in range(iters + 3):
        dist.barrier()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        for s in streams:
            torch.cuda.current_stream().wait_stream(s)
        end.record()
        end.synchronize()
        if i >= 3:
            times.append(start.elapsed_time(end))
    return statistics.median(times)


def slowest(ms, device):
    t = torch.tensor([ms], device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=4096, help="tokens in all, gathered from world shards")
    ap.add_argument("--hidden", type=int, default=7168)
    ap.add_argument("--ffn", type=int, default=9216, help="the GEMM's N in all (ffn / world on each rank)")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--tessera", action="store_true", help="tessera.gemm instead of torch.mm")
    args = ap.parse_args()
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)))
    torch.cuda.set_device(device)
    shard_rows = args.rows // world
    g = torch.Generator(device).manual_seed(rank)
    shard = torch.randn(shard_rows, args.hidden, generator=g, device=device).to(torch.bfloat16)
    gathered = torch.empty(args.rows, args.hidden, dtype=torch.bfloat16, device=device)
    x = torch.randn(args.rows, args.hidden, generator=g, device=device).to(torch.bfloat16)
    w = torch.randn(args.hidden, args.ffn // world, generator=g, device=device).to(torch.bfloat16)
    if args.tessera:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "python"))
        import tessera
        gemm = lambda: tessera.gemm(x, w)  # noqa: E731
    else:
        gemm = lambda: torch.mm(x, w)  # noqa: E731

    import torch.distributed._symmetric_memory as symm_mem
    if hasattr(symm_mem, "enable_symm_mem_for_group"):  # needed before rendezvous in older torch
        symm_mem.enable_symm_mem_for_group(dist.group.WORLD.group_name)
    buf = symm_mem.empty(shard_rows, args.hidden, dtype=torch.bfloat16, device=device)
    handle = symm_mem.rendezvous(buf, dist.group.WORLD.group_name)
    buf.copy_(shard)
    handle.barrier()
    peers = [handle.get_buffer(r, (shard_rows, args.hidden), torch.bfloat16) for r in range(world)]

    def nccl():
        dist.all_gather_into_tensor(gathered, shard)

    def copies():
        for r in range(world):  # each a cudaMemcpyAsync: the copy engines, over NVLink for a peer
            gathered[r * shard_rows:(r + 1) * shard_rows].copy_(peers[r])
        handle.barrier()

    # correctness of the copy-engine gather against NCCL's
    copies()
    via_copies = gathered.clone()
    nccl()
    assert torch.equal(via_copies, gathered), "the copy-engine gather differs from NCCL's"

    side = torch.cuda.Stream(device)

    def both(comm):
        def run():
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                comm()
            gemm()
        return run

    results = {
        "nccl": timed(nccl, args.iters),
        "copy engines": timed(copies, args.iters),
        "gemm": timed(gemm, args.iters),
        "gemm + nccl": timed(both(nccl), args.iters, (side,)),
        "gemm + copies": timed(both(copies), args.iters, (side,)),
    }
    results = {k: slowest(v, device) for k, v in results.items()}
    if rank == 0:
        mb = shard_rows * args.hidden * 2 * (world - 1) / 1e6
        print(f"world {world}, rows {args.rows}, hidden {args.hidden}, gemm N {args.ffn // world} "
              f"({'tessera' if args.tessera else 'torch.mm'}); {mb:.1f} MB from the peers")
        for k, v in results.items():
            print(f"  {k:14} {v:8.3f} ms")
        print(f"  overlap with nccl: {results['gemm + nccl'] / max(results['gemm'], results['nccl']):.2f} of "
              f"max(alone); with copies: {results['gemm + copies'] / max(results['gemm'], results['copy engines']):.2f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
