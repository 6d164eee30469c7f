// Compile-time configuration of an sm90 GEMM kernel: the CTA tile, the ring
// depth, the input types, how scales are applied, each operand's
// major-ness, and the shared-memory footprint derived from them.
#pragma once

#include "kernels/common/fragment.h"
#include "kernels/common/smem_desc.cuh"
#include "kernels/sm90/gemm_params.h"

// 3 warpgroups: one producer (TMA), two consumers (wgmma, TESS_SM90_CONSUMERS
// in gemm_params.h), each consumer owning 64 rows of a BM = 128 tile. A
// 64-row tile's kernel has one consumer; its third warpgroup idles
// (gemm_cfg::CONSUMERS), so every kernel launches the same 384 threads
// with the same register pool.
#define TESS_SM90_THREADS 384
// The most shared memory a Hopper CTA may opt into (227 KiB of the SM's 228;
// cudaDevAttrMaxSharedMemoryPerBlockOptin).
#define TESS_SM90_SMEM_LIMIT (227 * 1024)
// Shared memory set aside per ring stage for the tile_coord the producer
// publishes there (PUBLISHES_TILES): tile_coord's 36 bytes with room to
// spare; the static_assert after tile_coord keeps it large enough.
#define TESS_TILE_SLOT_BYTES 48
// Bytes of K per pipeline stage: one 128-byte swizzle row (64 16-bit or 128
// FP8 elements; 128 FP8 elements is also the scale block of the FP8 recipes,
// so each stage is one promotion step).
#define TESS_SM90_BK_BYTES 128
// K of one wgmma instruction, in bytes: k16 of 16-bit or k32 of FP8 inputs.
#define TESS_WGMMA_K_BYTES 32
// Alignment TMA tensor copies need of their shared-memory destination.
#define TESS_TMA_SMEM_ALIGN 128
// Register budgets after setmaxnreg. The CTA holds what it was launched
// with, 384 x 168 = 64512 (TESS_SM90_LAUNCH_REGS: 65536 / 384 = 170, rounded
// down to the allocation granule of 8), and
// setmaxnreg.inc waits until that pool can pay: 128 x 56 + 256 x 224 = 64512
// (a producer of 40 spilled once it walked interleaved stream-K K blocks,
// sched.h; 224 still hold a 128x256 tile's 128 accumulators without spills).
// Block-scaled kernels' producers also copy scale factors and need more
// (40 and 56 spilled): 128 x 72 + 256 x 216 = 64512.
#define TESS_SM90_LAUNCH_REGS 168
#define TESS_SM90_PRODUCER_REGS 56
#define TESS_SM90_CONSUMER_REGS 224
#define TESS_SM90_SCALED_PRODUCER_REGS 72
#define TESS_SM90_SCALED_CONSUMER_REGS 216
// A 64-row tile's one consumer takes what an idle warpgroup (the least
// setmaxnreg allows, 24) leaves: 128 x 72 + 128 x 24 + 128 x 240 = 43008.
#define TESS_SM90_IDLE_REGS 24
#define TESS_SM90_SOLE_CONSUMER_REGS 240

// Named barrier ids (0 is __syncthreads): each consumer warpgroup's own
// (epilogue, stream-K), then the two by which promoting consumers take turns
// issuing their wgmmas (mma_turn_wait in mainloop.cuh).
#define TESS_EPI_BARRIER_BASE 1
#define TESS_MMA_TURN_BARRIER_BASE (TESS_EPI_BARRIER_BASE + TESS_SM90_CONSUMERS)

// The epilogue stages this many columns of a warpgroup's tile at a time
// (two 64 x 64 sub-tiles, 16 KiB), so that the ring can keep more stages.
#define TESS_EPI_ROUND_COLS 128

template <int BM_, int BN_, int STAGES_, int CLUSTER_, int IN_, int SCALING_, int A_MN_, int B_MN_,
          int GROUPED_ = TESS_GROUPED_NONE, int PINGPONG_ = 0>
struct gemm_cfg {
    // A grouped GEMM (kernels/sm90/grouped.cuh, GROUPED_ = TESS_GROUPED_ROWS
    // or TESS_GROUPED_TOKENS) keeps its group table in shared memory and
    // stores only its groups' rows. Groups split M (the tokens are A's
    // rows; clusters take vertically adjacent tiles of one group, sharing
    // that group's B; a tile past the group's rows stores nothing), or, in a
    // token-tile kernel (transposed MMA for small groups: the weights are A,
    // the tokens B), they split N, so a narrow tile of tokens is all a group
    // of a few tokens pays for.
    static constexpr bool GROUPED = GROUPED_ == TESS_GROUPED_ROWS || GROUPED_ == TESS_GROUPED_TOKENS;
    // A k-grouped GEMM (k_grouped.cuh: an MoE layer's weight gradient) is a
    // dense batched one whose batches each reduce over their own K rows.
    static constexpr bool K_GROUPED = GROUPED_ == TESS_GROUPED_K;
    static constexpr bool GROUPED_ALONG_N = GROUPED_ == TESS_GROUPED_TOKENS;
    static constexpr bool GROUPED_ALONG_M = GROUPED && !GROUPED_ALONG_N;
    // The tile's extent along the grouped dimension (a group's tile rows are this many rows).
    static constexpr int GROUP_TILE = GROUPED_ALONG_N ? BN_ : BM_;
    static constexpr int IN = IN_, SCALING = SCALING_;
    static constexpr int ELEM_BYTES = IN <= TESS_MMA_F16 ? 2 : IN == TESS_MMA_TF32 ? 4 : 1;
    // INT8: the accumulators hold int32 bits until the mainloop ends (gemm_sm90.cuh converts them).
    static constexpr bool INT_ACC = IN == TESS_MMA_S8;
    static constexpr int BM = BM_, BN = BN_, BK = TESS_SM90_BK_BYTES / ELEM_BYTES, STAGES = STAGES_;
    // The schedule. Cooperative (PINGPONG 0): the consumer warpgroups
    // share each tile, 64 rows each: two for 128-row tiles, one for 64-row
    // ones (the small-M tiles, which spare the stream-K fixup a 128-row
    // tile split along K would pay). Pingpong (seed 004): two consumer
    // warpgroups, each owning whole 64-row tiles, the CTA's even items and
    // its odd ones; they run their mainloops in turn (turn_take,
    // mainloop.cuh), so that one's epilogue overlaps the other's mainloop.
    static constexpr bool PINGPONG = PINGPONG_ != 0;
    static constexpr int CONSUMERS = PINGPONG ? TESS_SM90_CONSUMERS : BM / 64;
    // The 64-row blocks of a tile (the consumers sharing it).
    static constexpr int ROW_BLOCKS = PINGPONG ? 1 : CONSUMERS;
    static_assert(BM == 64 * ROW_BLOCKS && CONSUMERS >= 1 && CONSUMERS <= TESS_SM90_CONSUMERS,
                  "64 or 128 rows: each consumer warpgroup owns 64 rows of a tile");
    static_assert(!PINGPONG || (BM == 64 && GROUPED_ == TESS_GROUPED_NONE && CLUSTER_ == 1),
                  "pingpong: dense 64-row tiles, clusters of 1");
    // wgmma instructions per stage (4: 64 / k16 or 128 / k32).
    static constexpr int K_STEPS = TESS_SM90_BK_BYTES / TESS_WGMMA_K_BYTES;
    static constexpr bool BLOCK_SCALED = SCALING >= TESS_SCALING_BLOCK_ROWS;
    // Promotion keeps a second BN / 2 float accumulator per thread.
    static constexpr bool PROMOTES = SCALING != TESS_SCALING_PLAIN;
    // Promoting consumers keep one K block's wgmmas in flight while they
    // promote the previous block, in a third BN / 2 accumulator: 3 x 64
    // registers fit the consumer's budget for BN = 128, 3 x 96 do not for
    // 192 (those wait for each block).
    static constexpr bool PIPELINES_PROMOTION = PROMOTES && BN <= 128;
    // Whether the two consumer warpgroups of a kernel that waits for each
    // block take turns issuing their wgmmas (turn_take, mainloop.cuh).
    // Per-tensor and per-row/column promotion do. Block-scaled kernels
    // run free, as DeepGEMM's do: beside DeepGEMM on an H100 the turns cost
    // 1.6% (31 block-scaled cases, geomean; 9% on a contiguous grouped case)
    // and 1.1% held at the power cap (dev/results/fp8-ab-h100/).
    static constexpr bool TAKES_MMA_TURNS = PROMOTES && !PIPELINES_PROMOTION && !BLOCK_SCALED && ROW_BLOCKS == 2;
    // A consumer warpgroup whose 64 rows all lie past a tile's rows (M <= 64
    // on 128-row tiles: the tokens of a small-M problem) skips the tile's
    // wgmmas and only follows the ring (consumer_follow_ring), leaving the
    // tensor cores and shared memory to the other warpgroup. Not where the
    // two take turns: each turn waits for the other warpgroup's pass. Nor
    // in 128-wide tiles with per-column B factors, whose three accumulators
    // and column factors fill the registers: the extra path spilled there
    // (140 bytes).
    static constexpr bool SKIPS_EMPTY_ROWS = !TAKES_MMA_TURNS && !PINGPONG &&
                                             !(PIPELINES_PROMOTION && BN == 128 && SCALING == TESS_SCALING_BLOCK_ROWS_COLS);
    // A promoted 256-wide tile cannot hold two 128-register accumulators
    // (the tile's and a K block's), so each K block's wgmmas run as two
    // 128-wide halves into one 64-register partial sum, each half promoted
    // into its 128 columns of the tile's accumulator while the other
    // consumer warpgroup's half runs: 128 + 64 registers, and each half
    // lies in one 128-column block of 128x128 B factors.
    static constexpr bool PROMOTES_IN_HALVES = PROMOTES && BN == 256;
    // Columns of one wgmma batch (and of the partial sum a promoting
    // consumer keeps: MMA_N / 2 floats per thread).
    static constexpr int MMA_N = PROMOTES_IN_HALVES ? BN / 2 : BN;
    static_assert(!PROMOTES_IN_HALVES || MMA_N == TESS_SCALE_BLOCK, "each half is one 128-column block of B factors");
    // Threads of the producer warpgroup that run the producer loop: a whole
    // warp, one elected lane of which issues the TMA loads (elect_one_sync);
    // in block-scaled kernels whose factors TMA cannot read, every lane also
    // copies the stage's scale factors.
    static constexpr int PRODUCER_THREADS = 32;
    static constexpr int PRODUCER_REGS = BLOCK_SCALED ? TESS_SM90_SCALED_PRODUCER_REGS : TESS_SM90_PRODUCER_REGS;
    static constexpr int CONSUMER_REGS = CONSUMERS == 1 ? TESS_SM90_SOLE_CONSUMER_REGS
                                         : BLOCK_SCALED ? TESS_SM90_SCALED_CONSUMER_REGS
                                                        : TESS_SM90_CONSUMER_REGS;
    static_assert(128 * PRODUCER_REGS + 128 * CONSUMERS * CONSUMER_REGS +
                          128 * (TESS_SM90_CONSUMERS - CONSUMERS) * TESS_SM90_IDLE_REGS <=
                      TESS_SM90_THREADS * TESS_SM90_LAUNCH_REGS,
                  "setmaxnreg.inc would wait forever for registers the CTA does not hold");
    // Arrivals a full barrier waits for: the elected TMA lane's expect_tx, plus one
    // per lane copying scale factors (none where the factors come by TMA).
    static constexpr __host__ __device__ int full_arrivals(bool factors_by_tma) {
        return 1 + (BLOCK_SCALED && !factors_by_tma ? PRODUCER_THREADS : 0);
    }
    // Releases of a stage per consumer warpgroup: one, or, where consumers
    // read scale factors from the stage with ordinary loads, one per warp
    // (each warp vouches for its own reads).
    // 256-wide tiles promoted in halves, taking turns, release a stage after
    // the second half's turn barrier, a bar.sync of the warpgroup's 128
    // threads that follows every warp's factor reads (and orders them before
    // the release): one release per warpgroup does.
    static constexpr int RELEASERS = BLOCK_SCALED && !(PROMOTES_IN_HALVES && TAKES_MMA_TURNS) ? 4 : 1;
    // Arrivals an empty barrier waits for: every consumer of every CTA in the
    // cluster (each CTA's producer writes B into all of them).
    // (A pingpong tile's stages are its one consumer's.)
    static constexpr int EMPTY_ARRIVALS = ROW_BLOCKS * CLUSTER_ * RELEASERS;
    // CLUSTER CTAs along M share each B tile: each loads 1/CLUSTER of it and
    // multicasts it to all (TMA multicast), so B crosses L2 once per cluster.
    static constexpr int CLUSTER = CLUSTER_;
    static constexpr int A_MN = A_MN_, B_MN = B_MN_;
    static_assert(ELEM_BYTES == 2 || (A_MN == 0 && B_MN == 0 && BN <= 256), "FP8 and TF32 operands are K-major");
    static_assert(ELEM_BYTES == 1 || SCALING == TESS_SCALING_PLAIN, "16-bit and TF32 inputs need no promotion");
    static_assert(!PROMOTES || BN <= 192 || PROMOTES_IN_HALVES,
                  "the tile's and a K block's accumulators must fit in the consumer's registers");
    static_assert(!PROMOTES_IN_HALVES || SCALING != TESS_SCALING_BLOCK_ROWS_COLS,
                  "256-wide promotion in halves: per-tensor, per-row/column or 128x128 B factors");
    static_assert(CLUSTER == 1 || CLUSTER == 2 || CLUSTER == 4, "clusters of 1, 2 or 4 CTAs along M");
    static_assert(BN / CLUSTER % (B_MN ? 64 : 8) == 0,
                  "each CTA multicasts whole 64-column chunks of an N-major B, or whole 8-row swizzle atoms");
    // Tiles narrower than the epilogue's 64-column sub-tile: the token side
    // of a small-M problem run transposed (the host swaps the operands, so
    // the weights fill the 128-row wgmma M side and a few tokens are N). Their
    // few outputs are stored from registers; B (the tokens) is K-major.
    static constexpr bool NARROW = BN < TESS_EPI_SUBTILE;
    static_assert(!NARROW || (CLUSTER_ == 1 && B_MN_ == 0 && !GROUPED_ALONG_M),
                  "narrow tiles: clusters of 1, K-major B, dense or grouped along N");
    static_assert(CONSUMERS == TESS_SM90_CONSUMERS || !GROUPED, "64-row tiles: dense GEMMs");
    static_assert(!K_GROUPED || (ELEM_BYTES == 2 && A_MN_ && B_MN_ && CLUSTER_ == 1 && !PINGPONG_ &&
                                 CONSUMERS == TESS_SM90_CONSUMERS),
                  "k-grouped: 16-bit MN-major operands (tokens outermost), 128-row cooperative tiles, clusters of 1");
    static_assert(!GROUPED_ALONG_N || (CLUSTER_ == 1 && BN <= 64),
                  "token tiles of a grouped GEMM: clusters of 1, BN <= 64");
    // Output stored from registers, element by element: narrow tiles, and
    // a grouped GEMM's token tiles, whose groups end at any column (a TMA
    // store would write into the next group's tokens).
    static constexpr bool STORES_FROM_REGISTERS = NARROW || GROUPED_ALONG_N;
    static_assert((BN % 64 == 0 || BN == 16 || BN == 32) && BN <= 256,
                  "BN is a multiple of the 64-column epilogue sub-tile, or a narrow token tile");
    static_assert(BN == 16 || BN == 32 || BN == 64 || BN == 128 || BN == 256 || (BN == 192 && ELEM_BYTES == 1),
                  "a generated wgmma width");
    static constexpr int A_STAGE_BYTES = BM * TESS_SM90_BK_BYTES;
    static constexpr int B_STAGE_BYTES = BN * TESS_SM90_BK_BYTES;
    // Each stage's B share loaded by one CTA of the cluster.
    static constexpr int B_SHARE_BYTES = B_STAGE_BYTES / CLUSTER;
    static constexpr int BARRIER_BYTES = 2 * STAGES * 8;
    // A grouped kernel's table (grouped.cuh): each group's first tile row
    // and first row of A, one more tile row entry (the total), and the 12
    // warps' partial sums of the scan that builds it.
    static constexpr int GROUP_TABLE_INTS = 2 * TESS_GROUPED_MAX_GROUPS + 1 + TESS_SM90_THREADS / 32;
    static constexpr int GROUP_TABLE_BYTES = GROUPED ? (GROUP_TABLE_INTS * 4 + 15) / 16 * 16 : 0;
    // B factors per stage of a block-scaled kernel: one per column (1x128
    // B), or one per 128-column block the tile touches (128x128 B: one for
    // BN dividing 128; two for BN = 192, whose tiles straddle at most one
    // block edge, at a multiple of 64, and for BN = 256, two whole blocks).
    static constexpr int B_FACTORS = SCALING == TESS_SCALING_BLOCK_ROWS_COLS ? BN : TESS_SCALE_BLOCK % BN == 0 ? 1 : 2;
    static_assert(SCALING != TESS_SCALING_BLOCK_ROWS || TESS_SCALE_BLOCK % BN == 0 || BN == 192 || BN == 256,
                  "128x128 B factors: tiles inside one 128-column block, or 192 or 256 wide");
    // Floats from one B factor to the next in a stage: per-column factors
    // lie side by side; 128x128 B's come in TMA boxes of
    // TESS_TMA_FACTOR_BOX_K K blocks, one box per 128-column block.
    static constexpr int B_FACTOR_PITCH = SCALING == TESS_SCALING_BLOCK_ROWS_COLS ? 1 : TESS_TMA_FACTOR_BOX_K;
    // Where in its box K block kb's 128x128 B factor lies: TMA boxes start
    // at a 16-byte aligned K block (a box's inner start must be 16-byte
    // aligned in global memory), and the producer's copies use the same place.
    static constexpr __host__ __device__ int b_factor_slot(int kb) {
        return SCALING == TESS_SCALING_BLOCK_ROWS ? (int)((unsigned)kb % TESS_TMA_FACTOR_BOX_K) : 0;
    }
    // Block-scaled kernels: each stage's float factors, one per row of A
    // (A_FACTOR_SPAN floats), then B's (space for BN, of which BLOCK_ROWS
    // kernels use B_FACTORS boxes). They lie after the epilogue staging, which keeps its 1024-byte
    // alignment (TMA writes them at 16-byte aligned offsets).
    // A's factors of a stage: BM, loaded by TMA as one box starting at the
    // tile's first row; in a grouped kernel the group's first row need not
    // be 16-byte aligned in the factor array, as a TMA box's inner start must
    // be, so the box starts up to 3 rows early (a_factor_shift) and holds
    // TESS_GROUPED_FACTOR_BOX_EXTRA more, in an area padded so that B's
    // factors start 128 bytes further.
    // (Token-tile kernels' A rows, the weights', start at whole tiles.)
    static constexpr int A_FACTOR_BOX = BM + (GROUPED_ALONG_M ? TESS_GROUPED_FACTOR_BOX_EXTRA : 0);
    static constexpr int A_FACTOR_SPAN = BM + (GROUPED_ALONG_M ? 32 : 0);
    static constexpr __host__ __device__ int a_factor_shift(int m0) {
        return GROUPED_ALONG_M ? m0 % TESS_GROUPED_FACTOR_BOX_EXTRA : 0;
    }
    // Rounded up to TESS_TMA_SMEM_ALIGN: TMA writes each stage's factors
    // (the A box at the stage's start, B's at A_FACTOR_SPAN floats), and a
    // tensor copy's shared-memory destination must be 128-byte aligned
    // (BN = 16 gave (128 + 16) x 4 = 576 bytes: "misaligned address").
    static constexpr int SCALE_STAGE_BYTES =
        BLOCK_SCALED ? ((A_FACTOR_SPAN + BN) * 4 + TESS_TMA_SMEM_ALIGN - 1) / TESS_TMA_SMEM_ALIGN * TESS_TMA_SMEM_ALIGN
                     : 0;
    static_assert(A_FACTOR_SPAN * 4 % TESS_TMA_SMEM_ALIGN == 0, "B's factors start 128-byte aligned for TMA");
    static_assert(B_FACTORS * B_FACTOR_PITCH <= BN, "B's factors fit their space in a stage");
    // Bytes of factors a stage's TMA loads bring, where factors come by TMA.
    static constexpr int SCALE_TX_BYTES = BLOCK_SCALED ? (A_FACTOR_BOX + B_FACTORS * B_FACTOR_PITCH) * 4 : 0;
    // The ring, the barriers, a grouped kernel's table, and up to a swizzle atom by which the dynamic
    // shared memory base is aligned up.
    static constexpr int RING_BYTES =
        STAGES * (A_STAGE_BYTES + B_STAGE_BYTES + SCALE_STAGE_BYTES) + BARRIER_BYTES + GROUP_TABLE_BYTES +
        TESS_SW128_ATOM_BYTES;
    // Epilogue rounds: the whole tile at once where the ring leaves room (no
    // round then waits for the previous round's stores to read the staging
    // buffer; the next tile's epilogue waits, a mainloop later), else 128
    // columns where BN allows (two sub-tiles per warpgroup), else one
    // 64-column sub-tile.
    static constexpr int EPI_FULL_BYTES = CONSUMERS * (BN / TESS_EPI_SUBTILE) * TESS_EPI_SUBTILE_BYTES;
    static constexpr int EPI_WIDE_BYTES = CONSUMERS * (TESS_EPI_ROUND_COLS / TESS_EPI_SUBTILE) * TESS_EPI_SUBTILE_BYTES;
    static constexpr int EPI_COLS = BN % TESS_EPI_SUBTILE == 0 && RING_BYTES + EPI_FULL_BYTES <= TESS_SM90_SMEM_LIMIT
                                        ? BN
                                    : BN % TESS_EPI_ROUND_COLS == 0 && RING_BYTES + EPI_WIDE_BYTES <= TESS_SM90_SMEM_LIMIT
                                        ? TESS_EPI_ROUND_COLS
                                        : TESS_EPI_SUBTILE;
    static constexpr int EPI_ROUNDS = STORES_FROM_REGISTERS ? 1 : BN / EPI_COLS;
    static constexpr int EPI_WG_BYTES =
        STORES_FROM_REGISTERS ? 0 : (EPI_COLS / TESS_EPI_SUBTILE) * TESS_EPI_SUBTILE_BYTES;
    static constexpr int EPI_BYTES = CONSUMERS * EPI_WG_BYTES;
    // Columns a round of a staged FP8 D takes (epilogue.cuh epilogue_stage_fp8):
    // its 64 x 64 sub-tiles are half a 16-bit one's bytes, so twice EPI_COLS
    // where that divides BN.
    static constexpr int FP8_ROUND_COLS = BN % (2 * EPI_COLS) == 0 ? 2 * EPI_COLS : EPI_COLS;
    // The fused epilogue (epilogue.cuh epilogue_fused) stages a warpgroup's
    // float32 sums in its staging buffer FUSED_COLS columns at a time (the
    // widest of 64, 32 and 16 that divides BN and fits), rows FUSED_PITCH
    // floats apart: the 8 floats of padding put the 8-byte stores of a
    // quarter warp (4 rows x 4 column pairs) on 32 distinct banks. 0 for
    // kernels that store from registers (no staging buffer).
    static constexpr int FUSED_PAD = 8;
    // After the sums, the tile's bias slice in float32: BN columns' or the
    // warpgroup's 64 rows' values.
    static constexpr int FUSED_BIAS_FLOATS = BN > 64 ? BN : 64;
    // Whether w columns fit: 64 rows of w + FUSED_PAD floats, then the bias slice, 4 bytes a float.
    static constexpr __host__ __device__ bool fused_cols_fit(int w) {
        return BN % w == 0 && (64 * (w + FUSED_PAD) + FUSED_BIAS_FLOATS) * (int)sizeof(float) <= EPI_WG_BYTES;
    }
    // The grouped 128x256 four-stage kernels without block factors take the
    // register path instead: staged or inline in the stores, ptxas (CUDA 13)
    // spills 20 bytes of grouped_f16_128x256_c2.
    static constexpr bool FUSES_FROM_REGISTERS =
        STORES_FROM_REGISTERS || (GROUPED && !BLOCK_SCALED && BN == 256 && STAGES == 4);
    static constexpr int FUSED_COLS = FUSES_FROM_REGISTERS ? 0
                                      : fused_cols_fit(64)  ? 64
                                      : fused_cols_fit(32)  ? 32
                                      : fused_cols_fit(16)  ? 16
                                                            : 0;
    static constexpr int FUSED_PITCH = FUSED_COLS + FUSED_PAD;
    // Whether the fused 16-bit store reads a residual inline (epilogue.cuh
    // residual_inline); not in the promoting 256-wide kernels that store a
    // tile in one round, where ptxas spills with it (fp8_128x256_c2_rows_s3:
    // 24 bytes). Those take the staged path.
    static constexpr bool RESIDUAL_INLINE = !(PROMOTES && BN == 256 && EPI_ROUNDS == 1);
    // Whether the staged fused loop loads a row-major residual's four
    // elements inline (epilogue.cuh fused_residual4); not in the promoting
    // kernels wider than 192 columns, where ptxas spills with it.
    static constexpr bool STAGED_RESIDUAL_INLINE = !(PROMOTES && BN > 192);
    // Whether the epilogue pairs (gate, up) columns (tess_gate); not the
    // promoting 256-wide kernels, where the gated staged loop spills
    // (fp8_128x256_c2_promote and _rows_s3: 20 bytes). The planners offer no
    // such kernel for a gated problem (kernel_table.h gates).
    static constexpr bool GATES = !(PROMOTES && BN == 256);
    // Whether the epilogue writes an FP8 D (epilogue.cuh epilogue_store_fp8):
    // not the 256-wide kernels without a staging buffer for the fused steps
    // (grouped_f16_128x256_c2: 60 bytes of spills), nor the ones with
    // per-column B factors, which no FP8 D reaches (the API refuses 1x128
    // weight factors with one: gemm_check.c). The planners offer no such
    // kernel for an FP8 D (the kernel table's fp8_out).
    static constexpr bool WRITES_FP8 =
        SCALING != TESS_SCALING_BLOCK_ROWS_COLS && !(FUSES_FROM_REGISTERS && BN == 256);
    // Whether an FP8 D may also take fused steps (bias, activation, residual,
    // C; epilogue.cuh epilogue_store_fp8): staged where there is a staging
    // buffer, else by a call per value, which only a few columns a thread
    // afford (a 256-wide tile's 128 live values spilled 492 bytes around the
    // calls). The planners read it from the kernel table (fp8_out).
    static constexpr bool FUSES_FP8 = WRITES_FP8 && (FUSED_COLS > 0 || BN <= 64);
    // D's columns a round of the inline gated store takes (epilogue.cuh
    // epilogue_store16_gated; twice as many of the product's): EPI_COLS
    // where two rounds' product columns divide BN, else BN / 2 in one round,
    // in whole 64-column sub-tiles; 0: the gated epilogue is staged
    // (epilogue_fused) or from registers (as the other fused steps of
    // FUSES_FROM_REGISTERS kernels: inline, grouped_f16_128x256_c2 spills 88 bytes).
    static constexpr int GATED_OUT_COLS = !GATES || FUSES_FROM_REGISTERS ? 0
                                          : BN % (2 * EPI_COLS) == 0 && EPI_COLS % TESS_EPI_SUBTILE == 0 ? EPI_COLS
                                          : (BN / 2) % TESS_EPI_SUBTILE == 0                             ? BN / 2
                                                                                                         : 0;
    static_assert(FUSES_FROM_REGISTERS || FUSED_COLS > 0, "a staging buffer holds 64 x 16 float32 sums at least");
    // Where shared memory leaves room (STAGES slots of TESS_TILE_SLOT_BYTES
    // after the group table), the producer publishes each tile's coordinates
    // with the tile's first stage, and the consumers read them there instead
    // of working them out again between tiles (gemm_sm90.cuh). Not pingpong
    // kernels: a consumer may wait on a stage only in its turn. Nor the
    // per-tensor promoted 256-wide kernels nor the 1x128 x 1x128 ones
    // (ptxas spills 20 and 160 bytes there).
    static constexpr bool PUBLISHES_TILES =
        !PINGPONG && !K_GROUPED && !(PROMOTES_IN_HALVES && !BLOCK_SCALED) && SCALING != TESS_SCALING_BLOCK_ROWS_COLS &&
        RING_BYTES + EPI_BYTES + STAGES * TESS_TILE_SLOT_BYTES <= TESS_SM90_SMEM_LIMIT;
    static constexpr int SMEM_BYTES = RING_BYTES + EPI_BYTES + (PUBLISHES_TILES ? STAGES * TESS_TILE_SLOT_BYTES : 0);
    static_assert(SMEM_BYTES <= TESS_SM90_SMEM_LIMIT, "over the 227 KiB a Hopper CTA may use");
    // Moving one wgmma step along K inside a stage: 32 bytes along a K-major
    // row, or 16 rows of 128 bytes in an MN-major (16-bit) chunk.
    static constexpr uint32_t A_KSTEP_BYTES = A_MN ? 16 * 128 : TESS_WGMMA_K_BYTES;
    static constexpr uint32_t B_KSTEP_BYTES = B_MN ? 16 * 128 : TESS_WGMMA_K_BYTES;
    // 64 rows (of M or N) of one stage: a consumer warpgroup's share of A, and
    // one 64 (MN) x 64 (K) TMA box of an MN-major operand.
    static constexpr int MN_CHUNK_BYTES = 64 * TESS_SM90_BK_BYTES;
    // Leading byte offset: the distance between 64-wide MN chunks (one 64 x 64 box);
    // unused ("assumed 1", i.e. 16 bytes) for K-major tiles.
    static constexpr uint32_t A_LBO = A_MN ? MN_CHUNK_BYTES : 16;
    static constexpr uint32_t B_LBO = B_MN ? MN_CHUNK_BYTES : 16;
    // The high word of every A and B descriptor (smem_desc.cuh): both
    // operands' stride byte offset is one swizzle atom, in every stage and step.
    static constexpr uint32_t DESC_HI = smem_desc_sw128_hi(TESS_SW128_ATOM_BYTES);
};

// Whether this launch's block factors come by TMA with their stage's tiles
// (p.scales_by_tma, set where their layouts allow), not by the producer warp.
template <class Cfg>
TESS_DEVICE bool factors_by_tma(const tess_gemm_params &p) {
    return Cfg::BLOCK_SCALED && p.scales_by_tma;
}

// One output tile as the mainloop and epilogue see it: the batch of
// per-tensor factors (a dense GEMM's batch, or the group), the batches of
// A, B and D (and of their other factors: A's with A, B's with B), the
// tile's first row and the end of the rows it may store (M, or its group's
// last row + 1), and its first column and the end of the columns it may
// store (N, or in a token-tile kernel its group's last token + 1); and
// whether the CTA loads its B tile whole, sharing none with its cluster (a
// grouped split tail: grouped.cuh).
struct tile_coord {
    int group, a_batch, b_batch, d_batch, m0, m_end, n0, n_end;
    bool b_whole;
};
static_assert(sizeof(tile_coord) <= TESS_TILE_SLOT_BYTES, "a tile's coordinates fit its slot");

// The batch of an operand's factors a tile reads: per-tensor factors are
// one per group in a grouped GEMM, others follow the operand's batch; 0
// where the factors have no batch stride (one set shared by every batch).
TESS_DEVICE int factor_batch(const tess_scale_operand &s, int group, int batch) {
    return !s.layout.batch_stride ? 0 : s.layout.mode == TESS_SCALE_TENSOR ? group : batch;
}

// The batch of A's factors a tile reads, and of B's.
TESS_DEVICE int a_factor_batch(const tess_gemm_params &p, const tile_coord &t) {
    return factor_batch(p.scale_a, t.group, t.a_batch);
}

TESS_DEVICE int b_factor_batch(const tess_gemm_params &p, const tile_coord &t) {
    return factor_batch(p.scale_b, t.group, t.b_batch);
}
