/* cuBLASLt as the benchmark's baseline; see cublaslt.h. */
#include <stdio.h>
#include <stdlib.h>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "tools/tessera/cublaslt.h"

/* cuBLAS's recommended workspace on Hopper. */
#define CUBLASLT_WORKSPACE_BYTES ((size_t)32 << 20)

struct cublaslt_run {
    cublasLtHandle_t handle;
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, lc, ld;
    cublasLtMatmulAlgo_t algo;
    void *workspace;
    float alpha, beta;
    int swapped; /* row-major D: cuBLASLt's first operand is B, its second A */
    int bias;    /* 1: the epilogue reads a bias (its pointer set on each run) */
    int aux;     /* 1: the epilogue writes aux (GELU_AUX; its pointer set on each run) */
};

/* cuBLASLt's epilogue for `e` in *out; 0, with the reason in `why`, where it
 * has none. Its bias is one value per row of its column-major D: tessera's
 * columns when D is row-major (`swapped`), its rows otherwise; its
 * activations are ReLU and GELU's tanh form. */
static int lt_epilogue(const tess_epilogue_desc *e, int swapped, int aux, cublasLtEpilogue_t *out, char *why,
                       size_t why_cap) {
    if (aux && e->activation != TESS_ACT_GELU_TANH) {
        snprintf(why, why_cap, "cuBLASLt's aux holds values only with its GELU (--act=gelu_tanh; ReLU's is a bit mask)");
        return 0;
    }
    switch (e->activation) {
    case TESS_ACT_NONE: *out = CUBLASLT_EPILOGUE_DEFAULT; break;
    case TESS_ACT_RELU: *out = CUBLASLT_EPILOGUE_RELU; break;
    case TESS_ACT_GELU_TANH: *out = CUBLASLT_EPILOGUE_GELU; break;
    case TESS_ACT_GELU_ERF:
        snprintf(why, why_cap, "cuBLASLt has no erf GELU epilogue (its GELU is --act=gelu_tanh)");
        return 0;
    default: snprintf(why, why_cap, "cuBLASLt has no SiLU epilogue"); return 0;
    }
    if (aux)
        *out = CUBLASLT_EPILOGUE_GELU_AUX;
    if (e->bias == TESS_BIAS_NONE)
        return 1;
    if ((e->bias == TESS_BIAS_COLUMNS) != swapped) {
        snprintf(why, why_cap,
                 "cuBLASLt's bias is one per row of its column-major D: --bias=columns with a row-major D, "
                 "--bias=rows with a column-major one");
        return 0;
    }
    *out = *out == CUBLASLT_EPILOGUE_DEFAULT  ? CUBLASLT_EPILOGUE_BIAS
           : *out == CUBLASLT_EPILOGUE_RELU   ? CUBLASLT_EPILOGUE_RELU_BIAS
           : *out == CUBLASLT_EPILOGUE_GELU   ? CUBLASLT_EPILOGUE_GELU_BIAS
                                              : CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
    return 1;
}

/* Sets cuBLASLt's scale mode of its first (`first`) or second operand.
 * tess_scale_mode values are cublasLtMatmulMatrixScale_t's. */
static void set_scale_mode(cublasLtMatmulDesc_t desc, int first, const tess_scale_desc *s) {
    int32_t mode = (int32_t)s->mode;
    cublasLtMatmulDescSetAttribute(desc, first ? CUBLASLT_MATMUL_DESC_A_SCALE_MODE : CUBLASLT_MATMUL_DESC_B_SCALE_MODE,
                                   &mode, sizeof mode);
}

static cudaDataType_t cuda_type(tess_dtype t) { return (cudaDataType_t)t; } /* tess_dtype values are cudaDataType_t's */

/* A column-major cuBLAS operand for matrix x (rows x cols as it enters the
 * product), used as-is (transposed = 0) or transposed: its op and the layout
 * of the matrix as stored. */
static void as_operand(const tess_matrix_desc *x, int transposed, int64_t batch, cublasOperation_t *op,
                       cublasLtMatrixLayout_t *layout) {
    int stored_col = x->order == TESS_ORDER_COL; /* stored col-major as rows x cols */
    int64_t rows = stored_col ? x->rows : x->cols, cols = stored_col ? x->cols : x->rows;
    *op = (stored_col != transposed) ? CUBLAS_OP_N : CUBLAS_OP_T;
    cublasLtMatrixLayoutCreate(layout, cuda_type(x->dtype), (uint64_t)rows, (uint64_t)cols, x->ld);
    if (batch > 1) {
        int32_t count = (int32_t)batch;
        int64_t stride = x->batch_stride;
        cublasLtMatrixLayoutSetAttribute(*layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count);
        cublasLtMatrixLayoutSetAttribute(*layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride);
    }
}

cublaslt_run *cublaslt_prepare(const tess_gemm_desc *g, char *why, size_t why_cap) {
    int d_row = g->d.order == TESS_ORDER_ROW;
    if (g->beta != 0.0f && g->c.order != g->d.order) {
        snprintf(why, why_cap, "cuBLASLt needs C and D in the same order");
        return NULL;
    }
    if (g->a.dtype == TESS_DTYPE_F32 && (g->d.dtype != TESS_DTYPE_F32 || (g->beta != 0.0f && g->c.dtype != TESS_DTYPE_F32))) {
        snprintf(why, why_cap, "cuBLASLt's TF32 GEMM writes f32 D (and reads f32 C) only");
        return NULL;
    }
    cublaslt_run *r = calloc(1, sizeof *r);
    if (!r || cublasLtCreate(&r->handle) != CUBLAS_STATUS_SUCCESS) {
        snprintf(why, why_cap, "cublasLtCreate failed");
        free(r);
        return NULL;
    }
    r->alpha = g->alpha, r->beta = g->beta;
    /* f32 operands: TF32 tensor cores, as tessera runs them (allow_tf32) */
    cublasLtMatmulDescCreate(&r->desc, g->a.dtype == TESS_DTYPE_F32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
                             CUDA_R_32F);
    cublasOperation_t op1, op2;
    /* Column-major D: D = A B. Row-major D is D^T column-major: D^T = B^T A^T. */
    if (!d_row) {
        as_operand(&g->a, 0, g->batch, &op1, &r->la);
        as_operand(&g->b, 0, g->batch, &op2, &r->lb);
    } else {
        as_operand(&g->b, 1, g->batch, &op1, &r->la);
        as_operand(&g->a, 1, g->batch, &op2, &r->lb);
        r->swapped = 1;
    }
    set_scale_mode(r->desc, 1, r->swapped ? &g->b_scale : &g->a_scale);
    set_scale_mode(r->desc, 0, r->swapped ? &g->a_scale : &g->b_scale);
    int8_t fast = (int8_t)(g->fast_accum != 0);
    cublasLtMatmulDescSetAttribute(r->desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast);
    cublasLtMatmulDescSetAttribute(r->desc, CUBLASLT_MATMUL_DESC_TRANSA, &op1, sizeof op1);
    cublasLtMatmulDescSetAttribute(r->desc, CUBLASLT_MATMUL_DESC_TRANSB, &op2, sizeof op2);
    cublasLtEpilogue_t epilogue;
    const int aux = g->aux.rows > 0 && g->aux.cols > 0;
    if (!lt_epilogue(&g->epilogue, r->swapped, aux, &epilogue, why, why_cap)) {
        cublaslt_release(r);
        return NULL;
    }
    cublasLtMatmulDescSetAttribute(r->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue);
    if (g->epilogue.bias != TESS_BIAS_NONE) {
        int32_t bias_type = (int32_t)g->epilogue.bias_type;
        int64_t bias_stride = g->epilogue.bias_batch_stride;
        cublasLtMatmulDescSetAttribute(r->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof bias_type);
        cublasLtMatmulDescSetAttribute(r->desc, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &bias_stride,
                                       sizeof bias_stride);
        r->bias = 1;
    }
    if (aux) { /* aux in D's type and order: its ld and batch stride, in elements, as cuBLASLt's column-major view */
        int64_t aux_ld = g->aux.ld, aux_stride = g->aux.batch_stride;
        cublasLtMatmulDescSetAttribute(r->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &aux_ld, sizeof aux_ld);
        cublasLtMatmulDescSetAttribute(r->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, &aux_stride,
                                       sizeof aux_stride);
        r->aux = 1;
    }
    tess_matrix_desc dcol = g->d, ccol = g->beta != 0.0f ? g->c : g->d;
    if (d_row) { /* the transposed view is column-major N x M */
        dcol.rows = g->n, dcol.cols = g->m, dcol.order = TESS_ORDER_COL;
        ccol.rows = g->n, ccol.cols = g->m, ccol.order = TESS_ORDER_COL;
    }
    cublasOperation_t unused;
    as_operand(&dcol, 0, g->batch, &unused, &r->ld);
    as_operand(&ccol, 0, g->batch, &unused, &r->lc);
    cudaMalloc(&r->workspace, CUBLASLT_WORKSPACE_BYTES);
    /* Block scale modes need scale pointers before the heuristic is asked
     * ("requires a custom pointer"); any device address serves until the run sets the real ones. */
    const void *placeholder = r->workspace;
    if (g->a_scale.mode != TESS_SCALE_TENSOR || g->b_scale.mode != TESS_SCALE_TENSOR) {
        cublasLtMatmulDescSetAttribute(r->desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &placeholder, sizeof placeholder);
        cublasLtMatmulDescSetAttribute(r->desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &placeholder, sizeof placeholder);
    }
    if (r->bias) /* the heuristic reads the bias pointer's alignment */
        cublasLtMatmulDescSetAttribute(r->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &placeholder, sizeof placeholder);
    if (r->aux) /* and aux's */
        cublasLtMatmulDescSetAttribute(r->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &placeholder,
                                       sizeof placeholder);
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulPreferenceCreate(&pref);
    size_t ws = CUBLASLT_WORKSPACE_BYTES;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    cublasLtMatmulHeuristicResult_t result;
    int found = 0;
    cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(r->handle, r->desc, r->la, r->lb, r->lc, r->ld, pref, 1,
                                                       &result, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    if (st != CUBLAS_STATUS_SUCCESS || found == 0) {
        snprintf(why, why_cap, "cuBLASLt has no algorithm (status %d)", (int)st);
        cublaslt_release(r);
        return NULL;
    }
    r->algo = result.algo;
    return r;
}

int cublaslt_execute(cublaslt_run *r, const void *a, const float *sa, const void *b, const float *sb, const void *c,
                     void *d, const void *bias, void *aux, void *stream) {
    const void *first = r->swapped ? b : a, *second = r->swapped ? a : b;
    const float *s1 = r->swapped ? sb : sa, *s2 = r->swapped ? sa : sb;
    cublasLtMatmulDescSetAttribute(r->desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &s1, sizeof s1);
    cublasLtMatmulDescSetAttribute(r->desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &s2, sizeof s2);
    if (r->bias)
        cublasLtMatmulDescSetAttribute(r->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
    if (r->aux)
        cublasLtMatmulDescSetAttribute(r->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof aux);
    cublasStatus_t st = cublasLtMatmul(r->handle, r->desc, &r->alpha, first, r->la, second, r->lb, &r->beta, c ? c : d, r->lc,
                                       d, r->ld, &r->algo, r->workspace, CUBLASLT_WORKSPACE_BYTES,
                                       (cudaStream_t)stream);
    return st == CUBLAS_STATUS_SUCCESS ? 0 : -1;
}

void cublaslt_release(cublaslt_run *r) {
    if (!r)
        return;
    if (r->la) cublasLtMatrixLayoutDestroy(r->la);
    if (r->lb) cublasLtMatrixLayoutDestroy(r->lb);
    if (r->lc) cublasLtMatrixLayoutDestroy(r->lc);
    if (r->ld) cublasLtMatrixLayoutDestroy(r->ld);
    if (r->desc) cublasLtMatmulDescDestroy(r->desc);
    if (r->handle) cublasLtDestroy(r->handle);
    cudaFree(r->workspace);
    free(r);
}
