"""tessera.parallel on the CPU: the expert-parallel MoE layer and the tensor-parallel MLP with
the float32 torch backend over gloo, in one process (a world of one, no torch.distributed) and in
two spawned processes, against their reference_forward; and their argument checks. The layers'
dispatch / combine / chunking code is the GPU path's; only the GEMMs and streams differ there."""
import datetime
import json
import os

import pytest

torch = pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")
mp = pytest.importorskip("torch.multiprocessing")

if not dist.is_available() or not dist.is_gloo_available():
    pytest.skip("torch.distributed with gloo is not available", allow_module_level=True)

from tessera.parallel import ExpertParallelMoE, TensorParallelMLP, TorchBackend, swiglu  # noqa: E402

H, I, E, TOP_K = 256, 128, 8, 3     # small MoE: 8 experts, 4 per rank with two ranks
TP_H, TP_F, TP_ROWS = 128, 256, 10  # 10 rows per rank: 3 chunks of 4, 3, 3 rows
TOL = {"bf16": 2e-2, "fp8": 8e-2}   # ||out - ref|| / ||ref||


def _rel(out, ref):
    """||out - ref|| / ||ref|| (1.0 for a NaN anywhere)."""
    out = out.float()
    if not torch.isfinite(out).all():
        return 1.0
    return ((out - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def _logits(tokens, rank, masked):
    """Router logits [tokens, E] drawn per rank, with the experts in `masked` never chosen."""
    g = torch.Generator().manual_seed(100 + rank)
    logits = torch.randn(tokens, E, generator=g)
    logits[:, list(masked)] = -1e4
    return logits


def _ep_errors(dtype, rank, world):
    """Relative errors of forward and forward_overlapped against reference_forward, with uneven
    token counts per rank and micro-batch and expert 3 receiving no token."""
    layer = ExpertParallelMoE(H, I, E, TOP_K, dtype=dtype, device="cpu", backend="torch", seed=1)
    tokens = 37 + 16 * rank
    x = torch.randn(tokens, H, generator=torch.Generator().manual_seed(rank)).to(torch.bfloat16)
    logits = _logits(tokens, rank, masked=[3])
    ref = layer.reference_forward(x, logits)
    plain = layer(x, logits)
    cut = [11, tokens - 11]
    parts = layer.forward_overlapped(list(x.split(cut)), list(logits.split(cut)))
    routed = layer(x)  # the module's own router
    return {"forward": _rel(plain, ref), "overlapped": _rel(torch.cat(parts), ref),
            "own_router": _rel(routed, layer.reference_forward(x))}


def _ep_empty_rank_error(rank, world):
    """Every token routed to rank 0's experts, and rank `world - 1` without tokens of its own:
    ranks that receive no rows and send none still take part in every exchange."""
    layer = ExpertParallelMoE(H, I, E, 2, device="cpu", backend="torch", seed=2)
    tokens = 0 if rank == world - 1 and world > 1 else 29
    x = torch.randn(tokens, H, generator=torch.Generator().manual_seed(7 + rank)).to(torch.bfloat16)
    logits = _logits(tokens, rank, masked=range(layer.local_experts, E))
    out = layer(x, logits)
    ref = layer.reference_forward(x, logits)
    if tokens == 0:
        return 0.0 if out.shape == (0, H) else 1.0
    return _rel(out, ref)


def _tp_errors(rank, world):
    """Relative errors of the TP pair against its reference for 1, 2 and 3 chunks (10 rows per
    rank: 3 chunks are uneven) and of forward_sequential."""
    layer = TensorParallelMLP(TP_H, TP_F, activation="gelu", device="cpu", backend="torch", seed=3)
    x = torch.randn(TP_ROWS, TP_H, generator=torch.Generator().manual_seed(20 + rank)).to(torch.bfloat16)
    ref = layer.reference_forward(x)
    errs = {f"chunks{c}": _rel(layer(x, chunks=c), ref) for c in (1, 2, 3)}
    errs["sequential"] = _rel(layer.forward_sequential(x), ref)
    return errs


def _refusal(fn):
    """The ValueError text fn raises, or '' if it raises none."""
    try:
        fn()
    except ValueError as e:
        return str(e)
    return ""


def _all_checks(rank, world):
    """Every check that needs a group, as a JSON-able dict (an exception becomes its text)."""
    out = {}
    for name, fn in (("ep_bf16", lambda: _ep_errors("bf16", rank, world)),
                     ("ep_fp8", lambda: _ep_errors("fp8", rank, world)),
                     ("ep_empty_rank", lambda: _ep_empty_rank_error(rank, world)),
                     ("tp", lambda: _tp_errors(rank, world)),
                     ("ep_copies", lambda: _ep_copies_errors(rank, world)),
                     ("refuse_experts", lambda: _refusal(lambda: ExpertParallelMoE(H, I, 3 * world if world == 1
                                                                                   else 3, 2, device="cpu",
                                                                                   backend="torch"))),
                     ("refuse_ffn", lambda: _refusal(lambda: TensorParallelMLP(TP_H, 5 if world > 1 else 0,
                                                                               device="cpu", backend="torch"))),
                     ("refuse_chunks", lambda: _refusal(lambda: TensorParallelMLP(
                         TP_H, TP_F, device="cpu", backend="torch")(torch.zeros(2, TP_H), chunks=3)))):
        try:
            out[name] = fn()
        except Exception as e:  # reported by the test that reads it
            out[name] = {"exception": f"{type(e).__name__}: {e}"}
    return out


class _FakePeerCopies:
    """PeerCopies.exchange over gloo, the CPU tests' stand-in for symmetric memory: every rank's
    rows, splits, landing rows and capacity gathered; each receiver places every sender's block at
    the row that sender chose, in a buffer of the capacity given, the rest poisoned (0xff: NaN in
    bf16); blocks past the end, overlapping, or leaving received rows unwritten fail."""

    def __init__(self, world, rank):
        self.world, self.rank, self.names = world, rank, []

    def exchange(self, inp, send_splits, at_peers, out_rows, capacity, name):
        self.names.append(name)
        rows = inp.contiguous().view(torch.uint8)
        everyone = [None] * self.world
        dist.all_gather_object(everyone, (rows, list(send_splits), list(at_peers), capacity))
        buf = torch.full((max(capacity, 1), rows.shape[1]), 0xFF, dtype=torch.uint8)
        taken = torch.zeros(buf.shape[0], dtype=torch.bool)
        for s, (sent, splits, at, cap) in enumerate(everyone):
            start, count, dst = sum(splits[:self.rank]), splits[self.rank], at[self.rank]
            assert cap == capacity, f"rank {s}'s buffer has {cap} rows, this rank's {capacity}"
            assert 0 <= dst and dst + count <= buf.shape[0], f"rank {s}'s rows pass the buffer's end"
            assert not taken[dst:dst + count].any(), f"rank {s}'s rows land on another's"
            taken[dst:dst + count] = True
            buf[dst:dst + count] = sent[start:start + count]
        assert bool(taken[:out_rows].all()) and not bool(taken[out_rows:].any()), "received rows not all written"
        return buf[:out_rows].view(inp.dtype)


def _ep_copies_errors(rank, world):
    """The copy-engine transport's dispatch and combine (prepare_many's gathered counts,
    _place_rows' landing rows and capacities, a buffer per micro-batch) through _FakePeerCopies:
    relative errors of forward and forward_overlapped against reference_forward, with uneven
    tokens per rank and micro-batch, and the buffers' names in order."""
    layer = ExpertParallelMoE(H, I, E, TOP_K, device="cpu", backend="torch", seed=1)
    fake = _FakePeerCopies(world, rank)
    if world > 1:
        layer.peer_copies = fake
    tokens = 41 + 9 * rank
    x = torch.randn(tokens, H, generator=torch.Generator().manual_seed(7 + rank)).to(torch.bfloat16)
    logits = _logits(tokens, rank, masked=[5])
    ref = layer.reference_forward(x, logits)
    plain = layer(x, logits)
    cut = [13, tokens - 13]
    parts = layer.forward_overlapped(list(x.split(cut)), list(logits.split(cut)))
    want = ["dispatch0", "combine0", "dispatch0", "dispatch1", "combine0", "combine1"] if world > 1 else []
    return {"forward": _rel(plain, ref), "overlapped": _rel(torch.cat(parts), ref),
            "names": 0.0 if fake.names == want else 1.0}


def _worker(rank, world, folder):
    """One spawned rank: joins the gloo group (over the loopback interface), runs every check,
    writes rank<N>.json."""
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    dist.init_process_group("gloo", init_method="file://" + os.path.join(folder, "rendezvous"), rank=rank,
                            world_size=world, timeout=datetime.timedelta(seconds=60))
    torch.set_num_threads(1)
    try:
        results = _all_checks(rank, world)
        dist.barrier()
    finally:
        dist.destroy_process_group()
    with open(os.path.join(folder, f"rank{rank}.json"), "w") as f:
        json.dump(results, f)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """{world size: [each rank's results]}: world 1 in this process without torch.distributed,
    world 2 as two spawned gloo processes."""
    if dist.is_initialized():
        pytest.skip("torch.distributed is already initialized in the test process")
    folder = tmp_path_factory.mktemp("gloo")
    mp.spawn(_worker, args=(2, str(folder)), nprocs=2, join=True)
    two = [json.load(open(folder / f"rank{r}.json")) for r in range(2)]
    return {1: [_all_checks(0, 1)], 2: two}


def _errors(results):
    """A check's result as a dict of errors (a float is one error); fails on an exception."""
    if isinstance(results, dict) and "exception" in results:
        pytest.fail(results["exception"])
    return results if isinstance(results, dict) else {"error": results}


@pytest.mark.parametrize("world", [1, 2])
@pytest.mark.parametrize("dtype", ["bf16", "fp8"])
def test_ep_matches_reference(runs, world, dtype):
    for rank, res in enumerate(runs[world]):
        for what, err in _errors(res[f"ep_{dtype}"]).items():
            assert err < TOL[dtype], f"world {world} rank {rank} {dtype} {what}: rel. error {err}"


@pytest.mark.parametrize("world", [1, 2])
def test_ep_rank_receiving_and_sending_nothing(runs, world):
    for rank, res in enumerate(runs[world]):
        for what, err in _errors(res["ep_empty_rank"]).items():
            assert err < TOL["bf16"], f"world {world} rank {rank}: rel. error {err}"


@pytest.mark.parametrize("world", [1, 2])
def test_ep_copy_engine_exchanges_match_reference(runs, world):
    for rank, res in enumerate(runs[world]):
        for what, err in _errors(res["ep_copies"]).items():
            assert err < TOL["bf16"], f"world {world} rank {rank} {what}: {err}"


@pytest.mark.parametrize("world", [1, 2])
def test_tp_matches_reference_for_1_2_3_chunks(runs, world):
    for rank, res in enumerate(runs[world]):
        errs = _errors(res["tp"])
        assert set(errs) == {"chunks1", "chunks2", "chunks3", "sequential"}
        for what, err in errs.items():
            assert err < TOL["bf16"], f"world {world} rank {rank} {what}: rel. error {err}"


def test_num_experts_not_divisible_by_world_is_refused(runs):
    for res in runs[2]:
        text = res["refuse_experts"]
        assert "num_experts=3" in text and "world size 2" in text, text


def test_ffn_not_divisible_by_world_is_refused(runs):
    for res in runs[2]:
        text = res["refuse_ffn"]
        assert "ffn=5" in text and "world size 2" in text, text


@pytest.mark.parametrize("world", [1, 2])
def test_more_chunks_than_rows_is_refused(runs, world):
    for res in runs[world]:
        assert "chunks=3 exceeds" in res["refuse_chunks"], res["refuse_chunks"]


# ---- in-process checks (no group) ---------------------------------------------------------

@pytest.mark.parametrize("kwargs, words", [
    (dict(dtype="fp16"), "dtype='fp16'"),
    (dict(top_k=9), "top_k=9 exceeds num_experts=8"),
    (dict(sm_budget=-1), "sm_budget=-1"),
    (dict(backend="cublas"), "backend='cublas'"),
    (dict(hidden=0), "hidden=0"),
])
def test_ep_argument_checks(kwargs, words):
    args = dict(hidden=H, intermediate=I, num_experts=E, top_k=2, device="cpu", backend="torch")
    args.update(kwargs)
    with pytest.raises(ValueError, match=words.replace("(", r"\(")):
        ExpertParallelMoE(**args)


def test_ep_input_checks():
    layer = ExpertParallelMoE(H, I, E, 2, device="cpu", backend="torch")
    with pytest.raises(ValueError, match=r"x: expected \[tokens, 256\]"):
        layer(torch.zeros(4, H + 1))
    with pytest.raises(ValueError, match="router_logits: expected"):
        layer(torch.zeros(4, H), torch.zeros(4, E + 1))
    with pytest.raises(ValueError, match="micro-batches"):
        layer.forward_overlapped([torch.zeros(4, H)], [])


def test_group_without_initialized_distributed_is_refused():
    if dist.is_initialized():
        pytest.skip("torch.distributed is initialized in the test process")
    with pytest.raises(ValueError, match="not initialized"):
        TensorParallelMLP(TP_H, TP_F, group=object(), device="cpu", backend="torch")


def test_tp_activation_is_checked():
    with pytest.raises(ValueError, match="activation='swish'"):
        TensorParallelMLP(TP_H, TP_F, activation="swish", device="cpu", backend="torch")


def test_tp_transport_is_checked():
    with pytest.raises(ValueError, match="transport='gloo'"):
        TensorParallelMLP(TP_H, TP_F, transport="gloo", device="cpu", backend="torch")


def test_tp_copy_engine_alone_matches_reference():
    """A world of one has no peers to copy to: the copy-engine transport runs the pair as is."""
    layer = TensorParallelMLP(TP_H, TP_F, device="cpu", backend="torch", seed=3, transport="copy_engine")
    x = torch.randn(TP_ROWS, TP_H, generator=torch.Generator().manual_seed(0)).to(torch.bfloat16)
    ref = layer.reference_forward(x)
    for chunks in (1, 3):
        assert _rel(layer(x, chunks=chunks), ref) < TOL["bf16"]


def test_copy_engine_transport_refuses_cpu():
    from tessera.parallel.peer_copy import PeerCopies
    with pytest.raises(ValueError, match="needs CUDA devices"):
        PeerCopies(None, 2, 0, torch.device("cpu"))


def test_ep_copy_engine_alone_matches_reference():
    """A world of one has no peers: the copy-engine transport runs the layer as is."""
    layer = ExpertParallelMoE(H, I, E, TOP_K, device="cpu", backend="torch", seed=1, transport="copy_engine")
    x = torch.randn(29, H, generator=torch.Generator().manual_seed(0)).to(torch.bfloat16)
    ref = layer.reference_forward(x)
    assert _rel(layer(x), ref) < TOL["bf16"]
    assert _rel(torch.cat(layer.forward_overlapped(list(x.split([11, 18])))), ref) < TOL["bf16"]


def test_ep_transport_is_checked():
    with pytest.raises(ValueError, match="transport='ucx'"):
        ExpertParallelMoE(H, I, E, TOP_K, device="cpu", backend="torch", transport="ucx")


def _land(world, capacity, pieces, tag):
    """Every rank's copies into every rank's buffer of `capacity` rows, simulated: sender s puts
    count rows at offset `at` of receiver r's buffer ((count, at) = pieces(s, r)), row j tagged
    tag(s, r, j); unwritten rows stay None."""
    box = [[None] * capacity for _ in range(world)]
    for s in range(world):
        for r in range(world):
            count, at = pieces(s, r)
            for j in range(count):
                box[r][at + j] = tag(s, r, j)
    return box


@pytest.mark.parametrize("world", [2, 3, 5])
def test_ep_copy_engine_rows_land_where_all_to_all_puts_them(world):
    """_place_rows' offsets, every rank's copies simulated: the dispatch leaves each receiver the
    senders' rows in rank order (as all_to_all_single does), the combine gives each sender back
    its rows in the order it sent them, and no buffer is smaller than what lands in it."""
    from types import SimpleNamespace
    g = torch.Generator().manual_seed(world)
    rows = torch.randint(0, 900, (world, world), generator=g).tolist()  # rows[s][p]: s sends p
    rows[0][world - 1] = 0  # an empty pair
    placed = []
    for r in range(world):
        d = SimpleNamespace()
        ExpertParallelMoE._place_rows(SimpleNamespace(world=world, rank=r), d, rows)
        placed.append(d)
    most_in = max(sum(rows[s][p] for s in range(world)) for p in range(world))
    most_back = max(sum(rows[s]) for s in range(world))
    for d in placed:  # the same on every rank: the most any rank receives, in 1024-row steps
        assert (d.dispatch_rows, d.combine_rows) == (-(-most_in // 1024) * 1024, -(-most_back // 1024) * 1024)
    # dispatch: rank s's rows for p are tagged (s, p, j)
    inbox = _land(world, placed[0].dispatch_rows, lambda s, p: (rows[s][p], placed[s].dispatch_at[p]),
                  lambda s, p, j: (s, p, j))
    for p in range(world):
        want = [(s, p, j) for s in range(world) for j in range(rows[s][p])]
        assert inbox[p][:len(want)] == want
    # combine: rank p returns the rows it received from s, in order, to s
    back = _land(world, placed[0].combine_rows, lambda p, s: (rows[s][p], placed[p].combine_at[s]),
                 lambda p, s, j: (s, p, j))
    for s in range(world):
        want = [(s, p, j) for p in range(world) for j in range(rows[s][p])]
        assert back[s][:len(want)] == want


def test_swiglu_is_silu_of_gate_times_up():
    h = torch.randn(5, 8)
    assert torch.allclose(swiglu(h), torch.nn.functional.silu(h[:, :4]) * h[:, 4:])


@pytest.mark.parametrize("recipe, shape", [("1x128", (5, 3)), ("128x128", (2, 3))])
def test_torch_backend_quantizes_as_tessera(recipe, shape):
    """Factors of tessera's shapes and layouts (1x128: rows contiguous), amax / 448 per block,
    and q * factors close to x."""
    from tessera.parallel.backends import dequantize
    x = torch.randn(5 if recipe == "1x128" else 130, 300)
    q, s = TorchBackend().quantize_fp8(x, recipe)
    assert q.dtype == torch.float8_e4m3fn and q.shape == x.shape
    assert tuple(s.shape) == (shape[0] if recipe == "1x128" else 2, 3)
    if recipe == "1x128":
        assert s.stride() == (1, 5)
        assert torch.isclose(s[0, 0], x[0, :128].abs().max() / 448)
    assert _rel(dequantize(q, s, recipe), x) < 0.05
