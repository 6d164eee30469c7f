"""Finding and loading libtessera, and declaring the C functions' signatures.

The library is looked up, in order, at: $TESSERA_LIBRARY (then the only
place tried); next to this package (`pip install ./python` puts it there);
the build tree of the repository, build/lib, when the package is imported
from its checkout (python/tessera); then the system's loader paths. It is
loaded on first use, so `import tessera` never fails for lack of it.
"""
import ctypes
import ctypes.util
import os
import threading

_lock = threading.Lock()
_lib = None
_path = None


class TesseraDesc(ctypes.Structure):
    """tess_matrix_desc."""
    _fields_ = [("dtype", ctypes.c_int), ("order", ctypes.c_int), ("rows", ctypes.c_int64),
                ("cols", ctypes.c_int64), ("ld", ctypes.c_int64), ("batch_stride", ctypes.c_int64)]


class DeviceInfoStruct(ctypes.Structure):
    """tess_device_info."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("device", ctypes.c_int), ("name", ctypes.c_char * 256),
                ("cc_major", ctypes.c_int), ("cc_minor", ctypes.c_int), ("sm_count", ctypes.c_int),
                ("smem_per_block_optin", ctypes.c_size_t), ("smem_per_sm", ctypes.c_size_t),
                ("l2_bytes", ctypes.c_size_t), ("global_mem_bytes", ctypes.c_size_t),
                ("sm_clock_khz", ctypes.c_int), ("mem_clock_khz", ctypes.c_int),
                ("mem_bus_width_bits", ctypes.c_int), ("driver_version", ctypes.c_int),
                ("runtime_version", ctypes.c_int), ("has_native_code", ctypes.c_int),
                ("kernel_families", ctypes.c_uint32)]


class ScaleDescStruct(ctypes.Structure):
    """tess_scale_desc."""
    _fields_ = [("mode", ctypes.c_int), ("stride_mn", ctypes.c_int64), ("stride_k", ctypes.c_int64),
                ("batch_stride", ctypes.c_int64)]


class EpilogueDescStruct(ctypes.Structure):
    """tess_epilogue_desc."""
    _fields_ = [("bias", ctypes.c_int), ("bias_type", ctypes.c_int), ("bias_batch_stride", ctypes.c_int64),
                ("activation", ctypes.c_int)]


class EpiloguePtrsStruct(ctypes.Structure):
    """tess_epilogue_ptrs."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("bias", ctypes.c_void_p), ("residual", ctypes.c_void_p),
                ("d_scale", ctypes.c_void_p), ("d_amax", ctypes.c_void_p), ("d_scale_out", ctypes.c_void_p),
                ("aux", ctypes.c_void_p)]


class GemmDescStruct(ctypes.Structure):
    """tess_gemm_desc."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("m", ctypes.c_int64), ("n", ctypes.c_int64),
                ("k", ctypes.c_int64), ("batch", ctypes.c_int64), ("alpha", ctypes.c_float),
                ("beta", ctypes.c_float), ("a", TesseraDesc), ("b", TesseraDesc), ("c", TesseraDesc),
                ("d", TesseraDesc), ("a_scale", ScaleDescStruct), ("b_scale", ScaleDescStruct),
                ("fast_accum", ctypes.c_int32), ("epilogue", EpilogueDescStruct), ("allow_tf32", ctypes.c_int32),
                ("residual", TesseraDesc), ("gate", ctypes.c_int), ("gate_limit", ctypes.c_float),
                ("d_scale", ScaleDescStruct), ("aux", TesseraDesc)]


class PlanStruct(ctypes.Structure):
    """tess_plan."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("name", ctypes.c_char * 64), ("tile_m", ctypes.c_int32),
                ("tile_n", ctypes.c_int32), ("tile_k", ctypes.c_int32), ("stages", ctypes.c_int32),
                ("cluster_m", ctypes.c_int32), ("grid", ctypes.c_int32), ("tiles", ctypes.c_int32),
                ("stream_k", ctypes.c_int32), ("workspace_bytes", ctypes.c_uint64), ("group_order", ctypes.c_int32),
                ("transposed", ctypes.c_int32), ("large_min_rows", ctypes.c_int32), ("large_order", ctypes.c_int32),
                ("large_grid", ctypes.c_int32)]


class GroupedGemmDescStruct(ctypes.Structure):
    """tess_grouped_gemm_desc."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("layout", ctypes.c_int), ("groups", ctypes.c_int64),
                ("m", ctypes.c_int64), ("n", ctypes.c_int64), ("k", ctypes.c_int64), ("expected_m", ctypes.c_int64),
                ("x", TesseraDesc), ("w", TesseraDesc), ("y", TesseraDesc), ("x_scale", ScaleDescStruct),
                ("w_scale", ScaleDescStruct), ("epilogue", EpilogueDescStruct), ("gate", ctypes.c_int),
                ("gate_limit", ctypes.c_float), ("y_scale", ScaleDescStruct)]


class GroupedWgradDescStruct(ctypes.Structure):
    """tess_grouped_wgrad_desc."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("groups", ctypes.c_int64), ("tokens", ctypes.c_int64),
                ("n", ctypes.c_int64), ("k", ctypes.c_int64), ("expected_tokens", ctypes.c_int64),
                ("alpha", ctypes.c_float), ("beta", ctypes.c_float), ("dy", TesseraDesc), ("x", TesseraDesc),
                ("c", TesseraDesc), ("dw", TesseraDesc)]


def _checkout_root(package_dir):
    """The repository holding package_dir as python/tessera, or None (an installed package)."""
    python_dir = os.path.dirname(package_dir)
    root = os.path.dirname(python_dir)
    if (os.path.basename(python_dir) == "python" and os.path.isfile(os.path.join(python_dir, "pyproject.toml"))
            and os.path.isfile(os.path.join(root, "include", "tessera.h"))):
        return root
    return None


def _candidates():
    """The paths (or loader names) tried for libtessera, in order; see the module's docstring."""
    env = os.environ.get("TESSERA_LIBRARY")
    if env:
        return [env]  # an explicit choice is the only one tried
    here = os.path.dirname(os.path.abspath(__file__))
    paths = [os.path.join(here, "libtessera.so")]
    root = _checkout_root(here)
    if root:
        paths.append(os.path.join(root, "build", "lib", "libtessera.so"))
    found = ctypes.util.find_library("tessera")
    if found:
        paths.append(found)
    paths.append("libtessera.so.0")
    return paths


# (name, restype, argtypes) of every C function the package calls.
_SIGNATURES = [
    ("tess_status_name", ctypes.c_char_p, [ctypes.c_int]),
    ("tess_status_string", ctypes.c_char_p, [ctypes.c_int]),
    ("tess_last_error", ctypes.c_char_p, []),
    ("tess_version", ctypes.c_int, []),
    ("tess_version_string", ctypes.c_char_p, []),
    ("tess_dtype_size", ctypes.c_size_t, [ctypes.c_int]),
    ("tess_dtype_name", ctypes.c_char_p, [ctypes.c_int]),
    ("tess_dtype_from_name", ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]),
    ("tess_create", ctypes.c_int, [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int]),
    ("tess_destroy", ctypes.c_int, [ctypes.c_void_p]),
    ("tess_set_stream", ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p]),
    ("tess_get_stream", ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]),
    ("tess_set_workspace", ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]),
    ("tess_get_workspace", ctypes.c_int,
     [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t)]),
    ("tess_get_device_info", ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(DeviceInfoStruct)]),
    ("tess_set_sm_budget", ctypes.c_int, [ctypes.c_void_p, ctypes.c_int]),
    ("tess_get_sm_budget", ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]),
    ("tess_kernel_family_name", ctypes.c_char_p, [ctypes.c_int]),
    # GEMM
    ("tess_gemm_desc_init", ctypes.c_int, [ctypes.POINTER(GemmDescStruct)]),
    ("tess_gemm_plan", ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(GemmDescStruct), ctypes.POINTER(PlanStruct)]),
    ("tess_gemm_plans", ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(GemmDescStruct), ctypes.POINTER(PlanStruct),
                                       ctypes.c_int, ctypes.POINTER(ctypes.c_int)]),
    ("tess_gemm_workspace_size", ctypes.c_int,
     [ctypes.c_void_p, ctypes.POINTER(GemmDescStruct), ctypes.POINTER(ctypes.c_size_t)]),
    ("tess_gemm", ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(GemmDescStruct), ctypes.POINTER(PlanStruct),
                                 ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]),
    ("tess_gemm_scaled", ctypes.c_int,
     [ctypes.c_void_p, ctypes.POINTER(GemmDescStruct), ctypes.POINTER(PlanStruct), ctypes.c_void_p, ctypes.c_void_p,
      ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]),
    ("tess_gemm_fused", ctypes.c_int,
     [ctypes.c_void_p, ctypes.POINTER(GemmDescStruct), ctypes.POINTER(PlanStruct), ctypes.c_void_p, ctypes.c_void_p,
      ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(EpiloguePtrsStruct)]),
    # grouped GEMM (Mixture-of-Experts)
    ("tess_grouped_gemm_desc_init", ctypes.c_int, [ctypes.POINTER(GroupedGemmDescStruct)]),
    ("tess_grouped_gemm_plans", ctypes.c_int,
     [ctypes.c_void_p, ctypes.POINTER(GroupedGemmDescStruct), ctypes.POINTER(PlanStruct), ctypes.c_int,
      ctypes.POINTER(ctypes.c_int)]),
    ("tess_grouped_gemm_plan", ctypes.c_int,
     [ctypes.c_void_p, ctypes.POINTER(GroupedGemmDescStruct), ctypes.POINTER(PlanStruct)]),
    ("tess_grouped_gemm", ctypes.c_int,
     [ctypes.c_void_p, ctypes.POINTER(GroupedGemmDescStruct), ctypes.POINTER(PlanStruct), ctypes.c_void_p,
      ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]),
    ("tess_grouped_gemm_fused", ctypes.c_int,
     [ctypes.c_void_p, ctypes.POINTER(GroupedGemmDescStruct), ctypes.POINTER(PlanStruct), ctypes.c_void_p,
      ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
      ctypes.POINTER(EpiloguePtrsStruct)]),
    ("tess_grouped_wgrad_desc_init", ctypes.c_int, [ctypes.POINTER(GroupedWgradDescStruct)]),
    ("tess_grouped_wgrad_plans", ctypes.c_int,
     [ctypes.c_void_p, ctypes.POINTER(GroupedWgradDescStruct), ctypes.POINTER(PlanStruct), ctypes.c_int,
      ctypes.POINTER(ctypes.c_int)]),
    ("tess_grouped_wgrad", ctypes.c_int,
     [ctypes.c_void_p, ctypes.POINTER(GroupedWgradDescStruct), ctypes.POINTER(PlanStruct), ctypes.c_void_p,
      ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]),
    ("tess_scale_layout_query", ctypes.c_int,
     [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.POINTER(ScaleDescStruct), ctypes.POINTER(ctypes.c_int64),
      ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t)]),
    ("tess_quantize_fp8", ctypes.c_int,
     [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int,
      ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.POINTER(ScaleDescStruct)]),
    ("tess_quantize_int8", ctypes.c_int,
     [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int, ctypes.c_void_p, ctypes.c_int64,
      ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.POINTER(ScaleDescStruct)]),
    ("tess_quantize_fp8_transposed", ctypes.c_int,
     [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int,
      ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.POINTER(ScaleDescStruct), ctypes.c_void_p,
      ctypes.c_int64, ctypes.c_void_p, ctypes.POINTER(ScaleDescStruct)]),
    # 4-bit weights (W4A16); the descriptor's ctypes struct is tessera.int4's
    ("tess_pack_int4", ctypes.c_int,
     [ctypes.c_void_p, ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p]),
    ("tess_w4a16_desc_init", ctypes.c_int, [ctypes.c_void_p]),
    ("tess_gemm_w4a16", ctypes.c_int,
     [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
      ctypes.c_void_p, ctypes.POINTER(EpiloguePtrsStruct)]),
    ("tess_gemm_w4a16_masked", ctypes.c_int,
     [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
      ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(EpiloguePtrsStruct)]),
    ("tess_dequantize_int4", ctypes.c_int,
     [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
      ctypes.c_void_p, ctypes.c_int64]),
    ("tess_transpose", ctypes.c_int,
     [ctypes.c_void_p, ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p,
      ctypes.c_int64]),
    # tessera/layout.h
    ("tess_layout_eval_expr", ctypes.c_int,
     [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]),
    ("tess_layout_parse", ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]),
    ("tess_layout_print", ctypes.c_size_t, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]),
    ("tess_layout_free", None, [ctypes.c_void_p]),
    ("tess_layout_mma_atom", ctypes.c_int,
     [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_int64),
      ctypes.POINTER(ctypes.c_int64)]),
    ("tess_layout_mma_atom_count", ctypes.c_int, []),
    ("tess_layout_mma_atom_name", ctypes.c_char_p, [ctypes.c_int]),
    ("tess_layout_mma_atom_thr_id", ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]),
    ("tess_layout_mma_atom_shape", ctypes.c_int,
     [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int64)]),
    ("tess_layout_render_table", ctypes.c_int,
     [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]),
    ("tess_layout_render_latex", ctypes.c_int,
     [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]),
    ("tess_layout_render_svg", ctypes.c_int,
     [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_char_p, ctypes.c_size_t,
      ctypes.POINTER(ctypes.c_size_t)]),
    ("tess_layout_explain", ctypes.c_int,
     [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_char_p, ctypes.c_size_t,
      ctypes.POINTER(ctypes.c_size_t)]),
]


def lib():
    """The loaded library (loading it on first call); OSError naming every place tried."""
    global _lib, _path
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        errors = []
        for path in _candidates():
            if os.path.sep in path and not os.path.exists(path):
                errors.append(f"{path}: no such file")
                continue
            try:
                handle = ctypes.CDLL(path)
            except OSError as e:
                errors.append(f"{path}: {e}")
                continue
            for name, restype, argtypes in _SIGNATURES:
                fn = getattr(handle, name)
                fn.restype = restype
                fn.argtypes = argtypes
            _path = os.path.abspath(path) if os.path.sep in path else path
            _lib = handle
            return _lib
        raise OSError("tessera: cannot load libtessera.so; build it with `make` or set TESSERA_LIBRARY. Tried:\n  "
                      + "\n  ".join(errors))


def library_path():
    """Where the loaded libtessera came from."""
    lib()
    return _path
