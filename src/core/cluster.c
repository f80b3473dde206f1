/* cluster.c - a cluster's collectives: nccl-tests' bus factors, the
 * latency-bandwidth fit, the checks of a cluster read from a file, and the
 * links the parallel model costs its collectives on. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roofline/rf_cluster.h"

static const char *const class_names[] = {
    [RF_LINK_INTRA] = "intra-node",
    [RF_LINK_INTER] = "inter-node",
};
_Static_assert(sizeof class_names / sizeof class_names[0] == RF_LINK_CLASS_COUNT,
               "a name for every link class");

static const char *const kind_names[] = {
    [RF_COLL_ALLREDUCE] = "all-reduce",
    [RF_COLL_ALLGATHER] = "all-gather",
    [RF_COLL_ALLTOALL] = "all-to-all",
    [RF_COLL_P2P] = "send",
};
_Static_assert(sizeof kind_names / sizeof kind_names[0] == RF_LINK_FIT_KINDS,
               "a name for every collective kind");
_Static_assert(RF_LINK_FIT_MAX_POINTS == RF_CLUSTER_MAX_POINTS,
               "a link's whole table fits its rf_link_fit");

const char *rf_link_class_name(rf_link_class c)
{
    return (unsigned)c < RF_LINK_CLASS_COUNT ? class_names[c] : NULL;
}

const char *rf_cluster_kind_name(rf_coll_kind k)
{
    return (unsigned)k < RF_LINK_FIT_KINDS ? kind_names[k] : NULL;
}

double rf_cluster_bus_factor(rf_coll_kind k, int ranks)
{
    if (ranks < 2)
        return 0;
    double r = ranks;
    switch (k) {
    case RF_COLL_ALLREDUCE:
        return 2 * (r - 1) / r;
    case RF_COLL_ALLGATHER:
    case RF_COLL_ALLTOALL:
        return (r - 1) / r;
    case RF_COLL_P2P:
        return 1;
    }
    return 0;
}

double rf_cluster_algbw(const rf_cluster_point *p)
{
    return p->time_s > 0 ? (double)p->bytes / p->time_s : 0;
}

double rf_cluster_busbw(const rf_cluster_link *l, const rf_cluster_point *p)
{
    return rf_cluster_algbw(p) * rf_cluster_bus_factor(l->kind, l->ranks);
}

static rf_status link_fail(rf_err *err, const rf_cluster_link *l, const char *what)
{
    return rf_err_set(err, RF_EINVAL, "%s (%s): %s",
                      rf_cluster_kind_name(l->kind) ? rf_cluster_kind_name(l->kind) : "?",
                      rf_link_class_name(l->cls) ? rf_link_class_name(l->cls) : "?", what);
}

/* t = a + b x, x = f n, fitted where each term shows: b (1 / bandwidth)
 * on the largest quarter of the sizes, a on the smallest quarter (at least
 * 2 points each), each by least squares on relative error given the other:
 *   b = sum (x (t - a) / t^2) / sum (x^2 / t^2)   over the largest
 *   a = sum ((t - b x) / t^2) / sum (1 / t^2)     over the smallest, >= 0
 * from a = 0, alternated until both settle (exact data: exactly); where
 * that a would be negative (the large sizes' bandwidth predicts more than
 * the small ones took: caches made them faster), a is the relative-error
 * mean of the small sizes' times alone. So the
 * bandwidth is the large-message figure nccl-tests headlines and the
 * latency the small-message one OSU reports; a straight line through every
 * size would be neither where caches make the middle sizes fast. */
rf_status rf_cluster_fit(rf_cluster_link *l, rf_err *err)
{
    double f = rf_cluster_bus_factor(l->kind, l->ranks);
    if (!(f > 0))
        return link_fail(err, l, "a collective needs at least 2 ranks");
    if (l->n_points < 2)
        return link_fail(err, l, "at least 2 points are needed for a fit");
    for (size_t i = 0; i < l->n_points; i++)
        if (!(l->points[i].time_s > 0) || !isfinite(l->points[i].time_s))
            return link_fail(err, l, "every point needs a positive time");
    size_t n = l->n_points, m = n / 4 < 2 ? 2 : n / 4;
    double a = 0, b = 0;
    for (int it = 0; it < 64; it++) {
        double num = 0, den = 0;
        for (size_t i = n - m; i < n; i++) {
            double t = l->points[i].time_s, x = f * (double)l->points[i].bytes;
            num += x * (t - a) / (t * t);
            den += x * x / (t * t);
        }
        double nb = den > 0 ? num / den : 0;
        num = den = 0;
        for (size_t i = 0; i < m; i++) {
            double t = l->points[i].time_s, x = f * (double)l->points[i].bytes;
            num += (t - nb * x) / (t * t);
            den += 1 / (t * t);
        }
        double na = num / den;
        if (!(na > 0)) { /* the large sizes' bandwidth says more than the small
                            ones took (a cache made them faster): their times */
            num = 0;
            for (size_t i = 0; i < m; i++)
                num += 1 / l->points[i].time_s;
            na = num / den;
        }
        bool settled = fabs(na - a) <= 1e-12 * (na + 1e-30) && fabs(nb - b) <= 1e-12 * nb;
        a = na;
        b = nb;
        if (settled)
            break;
    }
    if (!(b > 0))
        return link_fail(err, l, "the times do not grow with the message size: no bandwidth");
    double sq = 0;
    for (size_t i = 0; i < n; i++) {
        double t = l->points[i].time_s;
        double d = (t - (a + b * f * (double)l->points[i].bytes)) / t;
        sq += d * d;
    }
    l->latency_s = a;
    l->bw_bytes_per_s = 1 / b;
    l->residual = sqrt(sq / (double)n);
    return RF_OK;
}

static rf_status link_check(const rf_cluster_link *l, size_t i, rf_err *err)
{
    char what[160];
    const char *kind = rf_cluster_kind_name(l->kind), *cls = rf_link_class_name(l->cls);
    if (!kind || !cls)
        return rf_err_set(err, RF_EINVAL, "cluster.links[%zu]: unknown collective or class", i);
    if (l->ranks < 2)
        snprintf(what, sizeof what, "ranks (%d) must be at least 2", l->ranks);
    else if (!(l->bw_bytes_per_s > 0) || !isfinite(l->bw_bytes_per_s))
        snprintf(what, sizeof what, "bandwidth_bytes_per_s must be positive (%g)",
                 l->bw_bytes_per_s);
    else if (!(l->latency_s >= 0) || !isfinite(l->latency_s))
        snprintf(what, sizeof what, "latency_s must be 0 or positive (%g)", l->latency_s);
    else if (l->n_points < 2)
        snprintf(what, sizeof what, "has %zu point%s; a fit needs at least 2", l->n_points,
                 l->n_points == 1 ? "" : "s");
    else
        what[0] = 0;
    for (size_t p = 0; !what[0] && p < l->n_points; p++)
        if (!(l->points[p].time_s > 0) || !isfinite(l->points[p].time_s))
            snprintf(what, sizeof what, "points[%zu].time_s must be positive (%g)", p,
                     l->points[p].time_s);
        else if (p && l->points[p].bytes <= l->points[p - 1].bytes)
            snprintf(what, sizeof what, "points[%zu].bytes must grow (%llu after %llu)", p,
                     (unsigned long long)l->points[p].bytes,
                     (unsigned long long)l->points[p - 1].bytes);
    if (what[0])
        return rf_err_set(err, RF_EINVAL, "cluster.links[%zu] (%s, %s): %s", i, kind, cls, what);
    return RF_OK;
}

rf_status rf_cluster_validate(const rf_cluster *c, rf_err *err)
{
    if (c->ranks < 1)
        return rf_err_set(err, RF_EINVAL, "cluster.ranks (%d) must be at least 1", c->ranks);
    if (c->n_nodes < 1 || c->n_nodes > RF_CLUSTER_MAX_NODES)
        return rf_err_set(err, RF_EINVAL, "cluster.nodes: %zu nodes (1 to %d allowed)", c->n_nodes,
                          RF_CLUSTER_MAX_NODES);
    long sum = 0;
    for (size_t i = 0; i < c->n_nodes; i++) {
        if (c->nodes[i].ranks < 1)
            return rf_err_set(err, RF_EINVAL, "cluster.nodes[%zu].ranks (%d) must be at least 1", i,
                              c->nodes[i].ranks);
        sum += c->nodes[i].ranks;
    }
    if (sum != c->ranks)
        return rf_err_set(err, RF_EINVAL, "cluster.nodes' ranks sum to %ld, not cluster.ranks (%d)",
                          sum, c->ranks);
    for (size_t i = 0; i < c->n_links; i++) {
        rf_status s = link_check(&c->links[i], i, err);
        if (s)
            return s;
    }
    return RF_OK;
}

/* "8 B", "64 MiB"; other sizes in bytes. */
static void size_text(uint64_t n, char *out, size_t cap)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    size_t u = 0;
    while (u + 1 < sizeof units / sizeof units[0] && n >= 1024 && n % 1024 == 0) {
        n /= 1024;
        u++;
    }
    snprintf(out, cap, "%llu %s", (unsigned long long)n, units[u]);
}

static const rf_cluster_link *find(const rf_cluster *c, rf_link_class cls, rf_coll_kind k)
{
    for (size_t i = 0; i < c->n_links; i++)
        if (c->links[i].cls == cls && c->links[i].kind == k)
            return &c->links[i];
    return NULL;
}

/* Every collective of one class as fits; the all-reduce's figures as the
 * side's link (name, bandwidth, per-hop alpha). false when not measured. */
static bool side(const rf_cluster *c, rf_link_class cls, rf_link_fit *fits, char *name, double *bw,
                 double *alpha)
{
    const char *where = cls == RF_LINK_INTRA ? "in a node" : "between nodes";
    for (int k = 0; k < RF_LINK_FIT_KINDS; k++) {
        const rf_cluster_link *l = find(c, cls, (rf_coll_kind)k);
        rf_link_fit *f = &fits[k];
        memset(f, 0, sizeof *f);
        if (!l || l->n_points < 1)
            continue;
        char lo[24], hi[24];
        size_text(l->points[0].bytes, lo, sizeof lo);
        size_text(l->points[l->n_points - 1].bytes, hi, sizeof hi);
        *f = (rf_link_fit){.bw_bytes_per_s = l->bw_bytes_per_s,
                           .latency_s = l->latency_s,
                           .residual = l->residual,
                           .min_bytes = l->points[0].bytes,
                           .max_bytes = l->points[l->n_points - 1].bytes,
                           .ranks = l->ranks,
                           .n_points = l->n_points};
        for (size_t i = 0; i < l->n_points; i++) {
            f->bytes[i] = l->points[i].bytes;
            f->time_s[i] = l->points[i].time_s;
        }
        snprintf(f->name, sizeof f->name, "MPI %s %s, measured %s-%s", kind_names[k], where, lo,
                 hi);
        char beyond[192]; /* cut to the field's size, at a character */
        snprintf(beyond, sizeof beyond,
                 "MPI %s %s, extrapolated past %s-%s (alpha-beta fit, rms %.0f%%)", kind_names[k],
                 where, lo, hi, fmin(100 * l->residual, 1e6));
        size_t len = strlen(beyond) < sizeof f->beyond ? strlen(beyond) : sizeof f->beyond - 1;
        memcpy(f->beyond, beyond, len);
        f->beyond[len] = '\0';
    }
    const rf_link_fit *ar = &fits[RF_COLL_ALLREDUCE];
    if (!(ar->bw_bytes_per_s > 0))
        return false;
    snprintf(name, RF_LINK_NAME_MAX, "MPI %s (measured, all-reduce fit)", where);
    *bw = ar->bw_bytes_per_s;
    *alpha = ar->latency_s / (2.0 * (double)(ar->ranks - 1));
    return true;
}

void rf_cluster_links(const rf_cluster *c, rf_hw_links *out)
{
    if (!c->n_links)
        return;
    rf_hw_links k = {0};
    bool up = side(c, RF_LINK_INTRA, k.up_fit, k.up_name, &k.up_bw_bytes_per_s, &k.up_latency_s);
    bool across =
        side(c, RF_LINK_INTER, k.out_fit, k.out_name, &k.out_bw_bytes_per_s, &k.out_latency_s);
    if (!up && !across)
        return;
    if (!across) {
        snprintf(k.out_name, sizeof k.out_name, "not measured (one node): the in-node figures");
        k.out_bw_bytes_per_s = k.up_bw_bytes_per_s;
        k.out_latency_s = k.up_latency_s;
    }
    if (!up) {
        snprintf(k.up_name, sizeof k.up_name,
                 "not measured (a rank a node): the between-node "
                 "figures");
        k.up_bw_bytes_per_s = k.out_bw_bytes_per_s;
        k.up_latency_s = k.out_latency_s;
    }
    k.devices_per_node = c->nodes[0].ranks;
    for (size_t i = 1; i < c->n_nodes; i++)
        if (c->nodes[i].ranks < k.devices_per_node)
            k.devices_per_node = c->nodes[i].ranks;
    char lo[24] = "", hi[24] = "";
    const rf_link_fit *f = up ? &k.up_fit[RF_COLL_ALLREDUCE] : &k.out_fit[RF_COLL_ALLREDUCE];
    size_text(f->min_bytes, lo, sizeof lo);
    size_text(f->max_bytes, hi, sizeof hi);
    snprintf(k.origin, sizeof k.origin,
             "measured with MPI on %zu node%s, %d ranks, messages %s-%s: in a node %s, between "
             "nodes %s",
             c->n_nodes, c->n_nodes == 1 ? "" : "s", c->ranks, lo, hi,
             up ? "measured" : "not measured", across ? "measured" : "not measured");
    *out = k;
}

/* Hops of a ring of t ranks, as rf_coll_cost counts them. */
static double hops(rf_coll_kind kind, int64_t t)
{
    return kind == RF_COLL_ALLREDUCE ? 2.0 * (double)(t - 1)
           : kind == RF_COLL_P2P     ? 1.0
                                     : (double)(t - 1);
}

double rf_link_fit_table_s(const rf_link_fit *f, uint64_t bytes)
{
    if (f->n_points < 1 || bytes < f->bytes[0] || bytes > f->bytes[f->n_points - 1])
        return 0;
    size_t i = 0;
    while (i + 1 < f->n_points && f->bytes[i + 1] < bytes)
        i++;
    if (i + 1 == f->n_points || f->bytes[i] == bytes)
        return f->time_s[i];
    /* weighted, not t0 + (t1 - t0) w: exact at both ends whatever the two
     * times are (with t0 = 6e5 s beside t1 = 2 ms, the difference form
     * gave t1 to 1e-8: fuzz_cluster's regress-interp-endpoint.json) */
    double x0 = (double)f->bytes[i], x1 = (double)f->bytes[i + 1], x = (double)bytes;
    double w = (x - x0) / (x1 - x0);
    return (1.0 - w) * f->time_s[i] + w * f->time_s[i + 1];
}

void rf_link_fit_apply(const rf_link_fit *f, rf_coll *c)
{
    if (!(f->bw_bytes_per_s > 0) || f->ranks < 2)
        return;
    c->measured = true; /* costed in the measured (ring) form, rf_coll_cost */
    c->bw_bytes_per_s = f->bw_bytes_per_s;
    c->alpha_s = f->latency_s / hops(c->kind, f->ranks);
    c->link = c->bytes >= f->min_bytes && c->bytes <= f->max_bytes ? f->name : f->beyond;
    /* within the table: its time at this size, split between latency and
     * bandwidth as the fit splits it there (both terms scaled by table /
     * fit), so the cost on the measured ranks is the table's time */
    double table = rf_link_fit_table_s(f, c->bytes);
    double fit = f->latency_s + rf_cluster_bus_factor(c->kind, (int)f->ranks) * (double)c->bytes /
                                    f->bw_bytes_per_s;
    if (table > 0 && fit > 0) {
        double r = table / fit;
        c->alpha_s *= r;
        c->bw_bytes_per_s /= r;
    }
}
