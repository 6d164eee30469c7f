/*
 * tessera: GEMM kernels for NVIDIA Hopper GPUs, built on a CuTe-style layout
 * algebra. This header is the whole public C API. It compiles as C (C99 and
 * later) and as C++, and exposes no CUDA types: streams travel as `void *`.
 *
 * Conventions
 *  - Every call returns a tess_status. On failure, tess_last_error() returns a
 *    sentence (per thread) naming the constraint that was violated and what
 *    would satisfy it. The sentence stays until the next failure on the thread.
 *  - Nothing allocates device memory or synchronizes inside a run call; work is
 *    queued on the handle's stream. Workspace belongs to the caller.
 *  - Enum values follow cuBLASLt / CUDA where one exists (data types follow
 *    cudaDataType_t, scale modes follow cublasLtMatmulMatrixScale_t).
 *  - Structs that begin with struct_size are versioned: later versions only
 *    append fields, whose zero value means "as before". A caller built
 *    against an older header passes its smaller struct_size and the fields
 *    it lacks read as zero; sizes below a struct's first version are
 *    refused, and so is a larger struct_size whose extra bytes are not zero
 *    (fields this version would ignore). Plans are written whole
 *    (sizeof(tess_plan) of this header).
 */
#ifndef TESSERA_H
#define TESSERA_H

#include <stddef.h>
#include <stdint.h>

#define TESS_VERSION_MAJOR 0
#define TESS_VERSION_MINOR 2
#define TESS_VERSION_PATCH 0
/* One integer, MAJOR * 10000 + MINOR * 100 + PATCH, as tess_version() returns. */
#define TESS_VERSION (TESS_VERSION_MAJOR * 10000 + TESS_VERSION_MINOR * 100 + TESS_VERSION_PATCH)

#if defined(_WIN32)
#define TESS_API __declspec(dllexport)
#elif defined(__GNUC__)
#define TESS_API __attribute__((visibility("default")))
#else
#define TESS_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status ------------------------------------------------------------- */

/* Result of every call. Values shared with cublasStatus_t keep their numbers. */
typedef enum tess_status {
    TESS_STATUS_SUCCESS = 0,
    TESS_STATUS_NOT_INITIALIZED = 1,      /* null or destroyed handle */
    TESS_STATUS_ALLOC_FAILED = 3,         /* host allocation failed */
    TESS_STATUS_INVALID_VALUE = 7,        /* an argument breaks a stated rule */
    TESS_STATUS_ARCH_MISMATCH = 8,        /* the device lacks what the call needs */
    TESS_STATUS_EXECUTION_FAILED = 13,    /* a CUDA call failed */
    TESS_STATUS_INTERNAL_ERROR = 14,      /* a bug in tessera: please report it */
    TESS_STATUS_NOT_SUPPORTED = 15,       /* valid, but no kernel in this build does it */
    TESS_STATUS_INSUFFICIENT_WORKSPACE = 100, /* workspace smaller than the plan needs */
    TESS_STATUS_NO_DEVICE = 101           /* no CUDA driver, or no such device */
} tess_status;

/* "TESS_STATUS_INVALID_VALUE" for TESS_STATUS_INVALID_VALUE; never NULL. */
TESS_API const char *tess_status_name(tess_status status);
/* A short fixed description of the status ("an argument breaks a stated rule"). */
TESS_API const char *tess_status_string(tess_status status);
/* The sentence describing the most recent failure on this thread ("" if none). */
TESS_API const char *tess_last_error(void);

/* ---- version ------------------------------------------------------------- */

/* The library's version as MAJOR * 10000 + MINOR * 100 + PATCH; compare with TESS_VERSION. */
TESS_API int tess_version(void);
/* "0.1.0 (sm_90a)": version and the GPU architectures this build holds kernels for. */
TESS_API const char *tess_version_string(void);

/* ---- data types ----------------------------------------------------------- */

/* Element types. Values are cudaDataType_t's. */
typedef enum tess_dtype {
    TESS_DTYPE_F32 = 0,   /* IEEE binary32 */
    TESS_DTYPE_F16 = 2,   /* IEEE binary16 */
    TESS_DTYPE_BF16 = 14, /* bfloat16 */
    TESS_DTYPE_E4M3 = 28, /* OCP FP8 E4M3 "fn": no infinities, one NaN per sign, max 448 */
    TESS_DTYPE_E5M2 = 29, /* OCP FP8 E5M2: IEEE-like, max 57344 */
    TESS_DTYPE_S8 = 3     /* signed 8-bit integer (W8A8: int8 x int8 summed in int32) */
} tess_dtype;

/* Bytes per element; 0 for a value that is not a tess_dtype. */
TESS_API size_t tess_dtype_size(tess_dtype dtype);
/* "f32", "f16", "bf16", "e4m3", "e5m2", "s8"; "invalid" for anything else. */
TESS_API const char *tess_dtype_name(tess_dtype dtype);
/* Parses a name as tess_dtype_name prints it, or a PyTorch-style alias
 * ("float32", "half", "bfloat16", "float8_e4m3fn", "float8_e5m2"). */
TESS_API tess_status tess_dtype_from_name(const char *name, tess_dtype *dtype);

/* ---- matrices ------------------------------------------------------------ */

/* Storage order of a matrix. Values are cublasLtOrder_t's. */
typedef enum tess_order {
    TESS_ORDER_COL = 0, /* column-major: element (r, c) at r + c * ld */
    TESS_ORDER_ROW = 1  /* row-major:    element (r, c) at r * ld + c */
} tess_order;

/* A matrix as it enters a product: A is M x K, B is K x N, C and D are M x N.
 * Transposition is expressed by the order, not by a separate op flag: the
 * K-major weight `w[N][K]` of `x @ w.T` is B with rows = K, cols = N,
 * TESS_ORDER_COL, ld = K. */
typedef struct tess_matrix_desc {
    tess_dtype dtype;
    tess_order order;
    int64_t rows;
    int64_t cols;
    int64_t ld;           /* elements between rows (row-major) or columns (col-major) */
    int64_t batch_stride; /* elements between consecutive matrices of a batch; 0 repeats one */
} tess_matrix_desc;

/* How dequantization scales (float32 factors, multiplied into the operand)
 * are laid out. Values are cublasLtMatmulMatrixScale_t's. */
typedef enum tess_scale_mode {
    TESS_SCALE_TENSOR = 0,        /* one factor for the whole operand */
    TESS_SCALE_OUTER_VEC = 3,     /* one per row of A (per M) / per column of B (per N) */
    TESS_SCALE_BLOCK_1x128 = 4,   /* one per row (or column of B) per 128 elements of K */
    TESS_SCALE_BLOCK_128x128 = 5  /* one per 128 rows (or columns of B) per 128 of K */
} tess_scale_mode;

/* Where an operand's dequantization factors lie in a float32 array. For A,
 * "mn" counts rows (M); for B, columns (N). Factor (mn, k) of batch b is at
 *   b * batch_stride + row(mn) * stride_mn + (k / 128) * stride_k
 * with row(mn) = 0 (TENSOR), mn (OUTER_VEC, BLOCK_1x128) or mn / 128
 * (BLOCK_128x128); TENSOR ignores stride_mn, and TENSOR and OUTER_VEC
 * ignore stride_k. Any non-negative strides are accepted;
 * tess_scale_layout_query gives the packed layout tessera reads fastest.
 * What a call reads, for an operand of MN rows (M for A, N for B), depth K
 * and `batch` batches (b = 0 .. batch - 1; b = 0 alone when batch_stride is
 * 0), with KB = ceil(K / 128):
 *   TENSOR        the factor at b * batch_stride
 *   OUTER_VEC     row(mn) for mn = 0 .. MN - 1
 *   BLOCK_1x128   (mn, kb) for mn = 0 .. MN - 1, kb = 0 .. KB - 1
 *   BLOCK_128x128 (r, kb) for r = 0 .. ceil(MN / 128) - 1, kb = 0 .. KB - 1
 * The caller's array must hold every one of them: tessera cannot see an
 * array's size through a pointer (the Python package checks tensors'
 * shapes against exactly this). */
typedef struct tess_scale_desc {
    tess_scale_mode mode;
    int64_t stride_mn;
    int64_t stride_k;
    int64_t batch_stride;
} tess_scale_desc;

/* The packed layout of a `mode` scale tensor for an operand with `mn` rows
 * of A (or columns of B) and depth k: *layout (mode and strides, batch
 * stride = one tensor's size), shape[0] x shape[1] factors (mn-extent x
 * K-blocks), the bytes of one tensor, and the pointer alignment needed.
 * The layouts (those of DeepGEMM; PyTorch's _scaled_mm takes the same for
 * the 1x128 operand and, for 128x128 weights, the K-block-contiguous one):
 *   TENSOR        1 x 1
 *   OUTER_VEC     mn x 1, contiguous
 *   BLOCK_1x128   mn x ceil(k/128), mn contiguous (stride_mn 1, stride_k mn)
 *   BLOCK_128x128 ceil(mn/128) x ceil(k/128), K-blocks contiguous */
TESS_API tess_status tess_scale_layout_query(tess_scale_mode mode, int64_t mn, int64_t k, tess_scale_desc *layout,
                                             int64_t shape[2], size_t *bytes, size_t *alignment);

/* ---- handle --------------------------------------------------------------- */

typedef struct tess_handle_s *tess_handle;

/* Opens tessera on CUDA device `device`. Fails with TESS_STATUS_NO_DEVICE where
 * no driver or no such device exists. Any CUDA device is accepted; what this
 * build can run on it is in tess_device_info.kernel_families. Allocates 8 KiB
 * of device memory (stream-K ready flags, zeroed on a private stream). A
 * handle's run calls must not overlap in time (one stream at a time, or
 * streams ordered by events): stream-K plans share these flags and the
 * workspace. Use one handle per stream for concurrent streams. */
TESS_API tess_status tess_create(tess_handle *handle, int device);
/* Releases the handle. Passing NULL is allowed and does nothing. */
TESS_API tess_status tess_destroy(tess_handle handle);
/* Sets the stream (a cudaStream_t) on which run calls queue their work; NULL
 * is the legacy default stream. Work queued on an earlier stream must be
 * ordered before the next call's (see tess_create). GEMM kernels launch with
 * programmatic stream serialization: one may be scheduled while the kernel
 * before it in the stream finishes, but reads and writes no global memory
 * (inputs, output, workspace) before that kernel has completed
 * (griddepcontrol.wait), so ordinary stream order holds; a
 * kernel before it that triggers its dependents early (PDL) hides more of
 * the launch. */
TESS_API tess_status tess_set_stream(tess_handle handle, void *stream);
TESS_API tess_status tess_get_stream(tess_handle handle, void **stream);
/* Gives tessera device memory it may use as scratch during run calls. The
 * memory must stay valid while work queued with this handle is pending, and
 * must be 256-byte aligned. bytes = 0 (and ptr = NULL) removes it. tessera
 * keeps nothing in it between calls: it may be shared with other work that
 * is ordered with this handle's calls. */
TESS_API tess_status tess_set_workspace(tess_handle handle, void *ptr, size_t bytes);
TESS_API tess_status tess_get_workspace(tess_handle handle, void **ptr, size_t *bytes);

/* Kernel families a build can hold; tess_device_info.kernel_families is a mask of these. */
typedef enum tess_kernel_family {
    TESS_FAMILY_DENSE_16BIT = 1u << 0, /* bf16/f16 dense GEMM */
    TESS_FAMILY_DENSE_FP8 = 1u << 1,   /* FP8 dense GEMM with scale recipes */
    TESS_FAMILY_GROUPED = 1u << 2,     /* grouped GEMM for Mixture-of-Experts */
    TESS_FAMILY_SMALL_M = 1u << 3      /* decode-sized M */
} tess_kernel_family;

/* What a device is and what this build can run on it. Set struct_size to
 * sizeof(tess_device_info) before the call; later versions only append fields. */
typedef struct tess_device_info {
    uint32_t struct_size;
    int device;
    char name[256];
    int cc_major, cc_minor;       /* compute capability */
    int sm_count;                 /* streaming multiprocessors */
    size_t smem_per_block_optin;  /* shared memory one block may opt in to, bytes */
    size_t smem_per_sm;           /* shared memory per multiprocessor, bytes */
    size_t l2_bytes;
    size_t global_mem_bytes;
    int sm_clock_khz;             /* peak SM clock */
    int mem_clock_khz;            /* peak memory clock */
    int mem_bus_width_bits;
    int driver_version;           /* e.g. 13000 for CUDA 13.0 */
    int runtime_version;
    int has_native_code;          /* 1 if this build holds machine code for the device */
    uint32_t kernel_families;     /* tess_kernel_family bits this build can run here */
} tess_device_info;

/* Fills `info` for the handle's device. */
TESS_API tess_status tess_get_device_info(tess_handle handle, tess_device_info *info);
/* Caps the streaming multiprocessors the handle's GEMMs use at `sms` (1 to
 * the device's count; 0: all of them), so that kernels on other streams
 * (communication, as DeepEP's) keep the rest: persistent grids, stream-K
 * shares and the planner's estimates follow the budget, and plans whose
 * grid is wider than it (the decode GEMVs at large N) are not offered.
 * Results do not depend on the budget. Forgets the handle's remembered plans;
 * explicit plans made under another budget are refused by their grid. */
TESS_API tess_status tess_set_sm_budget(tess_handle handle, int sms);
/* The handle's SM budget: the SMs its plans use (the device's count without one). */
TESS_API tess_status tess_get_sm_budget(tess_handle handle, int *sms);
/* Name of one tess_kernel_family bit ("dense-16bit"); "invalid" otherwise. */
TESS_API const char *tess_kernel_family_name(tess_kernel_family family);

/* ---- fused epilogues -------------------------------------------------------- */

/* A vector added to D after alpha * sum + beta * C, broadcast along one of D's
 * dimensions. Values follow cuBLASLt's BIAS (per column) and its row-wise bias. */
typedef enum tess_bias_mode {
    TESS_BIAS_NONE = 0,
    TESS_BIAS_COLUMNS = 1, /* one value per column of D: length N, added to every row (a linear layer's bias) */
    TESS_BIAS_ROWS = 2     /* one value per row of D: length M, added to every column */
} tess_bias_mode;

/* An activation applied elementwise last, in float32. NaN inputs give NaN
 * (ReLU included). */
typedef enum tess_activation {
    TESS_ACT_NONE = 0,
    TESS_ACT_RELU = 1,      /* max(x, 0) */
    TESS_ACT_GELU_TANH = 2, /* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (cuBLASLt's GELU) */
    TESS_ACT_GELU_ERF = 3,  /* 0.5 x (1 + erf(x / sqrt(2))) (PyTorch's exact GELU) */
    TESS_ACT_SILU = 4       /* x / (1 + exp(-x)) */
} tess_activation;

/* A gated activation (GLU): the product's N columns are (gate, up) pairs
 * and D has N / 2 columns, D[:, j] = activation(gate_j) * up_j: SwiGLU with
 * TESS_ACT_SILU, GeGLU with the GELUs, ReGLU with ReLU, a bilinear GLU with
 * none. The bias (N values) is added to both before; C is not read (beta
 * must be 0) and a residual has D's N / 2 columns. */
typedef enum tess_gate {
    TESS_GATE_NONE = 0,
    TESS_GATE_INTERLEAVED = 1 /* product columns 2j (gate) and 2j + 1 (up) make D's column j */
} tess_gate;

/* What a GEMM does after its sums, in this order (each step in float32):
 *   v = alpha * sum + beta * C;  v += bias;  D = activation(v) (+ R)
 * (with a gate, tess_gate: D's column j = activation(v_2j) * v_2j+1, + R)
 * All zero (the default): plain D = alpha * sum + beta * C. The bias's
 * pointer goes to tess_gemm_fused / tess_grouped_gemm_fused. R, a residual
 * added after the activation, is a dense GEMM's (tess_gemm_desc.residual). */
typedef struct tess_epilogue_desc {
    tess_bias_mode bias;
    tess_dtype bias_type;      /* bf16, f16 or f32; contiguous */
    int64_t bias_batch_stride; /* elements from one batch's (group's) vector to the next; 0: one for all */
    tess_activation activation;
} tess_epilogue_desc;

/* The device pointers a fused epilogue reads (those its tess_epilogue_desc
 * asks for; the others are ignored, except aux, an output, which is
 * refused where no aux is described). Set struct_size to
 * sizeof(tess_epilogue_ptrs); later versions append pointers (residual,
 * output scales, amax, aux). */
typedef struct tess_epilogue_ptrs {
    uint32_t struct_size;
    const void *bias;     /* aligned to its elements */
    const void *residual; /* tess_gemm_desc.residual's matrix, aligned to its elements */
    /* An FP8 D (tess_gemm_desc.d_scale says which form): */
    const float *d_scale; /* TENSOR: the one factor D's values are multiplied by (NULL: 1); read */
    float *d_amax;        /* TENSOR: where max |value| before d_scale lands (NULL: not computed); written */
    float *d_scale_out;   /* BLOCK_1x128: D's factors, one per row per 128 columns; written */
    void *aux;            /* tess_gemm_desc.aux's matrix (dense GEMMs only), aligned to its elements; written.
                             NULL without one (a smaller struct_size reads as NULL) */
} tess_epilogue_ptrs;

/* ---- GEMM ------------------------------------------------------------------ */

/* Transposition of a cuBLAS-style operand. Values are cublasOperation_t's. */
typedef enum tess_op { TESS_OP_N = 0, TESS_OP_T = 1 } tess_op;

/* D = alpha * A B + beta * C over a batch, A M x K, B K x N, C and D M x N
 * (D M x N/2 with a gate), each described as it enters the product
 * (tess_matrix_desc). Initialise with
 * tess_gemm_desc_init; later versions append fields. */
typedef struct tess_gemm_desc {
    uint32_t struct_size;
    int64_t m, n, k, batch;
    float alpha, beta;    /* beta = 0: C is never read (it may be NULL) */
    tess_matrix_desc a, b, c, d;
    /* Dequantization factors of A and B (tess_gemm_scaled passes their
     * pointers): D = alpha * (sa . A)(sb . B) + beta * C. Pairs accepted:
     * TENSOR or OUTER_VEC for each operand (any inputs), and for FP8 the
     * block recipes 1x128 x 128x128 (DeepSeek-V3), 1x128 x 1x128 and
     * 128x128 x 1x128 (A x B). */
    tess_scale_desc a_scale, b_scale;
    /* FP8 only, 1: let the tensor cores accumulate all of K (faster, about
     * 14 bits kept); 0 (default): add each 128-K partial sum into float32
     * registers. Block scales always promote. */
    int32_t fast_accum;
    /* A fused epilogue (bias, activation); zero: none. */
    tess_epilogue_desc epilogue;
    /* 1: f32 A and B are multiplied as TF32 (the tensor cores read 10 of
     * their 23 mantissa bits; f32 accumulation; about 3x the speed of an f32
     * GEMM), as cuBLAS's CUBLAS_COMPUTE_32F_FAST_TF32 and torch's
     * allow_tf32. 0 (default): f32 operands are refused (tessera has no
     * full-precision f32 GEMM). TF32 operands must be K-major like FP8's;
     * others are copied K-major into the workspace first. */
    int32_t allow_tf32;
    /* A residual R added last, after the activation: D = activation(alpha *
     * A B + beta * C + bias) + R, as a transformer block's skip connection.
     * An M x N matrix, D's shape (bf16, f16 or f32, either order, batch_stride as D's;
     * 0 shares one R across the batch) read through tess_epilogue_ptrs's
     * residual by tess_gemm_fused; it may be D itself (each element is read
     * before the same thread writes it). rows = cols = 0 (the default): none. */
    tess_matrix_desc residual;
    /* A gated activation (tess_gate; TESS_GATE_NONE, the default: none). N
     * is the product's width, even; D (and the residual) M x N / 2. */
    tess_gate gate;
    /* With a gate, > 0: gate = min(gate, gate_limit) and up clamped to
     * [-gate_limit, gate_limit] before the activation (GPT-OSS's clamp);
     * 0 (default): no clamp. */
    float gate_limit;
    /* How an FP8 D (e4m3 or e5m2) holds the epilogue's float32 values v
     * (the last step, after the residual; converted rounding to nearest,
     * saturating to the type's largest finite value, NaN kept). Zero (the
     * default, and the only value for other D types): TENSOR.
     *   TENSOR       D = fp8(v * s), s the float at tess_epilogue_ptrs.d_scale
     *                (NULL: 1), cuBLASLt's D scale; with d_amax, max |v| over
     *                all of D (NaN ignored) is written there (zeroed first).
     *   BLOCK_1x128  per row and 128 columns of D (DeepSeek-V3's activation
     *                recipe): f = max |v| / (the type's largest finite value),
     *                1 where all are 0, D = fp8(v / f), and f written to
     *                d_scale_out at b * batch_stride + row * stride_mn +
     *                (col / 128) * stride_k, so that D and its factors feed
     *                the next tess_gemm_scaled as a 1x128 A
     *                (tess_scale_layout_query(BLOCK_1x128, M, N) gives the
     *                packed layout). Not with a gate; sm90 plans only. */
    tess_scale_desc d_scale;
    /* An auxiliary output: the epilogue's value before the activation and
     * the residual, aux = alpha * A B + beta * C + bias, rounded once to
     * aux's type (cuBLASLt's CUBLASLT_EPILOGUE_GELU_AUX_BIAS; the backward
     * pass of the activation reads it). An M x N matrix of D's dtype and
     * order, batch_stride as D's (its batches must not overlap), written
     * through tess_epilogue_ptrs's aux by tess_gemm_fused; its storage
     * (first to last element) may not overlap D's, C's or the residual's,
     * so aux and D are not interleaved in one buffer. Needs an activation,
     * no gate and a 16-bit or f32 D. rows = cols = 0 (the default, and what
     * a smaller struct_size reads): none. Every dense plan writes it: the
     * sm90 kernels by TMA beside D where both are 16-bit and TMA-storable
     * (aux's base 16-byte aligned, its ld and inner extent whole 16 bytes),
     * else from their staged or register stores; the decode GEMVs element
     * by element. */
    tess_matrix_desc aux;
} tess_gemm_desc;

/* Sets struct_size, batch = 1, alpha = 1, beta = 0; the rest is zeroed
 * (per-tensor scale modes, no fast accumulation). */
TESS_API tess_status tess_gemm_desc_init(tess_gemm_desc *desc);

/* A kernel choice for a problem: what tess_gemm_plan returns and tess_gemm
 * takes. A plan is identified by its name: the run call finds its kernel
 * again by the name (the other fields describe it), so a plan kept by the
 * caller stays valid across builds of this version that hold its kernel,
 * and one made for another problem or device is refused with a sentence. */
typedef struct tess_plan {
    uint32_t struct_size;
    char name[64];               /* e.g. "sm90_bf16_tn_128x256x64_s4_c2x1" ("_sk": stream-K); the family
                                    that runs it first ("sm90_", "gemv_") */
    int32_t tile_m, tile_n, tile_k, stages;
    int32_t cluster_m;           /* CTAs per cluster along M (sharing B's tiles by multicast) */
    int32_t grid;                /* CTAs launched (persistent: at most one per SM) */
    int32_t tiles;               /* output tiles of the problem */
    int32_t stream_k;            /* 1: K blocks are shared by all CTAs: a thin last wave's, or, with
                                    fewer tiles than SMs, every tile's (stream-K; deterministic) */
    uint64_t workspace_bytes;    /* device workspace the plan needs (tess_set_workspace) */
    int32_t group_order;         /* grouped GEMMs: the tile order (tess_group_order); 0 for dense plans */
    int32_t transposed;          /* 1: runs D^T = B^T A^T ("swap AB", name suffix "_swap"): for small M,
                                    B's columns fill the 128-row tile side and M is a narrow N tile
                                    (tile_m, tile_n are the kernel's); 0 otherwise */
    int32_t large_min_rows;      /* grouped token-tile plans (name suffix "_mixR", R = this): groups of
                                    at least R rows run in a second launch, on a 128-row kernel in
                                    order large_order on large_grid CTAs (a skewed routing's large
                                    groups would re-read each weight tile once per token tile); 0:
                                    one launch */
    int32_t large_order, large_grid;
} tess_plan;

/* The plan the heuristic picks for `desc` on the handle's device, among the
 * plans whose workspace fits the handle's (tess_set_workspace; less, for FP8
 * operands that are not K-major, the copies tess_gemm_scaled stages there). */
TESS_API tess_status tess_gemm_plan(tess_handle handle, const tess_gemm_desc *desc, tess_plan *plan);
/* Every plan that can run `desc` within the handle's workspace (as
 * tess_gemm_plan counts it), best first by the heuristic (for autotuning):
 * up to `capacity` are written to `plans`, and *count says how many exist. */
TESS_API tess_status tess_gemm_plans(tess_handle handle, const tess_gemm_desc *desc, tess_plan *plans, int capacity,
                                     int *count);
/* Device workspace the heuristic's favourite plan for `desc` needs when
 * workspace is not limited, plus, for FP8 operands that are not K-major,
 * their K-major copies (after the plan's bytes, from a 256-byte boundary):
 * give the handle at least this much to get it. TESS_GEMM_WORKSPACE_BYTES
 * covers every plan of this version on a 132-SM H100, not the copies. */
/* A workspace for every GEMM plan of this version (cuBLAS's recommendation on Hopper, too). */
#define TESS_GEMM_WORKSPACE_BYTES ((size_t)32 << 20)
TESS_API tess_status tess_gemm_workspace_size(tess_handle handle, const tess_gemm_desc *desc, size_t *bytes);
/* Queues D = alpha * A B + beta * C on the handle's stream. `plan` NULL uses
 * tess_gemm_plan's choice, which the handle remembers for its last 32
 * problems (a problem equal in every descriptor field and workspace size is
 * not planned again: planning takes ~15 us of host time). A, B, D (16-bit) and their batch strides must be
 * 16-byte aligned and their leading dimensions multiples of 8 elements (TMA's
 * rules); C may be any layout and type; C may equal D (in place). */
TESS_API tess_status tess_gemm(tess_handle handle, const tess_gemm_desc *desc, const tess_plan *plan, const void *a,
                               const void *b, const void *c, void *d);

/* tess_gemm with dequantization factors: a_scale and b_scale are device
 * float32 arrays laid out as desc->a_scale / b_scale say (NULL: all 1),
 * 4-byte aligned. Hopper's FP8 tensor cores read only K-major operands (A
 * row-major, B column-major: "TN"); an FP8 A that is column-major or B that
 * is row-major (any alignment and leading dimension) is first copied
 * K-major into the end of the handle's workspace, on the same stream (the
 * workspace-size query counts the copies; too little workspace is refused
 * with INSUFFICIENT_WORKSPACE). The factors describe the logical operand,
 * so they need no change. Operands made K-major once
 * (tess_quantize_fp8_transposed, tess_transpose) save the copy per call. */
TESS_API tess_status tess_gemm_scaled(tess_handle handle, const tess_gemm_desc *desc, const tess_plan *plan,
                                      const void *a, const float *a_scale, const void *b, const float *b_scale,
                                      const void *c, void *d);

/* tess_gemm_scaled with the pointers of desc->epilogue (bias): ep may be
 * NULL only when the epilogue reads none. Every plan of a problem runs its
 * epilogue (the sm90 kernels and the decode GEMVs alike). */
TESS_API tess_status tess_gemm_fused(tess_handle handle, const tess_gemm_desc *desc, const tess_plan *plan,
                                     const void *a, const float *a_scale, const void *b, const float *b_scale,
                                     const void *c, void *d, const tess_epilogue_ptrs *ep);

/* ---- grouped GEMM (Mixture-of-Experts) ------------------------------------ */

/* How a grouped GEMM's rows are laid out. Group sizes lie on the device, so
 * a grouped GEMM needs no host synchronization and is safe under CUDA graph
 * capture. */
typedef enum tess_group_layout {
    /* X is m x K with the groups' rows one after another (tokens sorted by
     * expert), Y m x N alike; group_rows is offs, G int32 cumulative row ends
     * as in torch._grouped_mm: group g owns rows offs[g-1] .. offs[g]-1
     * (offs[-1] = 0). No padding between groups; empty groups are fine. */
    TESS_GROUP_CONTIGUOUS = 0,
    /* X is G batches of m x K (DeepGEMM's masked layout), Y G batches of
     * m x N; group_rows is masked_m, G int32: group g uses the first
     * masked_m[g] rows of its batch. Rows past them are neither read into
     * the result nor written. */
    TESS_GROUP_MASKED = 1
} tess_group_layout;

/* The order in which a grouped kernel walks its tiles (see tess_plan). */
typedef enum tess_group_order {
    TESS_GROUP_ORDER_AUTO = 0,      /* the planner's choice */
    TESS_GROUP_ORDER_N_FASTEST = 1, /* a tile row's N tiles, then the next row (hpc-ops "horizontal") */
    TESS_GROUP_ORDER_M_FASTEST = 2, /* every group's tile rows for one N tile, then the next ("vertical") */
    TESS_GROUP_ORDER_BANDED = 3     /* group by group, bands of 8 tile rows walked column by column (L2 reuse) */
} tess_group_order;

/* The most groups a grouped GEMM may have (each CTA keeps two ints per
 * group in shared memory: 8 KiB for 1024). */
#define TESS_GROUPED_MAX_GROUPS 1024

/* Y[rows of g] = (sx . X[rows of g]) (sw . W[g])^T for each group g < groups
 * (the expert layers of a Mixture-of-Experts model). Initialise with
 * tess_grouped_gemm_desc_init; later versions append fields. */
typedef struct tess_grouped_gemm_desc {
    uint32_t struct_size;
    tess_group_layout layout;
    int64_t groups;     /* G, 1 to TESS_GROUPED_MAX_GROUPS */
    int64_t m;          /* CONTIGUOUS: rows of X and Y (all groups); MASKED: rows of each group's batch */
    int64_t n, k;
    /* A hint for the planner, never trusted for bounds: the typical rows per
     * group (0: m / groups for CONTIGUOUS, m for MASKED). */
    int64_t expected_m;
    /* X: m x k, row-major (K-major). W: each expert's weight as the product's
     * k x n B, column-major (W[g] stored N x K, K-major: the [G, N, K]
     * tensor) or, for bf16 and f16, row-major (W[g] stored K x N: the
     * [G, K, N] tensor of torch._grouped_mm's mat_b, or dgrad's dX = dY W[g]
     * on the [G, N, K] weights), batch_stride between experts. Small groups'
     * token tiles read K-major weights only. Y: m x n (m x n/2 with a gate),
     * row-major. MASKED: X's
     * and Y's batch_stride step from group to group; CONTIGUOUS ignores them. */
    tess_matrix_desc x, w, y;
    /* Dequantization factors, as tess_gemm_desc's a_scale (X) and b_scale (W)
     * with the group as the batch: TENSOR factors with batch_stride 1 are one
     * per group, W's 128x128 factors are per expert (batch_stride apart). X's
     * per-row factors (OUTER_VEC, BLOCK_1x128) follow X's rows: for
     * CONTIGUOUS rows 0 .. m-1 of one array (no per-group padding; its
     * batch_stride is ignored), for MASKED batches of m rows. */
    tess_scale_desc x_scale, w_scale;
    /* A fused epilogue: bias TESS_BIAS_COLUMNS only (one vector of N per
     * group, bias_batch_stride apart: [G, N] with stride N; 0 shares one),
     * activation any. Zero: none. */
    tess_epilogue_desc epilogue;
    /* A gated activation, as tess_gemm_desc's gate and gate_limit: N is the
     * product's width (W's rows, even, gate and up interleaved); Y has N / 2
     * columns. */
    tess_gate gate;
    float gate_limit;
    /* An FP8 Y (e4m3 or e5m2), as tess_gemm_desc's d_scale (tess_epilogue_ptrs'
     * d_scale, d_amax, d_scale_out): TENSOR one factor for all groups;
     * BLOCK_1x128 factors per row and 128 columns that follow Y's rows: for
     * CONTIGUOUS rows 0 .. m-1 of one array (batch_stride ignored), for
     * MASKED batches of m rows (batch_stride apart), so that Y and its
     * factors feed the next grouped GEMM as its X and x_scale. */
    tess_scale_desc y_scale;
} tess_grouped_gemm_desc;

/* Sets struct_size, groups = 1 and the TENSOR scale modes; the rest is zeroed. */
TESS_API tess_status tess_grouped_gemm_desc_init(tess_grouped_gemm_desc *desc);
/* Every plan that can run `desc` (best first, up to `capacity` of them;
 * *count says how many exist): each grouped kernel in each tile order, and
 * each token-tile kernel mixed with a 128-row one for large groups (two
 * launches; tess_plan's large_* fields). */
TESS_API tess_status tess_grouped_gemm_plans(tess_handle handle, const tess_grouped_gemm_desc *desc,
                                             tess_plan *plans, int capacity, int *count);
/* The plan the heuristic picks for `desc` (from desc->expected_m and the shape). */
TESS_API tess_status tess_grouped_gemm_plan(tess_handle handle, const tess_grouped_gemm_desc *desc, tess_plan *plan);
/* Queues the grouped GEMM on the handle's stream (no workspace, no host
 * synchronization; one kernel launch, two for a mixed plan). group_rows: device int32[groups], offs (CONTIGUOUS) or
 * masked_m (MASKED); values outside [0, m] (or offs decreasing) are clamped
 * rather than trusted, so no tile reads or writes outside X and Y. `plan`
 * NULL uses tess_grouped_gemm_plan's choice (remembered as tess_gemm's is). Inputs: bf16 x bf16, f16 x f16,
 * or e4m3 x e4m3 with per-tensor (per group), per-row/column or 1x128 x
 * 128x128 block factors; Y bf16, f16, f32, or FP8 (y_scale). X, W, Y 16-byte aligned with
 * rows and batch strides of whole 16 bytes (TMA's rules). */
TESS_API tess_status tess_grouped_gemm(tess_handle handle, const tess_grouped_gemm_desc *desc, const tess_plan *plan,
                                       const void *x, const float *x_scale, const void *w, const float *w_scale,
                                       const int32_t *group_rows, void *y);
/* tess_grouped_gemm with the pointers of desc->epilogue (bias [G, N]). */
TESS_API tess_status tess_grouped_gemm_fused(tess_handle handle, const tess_grouped_gemm_desc *desc,
                                             const tess_plan *plan, const void *x, const float *x_scale, const void *w,
                                             const float *w_scale, const int32_t *group_rows, void *y,
                                             const tess_epilogue_ptrs *ep);

/* The weight gradient of a Mixture-of-Experts layer (a k-grouped GEMM):
 *   dW[g] = alpha * dY_g^T X_g + beta * C[g]      for each group g < groups
 * where dY_g and X_g are rows offs[g-1] .. offs[g]-1 (offs[-1] = 0) of dY
 * (T x n) and X (T x k): the tokens routed to expert g, one group after
 * another, as in the forward tess_grouped_gemm (CONTIGUOUS). Each dW[g] is
 * n x k: the gradient of the [G, n, k] weight whose forward product is
 * Y = X W[g]^T with dY as Y's gradient. Initialise with
 * tess_grouped_wgrad_desc_init; later versions append fields. */
typedef struct tess_grouped_wgrad_desc {
    uint32_t struct_size;
    int64_t groups; /* G, 1 to TESS_GROUPED_MAX_GROUPS */
    int64_t tokens; /* T: rows of dY and X over all groups (0 allowed: dW = beta * C) */
    int64_t n, k;   /* dW[g] is n x k */
    /* A hint for the planner, never trusted for bounds: the typical tokens
     * per group (0: tokens / groups). */
    int64_t expected_tokens;
    float alpha, beta; /* beta = 0: C is never read (it may be NULL) */
    /* dY: T x n, X: T x k, both row-major (tokens by features), bf16 or f16,
     * the same type; their batch_stride is ignored. With T = 0 they have
     * rows = 0 and are never read (their pointers may be NULL). */
    tess_matrix_desc dy, x;
    /* C and dW: n x k per group, batch_stride apart, either order; dW bf16,
     * f16 or f32, its groups apart (batch_stride >= one matrix's span).
     * C (bf16, f16 or f32) is read where beta != 0; it may be dW itself
     * (gradient accumulation: the same pointer and layout), or else must
     * not overlap it. */
    tess_matrix_desc c, dw;
} tess_grouped_wgrad_desc;

/* Sets struct_size, groups = 1, alpha = 1, beta = 0; the rest is zeroed. */
TESS_API tess_status tess_grouped_wgrad_desc_init(tess_grouped_wgrad_desc *desc);
/* Every plan that can run `desc` (best first, up to `capacity` of them;
 * *count says how many exist): each k-grouped kernel of the types. */
TESS_API tess_status tess_grouped_wgrad_plans(tess_handle handle, const tess_grouped_wgrad_desc *desc,
                                              tess_plan *plans, int capacity, int *count);
/* The plan the heuristic picks for `desc` (from desc->expected_tokens and the shape). */
TESS_API tess_status tess_grouped_wgrad_plan(tess_handle handle, const tess_grouped_wgrad_desc *desc,
                                             tess_plan *plan);
/* Queues the weight gradient on the handle's stream (one kernel launch, no
 * workspace, no host synchronization: safe under CUDA graph capture).
 * offs: device int32[groups], the groups' cumulative token ends; values
 * outside [0, T] (or decreasing) are clamped rather than trusted (group g
 * takes tokens clamp(offs[g-1]) .. max(offs[g], that)-1 within [0, T]),
 * so no token outside dY and X is read; tokens past offs[G-1] are never
 * read into a sum. Every dW[g] is written, an empty group's as beta * C[g].
 * `plan` NULL uses tess_grouped_wgrad_plan's choice (remembered as
 * tess_gemm's is). dY and X 16-byte aligned with leading dimensions of
 * whole 16 bytes (TMA's rules, where T > 0); C and dW aligned to their
 * elements. */
TESS_API tess_status tess_grouped_wgrad(tess_handle handle, const tess_grouped_wgrad_desc *desc,
                                        const tess_plan *plan, const void *dy, const void *x, const int32_t *offs,
                                        const void *c, void *dw);

/* dst = src^T for a rows x cols row-major matrix of `dtype` (any tess_dtype):
 * dst is cols x rows row-major; ld_src >= cols, ld_dst >= rows (elements).
 * Queued on the handle's stream. Turns an N-major FP8 operand into the
 * K-major one the tensor cores read (or, as a column-major view, the
 * reverse), once rather than in every tess_gemm_scaled call. */
TESS_API tess_status tess_transpose(tess_handle handle, tess_dtype dtype, int64_t rows, int64_t cols, const void *src,
                                    int64_t ld_src, void *dst, int64_t ld_dst);

/* Quantizes a rows x cols row-major matrix x (f32, f16 or bf16, leading
 * dimension ld_x) into q (e4m3 or e5m2, row-major, ld_q), with dequantization
 * factors written to `scales` in `scale_layout` (mode TENSOR, OUTER_VEC: one
 * per row, BLOCK_1x128: one per row per 128 columns, or BLOCK_128x128; from
 * tess_scale_layout_query, or any strides). Columns are the K dimension:
 * quantize activations X (M x K) and weights W (N x K, i.e. B column-major)
 * as stored. Each factor is amax / (largest finite value of q's type), 1 for
 * an all-zero block; q = x * (1 / factor) (saturating), which fills the FP8 range. Queued on the
 * handle's stream; TENSOR and OUTER_VEC modes run two kernels (amax, then
 * quantize). */
TESS_API tess_status tess_quantize_fp8(tess_handle handle, int64_t rows, int64_t cols, tess_dtype x_type, const void *x,
                                       int64_t ld_x, tess_dtype q_type, void *q, int64_t ld_q, float *scales,
                                       const tess_scale_desc *scale_layout);

/* Quantizes a rows x cols row-major x (f32, f16 or bf16) into int8 q
 * (row-major, ld_q) for the W8A8 GEMM, symmetrically: each factor is
 * amax / 127 (1 for an all-zero row or tensor) and q = round(x / factor)
 * (to nearest, saturated to [-127, 127]). scale_layout: TENSOR (one factor)
 * or OUTER_VEC (one per row: per token for activations X, per output
 * channel for weights W stored N x K). Queued on the handle's stream. */
TESS_API tess_status tess_quantize_int8(tess_handle handle, int64_t rows, int64_t cols, tess_dtype x_type,
                                        const void *x, int64_t ld_x, void *q, int64_t ld_q, float *scales,
                                        const tess_scale_desc *scale_layout);

/* Cast-transpose, for training's backward GEMMs: quantizes a rows x cols
 * row-major x (f32, f16 or bf16) twice in one read, into q (rows x cols,
 * row-major, ld_q) and qt (cols x rows, row-major: x^T, ld_qt), each exactly
 * as tess_quantize_fp8 would quantize x and x^T. Both layouts have one mode:
 * BLOCK_1x128 (q's factors along x's rows: rows x ceil(cols/128); qt's
 * along x's columns: cols x ceil(rows/128); activations and gradients) or
 * BLOCK_128x128 (one factor per 128 x 128 block, the same value in both
 * arrays, which must not overlap: a weight and its transpose). q, scales
 * and scale_layout may all be NULL to write only the transposed copy.
 * Queued on the handle's stream. */
TESS_API tess_status tess_quantize_fp8_transposed(tess_handle handle, int64_t rows, int64_t cols, tess_dtype x_type,
                                                  const void *x, int64_t ld_x, tess_dtype q_type, void *q, int64_t ld_q,
                                                  float *scales, const tess_scale_desc *scale_layout, void *qt,
                                                  int64_t ld_qt, float *scales_t,
                                                  const tess_scale_desc *scale_layout_t);

/* ---- 4-bit weights (W4A16) ---------------------------------------------- */

/* How a checkpoint stores an N x K weight's 4-bit codes (unsigned, 0..15;
 * N output features, K input features), eight to a little-endian int32
 * word, the i-th in bits 4i .. 4i + 3: */
typedef enum tess_int4_format {
    TESS_INT4_ROWS = 0, /* [N][K/8]: word (n, j) holds k = 8j + i (an nn.Linear [N, K] weight packed along K) */
    TESS_INT4_GPTQ = 1, /* [K/8][N]: word (j, n) holds k = 8j + i of column n (GPTQ's qweight) */
    TESS_INT4_AWQ = 2   /* [K][N/8]: word (k, j) holds n = 8j + (0, 2, 4, 6, 1, 3, 5, 7)[i] (AutoAWQ's GEMM qweight) */
} tess_int4_format;

/* Rewrites an n x k weight's codes from `format` (src: its int32 words,
 * contiguous, 4-byte aligned) into tessera's packed form at `packed` (n k / 2
 * bytes, 16-byte aligned): the order in which the W4A16 kernels' lanes read
 * them, which is this library version's own (pack again from the checkpoint
 * after an upgrade rather than keep packed bytes). n must be a multiple of
 * 16 and k of 64. Queued on the handle's stream; done once per weight. */
TESS_API tess_status tess_pack_int4(tess_handle handle, tess_int4_format format, int64_t n, int64_t k,
                                    const int32_t *src, void *packed);

/* A product with a 4-bit weight: D (m x n) = X (m x k) W^T, where W (n x k)
 * is dequantized per group of group_size k as W[j][i] = (q - z) s, with q
 * the packed code (tess_pack_int4), s the scale and z the zero point of
 * (group i / group_size, row j). tess_gemm_w4a16 computes with W exactly:
 * the tensor cores sum (q - z) x in float32 over each group and the group's
 * sum is multiplied by s (as a float32) once; W is never rounded.
 * tess_dequantize_int4 rounds W once to its output type. Groups run along k
 * in order (GPTQ's act-order g_idx is not read). Initialise with
 * tess_w4a16_desc_init; later versions append fields. */
typedef struct tess_w4a16_desc {
    uint32_t struct_size;
    int64_t m, n, k;
    int64_t group_size;          /* k per scale and zero point: 64 or 128, dividing k */
    tess_matrix_desc x;          /* m x k, bf16 or f16, row-major, ld a multiple of 8 */
    tess_matrix_desc d;          /* m x n, bf16, f16 or f32, either order (batch_stride: experts, masked call) */
    tess_dtype scale_type;       /* f32, f16 or bf16 */
    int64_t ld_scales;           /* scales are [k / group_size][n] (AWQ's and GPTQ's layout), rows ld_scales apart */
    int32_t zero_points;         /* 1: uint8 zero points [k / group_size][n], rows ld_zeros apart, each
                                    0..15 (larger ones are not defined); 0: every zero point is 8 */
    int64_t ld_zeros;
    tess_epilogue_desc epilogue; /* a bias (TESS_BIAS_COLUMNS: n values) and an activation; zero: none */
    /* Experts (tess_gemm_w4a16_masked; the other calls read 0 or 1 only): */
    int64_t groups;              /* experts G, up to 65535; 0 reads as 1 */
    int64_t w_group_stride;      /* bytes from one expert's packed weight to the next, a multiple of 16 (0: n k / 2) */
    int64_t scales_group_stride; /* elements from one expert's scales to the next (0: k / group_size * ld_scales) */
    int64_t zeros_group_stride;  /* elements from one expert's zero points to the next (0: k / group_size * ld_zeros) */
    int64_t expected_groups;     /* experts expected to have rows, for the grid's K split (0: all G) */
} tess_w4a16_desc;

/* Sets struct_size, group_size = 128 and the rest zero. */
TESS_API tess_status tess_w4a16_desc_init(tess_w4a16_desc *desc);

/* Queues D = activation(X W^T + bias) on the handle's stream, for m = 1 to
 * 16 (decoding: one kernel that streams the packed weight once). x and the
 * packed weight 16-byte aligned; scales and zeros aligned to their
 * elements; ep holds the bias (NULL without one). For larger m, dequantize
 * once (tess_dequantize_int4) and call tess_gemm_fused: the refusal says so. */
TESS_API tess_status tess_gemm_w4a16(tess_handle handle, const tess_w4a16_desc *desc, const void *x,
                                     const void *w_packed, const void *scales, const uint8_t *zeros, void *d,
                                     const tess_epilogue_ptrs *ep);

/* The decode GEMV over G experts (Mixture-of-Experts decoding with 4-bit
 * experts), DeepGEMM's masked layout: x is G batches of m x k
 * (x.batch_stride apart), d G batches of m x n (d.batch_stride apart, not
 * overlapping); expert g multiplies the first masked_m[g] rows of its batch
 * (device int32 [G]; values outside [0, m] are clamped) by its own weight
 * (w_packed + g w_group_stride bytes, its scales and zero points the group
 * strides on) and writes those rows only: rows past masked_m[g] are neither
 * read nor written. A bias is [G][n] (epilogue.bias_batch_stride). m from
 * 1 to 16; x.batch_stride a whole 16 bytes (0: one x for every expert).
 * One launch, no host synchronization (CUDA graphs); an expert with no
 * rows reads nothing. Pack a [G][n][k] "rows" weight with one
 * tess_pack_int4 of G n rows (each expert's blocks follow the last's). */
TESS_API tess_status tess_gemm_w4a16_masked(tess_handle handle, const tess_w4a16_desc *desc, const int32_t *masked_m,
                                            const void *x, const void *w_packed, const void *scales,
                                            const uint8_t *zeros, void *d, const tess_epilogue_ptrs *ep);

/* out (n x k, row-major, ld_out >= k) = the weight of `desc` (its n, k,
 * group_size, scales and zero points; x.dtype names the rounding: (q - z)
 * exactly, times s rounded to that type, rounded once to it, as bf16 or f16
 * tensor cores would take W; m, d and the epilogue are ignored), in
 * out_type bf16 or f16. Queued on the handle's stream. */
TESS_API tess_status tess_dequantize_int4(tess_handle handle, const tess_w4a16_desc *desc, const void *w_packed,
                                          const void *scales, const uint8_t *zeros, tess_dtype out_type, void *out,
                                          int64_t ld_out);

/* cublasGemmEx's form (column-major, C updated in place):
 * C = alpha * op(A) op(B) + beta * C, with op(A) m x k, op(B) k x n, C m x n;
 * alpha and beta point to floats on the host. */
TESS_API tess_status tess_gemm_ex(tess_handle handle, tess_op transa, tess_op transb, int64_t m, int64_t n,
                                  int64_t k, const float *alpha, const void *a, tess_dtype a_type, int64_t lda,
                                  const void *b, tess_dtype b_type, int64_t ldb, const float *beta, void *c,
                                  tess_dtype c_type, int64_t ldc);
/* cublasGemmStridedBatchedEx's form: `batch` problems, operand i at base + i * stride. */
TESS_API tess_status tess_gemm_strided_batched_ex(tess_handle handle, tess_op transa, tess_op transb, int64_t m,
                                                  int64_t n, int64_t k, const float *alpha, const void *a,
                                                  tess_dtype a_type, int64_t lda, int64_t stride_a, const void *b,
                                                  tess_dtype b_type, int64_t ldb, int64_t stride_b,
                                                  const float *beta, void *c, tess_dtype c_type, int64_t ldc,
                                                  int64_t stride_c, int64_t batch);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_H */
