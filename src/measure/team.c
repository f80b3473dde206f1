/* team.c - threads pinned one per core, woken together for each job. The
 * caller does not take part: it waits, so it can time the whole job. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "measure_internal.h"

#if defined(__x86_64__) || defined(__i386__)
#include <emmintrin.h>
static void cpu_relax(void) { _mm_pause(); }
#else
static void cpu_relax(void) {}
#endif

typedef struct worker_arg {
    struct rf_team *team;
    int index;
} worker_arg;

struct rf_team {
    int n;
    pthread_t *threads;            /* (n)                                 */
    int *cpus;                     /* (n) CPU thread i is pinned to       */
    worker_arg *args;              /* (n)                                 */
    pthread_barrier_t start, done; /* n workers + the caller */
    rf__team_fn fn;
    void *arg;
    bool quit;
    bool timed;            /* this job is timed (rf__team_run_timed) */
    int started;           /* threads created (for cleanup)       */
    atomic_int spin_count; /* spin barrier: threads arrived        */
    atomic_uint spin_gen;  /* spin barrier: generation             */
    struct {
        double t0; /* when this thread left the barrier    */
        double t1; /* when this thread finished            */
        char pad[48];
    } * end; /* (n)                                  */
};

/* All threads spin here until the last arrives, so the clock starts when
 * every thread is running, not when the scheduler gets round to waking one. */
static void spin_barrier(rf_team *t)
{
    unsigned gen = atomic_load(&t->spin_gen);
    if (atomic_fetch_add(&t->spin_count, 1) == t->n - 1) {
        atomic_store(&t->spin_count, 0);
        atomic_fetch_add(&t->spin_gen, 1);
        return;
    }
    while (atomic_load(&t->spin_gen) == gen)
        cpu_relax();
}

static void *worker(void *p)
{
    worker_arg *w = p;
    rf_team *t = w->team;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(t->cpus[w->index], &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    for (;;) {
        pthread_barrier_wait(&t->start);
        if (t->quit)
            return NULL;
        if (t->timed) {
            spin_barrier(t);
            t->end[w->index].t0 = rf_time_now_s();
        }
        t->fn(w->index, t->arg);
        if (t->timed)
            t->end[w->index].t1 = rf_time_now_s();
        pthread_barrier_wait(&t->done);
    }
}

rf_status rf_team_new(const rf_cpu *cpu, int threads, rf_team **out, rf_err *err)
{
    *out = NULL;
    int cores[CPU_SETSIZE];
    int n_cores = rf__cpu_core_list(cores, CPU_SETSIZE);
    if (n_cores < 1)
        return rf_err_set(err, RF_EIO, "cannot list the CPUs this process may use");
    if (threads < 0)
        return rf_err_set(err, RF_EINVAL, "threads (%d) must be positive", threads);
    if (threads == 0)
        threads = n_cores;
    if (threads > cpu->cpus)
        return rf_err_set(err, RF_EINVAL, "threads (%d) exceeds the %d CPUs this process may use",
                          threads, cpu->cpus);

    rf_team *t = calloc(1, sizeof *t);
    if (!t)
        return rf_err_set(err, RF_ENOMEM, "out of memory for a team of %d threads", threads);
    t->n = threads;
    t->threads = calloc((size_t)threads, sizeof *t->threads);
    t->cpus = calloc((size_t)threads, sizeof *t->cpus);
    t->args = calloc((size_t)threads, sizeof *t->args);
    t->end = calloc((size_t)threads, sizeof *t->end);
    if (!t->threads || !t->cpus || !t->args || !t->end) {
        free(t->threads);
        free(t->cpus);
        free(t->args);
        free(t->end);
        free(t);
        return rf_err_set(err, RF_ENOMEM, "out of memory for a team of %d threads", threads);
    }
    /* One thread per core first; more threads than cores go on the
     * remaining CPUs (SMT siblings) in order. */
    cpu_set_t set;
    sched_getaffinity(0, sizeof set, &set);
    int k = 0;
    for (int i = 0; i < n_cores && k < threads; i++)
        t->cpus[k++] = cores[i];
    for (int c = 0; c < CPU_SETSIZE && k < threads; c++) {
        bool used = false;
        for (int i = 0; i < n_cores; i++)
            used |= cores[i] == c;
        if (CPU_ISSET(c, &set) && !used)
            t->cpus[k++] = c;
    }
    pthread_barrier_init(&t->start, NULL, (unsigned)threads + 1);
    pthread_barrier_init(&t->done, NULL, (unsigned)threads + 1);
    for (int i = 0; i < threads; i++) {
        t->args[i].team = t;
        t->args[i].index = i;
        if (pthread_create(&t->threads[i], NULL, worker, &t->args[i]) != 0) {
            rf_team_free(t);
            return rf_err_set(err, RF_ENOMEM, "cannot start thread %d of %d", i + 1, threads);
        }
        t->started++;
    }
    *out = t;
    return RF_OK;
}

void rf_team_free(rf_team *t)
{
    if (!t)
        return;
    if (t->started == t->n) {
        t->quit = true;
        pthread_barrier_wait(&t->start);
        for (int i = 0; i < t->n; i++)
            pthread_join(t->threads[i], NULL);
    } else {
        /* a failed start: the workers that exist wait on a barrier that
         * can never fill, so they are cancelled */
        for (int i = 0; i < t->started; i++) {
            pthread_cancel(t->threads[i]);
            pthread_join(t->threads[i], NULL);
        }
    }
    pthread_barrier_destroy(&t->start);
    pthread_barrier_destroy(&t->done);
    free(t->threads);
    free(t->cpus);
    free(t->args);
    free(t->end);
    free(t);
}

int rf_team_size(const rf_team *t) { return t->n; }

void rf__team_run(rf_team *t, rf__team_fn fn, void *arg)
{
    t->fn = fn;
    t->arg = arg;
    t->timed = false;
    pthread_barrier_wait(&t->start);
    pthread_barrier_wait(&t->done);
}

static void run_timed(rf_team *t, rf__team_fn fn, void *arg)
{
    t->fn = fn;
    t->arg = arg;
    t->timed = true;
    pthread_barrier_wait(&t->start);
    pthread_barrier_wait(&t->done);
}

/* From the first thread's start to the last thread's end. */
double rf__team_run_timed(rf_team *t, rf__team_fn fn, void *arg)
{
    run_timed(t, fn, arg);
    double first = t->end[0].t0, last = t->end[0].t1;
    for (int i = 1; i < t->n; i++) {
        if (t->end[i].t0 < first)
            first = t->end[i].t0;
        if (t->end[i].t1 > last)
            last = t->end[i].t1;
    }
    return last - first;
}

double rf__team_run_timed_each(rf_team *t, rf__team_fn fn, void *arg)
{
    run_timed(t, fn, arg);
    double inv = 0;
    for (int i = 0; i < t->n; i++) {
        double dt = t->end[i].t1 - t->end[i].t0;
        inv += dt > 0 ? 1 / dt : 0;
    }
    return inv > 0 ? t->n / inv : 0;
}

void *rf__alloc_untouched(uint64_t bytes)
{
    const size_t huge = (size_t)2 << 20;
    size_t size = (size_t)((bytes + huge - 1) / huge * huge);
    void *p = NULL;
    if (size == 0 || posix_memalign(&p, huge, size) != 0)
        return NULL;
    if (size >= 4 * huge)
        madvise(p, size, MADV_HUGEPAGE); /* fewer TLB misses; advice only */
    return p;
}
