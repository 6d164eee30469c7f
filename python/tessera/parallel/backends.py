"""GEMM backends of the parallel layers.

The layers in tessera.parallel do their routing, permutation and communication
in PyTorch and hand every matrix product to a backend object with three
methods:

    grouped_mm(x, w, offs, *, scale_x=None, scale_w=None, budgeted=False) -> y
    gemm(a, w, *, activation=None, budgeted=False)                        -> y
    quantize_fp8(x, recipe, *, budgeted=False)                            -> (q, factors)

with tessera's conventions: w is [N, K] (or [G, N, K] for experts) with K
contiguous, y = x @ w.T; offs holds int32 cumulative row ends of the groups;
scale factors are float32 dequantization factors of the recipes "1x128" (x:
(rows, ceil(K/128))) and "128x128" (w: (G, ceil(N/128), ceil(K/128))).
`budgeted=True` marks a call that runs while communication is in flight: the
tessera backend then runs it with its SM budget.

TesseraBackend runs tessera's kernels (CUDA only); TorchBackend is a float32
torch reference for any device, so that the CPU tests run the exact dispatch
and combine code of the GPU path.
"""
import importlib

import torch
import torch.nn.functional as F

FP8 = torch.float8_e4m3fn
FP8_MAX = 448.0  # largest finite e4m3 magnitude
BLOCK = 128      # elements per scale block (K, and N for 128x128)


def _ceil_div(a, b):
    return -(-a // b)


def _activation_fn(name):
    """The torch function of a tessera epilogue activation name (None: identity)."""
    table = {None: lambda v: v, "none": lambda v: v, "relu": F.relu, "gelu": F.gelu, "gelu_erf": F.gelu,
             "gelu_tanh": lambda v: F.gelu(v, approximate="tanh"), "silu": F.silu}
    if name not in table:
        raise ValueError(f"activation={name!r}: one of None, 'none', 'relu', 'gelu', 'gelu_tanh', 'silu'")
    return table[name]


def dequantize(q, factors, recipe):
    """float32 q * factors for a 2-D q of recipe "1x128" (factors (rows, K/128)) or "128x128"
    (factors (rows/128, K/128)); the torch backend's and the references' view of FP8 data."""
    rows, cols = q.shape
    f = factors.float()
    if recipe == "128x128":
        f = f.repeat_interleave(BLOCK, 0)[:rows]
    elif recipe != "1x128":
        raise ValueError(f"recipe {recipe!r}: '1x128' or '128x128'")
    return q.float() * f.repeat_interleave(BLOCK, 1)[:, :cols]


class TorchBackend:
    """Reference GEMMs in float32 torch on any device (the CPU tests' backend): each product is
    computed in float32 from the (dequantized) operands and rounded to bf16, as tessera's are."""

    name = "torch"

    def grouped_mm(self, x, w, offs, *, scale_x=None, scale_w=None, budgeted=False):
        """y[rows of g] = x[rows of g] @ w[g].T for each expert g (a loop over the groups)."""
        ends = [int(e) for e in offs.tolist()]
        y = torch.empty((x.shape[0], w.shape[1]), dtype=torch.bfloat16, device=x.device)
        start = 0
        for g, end in enumerate(ends):
            if end > start:
                xs = x[start:end]
                xs = dequantize(xs, scale_x[start:end], "1x128") if scale_x is not None else xs.float()
                wg = dequantize(w[g], scale_w[g], "128x128") if scale_w is not None else w[g].float()
                y[start:end] = (xs @ wg.t()).to(torch.bfloat16)
            start = end
        return y

    def gemm(self, a, w, *, activation=None, budgeted=False):
        """activation(a @ w.T) in float32, rounded to a's dtype."""
        return _activation_fn(activation)(a.float() @ w.float().t()).to(a.dtype)

    def quantize_fp8(self, x, recipe, *, budgeted=False):
        """(q, factors) as tessera.quantize_fp8 makes them: factor = amax / 448 per block (1 for an
        all-zero block); "1x128" factors have rows contiguous, "128x128" ones K blocks contiguous."""
        rows, cols = x.shape
        kb = _ceil_div(cols, BLOCK)
        xf = F.pad(x.float(), (0, kb * BLOCK - cols))
        if recipe == "1x128":
            amax = xf.view(rows, kb, BLOCK).abs().amax(dim=2)
            factors = torch.where(amax > 0, amax / FP8_MAX, torch.ones_like(amax))
            expanded = factors.repeat_interleave(BLOCK, 1)
            factors = factors.t().contiguous().t()  # rows contiguous, as tessera's
        elif recipe == "128x128":
            rb = _ceil_div(rows, BLOCK)
            xf = F.pad(xf, (0, 0, 0, rb * BLOCK - rows))
            amax = xf.view(rb, BLOCK, kb, BLOCK).abs().amax(dim=(1, 3))
            factors = torch.where(amax > 0, amax / FP8_MAX, torch.ones_like(amax))
            expanded = factors.repeat_interleave(BLOCK, 0).repeat_interleave(BLOCK, 1)[:rows]
        else:
            raise ValueError(f"recipe {recipe!r}: '1x128' or '128x128'")
        q = (xf[:rows] / expanded).clamp(-FP8_MAX, FP8_MAX)[:, :cols].to(FP8)
        return q, factors


class TesseraBackend:
    """tessera's kernels on one CUDA device. Unbudgeted calls use tessera's default handle of
    PyTorch's current stream (all SMs, prepared-call cache). With sm_budget set, budgeted calls
    run on a dedicated Handle capped at that many SMs, re-bound to PyTorch's current stream
    before each call, so that NCCL kernels on other streams keep the remaining SMs. The
    budgeted handle must serve one stream at a time (a tessera handle's calls must not overlap)."""

    name = "tessera"

    def __init__(self, device, sm_budget=None):
        self.tessera = importlib.import_module("tessera")
        self.device = torch.device(device)
        if self.device.type != "cuda":
            raise ValueError(f"TesseraBackend runs on CUDA devices; got {self.device} (use TorchBackend)")
        self.index = self.device.index if self.device.index is not None else torch.cuda.current_device()
        self.sm_budget = int(sm_budget or 0)
        self._handle, self._bound = None, None
        if self.sm_budget:
            h = self.tessera.Handle(self.index)
            h.sm_budget = self.sm_budget  # tessera refuses a budget outside 1..SM count
            nbytes = importlib.import_module("tessera.gemm").DEFAULT_WORKSPACE_BYTES
            h.set_workspace(torch.empty(nbytes, dtype=torch.uint8, device=self.device))  # kept alive by h
            self._handle = h

    def handle(self, budgeted):
        """The handle= of a call: the budgeted handle bound to the current stream, or None (the
        default handle of the current stream). Under a budget tessera launches its kernels
        without programmatic stream serialization, so a GEMM queued behind another does not
        park its CTAs on the SMs the budget leaves to NCCL."""
        if not budgeted or self._handle is None:
            return None
        stream = torch.cuda.current_stream(self.device).cuda_stream
        if stream != self._bound:
            self._handle.stream = stream
            self._bound = stream
        return self._handle

    def grouped_mm(self, x, w, offs, *, scale_x=None, scale_w=None, budgeted=False):
        """tessera.grouped_mm, y bf16; FP8 operands with their 1x128 / 128x128 block factors."""
        recipes = {}
        if scale_x is not None:
            recipes = {"scale_recipe_x": "1x128", "scale_recipe_w": "128x128"}
        return self.tessera.grouped_mm(x, w, offs, scale_x=scale_x, scale_w=scale_w, out_dtype=torch.bfloat16,
                                       handle=self.handle(budgeted), **recipes)

    def gemm(self, a, w, *, activation=None, budgeted=False):
        """tessera.gemm(a, w.T) with the activation fused into the epilogue."""
        return self.tessera.gemm(a, w.t(), activation=activation, handle=self.handle(budgeted))

    def quantize_fp8(self, x, recipe, *, budgeted=False):
        """tessera.quantize_fp8 (e4m3)."""
        return self.tessera.quantize_fp8(x, recipe, handle=self.handle(budgeted))


def make_backend(backend, device, sm_budget=None):
    """The backend object for a layer: an object with the methods above as given, "torch" or
    "tessera" by name, or None: tessera on CUDA devices, torch elsewhere."""
    device = torch.device(device)
    if backend is None:
        backend = "tessera" if device.type == "cuda" else "torch"
    if backend == "tessera":
        return TesseraBackend(device, sm_budget)
    if backend == "torch":
        return TorchBackend()
    if isinstance(backend, str):
        raise ValueError(f"backend={backend!r}: 'tessera', 'torch', None or an object with grouped_mm, gemm "
                         "and quantize_fp8")
    missing = [m for m in ("grouped_mm", "gemm", "quantize_fp8") if not callable(getattr(backend, m, None))]
    if missing:
        raise ValueError(f"backend {type(backend).__name__} lacks {', '.join(missing)}")
    return backend
