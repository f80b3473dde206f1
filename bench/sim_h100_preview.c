/* sim_h100_preview.c - the simulator's floor against measured serving runs
 * (issue 27's acceptance, ahead of the CLI): each line of stdin is one run,
 * "ISL OSL C TTFT_ms TPOT_ms", of Llama-3.1-8B bf16 on one H100 SXM; the
 * closed loop at concurrency C with fixed lengths, 10 C requests, on the
 * floor of llama-3-8b (the same shapes) on the h100-sxm preset; engine: T
 * 8192, max_seqs C, chunk 8192, blocks of 32, the pool at util 0.9. Prints
 * each run's mean TTFT and TPOT floors beside the measured ones and their
 * ratio, then the count above measured and the median ratios.
 * usage: sim_h100_preview < rows   (built and fed by bench/sim-h100-preview.sh) */
#include <stdio.h>
#include <stdlib.h>

#include "roofline/rf_hw.h"
#include "roofline/rf_model.h"
#include "roofline/rf_sim.h"

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int run(const rf_sim_workload *w, const rf_sim_sched *sc, rf_sim_floor *fl, rf_sim_result *r)
{
    rf_err e;
    int64_t max_log = rf_sim_log_hint(w, sc);
    for (int tries = 0; tries < 2; tries++) {
        size_t bytes;
        if (rf_sim_workspace_bytes(w, sc, max_log, &bytes, &e))
            break;
        void *work = malloc(bytes);
        if (!work)
            return 1;
        rf_status s = rf_sim_run(w, sc, rf_sim_floor_step, fl, work, bytes, max_log, r, &e);
        free(work);
        if (!s)
            return 0;
        if (s != RF_ERANGE || r->log_entries <= max_log)
            break;
        max_log = r->log_entries;
    }
    fprintf(stderr, "sim_h100_preview: %s\n", e.msg);
    return 1;
}

int main(void)
{
    static rf_sim_floor fl;
    static double rt[4096], rp[4096];
    rf_model m;
    rf_hw h;
    rf_roof roof;
    rf_err e;
    int64_t blocks;
    if (rf_model_preset("llama-3-8b", &m, &e) || rf_hw_preset("h100-sxm", &h, &e) ||
        rf_hw_roof(&h, RF_BF16, &roof, &e)) {
        fprintf(stderr, "sim_h100_preview: %s\n", e.msg);
        return 1;
    }
    rf_step_opts o = rf_step_opts_for_model(&m);
    size_t tb = rf_sim_floor_table_bytes(8192, 4096);
    void *table = malloc(tb);
    if (!table || rf_sim_floor_prepare(&fl, &m, &o, &roof, 8192, 4096, table, tb, &e) ||
        rf_sim_pool_blocks(&m, &o, h.mem_bytes, 0.9, 0, 32, &blocks, &e)) {
        fprintf(stderr, "sim_h100_preview: %s\n", table ? e.msg : "out of memory");
        return 1;
    }
    long isl, osl, c;
    double ttft, tpot;
    int n = 0, above_ttft = 0, above_tpot = 0;
    while (n < 4096 && scanf("%ld %ld %ld %lf %lf", &isl, &osl, &c, &ttft, &tpot) == 5) {
        if (c < 1 || c > 4096 || isl < 1 || osl < 2)
            continue;
        rf_sim_sched sc = {.max_batched_tokens = 8192,
                           .max_seqs = c,
                           .chunk = 8192,
                           .block_tokens = 32,
                           .pool_blocks = blocks};
        rf_sim_workload w = {.arrival = RF_SIM_CLOSED,
                             .requests = 10 * c,
                             .concurrency = c,
                             .prompt = {.value = isl},
                             .output = {.value = osl}};
        rf_sim_result r;
        if (run(&w, &sc, &fl, &r))
            return 1;
        rt[n] = 1e3 * r.ttft_s.mean / ttft;
        rp[n] = 1e3 * r.tpot_s.mean / tpot;
        above_ttft += rt[n] > 1;
        above_tpot += rp[n] > 1;
        printf("ISL %5ld OSL %4ld C %4ld  TTFT floor %7.1f ms measured %7.1f (%.2f)  "
               "TPOT floor %6.2f ms measured %6.2f (%.2f)\n",
               isl, osl, c, 1e3 * r.ttft_s.mean, ttft, rt[n], 1e3 * r.tpot_s.mean, tpot, rp[n]);
        n++;
    }
    free(table);
    if (!n)
        return 1;
    qsort(rt, (size_t)n, sizeof rt[0], cmp);
    qsort(rp, (size_t)n, sizeof rp[0], cmp);
    printf("%d runs: floors above measured: TTFT %d, TPOT %d; floor/measured median TTFT %.2f "
           "(%.2f to %.2f), TPOT %.2f (%.2f to %.2f)\n",
           n, above_ttft, above_tpot, rt[n / 2], rt[0], rt[n - 1], rp[n / 2], rp[0], rp[n - 1]);
    return 0;
}
