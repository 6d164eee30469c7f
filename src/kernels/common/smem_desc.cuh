// wgmma shared-memory matrix descriptors ("Matrix Descriptor Format") for
// tiles stored with the 128-byte swizzle, the layout TMA writes.
//
// Bits: [0,14) start address >> 4, [16,30) leading byte offset >> 4,
// [32,46) stride byte offset >> 4, [49,52) base offset (0: tiles are
// 1024-byte aligned), [62,64) swizzle mode (1 = 128-byte).
//
// A K-major tile is rows of 64 16-bit elements (128 bytes); 8 rows form a
// 1024-byte swizzle atom, so the stride byte offset is 1024 and the leading
// byte offset is unused. An MN-major tile is stored as 64-element-wide chunks
// (TMA boxes of 64 MN x 64 K): within a chunk, consecutive K rows are 128
// bytes apart (8 rows = 1024 bytes: the stride byte offset), and the chunks
// are a box apart (the leading byte offset). CuTe's canonical layouts, in
// units of elements (T = 8): K-major SW128 ((8,m),(T,2)):((8T,SBO),(1,T));
// MN-major SW128 ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO)).
#pragma once

#include "kernels/common/ptx.cuh"

// Bytes of one swizzle atom (8 rows of 128 bytes): the stride byte offset.
#define TESS_SW128_ATOM_BYTES 1024

// Each field holds its byte value >> 4 in 14 bits (0x3FFF); the start address
// is a shared-memory address below 2^18 (256 KiB, 0x3FFFF). The low word
// holds the start address and the leading byte offset, the high word the
// stride byte offset and the swizzle mode: a tile's descriptors differ only
// in their low words, and moving one 16-byte multiple further is an add on
// the low word that cannot carry into the next field.
static constexpr __host__ __device__ uint32_t smem_desc_sw128_lo(uint32_t addr, uint32_t lbo_bytes) {
    return ((addr & 0x3FFFF) >> 4) | (((lbo_bytes >> 4) & 0x3FFF) << 16);
}
static constexpr __host__ __device__ uint32_t smem_desc_sw128_hi(uint32_t sbo_bytes) {
    return ((sbo_bytes >> 4) & 0x3FFF) | (1u << 30); // bit 62 of the descriptor: swizzle mode 1
}
TESS_DEVICE uint64_t smem_desc_of_words(uint32_t lo, uint32_t hi) { return ((uint64_t)hi << 32) | lo; }
// The unit of the descriptor's address fields: moving a descriptor N bytes
// adds N / TESS_SMEM_DESC_UNIT_BYTES to its low word.
#define TESS_SMEM_DESC_UNIT_BYTES 16
