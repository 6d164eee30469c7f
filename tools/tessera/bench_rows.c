/* `tessera bench gemm`'s result rows (bench_rows.h). */
#include "tools/tessera/bench_rows.h"

#include <stdio.h>

void bench_row_write(const bench_row *r, FILE *csv) {
    const bench_options *o = r->o;
    const tess_gemm_desc *g = r->g;
    const energy_window *w = r->energy;
    const double per_ghz = r->tflops / (w->mean_sm_mhz * 1e-3), per_j = r->tflops / w->mean_board_w; /* TF/s / W = TF/J */
    char tail[40];
    if (o->hold > 0)
        snprintf(tail, sizeof tail, "best %7.1f TF/s", r->best_tflops);
    else
        snprintf(tail, sizeof tail, "host %5.1f us", r->host_us);
    printf("%-44s %-8s %9.4f ms %8.1f TFLOP/s %5.0f MHz %4.0f W %6.1f TF/s/GHz %5.2f TF/J %8.1f GB/s  x%-5.3f "
           "err %.2e  %s  %s\n",
           r->problem, r->tessera ? "tessera" : "cublas", r->ms, r->tflops, w->mean_sm_mhz, w->mean_board_w, per_ghz,
           per_j, r->gbs, r->ratio, r->err, tail, r->kernel);
    if (!csv)
        return;
    fprintf(csv,
            "%lld,%lld,%lld,%lld,%s,%s,%s,%s,%s,%s,%s,%s,%g,%g,%s,%s,%d,%s,%s,%s,%s,%s,%.6f,%.2f,%.2f,%.4f,"
            "%.3e,%.2f,%.0f,%.1f,%.2f,%.4f,%.2f,%g,%d,%d,%s,%g,%d\n",
            (long long)g->m, (long long)g->n, (long long)g->k, (long long)g->batch, tess_dtype_name(g->a.dtype),
            bench_order_name(g->a.order), r->b_type, bench_order_name(g->b.order), tess_dtype_name(g->c.dtype),
            bench_order_name(g->c.order), tess_dtype_name(g->d.dtype), bench_order_name(g->d.order), g->alpha, g->beta,
            bench_scale_name(o->scale_a), bench_scale_name(o->scale_b), o->fast_accum, bench_bias_name(o->bias),
            o->bias != TESS_BIAS_NONE ? tess_dtype_name(g->epilogue.bias_type) : "none", bench_act_name(o->act),
            r->tessera ? "tessera" : "cublas", r->kernel, r->ms, r->tflops, r->gbs, r->ratio, r->err, r->host_us,
            w->mean_sm_mhz, w->mean_board_w, per_ghz, per_j, r->best_tflops, o->hold, r->budget, o->residual,
            bench_gate_name(o->gate), o->gate_limit, o->aux);
}

void bench_csv_header(FILE *csv, const tess_device_info *info, energy_meter *meter) {
    fprintf(csv, "# device=%s sm_clock_mhz=%d mem_clock_mhz=%d sms=%d power_limit_w=%.0f library=%s\n", info->name,
            info->sm_clock_khz / 1000, info->mem_clock_khz / 1000, info->sm_count, energy_power_limit_w(meter),
            tess_version_string());
    fprintf(csv, "# sm_mhz, board_w: means during the provider's timed runs (NVML; nan without it); "
                 "tflops_per_ghz = tflops / (sm_mhz / 1000); tflop_per_j = tflops / board_w; hold_s = 0: bursts, "
                 "else --hold (ms, tflops: round 2; best_tflops: the best round); bias, bias_type, activation: the "
                 "fused epilogue (--bias, --bias-type, --act; none: without); sm_budget: tessera's SMs (--sms; 0 in cuBLAS's "
                 "rows, which use every SM); residual: 1 where --residual added one (cuBLASLt's rows: as C with beta "
                 "1); gate, gate_limit: --gate (interleaved: D is M x N/2, n the product's N) and --gate-limit; "
                 "aux: 1 where --aux wrote the values before the activation beside D (cuBLASLt: GELU_AUX); "
                 "b_type int4gG (z: with zero points): a 4-bit B in groups of G (--B=int4:col), tessera's GEMV alone\n");
    fprintf(csv, "m,n,k,batch,a_type,a_order,b_type,b_order,c_type,c_order,d_type,d_order,alpha,beta,scale_a,"
                 "scale_b,fast_accum,bias,bias_type,activation,provider,kernel,ms,tflops,gbs,speedup_vs_cublas,"
                 "rel_error,host_us,sm_mhz,board_w,tflops_per_ghz,tflop_per_j,best_tflops,hold_s,sm_budget,residual,"
                 "gate,gate_limit,aux\n");
}

