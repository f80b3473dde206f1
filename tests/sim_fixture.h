/* sim_fixture.h - what test_sim.c, test_sim_par.c and test_serve.c share:
 * the relative comparison, a preset's model and roof, a stage's collective
 * by name, and a simulated run with its workspace sized and retried.
 * Include after <cmocka.h>; every function is static inline, so a test
 * that uses some of them compiles the rest away without a warning.
 */
#ifndef RF_TESTS_SIM_FIXTURE_H
#define RF_TESTS_SIM_FIXTURE_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "roofline/rf_hw.h"
#include "roofline/rf_model.h"
#include "roofline/rf_parallel.h"
#include "roofline/rf_sim.h"

/* |a - b| <= rel * |b| */
static inline void near(double a, double b, double rel)
{
    if (!(fabs(a - b) <= rel * fabs(b)))
        fail_msg("%.15g is not within %.3g relative of %.15g", a, rel, b);
}

/* The bf16 roof of the preset hw. */
static inline rf_roof roof_of(const char *hw)
{
    rf_hw h;
    rf_roof r;
    assert_int_equal(rf_hw_preset(hw, &h, NULL), RF_OK);
    assert_int_equal(rf_hw_roof(&h, RF_BF16, &r, NULL), RF_OK);
    return r;
}

/* The preset model name. */
static inline rf_model model(const char *name)
{
    rf_model m;
    assert_int_equal(rf_model_preset(name, &m, NULL), RF_OK);
    return m;
}

/* Stage s's collective named name (NULL when it has none). */
static inline const rf_coll *coll_named(const rf_par *p, size_t s, const char *name)
{
    for (size_t i = 0; i < p->stages[s].n_coll; i++)
        if (!strcmp(p->stages[s].coll[i].name, name))
            return &p->stages[s].coll[i];
    return NULL;
}

/* Run w under sc on the step model step (one engine) or, when step is
 * NULL, group (replicas in lockstep), with the workspace sized from the
 * hint and once more from the run's own count when the hint is short (the
 * retry rf_sim_run documents). */
static inline rf_status sim_run(const rf_sim_workload *w, const rf_sim_sched *sc,
                                rf_sim_step_fn step, rf_sim_group_fn group, void *user,
                                rf_sim_result *out, rf_err *e)
{
    int64_t max_log = rf_sim_log_hint(w, sc);
    for (int tries = 0; tries < 2; tries++) {
        size_t bytes;
        rf_status s = rf_sim_workspace_bytes(w, sc, max_log, &bytes, e);
        if (s)
            return s;
        void *work = malloc(bytes);
        assert_non_null(work);
        s = step ? rf_sim_run(w, sc, step, user, work, bytes, max_log, out, e)
                 : rf_sim_run_group(w, sc, group, user, work, bytes, max_log, out, e);
        free(work);
        if (s != RF_ERANGE || out->log_entries <= max_log)
            return s;
        max_log = out->log_entries;
    }
    return RF_ERANGE;
}

/* sim_run, failing the test with the run's message. */
static inline void sim_run_ok(const rf_sim_workload *w, const rf_sim_sched *sc, rf_sim_step_fn step,
                              rf_sim_group_fn group, void *user, rf_sim_result *out)
{
    rf_err e = {0};
    if (sim_run(w, sc, step, group, user, out, &e))
        fail_msg("run: %s", e.msg);
}

#endif
