/* fuzz_cluster.c - libFuzzer harness for the cluster reader (cluster_io.c,
 * a profile's "cluster" object from `measure --mpi`, read by
 * rf_hw_profile_parse) and the collectives costed on what it accepts.
 *
 * Besides "no crash, no sanitizer report": a refusal carries one line
 * naming the input; an accepted cluster passes rf_cluster_validate, its
 * links' figures lie in the readers' ranges (a latency 0 or within
 * [1e-12, 1e6] s, a bandwidth within [1e3, 1e16] B/s: never the 1e306 s
 * latency and "inf us a hop" of issue 28's finding 2); the links the
 * parallel model gets (rf_cluster_links) are finite; and a collective of
 * every kind, at every measured size, between two, below the first and past
 * the last, on the measured ranks and on 8, costs a positive finite time,
 * which at a measured size on the measured ranks is that size's time.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roofline/rf_cluster.h"
#include "roofline/rf_hw_profile_io.h"

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            abort();                                                                               \
    } while (0)

static rf_hw_profile p; /* large: kept off the stack */

static void cost(const rf_link_fit *f, rf_coll_kind kind, uint64_t bytes, int64_t ranks,
                 double want)
{
    rf_coll c = {.name = "fuzz",
                 .kind = kind,
                 .bytes = bytes,
                 .ranks = ranks,
                 .link = "given",
                 .bw_bytes_per_s = 1e9,
                 .alpha_s = 1e-6};
    rf_link_fit_apply(f, &c);
    rf_coll_cost(&c);
    CHECK(c.link && memchr(c.link, '\0', RF_LINK_NAME_MAX));
    CHECK(isfinite(c.time_s) && c.time_s >= 0 && isfinite(c.bw_s) && isfinite(c.latency_s));
    CHECK(bytes == 0 || c.time_s > 0);
    if (want > 0)
        CHECK(fabs(c.time_s - want) <= 1e-9 * want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16)
        return 0;
    rf_err e;
    rf_status s = rf_hw_profile_parse((const char *)data, size, "k.json", &p, &e);
    if (s) {
        CHECK(e.status == s && !strncmp(e.msg, "k.json", 6) && !strchr(e.msg, '\n'));
        return 0;
    }
    const rf_cluster *c = &p.cluster;
    if (!c->ranks)
        return 0;
    CHECK(rf_cluster_validate(c, &e) == RF_OK);
    CHECK(memchr(c->mpi, '\0', sizeof c->mpi));
    for (size_t i = 0; i < c->n_nodes; i++)
        CHECK(memchr(c->nodes[i].name, '\0', sizeof c->nodes[i].name));
    for (size_t i = 0; i < c->n_links; i++) {
        const rf_cluster_link *l = &c->links[i];
        CHECK(l->latency_s == 0 || (l->latency_s >= 1e-12 && l->latency_s <= 1e6));
        CHECK(l->bw_bytes_per_s >= 1e3 && l->bw_bytes_per_s <= 1e16);
        CHECK(l->residual >= 0 && l->residual <= 1e3);
        for (size_t j = 0; j < l->n_points; j++) {
            CHECK(isfinite(rf_cluster_algbw(&l->points[j])));
            CHECK(isfinite(rf_cluster_busbw(l, &l->points[j])));
        }
    }
    rf_hw_links k = {0};
    rf_cluster_links(c, &k);
    CHECK(isfinite(k.up_bw_bytes_per_s) && isfinite(k.up_latency_s));
    CHECK(isfinite(k.out_bw_bytes_per_s) && isfinite(k.out_latency_s));
    CHECK(memchr(k.origin, '\0', sizeof k.origin) && memchr(k.up_name, '\0', sizeof k.up_name));
    for (int side = 0; side < 2; side++)
        for (int kind = 0; kind < RF_LINK_FIT_KINDS; kind++) {
            const rf_link_fit *f = side ? &k.out_fit[kind] : &k.up_fit[kind];
            if (!(f->bw_bytes_per_s > 0))
                continue;
            CHECK(f->n_points >= 2 && f->n_points <= RF_LINK_FIT_MAX_POINTS);
            for (size_t j = 0; j < f->n_points; j++) {
                cost(f, (rf_coll_kind)kind, f->bytes[j], f->ranks, f->time_s[j]);
                cost(f, (rf_coll_kind)kind, f->bytes[j], 8, 0);
                if (j + 1 < f->n_points)
                    cost(f, (rf_coll_kind)kind, f->bytes[j] / 2 + f->bytes[j + 1] / 2, f->ranks, 0);
            }
            cost(f, (rf_coll_kind)kind, f->bytes[0] / 2, f->ranks, 0);
            uint64_t last = f->bytes[f->n_points - 1];
            cost(f, (rf_coll_kind)kind, last < ((uint64_t)1 << 50) ? last * 4 : last, f->ranks, 0);
        }
    return 0;
}
