/* Internal: marks small inline functions that both the host (C) and kernels (CUDA) use,
 * so that one implementation of an index formula or a conversion serves both. */
#ifndef TESS_CORE_HD_H
#define TESS_CORE_HD_H

#if defined(__CUDACC__)
#define TESS_HD static __host__ __device__ __forceinline__
#else
#define TESS_HD static inline
#endif

#endif
