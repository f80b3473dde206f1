/* test_sim_idle.c - rf_sim_sched.idle_first (rf_sim.h, "The scheduler"):
 * an empty engine steps on the first request to arrive alone, the others
 * that arrived with it at that step's end; off, they are queued together.
 * Every figure is derived by hand below from the step model's formula.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "roofline/rf_sim.h"
#include "sim_fixture.h"

/* 10 ms a step plus 0.01 ms a token (no decode here: one output token). */
static rf_status affine_step(void *user, const rf_sim_batch *b, double *step_s, rf_err *err)
{
    (void)user;
    (void)err;
    *step_s = 10e-3 + 1e-5 * (double)b->tokens;
    return RF_OK;
}

/* A closed loop of two clients, `requests` requests of a 100-token prompt
 * and one output token, on an engine that nothing else limits. */
static rf_sim_result run(int64_t requests, bool idle_first)
{
    rf_sim_workload w = {.arrival = RF_SIM_CLOSED,
                         .requests = requests,
                         .concurrency = 2,
                         .prompt = {.dist = RF_SIM_FIXED, .value = 100},
                         .output = {.dist = RF_SIM_FIXED, .value = 1}};
    rf_sim_sched sc = {.max_batched_tokens = 8192,
                       .max_seqs = 256,
                       .chunk = 8192,
                       .block_tokens = 16,
                       .pool_blocks = 1 << 20,
                       .idle_first = idle_first};
    rf_sim_result r;
    sim_run_ok(&w, &sc, affine_step, NULL, NULL, &r);
    return r;
}

/* Two requests sent together at 0.
 * Off: one step holds both prompts, 10 + 200 x 0.01 = 12 ms: TTFT 12 ms
 * each, the run over at 12 ms.
 * On: the empty engine steps on r0 alone, 10 + 100 x 0.01 = 11 ms (TTFT
 * 11 ms); r1 is queued at that step's end and prefills 11 to 22 ms (TTFT
 * 22 ms): mean (11 + 22) / 2 = 16.5 ms, max 22 ms, two steps. */
static void first_wave(void **state)
{
    (void)state;
    rf_sim_result off = run(2, false), on = run(2, true);
    near(off.ttft_s.mean, 12e-3, 1e-12);
    near(off.ttft_s.max, 12e-3, 1e-12);
    near(off.duration_s, 12e-3, 1e-12);
    assert_int_equal(off.steps, 1);
    near(on.ttft_s.mean, 16.5e-3, 1e-12);
    near(on.ttft_s.max, 22e-3, 1e-12);
    near(on.duration_s, 22e-3, 1e-12);
    assert_int_equal(on.steps, 2);
}

/* Four requests, two clients; on:
 *   0 ms: the engine is empty: r0 alone, 11 ms (TTFT 11); its client sends
 *         r2 at 11 ms.
 *  11 ms: r1 (held back at 0) and r2 queued together: the engine steps on
 *         them as one, 10 + 200 x 0.01 = 12 ms, to 23 ms (TTFT r1 23, r2
 *         12); the client of one sends r3 at 23 ms.
 *  23 ms: the engine is empty again: r3 alone, 11 ms, to 34 ms (TTFT 11).
 * TTFT mean (11 + 23 + 12 + 11) / 4 = 14.25 ms, max 23 ms; three steps.
 * Off: two waves of two prompts, 12 ms each: TTFT 12 ms, over at 24 ms. */
static void later_waves(void **state)
{
    (void)state;
    rf_sim_result off = run(4, false), on = run(4, true);
    near(off.ttft_s.mean, 12e-3, 1e-12);
    near(off.duration_s, 24e-3, 1e-12);
    assert_int_equal(off.steps, 2);
    near(on.ttft_s.mean, 14.25e-3, 1e-12);
    near(on.ttft_s.max, 23e-3, 1e-12);
    near(on.duration_s, 34e-3, 1e-12);
    assert_int_equal(on.steps, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(first_wave),
        cmocka_unit_test(later_waves),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
