// Where the cast-transpose's time goes: the library's kernel (A) beside a
// variant built from its own helpers, and a device copy, on the same bf16
// inputs. C: persistent CTAs that stage the next tile (cp.async into a
// second buffer) while they quantize the current one. The variant's q and qt
// are compared with A's. (dev/NOTES.md: writing qt in 16-byte pieces rather
// than whole 32-byte sectors costs 5-6%.)
//   nvcc -O3 -std=c++17 -arch=sm_90a -DTESS_BUILDING_LIBRARY -Iinclude -Isrc -Ibuild/generated \
//        dev/probes/cast_transpose_probe.cu \
//        -o /tmp/ctp && /tmp/ctp
#include "../../src/kernels/util/cast_transpose.cu"
#include "probe_common.cuh"

#include <algorithm>
#include <vector>

// The library's helpers the included kernel needs, without linking it.
tess_status tess_cuda_status(int err, const char *what) {
    if (err)
        fprintf(stderr, "%s: %s\n", what, cudaGetErrorString((cudaError_t)err));
    return err ? TESS_STATUS_EXECUTION_FAILED : TESS_STATUS_SUCCESS;
}
size_t tess_dtype_size(tess_dtype t) { return t == TESS_DTYPE_F32 ? 4 : t == TESS_DTYPE_E4M3 || t == TESS_DTYPE_E5M2 ? 1 : 2; }

// C: two tile buffers; the next tile's cp.async copies are issued before the
// current tile is quantized (grid.y limited so that each CTA walks several).
template <int XT> __device__ void issue_stage(const ct_args &a, typename x_elem<XT>::T (*tile)[CT_TILE + 8], int64_t r0,
                                              int64_t c0, int part, int first_row) {
    typedef typename x_elem<XT>::T T;
    const int64_t c = c0 + part * CT_VEC;
    for (int tile_row = first_row; tile_row < CT_TILE; tile_row += CT_ROWS_PER_PASS) {
        const int64_t r = r0 + tile_row;
        const bool in = r < a.rows && c < a.cols;
        cp_async_16(&tile[tile_row][part * CT_VEC], in ? (const T *)a.x + r * a.ld_x + c : a.x, in ? 16 : 0);
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
}

template <int XT> __global__ void __launch_bounds__(CT_THREADS, 2) variant_c(ct_args a) {
    typedef typename x_elem<XT>::T T;
    extern __shared__ __align__(16) unsigned char raw[];
    ct_shared<T> *bufs = (ct_shared<T> *)raw; // two
    const int t = threadIdx.x, warp = t / 32, lane = t % 32;
    const int part = t % CT_ROW_THREADS, first_row = t / CT_ROW_THREADS;
    const int64_t c0 = (int64_t)blockIdx.x * CT_TILE, step = (int64_t)gridDim.y * CT_TILE;
    int64_t r0 = (int64_t)blockIdx.y * CT_TILE;
    if (r0 < a.rows)
        issue_stage<XT>(a, bufs[0].tile, r0, c0, part, first_row);
    for (int k = 0; r0 < a.rows; r0 += step, k ^= 1) {
        ct_shared<T> &sh = bufs[k];
        if (r0 + step < a.rows) {
            issue_stage<XT>(a, bufs[k ^ 1].tile, r0 + step, c0, part, first_row);
            asm volatile("cp.async.wait_group 1;" ::: "memory");
        } else {
            asm volatile("cp.async.wait_group 0;" ::: "memory");
        }
        __syncthreads();
        quantize_rows<XT, false>(a, sh, r0, c0, part, first_row, 1.0f);
        for (int col = lane; col < CT_TILE; col += 32) {
            float m = 0.0f;
            for (int i = 0; i < CT_BAND; i++)
                m = fmaxf(m, fabsf(x_elem<XT>::value(sh.tile[warp * CT_BAND + i][col])));
            sh.band_amax[warp][col] = m;
        }
        __syncthreads();
        for (int pass = 0; pass < CT_TILE / 2 / CT_COLUMN_PAIRS; pass++) // the library's store pairing
            column_pass<XT, false>(a, sh, warp / 4 * (CT_TILE / 2) + pass * CT_COLUMN_PAIRS + lane / 2,
                                   warp % 4 * 2 * CT_STORE_ROWS + lane % 2 * CT_STORE_ROWS, r0, c0, 1.0f);
        __syncthreads();
    }
}

int main() {
    const int shapes[][2] = {{4096, 7168}, {4096, 2048}, {16384, 7168}, {8192, 8192}};
    for (auto &shape : shapes) {
        const int64_t rows = shape[0], cols = shape[1], n = rows * cols;
        std::vector<uint16_t> hx(n);
        for (int64_t i = 0; i < n; i++)
            // bf16 bits 0x3c00 + (hash % 0x0800): exponents 2^-7 to 2^8, every mantissa; odd i negative
            hx[i] = (uint16_t)(0x3c00 + (i * 2654435761u >> 20) % 0x0800) ^ (uint16_t)((i & 1) << 15);
        void *x, *q[3], *qt[3], *copy; // [1] unused: the variants keep their letters
        float *s[3], *st[3];
        CHECK(cudaMalloc(&x, n * 2));
        CHECK(cudaMalloc(&copy, n * 2));
        CHECK(cudaMemcpy(x, hx.data(), n * 2, cudaMemcpyHostToDevice));
        for (int v = 0; v < 3; v++) {
            CHECK(cudaMalloc(&q[v], n));
            CHECK(cudaMalloc(&qt[v], n));
            CHECK(cudaMalloc(&s[v], n / 128 * 4));
            CHECK(cudaMalloc(&st[v], n / 128 * 4));
        }
        tess_scale_desc l = {TESS_SCALE_BLOCK_1x128, 1, rows, 0}, lt = {TESS_SCALE_BLOCK_1x128, 1, cols, 0};
        auto args = [&](int v) {
            ct_args a;
            a.rows = rows, a.cols = cols, a.ld_x = cols, a.ld_q = cols, a.ld_qt = rows, a.q_type = TESS_DTYPE_E4M3;
            a.x = x, a.q = (uint8_t *)q[v], a.qt = (uint8_t *)qt[v], a.scales = s[v], a.scales_t = st[v];
            a.scale_mn = 1, a.scale_k = rows, a.scale_t_mn = 1, a.scale_t_k = cols;
            a.vector_x = a.vector_q = a.vector_qt = 1;
            return a;
        };
        const size_t smem = sizeof(ct_shared<uint16_t>);
        CHECK(cudaFuncSetAttribute(variant_c<TESS_DTYPE_BF16>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   (int)(2 * smem)));
        int sms = 0;
        CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
        const dim3 grid_c((unsigned)(cols / 128), (unsigned)std::max<int64_t>(1, std::min<int64_t>(rows / 128,
                                                                 (int64_t)sms * 2 / (cols / 128) + 1)));
        auto run = [&](int which) {
            if (which == 0)
                tess_launch_cast_transpose(rows, cols, TESS_DTYPE_BF16, x, cols, TESS_DTYPE_E4M3, q[0], cols, s[0], &l,
                                           qt[0], rows, st[0], &lt, 0);
            else if (which == 2)
                variant_c<TESS_DTYPE_BF16><<<grid_c, CT_THREADS, 2 * smem>>>(args(2));
            else
                cudaMemcpyAsync(copy, x, n * 2, cudaMemcpyDeviceToDevice, 0);
        };
        const char *names[4] = {"A library", "", "C prefetch next tile", "copy (bf16 x)"};
        double ms[4] = {0, 0, 0, 0};
        for (int which = 0; which < 4; which++) {
            if (which == 1)
                continue;
            std::vector<float> times;
            cudaEvent_t e0, e1;
            cudaEventCreate(&e0), cudaEventCreate(&e1);
            for (int i = 0; i < PROBE_WARMUPS + PROBE_REPS; i++) {
                hold<<<1, 1>>>(PROBE_HOLD_CYCLES);
                cudaEventRecord(e0);
                run(which);
                cudaEventRecord(e1);
                CHECK(cudaEventSynchronize(e1));
                float t;
                cudaEventElapsedTime(&t, e0, e1);
                if (i >= PROBE_WARMUPS)
                    times.push_back(t);
            }
            std::sort(times.begin(), times.end());
            ms[which] = times[times.size() / 2];
        }
        int bad[3] = {0, 0, 0};
        std::vector<uint8_t> h0(n), h1(n);
        for (int v = 2; v < 3; v++)
            for (int which = 0; which < 2; which++) {
                CHECK(cudaMemcpy(h0.data(), which ? qt[0] : q[0], n, cudaMemcpyDeviceToHost));
                CHECK(cudaMemcpy(h1.data(), which ? qt[v] : q[v], n, cudaMemcpyDeviceToHost));
                bad[v] += h0 != h1;
            }
        printf("%lld x %lld bf16 -> e4m3 x, x^T (1x128):\n", (long long)rows, (long long)cols);
        const double bytes = 4.0 * n; // read 2 B, write 1 + 1 B per element (copy: read 2 B, write 2 B)
        for (int which = 0; which < 4; which++)
            if (which != 1)
                printf("  %-22s %8.4f ms  %7.1f GB/s  %.3f of the copy%s\n", names[which], ms[which],
                   bytes / ms[which] / 1e6, ms[3] / ms[which], which == 2 ? (bad[which] ? "  MISMATCH" : "  (= A)") : "");
        cudaFree(x), cudaFree(copy);
        for (int v = 0; v < 3; v++)
            cudaFree(q[v]), cudaFree(qt[v]), cudaFree(s[v]), cudaFree(st[v]);
    }
    return 0;
}
