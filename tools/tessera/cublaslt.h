/* The cuBLASLt baseline of `tessera bench`: the same problem (tessera's
 * row/column-major descriptors) mapped onto cuBLASLt's column-major matmul. */
#ifndef TESS_TOOLS_CUBLASLT_H
#define TESS_TOOLS_CUBLASLT_H

#include "tessera.h"

typedef struct cublaslt_run cublaslt_run;

/* Plans the problem with cuBLASLt's heuristic (32 MiB workspace), its fused
 * epilogue included. NULL, with the reason in `why`, where cuBLASLt cannot
 * express it (C and D in different orders, a bias along D's other
 * dimension, an activation it lacks, aux beside other than its GELU) or has
 * no algorithm. */
cublaslt_run *cublaslt_prepare(const tess_gemm_desc *g, char *why, size_t why_cap);
/* Queues the matmul on `stream` (sa, sb: the descriptor's scale factors,
 * NULL where it has none; bias, aux: its epilogue's, ignored where it has
 * none); 0 on success. */
int cublaslt_execute(cublaslt_run *r, const void *a, const float *sa, const void *b, const float *sb, const void *c,
                     void *d, const void *bias, void *aux, void *stream);
void cublaslt_release(cublaslt_run *r);

#endif
