"""What examples/ep_moe.py and examples/tp_pair.py share: joining the torchrun group, timing a
step (median of CUDA-event times after warm-up, the slowest rank's), the system's versions, and
the CSV line."""
import faulthandler
import os
import signal
import statistics
import sys
import time


def import_path():
    """Puts the checkout's package (python/tessera beside this folder) first on the path, so that
    the examples run the code they came with rather than an older installed tessera."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "python")
    if os.path.isfile(os.path.join(here, "tessera", "__init__.py")):
        sys.path.insert(0, os.path.abspath(here))


def setup():
    """Joins the torchrun group (NCCL, one GPU per local rank; gloo on the CPU where there is no
    CUDA) or, started without torchrun, runs as a world of one with no process group.
    Returns (rank, world, device). SIGUSR1 prints every thread's Python stack to stderr (so that a
    run that hangs says where: `pkill -USR1 -f ep_moe.py`)."""
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    import torch
    import torch.distributed as dist
    cuda = torch.cuda.is_available()
    local = int(os.environ.get("LOCAL_RANK", "0"))
    device = torch.device("cuda", local) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    if "RANK" not in os.environ:
        return 0, 1, device
    if cuda:
        dist.init_process_group("nccl", device_id=device)
    else:
        dist.init_process_group("gloo")
    return dist.get_rank(), dist.get_world_size(), device


def teardown():
    """Leaves the process group, if any."""
    import torch.distributed as dist
    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


def _sync(device):
    import torch
    import torch.distributed as dist
    if dist.is_initialized():
        dist.barrier()
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def slowest(value, device):
    """The largest of every rank's value (the group's step takes as long as its slowest rank)."""
    import torch
    import torch.distributed as dist
    if not dist.is_initialized():
        return value
    t = torch.tensor([value], dtype=torch.float64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


def median_ms(fn, device, iters, warmup):
    """The median time of fn() in milliseconds over `iters` runs after `warmup` (CUDA events on
    the current stream; wall clock on the CPU), the ranks lined up by a barrier before each run;
    the slowest rank's median."""
    import torch
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iters):
        _sync(device)
        if device.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        else:
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
    return slowest(statistics.median(times), device)


def profile(steps, device, rank, folder, iters=3):
    """Runs each of steps ({name: fn}) `iters` times under torch.profiler (CPU and, on CUDA, GPU
    activity) after one warm-up run, and writes folder/<name>-rank<r>.json (a Chrome trace:
    chrome://tracing or ui.perfetto.dev) and <name>-rank<r>.txt (the ops by host time and by GPU
    time): where a step's time goes, host launches included."""
    import torch
    from torch.profiler import ProfilerActivity
    os.makedirs(folder, exist_ok=True)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    for name, fn in steps.items():
        fn()
        _sync(device)
        with torch.profiler.profile(activities=activities) as prof:
            for _ in range(iters):
                fn()
            _sync(device)
        base = os.path.join(folder, f"{name}-rank{rank}")
        prof.export_chrome_trace(base + ".json")
        averages = prof.key_averages()
        with open(base + ".txt", "w") as f:
            f.write(f"# {name}, {iters} runs, rank {rank}: ops by host time\n")
            f.write(averages.table(sort_by="self_cpu_time_total", row_limit=30) + "\n")
            if device.type == "cuda":
                f.write("# ops by GPU time\n")
                f.write(averages.table(sort_by="self_cuda_time_total", row_limit=30) + "\n")


def system_info(device):
    """{"nccl", "driver", "gpu"}: torch.cuda.nccl.version(), the NVIDIA driver (NVML; else the
    CUDA driver API version tessera reads), the device's name; "cpu"/"-" without CUDA."""
    import torch
    if device.type != "cuda":
        return {"nccl": "-", "driver": "-", "gpu": "cpu"}
    nccl = torch.cuda.nccl.version()
    nccl = ".".join(str(v) for v in nccl) if isinstance(nccl, tuple) else str(nccl)
    driver = "unknown"
    try:
        import pynvml
        pynvml.nvmlInit()
        driver = pynvml.nvmlSystemGetDriverVersion()
        driver = driver.decode() if isinstance(driver, bytes) else driver
    except Exception:
        try:
            import tessera
            v = tessera.Handle(device.index or 0).device_info().driver_version
            driver = f"cuda {v // 1000}.{v % 1000 // 10}"
        except Exception:
            pass
    return {"nccl": nccl, "driver": driver, "gpu": torch.cuda.get_device_name(device)}


def emit(row, csv_path=None):
    """Prints the row (a dict) as a CSV header and line; appends it to csv_path too (the header
    only when the file is new)."""
    header = ",".join(row)
    line = ",".join(f"{v:.4f}" if isinstance(v, float) else str(v).replace(",", ";") for v in row.values())
    print(header)
    print(line)
    if csv_path:
        new = not os.path.exists(csv_path) or os.path.getsize(csv_path) == 0
        with open(csv_path, "a") as f:
            if new:
                f.write(header + "\n")
            f.write(line + "\n")


def add_common_args(p, what):
    """The options both examples take (the SM budget, timing, backend, transport, check, CSV, profile) added to
    argparse parser p, whose subject (for the help) is `what`; returns p."""
    p.add_argument("--sm-budget", type=int, default=0, help="SMs for the overlapped GEMMs (0: all)")
    p.add_argument("--iters", type=int, default=20, help="timed runs (0: no timing)")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--backend", choices=["tessera", "torch"], default=None, help="default: tessera on CUDA")
    p.add_argument("--transport", choices=["nccl", "copy_engine"], default="nccl",
                   help="the collectives: NCCL's kernels, or copies by the copy engines (GPUs of one host)")
    p.add_argument("--check", action="store_true", help=f"compare with reference_forward on a small {what} first")
    p.add_argument("--csv", default=None, help="append the result line to this file")
    p.add_argument("--profile", default=None, metavar="DIR",
                   help="also write torch.profiler traces of the sequential and overlapped steps here")
    return p


def run(parse, check, bench, tolerance):
    """An example's main: parse its arguments, join the group, run its check (a relative error
    that must stay below tolerance(args)) when --check is given, then its timing when --iters > 0
    (rank 0 prints and appends the CSV line); returns the exit status."""
    args = parse()
    rank, world, device = setup()
    try:
        if args.check and check(args, rank, world, device) >= tolerance(args):
            return 1
        if args.iters > 0:
            row = bench(args, rank, world, device)
            if rank == 0:
                emit(row, args.csv)
        return 0
    finally:
        teardown()
