"""tessera beyond one GPU: PyTorch modules that spread a layer over a process group and
overlap its communication with tessera's GEMMs.

    ExpertParallelMoE   routed experts, tokens dispatched and combined by all-to-all
    TensorParallelMLP   column- then row-parallel linear pair, all-gather / reduce-scatter along M
    TorchBackend, TesseraBackend   where their GEMMs run (torch reference or tessera's kernels)

Needs PyTorch (torch.distributed); `import tessera` itself does not import this package.
"""
from .backends import TesseraBackend, TorchBackend, make_backend
from .comm import Streams, run_pipeline
from .ep_moe import ExpertParallelMoE, swiglu
from .tp_linear import TensorParallelMLP

__all__ = ["ExpertParallelMoE", "Streams", "TensorParallelMLP", "TesseraBackend", "TorchBackend", "make_backend",
           "run_pipeline", "swiglu"]
