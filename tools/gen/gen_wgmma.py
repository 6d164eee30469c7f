#!/usr/bin/env python3
"""Writes src/kernels/common/wgmma_ops.cuh: one wrapper per wgmma.mma_async form
tessera uses. Each form lists N/2 accumulator registers, which is why these are
generated rather than written by hand. Run from the repository root:
    python3 tools/gen/gen_wgmma.py > src/kernels/common/wgmma_ops.cuh
"""

WIDTHS = (16, 32, 64, 128, 256)  # the tile widths of the kernel table (16, 32: token tiles of small-M problems)
SIXTEEN_BIT = (("bf16", "bf16"), ("f16", "f16"))
FP8_WIDTHS = (16, 32, 64, 128, 192, 256)  # FP8 tile widths (192: promoted FP8 fits two 96-register accumulators;
                                          # 16 to 64: token tiles of small-M problems)
FP8 = ("e4m3", "e5m2")  # every (A, B) pair of these is a wgmma form
TF32_WIDTHS = (16, 32, 64, 128, 256)  # TF32 (f32 inputs) tile widths, K-major operands only
S8_WIDTHS = (16, 32, 64, 128, 256)  # INT8 tile widths, K-major operands only


def form(n, ptx_type, name_type):
    regs = n // 2
    outs = ", ".join(f"%{i}" for i in range(regs))
    constraints = ", ".join(f'"+f"(d[{i}])' for i in range(regs))
    a, b, s, ta, tb = regs, regs + 1, regs + 2, regs + 3, regs + 4
    return f"""
// D[64x{n}] (+)= A[64x16] * B[16x{n}], {ptx_type} inputs from shared memory (descriptors a, b),
// f32 accumulators; scale_d = 0 overwrites D. TA/TB: 1 = that operand is MN-major.
template <int TA, int TB>
TESS_DEVICE void wgmma_m64n{n}k16_f32_{name_type}(float (&d)[{regs}], uint64_t a, uint64_t b, int scale_d) {{
    asm volatile(
        "{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{s}, 0;\\n"
        "wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{ptx_type}.{ptx_type} "
        "{{{outs}}}, %{a}, %{b}, p, 1, 1, %{ta}, %{tb};\\n}}\\n"
        : {constraints}
        : "l"(a), "l"(b), "r"(scale_d), "n"(TA), "n"(TB));
}}
"""


def k_major_form(n, comment, name, instruction, int_accumulators=False, immediates="p, 1, 1"):
    """A wgmma form whose operands are both K-major (FP8, TF32, INT8: no transpose immediates):
    `comment` its lines (after the D line), `name` the wrapper, `instruction` the PTX opcode;
    int_accumulators keeps int32 sums as bits in d's float registers."""
    regs = n // 2
    outs = ", ".join(f"%{i}" for i in range(regs))
    if int_accumulators:
        constraints = ", ".join(f'"+r"(reinterpret_cast<uint32_t &>(d[{i}]))' for i in range(regs))
    else:
        constraints = ", ".join(f'"+f"(d[{i}])' for i in range(regs))
    a, b, s = regs, regs + 1, regs + 2
    return f"""
{comment}
TESS_DEVICE void {name}(float (&d)[{regs}], uint64_t a, uint64_t b, int scale_d) {{
    asm volatile(
        "{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{s}, 0;\\n"
        "{instruction} "
        "{{{outs}}}, %{a}, %{b}, {immediates};\\n}}\\n"
        : {constraints}
        : "l"(a), "l"(b), "r"(scale_d));
}}
"""


def form_fp8(n, ta, tb):
    return k_major_form(n, f"""// D[64x{n}] (+)= A[64x32] * B[32x{n}], A {ta} and B {tb} from shared memory, both
// K-major (FP8 wgmma has no transpose), f32 accumulators; scale_d = 0 overwrites D.""",
                        f"wgmma_m64n{n}k32_f32_{ta}_{tb}", f"wgmma.mma_async.sync.aligned.m64n{n}k32.f32.{ta}.{tb}")


def form_tf32(n):
    return k_major_form(n, f"""// D[64x{n}] (+)= A[64x8] * B[8x{n}], tf32 inputs (f32 in shared memory, the low 13 mantissa bits
// ignored) from shared memory, both K-major (TF32 wgmma has no transpose), f32 accumulators;
// scale_d = 0 overwrites D.""", f"wgmma_m64n{n}k8_f32_tf32", f"wgmma.mma_async.sync.aligned.m64n{n}k8.f32.tf32.tf32")


def form_s8(n):
    return k_major_form(n, f"""// D[64x{n}] (+)= A[64x32] * B[32x{n}], s8 inputs from shared memory, both K-major, s32
// accumulators held in d's float registers as int32 bits (exact sums); scale_d = 0 overwrites D.""",
                        f"wgmma_m64n{n}k32_s32_s8", f"wgmma.mma_async.sync.aligned.m64n{n}k32.s32.s8.s8",
                        int_accumulators=True, immediates="p")


def dispatch():
    lines = ["""
// wgmma_ss<N, IN, TA, TB>: the form above for tile width N and input pair IN
// (tess_mma_input): one k16 step of 16-bit inputs, one k32 step of FP8 or
// INT8, or one k8 step of TF32 (32 bytes of K each).
template <int N, int IN, int TA, int TB>
TESS_DEVICE void wgmma_ss(float (&d)[N / 2], uint64_t a, uint64_t b, int scale_d) {"""]
    for n in sorted(set(WIDTHS) | set(FP8_WIDTHS) | set(TF32_WIDTHS) | set(S8_WIDTHS)):
        lines.append(f"    if constexpr (N == {n}) {{")
        if n in WIDTHS:
            lines.append(f"        if constexpr (IN == TESS_MMA_BF16) wgmma_m64n{n}k16_f32_bf16<TA, TB>(d, a, b, scale_d);")
            lines.append(f"        if constexpr (IN == TESS_MMA_F16) wgmma_m64n{n}k16_f32_f16<TA, TB>(d, a, b, scale_d);")
        if n in FP8_WIDTHS:
            for ta in FP8:
                for tb in FP8:
                    lines.append(f"        if constexpr (IN == TESS_MMA_{ta.upper()}_{tb.upper()}) "
                                 f"wgmma_m64n{n}k32_f32_{ta}_{tb}(d, a, b, scale_d);")
        if n in TF32_WIDTHS:
            lines.append(f"        if constexpr (IN == TESS_MMA_TF32) wgmma_m64n{n}k8_f32_tf32(d, a, b, scale_d);")
        if n in S8_WIDTHS:
            lines.append(f"        if constexpr (IN == TESS_MMA_S8) wgmma_m64n{n}k32_s32_s8(d, a, b, scale_d);")
        lines.append("    }")
    sixteen = " || ".join(f"N == {n}" for n in WIDTHS)
    fp8 = " || ".join(f"N == {n}" for n in FP8_WIDTHS)
    tf32 = " || ".join(f"N == {n}" for n in TF32_WIDTHS)
    lines.append(f'    static_assert(IN <= TESS_MMA_F16 ? ({sixteen})')
    s8 = " || ".join(f"N == {n}" for n in S8_WIDTHS)
    lines.append(f'                  : IN == TESS_MMA_TF32 ? (({tf32}) && TA == 0 && TB == 0)')
    lines.append(f'                  : IN == TESS_MMA_S8 ? (({s8}) && TA == 0 && TB == 0)')
    lines.append(f'                                        : (({fp8}) && TA == 0 && TB == 0),')
    lines.append(f'                  "wgmma form not generated (16-bit widths {", ".join(map(str, WIDTHS))}; FP8 widths '
                 f'{", ".join(map(str, FP8_WIDTHS))}; TF32 and INT8 widths {", ".join(map(str, TF32_WIDTHS))}; FP8, TF32 '
                 f'and INT8 K-major operands only)");')
    lines.append("}")
    return "\n".join(lines) + "\n"


print("""// Generated by tools/gen/gen_wgmma.py; do not edit by hand.
// wgmma.mma_async forms ("Asynchronous Warpgroup Level Matrix Multiply-Accumulate
// Instructions: wgmma.mma_async"), shared-memory A and B.
#pragma once

#include "kernels/common/ptx.cuh"
#include "kernels/sm90/gemm_params.h\"""")
for n in WIDTHS:
    for ptx_type, name_type in SIXTEEN_BIT:
        print(form(n, ptx_type, name_type), end="")
for n in FP8_WIDTHS:
    for ta in FP8:
        for tb in FP8:
            print(form_fp8(n, ta, tb), end="")
for n in TF32_WIDTHS:
    print(form_tf32(n), end="")
for n in S8_WIDTHS:
    print(form_s8(n), end="")
print(dispatch(), end="")
