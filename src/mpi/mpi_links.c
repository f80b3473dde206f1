/* mpi_links.c - the collectives between ranks, timed as the OSU benchmarks
 * and nccl-tests time them, and fitted (rf_cluster_fit). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

rf_mpi_links_plan rf_mpi_links_plan_of(bool quick)
{
    if (quick)
        return (rf_mpi_links_plan){.min_bytes = 16,
                                   .max_bytes = (uint64_t)64 << 20,
                                   .step = 4,
                                   .min_time_s = 2e-3,
                                   .trials = 3,
                                   .max_iterations = 1 << 16};
    return (rf_mpi_links_plan){.min_bytes = 8,
                               .max_bytes = (uint64_t)256 << 20,
                               .step = 2,
                               .min_time_s = 20e-3,
                               .trials = 5,
                               .max_iterations = 1 << 20};
}

/* One class's communicator, and the one its slowest rank is taken over. */
typedef struct klass {
    rf_link_class cls;
    MPI_Comm comm;   /* the ranks a collective spans                     */
    MPI_Comm timing; /* the ranks whose slowest time counts             */
    int ranks;       /* of comm                                          */
} klass;

typedef struct bufs {
    char *send, *recv; /* max_bytes each                                  */
} bufs;

/* The collective of kind on n bytes (nccl-tests' size): n / r bytes a block
 * for all-gather and all-to-all (callers pass n a multiple of r). */
static int run_once(const klass *k, rf_coll_kind kind, uint64_t n, const bufs *b, int rank)
{
    int r = k->ranks;
    int block = (int)(n / (uint64_t)r);
    switch (kind) {
    case RF_COLL_ALLREDUCE:
        return MPI_Allreduce(b->send, b->recv, (int)(n / sizeof(float)), MPI_FLOAT, MPI_SUM,
                             k->comm);
    case RF_COLL_ALLGATHER:
        return MPI_Allgather(b->send, block, MPI_BYTE, b->recv, block, MPI_BYTE, k->comm);
    case RF_COLL_ALLTOALL:
        return MPI_Alltoall(b->send, block, MPI_BYTE, b->recv, block, MPI_BYTE, k->comm);
    case RF_COLL_P2P:
        return MPI_Sendrecv(b->send, (int)n, MPI_BYTE, (rank + 1) % r, 7, b->recv, (int)n, MPI_BYTE,
                            (rank + r - 1) % r, 7, k->comm, MPI_STATUS_IGNORE);
    }
    return MPI_ERR_ARG;
}

/* iters iterations, each a barrier and the collective timed alone; the
 * slowest rank's mean (over k->timing) into *mean_s, every rank's the
 * same; *wall_s the whole trial's, barriers included (rank 0's). */
static rf_status trial(const klass *k, rf_coll_kind kind, uint64_t n, const bufs *b, int64_t iters,
                       double *mean_s, double *wall_s, rf_err *err)
{
    int rank = 0;
    MPI_Comm_rank(k->comm, &rank);
    double sum = 0, start = MPI_Wtime();
    for (int64_t i = 0; i < iters; i++) {
        int rc = MPI_Barrier(k->comm);
        double t0 = MPI_Wtime();
        if (rc == MPI_SUCCESS)
            rc = run_once(k, kind, n, b, rank);
        sum += MPI_Wtime() - t0;
        if (rc != MPI_SUCCESS) {
            char what[96];
            snprintf(what, sizeof what, "MPI %s of %llu bytes (%s)", rf_cluster_kind_name(kind),
                     (unsigned long long)n, rf_link_class_name(k->cls));
            return rf__mpi_check(rc, what, err);
        }
    }
    double got[2], mine[2] = {sum / (double)iters, MPI_Wtime() - start};
    rf_status s = rf__mpi_check(MPI_Allreduce(mine, got, 2, MPI_DOUBLE, MPI_MAX, k->timing),
                                "MPI_Allreduce (the slowest rank's time)", err);
    *mean_s = got[0];
    *wall_s = got[1];
    return s;
}

static int by_time(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One point: warm-up and calibration, then the plan's trials. */
static rf_status point(const klass *k, rf_coll_kind kind, uint64_t n, const bufs *b,
                       const rf_mpi_links_plan *plan, rf_cluster_point *out, rf_err *err)
{
    double t = 0, wall = 0, best = 0, times[64];
    int64_t iters = 1;
    rf_status s = trial(k, kind, n, b, 1, &t, &wall, err); /* warm-up */
    /* doubled until a trial's collectives last min_time_s at the best mean
     * seen so far (one preempted trial does not end the calibration early),
     * or, from 16 iterations on, the trial, barriers and all, lasts 4 x
     * that (a loaded machine's barriers do not make the run endless) */
    for (bool first = true; !s; first = false, iters *= 2) {
        if ((s = trial(k, kind, n, b, iters, &t, &wall, err)))
            return s;
        best = first || t < best ? t : best;
        if (best * (double)iters >= plan->min_time_s ||
            (wall >= 4 * plan->min_time_s && iters >= 16) || iters >= plan->max_iterations)
            break;
    }
    /* the trial that ended the calibration ran at the final count: the
     * first of the timed ones */
    int trials = plan->trials < 64 ? plan->trials : 64;
    times[0] = t;
    for (int i = 1; !s && i < trials; i++)
        s = trial(k, kind, n, b, iters, &times[i], &wall, err);
    if (s)
        return s;
    qsort(times, (size_t)trials, sizeof times[0], by_time);
    *out = (rf_cluster_point){
        .bytes = n, .time_s = times[0], .median_s = times[trials / 2], .iterations = iters};
    return RF_OK;
}

typedef struct run {
    const rf_mpi_links_plan *plan;
    rf_mpi_progress_fn progress;
    void *user;
    int done, total;
    bool report; /* this rank keeps the results (world rank 0)    */
} run;

/* Every collective of class k at every size; rank 0 fits and keeps them. */
static rf_status measure_class(run *u, const klass *k, const bufs *b, rf_cluster *c, rf_err *err)
{
    for (int kind = 0; kind < RF_LINK_FIT_KINDS; kind++) {
        rf_cluster_link l = {.cls = k->cls, .kind = (rf_coll_kind)kind, .ranks = k->ranks};
        for (uint64_t n = u->plan->min_bytes; n <= u->plan->max_bytes;
             n *= u->plan->step, u->done++) {
            if (u->report && u->progress) {
                char what[96];
                snprintf(what, sizeof what, "%s %s %llu B", rf_link_class_name(k->cls),
                         rf_cluster_kind_name((rf_coll_kind)kind), (unsigned long long)n);
                u->progress(u->user, u->done, u->total, what);
            }
            bool blocks = kind == RF_COLL_ALLGATHER || kind == RF_COLL_ALLTOALL;
            uint64_t size = blocks ? n / (uint64_t)k->ranks * (uint64_t)k->ranks : n;
            if (!size || l.n_points == RF_CLUSTER_MAX_POINTS ||
                (l.n_points && size <= l.points[l.n_points - 1].bytes))
                continue; /* under a byte a block, or the same size again */
            rf_status s =
                point(k, (rf_coll_kind)kind, size, b, u->plan, &l.points[l.n_points], err);
            if (s)
                return s;
            l.n_points++;
        }
        if (!u->report)
            continue;
        rf_status s = rf_cluster_fit(&l, err);
        if (s)
            return s;
        if (c->n_links == RF_CLUSTER_MAX_LINKS)
            return rf_err_set(err, RF_ERANGE, "more than %d links", RF_CLUSTER_MAX_LINKS);
        c->links[c->n_links++] = l;
    }
    return RF_OK;
}

static int sizes_of(const rf_mpi_links_plan *p)
{
    int n = 0;
    for (uint64_t b = p->min_bytes; b && b <= p->max_bytes; b *= p->step)
        n++;
    return n;
}

rf_status rf_mpi_links(rf_mpi *m, const rf_mpi_links_plan *plan, rf_mpi_progress_fn progress,
                       void *user, rf_cluster *c, rf_err *err)
{
    bool intra = m->min_node_size >= 2, inter = m->nodes >= 2;
    if (!intra && !inter)
        return RF_OK;
    if (plan->min_bytes < 8 || plan->max_bytes < plan->min_bytes || plan->step < 2 ||
        plan->max_bytes > (uint64_t)1 << 30)
        return rf_err_set(err, RF_EINVAL, "message sizes %llu to %llu bytes: 8 B to 1 GiB allowed",
                          (unsigned long long)plan->min_bytes, (unsigned long long)plan->max_bytes);
    bufs b = {malloc(plan->max_bytes), malloc(plan->max_bytes)};
    rf_status s = RF_OK;
    if (!b.send || !b.recv)
        s = rf_err_set(err, RF_ENOMEM, "out of memory for 2 buffers of %llu bytes",
                       (unsigned long long)plan->max_bytes);
    else { /* touched, so no page is first faulted inside a timed call */
        memset(b.send, 1, plan->max_bytes);
        memset(b.recv, 0, plan->max_bytes);
    }
    int per_class = RF_LINK_FIT_KINDS * sizes_of(plan);
    run u = {.plan = plan,
             .progress = progress,
             .user = user,
             .total = per_class * ((int)intra + (int)inter),
             .report = m->rank == 0};
    if (!s && intra) {
        klass k = {
            .cls = RF_LINK_INTRA, .comm = m->node, .timing = MPI_COMM_WORLD, .ranks = m->node_size};
        s = measure_class(&u, &k, &b, c, err);
    }
    if (!s && inter && m->node_rank == 0) { /* one rank a node; the rest wait below */
        klass k = {.cls = RF_LINK_INTER, .comm = m->across, .timing = m->across, .ranks = m->nodes};
        s = measure_class(&u, &k, &b, c, err);
    }
    free(b.send);
    free(b.recv);
    if (!s && inter)
        s = rf__mpi_check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier", err);
    return s;
}
