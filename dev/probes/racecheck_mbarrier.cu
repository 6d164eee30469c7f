// Does compute-sanitizer racecheck understand the stage protocol of the
// block-scaled kernels' factor copies? One producer warp copies a stage's 32
// floats with 4-byte cp.async and arrives on the stage's full barrier when
// they land (cp.async.mbarrier.arrive.noinc); one consumer warp waits for
// it, reads the floats with ordinary loads, syncs the warp and arrives on
// the stage's empty barrier, which the producer waits for before the next
// fill: the ring of kernels/sm90/mainloop.cuh (load_block_scales,
// release_stage), written out for one warp each. The result is checked, so
// a real race shows as a wrong sum; racecheck's verdict is printed beside it.
//   nvcc -O2 -gencode arch=compute_90a,code=sm_90a -Isrc dev/probes/racecheck_mbarrier.cu -o /tmp/probe
//   compute-sanitizer --tool racecheck /tmp/probe
#include <cstdio>

#include "kernels/common/pipeline.cuh"

// Two stages, so every stage is refilled while the consumer may still be
// near it; 64 fills, 32 refills of each.
#define STAGES 2
#define FILLS 64

__global__ void ring(const float *src, float *out) {
    __shared__ __align__(16) float stage[STAGES][32];
    __shared__ uint64_t full[STAGES], empty[STAGES];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (threadIdx.x == 0)
        for (int s = 0; s < STAGES; s++) {
            mbar_init(&full[s], 32); // every producer lane's copies
            mbar_init(&empty[s], 1); // the consumer warp's releasing lane
        }
    __syncthreads();
    pipe_cursor c = {0, 0};
    float sum = 0.0f;
    for (int f = 0; f < FILLS; f++, pipe_advance(c, STAGES)) {
        if (warp == 0) {
            pipe_producer_acquire(empty, c);
            cp_async_4(&stage[c.stage][lane], src + f * 32 + lane, true);
            cp_async_mbar_arrive_noinc(&full[c.stage]);
        } else {
            pipe_consumer_wait(full, c);
            sum += stage[c.stage][(lane + f) % 32];
            __syncwarp();
            if (lane == 0)
                mbar_arrive(&empty[c.stage]);
        }
    }
    if (warp == 1)
        out[lane] = sum;
}

int main() {
    float host[FILLS * 32], *src, *out, got[32];
    for (int i = 0; i < FILLS * 32; i++)
        host[i] = (float)(i % 97); // small integers: the float sums are exact, so any wrong read shows
    cudaMalloc(&src, sizeof host);
    cudaMalloc(&out, sizeof got);
    cudaMemcpy(src, host, sizeof host, cudaMemcpyHostToDevice);
    ring<<<1, 64>>>(src, out);
    cudaError_t err = cudaDeviceSynchronize();
    cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost);
    int wrong = 0;
    for (int lane = 0; lane < 32; lane++) {
        float want = 0.0f;
        for (int f = 0; f < FILLS; f++)
            want += host[f * 32 + (lane + f) % 32];
        wrong += got[lane] != want;
    }
    printf("ring of %d stages, %d fills: %s, %d lanes wrong\n", STAGES, FILLS, cudaGetErrorString(err), wrong);
    return wrong || err != cudaSuccess;
}
