// tessera's conversion algorithms (the *_soft functions), run on the GPU, against the hardware's own
// conversions (cvt.rn for bf16/f16, cvt.rn.satfinite for e4m3/e5m2) for every
// one of the 2^32 float32 bit patterns, and every narrow code decoded.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "check.h"
#include "gpu_skip.h"
#include "ref/convert.h"

enum { BF16, F16, E4M3, E5M2, N_FORMATS };
static const char *format_names[N_FORMATS] = {"bf16", "f16", "e4m3", "e5m2"};

struct mismatches {
    unsigned long long count[N_FORMATS];
    unsigned first[N_FORMATS];  // smallest mismatching input bit pattern
};

__device__ bool is_nan_code(int format, unsigned c) {
    switch (format) {
    case BF16: return (c & 0x7fffu) > 0x7f80u;
    case F16: return (c & 0x7fffu) > 0x7c00u;
    case E4M3: return (c & 0x7fu) == 0x7fu;
    default: return (c & 0x7fu) > 0x7cu;
    }
}

__device__ void compare(mismatches *out, int format, unsigned input, unsigned ours, unsigned hw) {
    if (ours == hw || (is_nan_code(format, ours) && is_nan_code(format, hw)))
        return;
    atomicAdd(&out->count[format], 1ull);
    atomicMin(&out->first[format], input);
}

// Every float32 bit pattern, grid-stride.
__global__ void encode_all(mismatches *out) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < (1ull << 32);
         i += (unsigned long long)gridDim.x * blockDim.x) {
        unsigned u = (unsigned)i;
        float f = __uint_as_float(u);
        compare(out, BF16, u, tess_f32_to_bf16_soft(f), __bfloat16_as_ushort(__float2bfloat16_rn(f)));
        compare(out, F16, u, tess_f32_to_f16_soft(f), __half_as_ushort(__float2half_rn(f)));
        compare(out, E4M3, u, tess_f32_to_e4m3_soft(f), __nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E4M3));
        compare(out, E5M2, u, tess_f32_to_e5m2_soft(f), __nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E5M2));
    }
}

__device__ void compare_float(mismatches *out, int format, unsigned code, float ours, float hw) {
    if (__float_as_uint(ours) == __float_as_uint(hw) || (isnan(ours) && isnan(hw)))
        return;
    atomicAdd(&out->count[format], 1ull);
    atomicMin(&out->first[format], code);
}

__device__ float fp8_to_float_hw(unsigned c, __nv_fp8_interpretation_t kind) {
    __half_raw h = __nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)c, kind);
    return __half2float(__half(h));
}

// Every 16-bit and 8-bit code.
__global__ void decode_all(mismatches *out) {
    unsigned c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= 65536)
        return;
    compare_float(out, BF16, c, tess_bf16_to_f32_soft((uint16_t)c), __bfloat162float(__ushort_as_bfloat16((unsigned short)c)));
    compare_float(out, F16, c, tess_f16_to_f32_soft((uint16_t)c), __half2float(__ushort_as_half((unsigned short)c)));
    if (c < 256) {
        compare_float(out, E4M3, c, tess_e4m3_to_f32_soft((uint8_t)c), fp8_to_float_hw(c, __NV_E4M3));
        compare_float(out, E5M2, c, tess_e5m2_to_f32_soft((uint8_t)c), fp8_to_float_hw(c, __NV_E5M2));
    }
}

static int run(const char *what, void (*launch)(mismatches *)) {
    mismatches host, *dev;
    memset(&host, 0, sizeof host);
    memset(host.first, 0xff, sizeof host.first);
    CUDA_OR_FAIL(cudaMalloc(&dev, sizeof host));
    CUDA_OR_FAIL(cudaMemcpy(dev, &host, sizeof host, cudaMemcpyHostToDevice));
    launch(dev);
    CUDA_OR_FAIL(cudaGetLastError());
    CUDA_OR_FAIL(cudaMemcpy(&host, dev, sizeof host, cudaMemcpyDeviceToHost));
    cudaFree(dev);
    for (int f = 0; f < N_FORMATS; f++)
        CHECKF(host.count[f] == 0, "%s %s: %llu mismatches with the hardware, first at 0x%08x", what,
               format_names[f], host.count[f], host.first[f]);
    return 0;
}

static void launch_encode(mismatches *m) { encode_all<<<132 * 16, 256>>>(m); }
static void launch_decode(mismatches *m) { decode_all<<<65536 / 256, 256>>>(m); }

int main(void) {
    int skip = gpu_require_sm90();
    if (skip)
        return skip;
    if (run("encode (all 2^32 floats)", launch_encode) || run("decode (all codes)", launch_decode))
        return 1;
    return check_finish("gpu_convert");
}
