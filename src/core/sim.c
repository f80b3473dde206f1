/* sim.c - the scheduler simulated step by step, and its statistics
 * (rf_sim.h). */
#include <math.h>
#include <string.h>

#include "sim_internal.h"

/* Same bits on every platform: no a * b + c fused into one rounding. GCC
 * fuses nothing in ISO C mode (the build's -std=c11; -std=gnu11 would) and
 * warns at this pragma; clang fuses by default and honours it (checked:
 * clang -O3 -march=native gives gcc -O2's bytes). */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* One ITL log entry: `count` gaps of `gap_s` (a step's regular tokens, or
 * one gap that was not a step's time). */
typedef rf__sim_entry itl_entry;

/* One replica's engine: its requests are id, id + D, id + 2 D, ... (round
 * robin), its own waiting queue, running set, step batch and KV pool. */
typedef struct engine {
    int64_t id, n_req;                             /* its j-th request is id + D j               */
    int64_t next, issued;                          /* requests queued so far; known to arrive    */
    int64_t *ring, head, waiting;                  /* (n_req) the waiting queue, a ring      */
    int64_t *run, n_run;                           /* (max_seqs) running, in the order admitted  */
    int64_t *dctx, *sched, *sched_tokens, n_sched; /* (max_seqs) the step's */
    rf_sim_chunk *chunks;                          /* (max_seqs)                                 */
    int64_t *ddctx;                                /* (max_seqs) a draft pass's decode contexts  */
    rf_sim_chunk *dchunks;                         /* (max_seqs) draft pass 0's prompt chunks    */
    int64_t free_blocks, peak_blocks;
    bool deferred; /* idle_first held arrivals back this step  */
} engine;

/* The run's memory, carved from the caller's workspace. */
typedef struct sim {
    const rf_sim_sched *sc;
    int64_t n, max_log, replicas, lockstep;
    /* per request (n) */
    double *arrival, *first, *ttft_end, *end, *last_emit;
    int64_t *prompt, *output, *cached, *made, *own;
    int64_t *hit_blocks;      /* the prefix blocks request r hits           */
    itl_entry *values, *tmp;  /* (n) a metric's values to sort, and the sort's */
    int64_t *rings;           /* (n) every engine's queue                   */
    engine *eng;              /* (replicas)                                 */
    rf_sim_batch *batch;      /* (replicas) a step's batches                */
    int64_t *seq_mem;         /* (4 replicas max_seqs) run, dctx, sched, tokens */
    rf_sim_chunk *chunk_mem;  /* (replicas max_seqs)                        */
    itl_entry *log, *log_tmp; /* (max_log) the ITL log and its sort's       */
    /* speculative decoding only (spec_k > 0; else empty) */
    rf__rng *accept;          /* (n) each request's acceptance draws        */
    rf_sim_batch *dbatch;     /* (replicas) a draft pass's batches          */
    int64_t *dseq_mem;        /* (replicas max_seqs) engines' ddctx         */
    rf_sim_chunk *dchunk_mem; /* (replicas max_seqs) engines' dchunks       */
    int64_t n_log, log_needed;
    /* the pool: the shared prefix's blocks, held once in each replica */
    int64_t prefix_blocks, hit;
} sim;

static size_t align8(size_t x) { return (x + 7) & ~(size_t)7; }

/* Lay the workspace out; with base NULL only the size is counted. */
static size_t layout(sim *s, char *base, int64_t n, int64_t seqs, int64_t reps, int64_t max_log,
                     bool spec)
{
    size_t off = 0, N = (size_t)n, S = (size_t)seqs, D = (size_t)reps, X = spec ? 1 : 0;
#define TAKE(field, type, count)                                                                   \
    do {                                                                                           \
        if (base)                                                                                  \
            s->field = (type *)(void *)(base + off);                                               \
        off += align8(sizeof(type) * (count));                                                     \
    } while (0)
    TAKE(arrival, double, N);
    TAKE(first, double, N);
    TAKE(ttft_end, double, N);
    TAKE(end, double, N);
    TAKE(last_emit, double, N);
    TAKE(prompt, int64_t, N);
    TAKE(output, int64_t, N);
    TAKE(cached, int64_t, N);
    TAKE(made, int64_t, N);
    TAKE(own, int64_t, N);
    TAKE(hit_blocks, int64_t, N);
    TAKE(values, itl_entry, N);
    TAKE(tmp, itl_entry, N);
    TAKE(rings, int64_t, N);
    TAKE(eng, engine, D);
    TAKE(batch, rf_sim_batch, D);
    TAKE(seq_mem, int64_t, 4 * S * D);
    TAKE(chunk_mem, rf_sim_chunk, S * D);
    TAKE(log, itl_entry, (size_t)max_log);
    TAKE(log_tmp, itl_entry, (size_t)max_log);
    TAKE(accept, rf__rng, X * N);
    TAKE(dbatch, rf_sim_batch, X * D);
    TAKE(dseq_mem, int64_t, X * S * D);
    TAKE(dchunk_mem, rf_sim_chunk, X * S * D);
#undef TAKE
    return off;
}

/* D and g with their defaults (0: 1). */
static int64_t replicas_of(const rf_sim_sched *s) { return s->replicas > 0 ? s->replicas : 1; }

static int64_t lockstep_of(const rf_sim_sched *s) { return s->lockstep > 0 ? s->lockstep : 1; }

static rf_status sched_check(const rf_sim_sched *s, rf_err *err)
{
    if (s->max_seqs < 1 || s->max_seqs > RF_DIM_MAX)
        return rf_err_set(err, RF_EINVAL, "max-seqs (%lld) must be in [1, %lld]",
                          (long long)s->max_seqs, (long long)RF_DIM_MAX);
    if (s->max_batched_tokens < s->max_seqs || s->max_batched_tokens > RF_DIM_MAX)
        return rf_err_set(err, RF_EINVAL,
                          "max-batched-tokens (%lld) must be in [max-seqs (%lld), %lld]: every "
                          "running request's decode token fits a step",
                          (long long)s->max_batched_tokens, (long long)s->max_seqs,
                          (long long)RF_DIM_MAX);
    if (s->chunk < 0)
        return rf_err_set(err, RF_EINVAL, "chunk (%lld) must be >= 0 (0: no chunking)",
                          (long long)s->chunk);
    if (s->policy != RF_SIM_MIXED && s->policy != RF_SIM_PREFILL_FIRST)
        return rf_err_set(err, RF_EINVAL,
                          "policy (%d) must be RF_SIM_MIXED or "
                          "RF_SIM_PREFILL_FIRST",
                          (int)s->policy);
    if (s->block_tokens < 1 || s->pool_blocks < 1 || s->block_tokens > RF_DIM_MAX ||
        s->pool_blocks > RF_DIM_MAX)
        return rf_err_set(
            err, RF_EINVAL, "block (%lld tokens) and pool (%lld blocks) must be in [1, %lld]",
            (long long)s->block_tokens, (long long)s->pool_blocks, (long long)RF_DIM_MAX);
    if (s->shared_prefix < 0)
        return rf_err_set(err, RF_EINVAL, "shared-prefix (%lld) must be >= 0",
                          (long long)s->shared_prefix);
    if (!(s->frontend_s >= 0 && s->frontend_s < 1e9))
        return rf_err_set(err, RF_EINVAL, "frontend latency (%g s) must be in [0, 1e9)",
                          s->frontend_s);
    if (!(s->slo_ttft_s >= 0) || !(s->slo_tpot_s >= 0))
        return rf_err_set(err, RF_EINVAL, "SLOs (TTFT %g s, TPOT %g s) must be > 0 (0: none)",
                          s->slo_ttft_s, s->slo_tpot_s);
    if (!(s->percentile >= 0 && s->percentile < 100))
        return rf_err_set(err, RF_EINVAL, "percentile (%g) must be in (0, 100) (0: 99)",
                          s->percentile);
    if (s->replicas < 0 || s->replicas > RF_SIM_MAX_REPLICAS || s->lockstep < 0 ||
        replicas_of(s) % lockstep_of(s))
        return rf_err_set(err, RF_EINVAL,
                          "replicas (%lld) must be in [1, %d] and lockstep (%lld) divide them",
                          (long long)s->replicas, RF_SIM_MAX_REPLICAS, (long long)s->lockstep);
    if (s->spec_k < 0 || s->spec_k > 64)
        return rf_err_set(err, RF_EINVAL, "spec-k (%lld) must be in [1, 64] (0: no speculation)",
                          (long long)s->spec_k);
    if (s->spec_k && !(s->spec_accept >= 0 && s->spec_accept <= 1))
        return rf_err_set(err, RF_EINVAL, "accept (%g) must be in [0, 1]", s->spec_accept);
    if (s->spec_k && !s->draft)
        return rf_err_set(err, RF_EINVAL,
                          "spec-k (%lld): speculation needs the draft's step "
                          "model",
                          (long long)s->spec_k);
    return RF_OK;
}

int64_t rf_sim_batch_logits(const rf_sim_batch *b)
{
    int64_t L = b->n_decode;
    for (int64_t j = 0; j < b->n_chunks; j++)
        L += b->chunks[j].logits > 1 ? b->chunks[j].logits : 1;
    return L;
}

rf_status rf_sim_workspace_bytes(const rf_sim_workload *w, const rf_sim_sched *s, int64_t max_log,
                                 size_t *bytes, rf_err *err)
{
    int64_t n;
    rf_status st;
    *bytes = 0;
    if ((st = rf__sim_workload_check(w, &n, err)) || (st = sched_check(s, err)))
        return st;
    if (w->arrival == RF_SIM_CLOSED && w->concurrency < replicas_of(s))
        return rf_err_set(err, RF_EINVAL,
                          "concurrency (%lld) must be at least the replicas (%lld): each client "
                          "is pinned to a replica",
                          (long long)w->concurrency, (long long)replicas_of(s));
    if (max_log < 1 || (uint64_t)max_log > SIZE_MAX / 64 || (uint64_t)n > SIZE_MAX / 128 ||
        (uint64_t)s->max_seqs * (uint64_t)replicas_of(s) > SIZE_MAX / 128)
        return rf_err_set(err, RF_ERANGE,
                          "max-log (%lld) must be >= 1 and the workspace "
                          "addressable",
                          (long long)max_log);
    *bytes = layout(NULL, NULL, n, s->max_seqs, replicas_of(s), max_log, s->spec_k > 0);
    return RF_OK;
}

int64_t rf_sim_log_hint(const rf_sim_workload *w, const rf_sim_sched *s)
{
    int64_t n = w->arrival == RF_SIM_TRACE ? w->trace_len : w->requests;
    double out = 0;
    if (w->arrival == RF_SIM_TRACE) {
        for (int64_t i = 0; i < n; i++)
            out += (double)w->trace[i].output;
        out /= n > 0 ? (double)n : 1;
    } else {
        out = w->output.dist == RF_SIM_FIXED     ? (double)w->output.value
              : w->output.dist == RF_SIM_UNIFORM ? ((double)w->output.lo + (double)w->output.hi) / 2
                                                 : w->output.mean;
    }
    double seqs = (double)(s->max_seqs > 0 ? s->max_seqs : 1);
    double hint = 2 * (double)n * (out + 2) * (double)replicas_of(s) / seqs + 2 * (double)n + 1024;
    return hint > 0x1p26 ? (int64_t)1 << 26 : (int64_t)hint;
}

/* ---- the pool ------------------------------------------------------------ */

/* Positions of request r the prefix cache holds: the whole blocks of the
 * shared prefix, at most those before its last prompt token. */
static int64_t hit_of(const sim *s, int64_t r) { return s->hit_blocks[r] * s->sc->block_tokens; }

/* Blocks request r holds at c positions, beyond the shared prefix's. */
static int64_t blocks_at(const sim *s, int64_t r, int64_t c)
{
    int64_t b = s->sc->block_tokens;
    return (c + b - 1) / b - s->hit_blocks[r];
}

/* The blocks request r must add to hold c positions (0 when its own
 * blocks already hold them: no division on the common path). */
static int64_t blocks_more(const sim *s, int64_t r, int64_t c)
{
    if (c <= (s->own[r] + s->hit_blocks[r]) * s->sc->block_tokens)
        return 0;
    return blocks_at(s, r, c) - s->own[r];
}

/* ---- the queue ------------------------------------------------------------ */

/* Request j of engine e. */
static int64_t req(const sim *s, const engine *e, int64_t j) { return e->id + s->replicas * j; }

static void push_back(engine *e, int64_t r) { e->ring[(e->head + e->waiting++) % e->n_req] = r; }

static void push_front(engine *e, int64_t r)
{
    e->head = (e->head + e->n_req - 1) % e->n_req;
    e->ring[e->head] = r;
    e->waiting++;
}

static int64_t front(const engine *e) { return e->ring[e->head]; }

static void pop_front(engine *e)
{
    e->head = (e->head + 1) % e->n_req;
    e->waiting--;
}

/* ---- one step ---------------------------------------------------------------- */

/* The running request admitted last gives its blocks back and goes to the
 * front of the queue; it recomputes from its prefix hit later. */
static void preempt_last(sim *s, engine *e, rf_sim_result *out)
{
    int64_t v = e->run[--e->n_run];
    e->free_blocks += s->own[v];
    s->own[v] = 0;
    s->cached[v] = hit_of(s, v);
    push_front(e, v);
    out->preemptions++;
}

/* Whether r decodes: it has made a token and one known token is left to
 * process (the last one made). */
static bool decoding(const sim *s, int64_t r)
{
    return s->made[r] >= 1 && s->prompt[r] + s->made[r] - s->cached[r] == 1;
}

/* Put r in the step: a decode token at context c + 1 when it decodes one
 * token; a verification of `tokens` (the last made and its proposals,
 * every position scored) when it decodes more; else a chunk of `tokens`
 * after its c cached positions. */
static void take(sim *s, engine *e, rf_sim_batch *b, int64_t r, int64_t tokens)
{
    int64_t c = s->cached[r];
    if (decoding(s, r) && tokens == 1) {
        e->dctx[b->n_decode++] = c + 1;
        b->decode_context_sum += c + 1;
    } else {
        e->chunks[b->n_chunks++] = (rf_sim_chunk){
            .tokens = tokens, .offset = c, .request = r, .logits = decoding(s, r) ? tokens : 0};
    }
    b->tokens += tokens;
    e->sched[e->n_sched] = r;
    e->sched_tokens[e->n_sched++] = tokens;
}

/* The tokens request r takes now: K - c (a decode under speculation: its
 * K + 1 verification tokens, at most the N - g it has left to make), cut
 * to the chunk (a fresh prompt without chunking is never cut: 0 when it
 * does not fit) and the budget. */
static int64_t tokens_for(const sim *s, int64_t r, int64_t budget)
{
    int64_t rem = s->prompt[r] + s->made[r] - s->cached[r], C = s->sc->chunk;
    if (!C && !s->made[r])
        return rem <= budget ? rem : 0;
    if (s->sc->spec_k && decoding(s, r)) {
        int64_t left = s->output[r] - s->made[r];
        rem = s->sc->spec_k + 1 < left ? s->sc->spec_k + 1 : left;
    }
    if (C && rem > C)
        rem = C;
    return rem < budget ? rem : budget;
}

/* Which running requests a pass of step 2 takes: all, those with prompt
 * work (a prompt or a recompute unfinished), or those decoding. */
typedef enum { PASS_ALL, PASS_PROMPTS, PASS_DECODES } pass_kind;

/* Step 2 over the running requests of kind `kind`, in admission order:
 * each takes its tokens from *budget, preempting for its blocks. */
static void run_pass(sim *s, engine *e, rf_sim_batch *b, int64_t *budget, pass_kind kind,
                     rf_sim_result *out)
{
    for (int64_t i = 0; i<e->n_run && * budget> 0; i++) {
        int64_t r = e->run[i];
        if (kind != PASS_ALL && decoding(s, r) != (kind == PASS_DECODES))
            continue;
        int64_t tk = tokens_for(s, r, *budget);
        if (!tk)
            continue;
        if (!s->sc->no_preempt) {
            int64_t need = blocks_more(s, r, s->cached[r] + tk);
            bool self = false;
            while (need > e->free_blocks && !self) {
                self = e->run[e->n_run - 1] == r;
                preempt_last(s, e, out);
            }
            if (self)
                return; /* r was the last running: nothing after it */
            e->free_blocks -= need;
            s->own[r] += need;
        }
        take(s, e, b, r, tk);
        *budget -= tk;
    }
}

/* Build engine e's step at time t (rf_sim.h, "The scheduler"). */
static void schedule(sim *s, engine *e, double t, rf_sim_batch *b, rf_sim_result *out)
{
    const rf_sim_sched *sc = s->sc;
    int64_t budget = sc->max_batched_tokens;
    *b = (rf_sim_batch){.decode_context = e->dctx, .chunks = e->chunks};
    e->n_sched = 0;
    int64_t preempted = out->preemptions;
    /* prefill-first: the running requests' prompt work now, their decodes
     * only in a step with no prompt work (below) */
    bool first = sc->policy == RF_SIM_PREFILL_FIRST;
    run_pass(s, e, b, &budget, first ? PASS_PROMPTS : PASS_ALL, out);
    /* after a preemption nothing is admitted this step (vLLM V1) */
    while (e->waiting && budget > 0 && e->n_run < sc->max_seqs && preempted == out->preemptions) {
        int64_t r = front(e), tk = tokens_for(s, r, budget);
        if (!tk)
            break;
        int64_t need = sc->no_preempt ? blocks_at(s, r, s->prompt[r] + s->output[r] - 1)
                                      : blocks_at(s, r, s->cached[r] + tk);
        if (need > e->free_blocks)
            break;
        pop_front(e);
        e->run[e->n_run++] = r;
        e->free_blocks -= need;
        s->own[r] = need;
        if (s->first[r] < 0)
            s->first[r] = t;
        take(s, e, b, r, tk);
        budget -= tk;
    }
    if (first && !b->tokens)
        run_pass(s, e, b, &budget, PASS_DECODES, out);
}

/* Log n gaps of gap_s (the log full: count what it would need). */
static void log_gap(sim *s, double gap_s, int64_t n)
{
    s->log_needed++;
    if (s->n_log < s->max_log)
        s->log[s->n_log++] = (itl_entry){gap_s, n};
}

/* ---- statistics -------------------------------------------------------------- */

/* The nearest rank ceil(p n / 100) in [1, n]; p n in integers when it is
 * whole, so 99 x 100 / 100 is 99, not a rounding above it. */
static int64_t rank(double p, int64_t n)
{
    double x = p * (double)n;
    int64_t k = x == floor(x) && x < 0x1p53 ? ((int64_t)x + 99) / 100 : (int64_t)ceil(x / 100);
    return k < 1 ? 1 : k > n ? n : k;
}

double rf_sim_percentile(const double *sorted, int64_t n, double p)
{
    return sorted[rank(p, n) - 1];
}

/* Sort e[0..n-1] by gap_s ascending, tmp as large: LSD radix on the bits of
 * the doubles, which order as their values do (every value here is >= 0);
 * a byte every key shares is skipped. O(n), no allocation. */
void rf__sim_sort(rf__sim_entry *e, rf__sim_entry *tmp, int64_t n)
{
    itl_entry *src = e, *dst = tmp;
    for (int shift = 0; shift < 64; shift += 8) {
        int64_t count[257] = {0};
        for (int64_t i = 0; i < n; i++) {
            uint64_t k;
            memcpy(&k, &src[i].gap_s, sizeof k);
            count[((k >> shift) & 0xff) + 1]++;
        }
        bool one = false;
        for (int d = 1; d <= 256 && !one; d++)
            one = count[d] == n;
        if (one)
            continue;
        for (int d = 1; d <= 256; d++)
            count[d] += count[d - 1];
        for (int64_t i = 0; i < n; i++) {
            uint64_t k;
            memcpy(&k, &src[i].gap_s, sizeof k);
            dst[count[(k >> shift) & 0xff]++] = src[i];
        }
        itl_entry *x = src;
        src = dst;
        dst = x;
    }
    if (src != e)
        memcpy(e, src, sizeof *e * (size_t)n);
}

/* The statistics of the values e[0..n-1], each counted `count` times: the
 * mean, and the nearest-rank percentiles of the multiset (its k-th
 * smallest value, k = ceil(p total / 100)). Sorts e. */
rf_sim_stat rf__sim_stat(rf__sim_entry *e, rf__sim_entry *tmp, int64_t n, double pct)
{
    rf_sim_stat st = {0};
    rf__sim_sort(e, tmp, n);
    int64_t total = 0;
    double sum = 0;
    for (int64_t i = 0; i < n; i++) {
        total += e[i].count;
        sum += e[i].gap_s * (double)e[i].count;
    }
    st.n = total;
    if (!total)
        return st;
    st.mean = sum / (double)total;
    const double ps[4] = {50, 90, 99, pct};
    double *dst[4] = {&st.p50, &st.p90, &st.p99, &st.pq};
    for (int q = 0; q < 4; q++) {
        int64_t k = rank(ps[q], total), seen = 0, i = 0;
        while (i < n - 1 && seen + e[i].count < k)
            seen += e[i++].count;
        *dst[q] = e[i].gap_s;
    }
    st.max = e[n - 1].gap_s;
    return st;
}

/* The least-squares slope of y against x, from sums shifted to x0. */
typedef struct trend {
    double x0, k, sx, sy, sxx, sxy, last;
} trend;

static void trend_add(trend *tr, double x, double y)
{
    x -= tr->x0;
    tr->k++;
    tr->sx += x;
    tr->sy += y;
    tr->sxx += x * x;
    tr->sxy += x * y;
    tr->last = x;
}

/* The overload test (open loop): over the arrivals' second half, the
 * number waiting at each arrival a_i (arrived, never yet scheduled: i + 1
 * less the requests first scheduled by a_i, those times sorted and swept
 * beside the arrivals, which never go back), against time. The number
 * running is capped (max_seqs, the pool), so a rate above the capacity
 * shows as a queue that grows; the number in system would also count the
 * running batch filling up from an empty engine, a transient that a short
 * run (500 requests) takes for growth. Uses s->values. */
static void overload(sim *s, rf_sim_result *out)
{
    int64_t n = s->n, k = 0;
    for (int64_t i = 0; i < n; i++)
        s->values[i] = (itl_entry){s->first[i], 1};
    rf__sim_sort(s->values, s->tmp, n);
    trend tr = {.x0 = s->arrival[n / 2]};
    for (int64_t i = 0; i < n; i++) {
        while (k < n && s->values[k].gap_s <= s->arrival[i])
            k++;
        if (i >= n / 2)
            trend_add(&tr, s->arrival[i], (double)(i + 1 - k));
    }
    double det = tr.k * tr.sxx - tr.sx * tr.sx;
    if (tr.k >= 2 && det > 0 && tr.last > 0) {
        out->queue_growth_per_s = (tr.k * tr.sxy - tr.sx * tr.sy) / det;
        out->overloaded = out->queue_growth_per_s > 0.05 * (tr.k - 1) / tr.last;
    }
}

static void finish(sim *s, bool open, double kv_area, rf_sim_result *out)
{
    const rf_sim_sched *sc = s->sc;
    int64_t n = s->n;
    double dur = out->duration_s, sys_area = 0, pct = sc->percentile > 0 ? sc->percentile : 99;
    int64_t good = 0, nt = 0;
    for (int64_t i = 0; i < n; i++) {
        bool ok = !(sc->slo_ttft_s > 0) || s->ttft_end[i] - s->arrival[i] <= sc->slo_ttft_s;
        if (s->output[i] >= 2) {
            double tpot = (s->end[i] - s->ttft_end[i]) / (double)(s->output[i] - 1);
            s->values[nt++] = (itl_entry){tpot, 1};
            ok = ok && (!(sc->slo_tpot_s > 0) || tpot <= sc->slo_tpot_s);
        }
        good += ok;
        sys_area += s->end[i] - s->arrival[i]; /* its time in system */
    }
    out->tpot_s = rf__sim_stat(s->values, s->tmp, nt, pct);
    for (int64_t i = 0; i < n; i++)
        s->values[i] = (itl_entry){s->ttft_end[i] - s->arrival[i], 1};
    out->ttft_s = rf__sim_stat(s->values, s->tmp, n, pct);
    for (int64_t i = 0; i < n; i++)
        s->values[i] = (itl_entry){s->end[i] - s->arrival[i], 1};
    out->e2e_s = rf__sim_stat(s->values, s->tmp, n, pct);
    for (int64_t i = 0; i < n; i++)
        s->values[i] = (itl_entry){s->first[i] - s->arrival[i], 1};
    out->queue_s = rf__sim_stat(s->values, s->tmp, n, pct);
    out->itl_s = rf__sim_stat(s->log, s->log_tmp, s->n_log, pct);
    out->good_requests = good;
    out->requests_per_s = (double)n / dur;
    out->output_tokens_per_s = (double)out->output_tokens / dur;
    out->goodput_requests_per_s = (double)good / dur;
    out->kv_util_mean = kv_area / dur / ((double)sc->pool_blocks * (double)s->replicas);
    out->in_system_mean = sys_area / dur;
    out->mean_step_tokens = out->steps ? out->mean_step_tokens / (double)out->steps : 0;
    if (out->spec_verifies)
        out->spec_tokens_per_verify =
            (double)(out->spec_accepted + out->spec_verifies) / (double)out->spec_verifies;
    if (open)
        overload(s, out);
}

/* ---- the run ---------------------------------------------------------------- */

/* Refuse a request that cannot run even alone. */
static rf_status fits_alone(const sim *s, int64_t r, rf_err *err)
{
    const rf_sim_sched *sc = s->sc;
    int64_t P = s->prompt[r], N = s->output[r];
    if (N > RF_DIM_MAX - P + 1)
        return rf_err_set(err, RF_EINVAL,
                          "request %lld: prompt %lld + output %lld passes %lld "
                          "positions",
                          (long long)r, (long long)P, (long long)N, (long long)RF_DIM_MAX);
    int64_t need = blocks_at(s, r, P + N - 1), have = sc->pool_blocks - s->prefix_blocks;
    if (need > have)
        return rf_err_set(err, RF_EINVAL,
                          "request %lld: prompt %lld + output %lld - 1 positions need %lld "
                          "blocks of %lld tokens; the pool has %lld (%lld of them for the shared "
                          "prefix)%s",
                          (long long)r, (long long)P, (long long)N, (long long)need,
                          (long long)sc->block_tokens, (long long)sc->pool_blocks,
                          (long long)s->prefix_blocks,
                          sc->no_preempt ? " and preemption is off" : "");
    if (!sc->chunk && P - hit_of(s, r) > sc->max_batched_tokens)
        return rf_err_set(err, RF_EINVAL,
                          "request %lld: its %lld prompt tokens pass max-batched-tokens (%lld) "
                          "and chunking is off",
                          (long long)r, (long long)(P - hit_of(s, r)),
                          (long long)sc->max_batched_tokens);
    return RF_OK;
}

/* Engine e before the run: its requests, queue and pool; in the closed
 * loop its clients (C / D, one more for the first C % D replicas), each
 * with its first request at 0. */
static void engine_init(sim *s, engine *e, int64_t id, const rf_sim_workload *w)
{
    int64_t D = s->replicas, S = s->sc->max_seqs, off = 0;
    for (int64_t k = 0; k < id; k++)
        off += s->n > k ? (s->n - k + D - 1) / D : 0;
    *e = (engine){.id = id, .n_req = s->n > id ? (s->n - id + D - 1) / D : 0};
    e->ring = s->rings + off;
    e->run = s->seq_mem + 4 * S * id;
    e->dctx = e->run + S;
    e->sched = e->dctx + S;
    e->sched_tokens = e->sched + S;
    e->chunks = s->chunk_mem + S * id;
    if (s->sc->spec_k) {
        e->ddctx = s->dseq_mem + S * id;
        e->dchunks = s->dchunk_mem + S * id;
    }
    e->free_blocks = s->sc->pool_blocks - s->prefix_blocks;
    e->issued = e->n_req;
    if (w->arrival == RF_SIM_CLOSED) {
        int64_t clients = w->concurrency / D + (id < w->concurrency % D);
        e->issued = clients < e->n_req ? clients : e->n_req;
    }
}

/* Draft pass i of the step the g engines E built (batches B), into DB:
 * a decode token at c + 1 + i for each verification with more than i
 * proposals; pass 0 also the prompt chunks. Returns its tokens over the
 * group. */
static int64_t draft_pass(engine *E, const rf_sim_batch *B, int64_t g, int64_t i, rf_sim_batch *DB)
{
    int64_t tokens = 0;
    for (int64_t q = 0; q < g; q++) {
        rf_sim_batch *d = &DB[q];
        *d = (rf_sim_batch){.decode_context = E[q].ddctx, .chunks = E[q].dchunks};
        for (int64_t j = 0; j < B[q].n_chunks; j++) {
            const rf_sim_chunk *ch = &B[q].chunks[j];
            if (ch->logits > 1 && ch->tokens - 1 > i) {
                E[q].ddctx[d->n_decode++] = ch->offset + 1 + i;
                d->decode_context_sum += ch->offset + 1 + i;
            } else if (ch->logits <= 1 && i == 0) {
                E[q].dchunks[d->n_chunks++] = *ch;
                d->tokens += ch->tokens;
            }
        }
        d->tokens += d->n_decode;
        tokens += d->tokens;
    }
    return tokens;
}

/* Run the g engines of group `first` .. first + g - 1 to their end, one
 * clock for them all: each step every engine builds its batch, the step
 * model times them together. *t_end: the group's last step's end. */
static rf_status run_group(sim *s, int64_t first, bool closed, rf_sim_group_fn step, void *user,
                           double *kv_area, double *t_end, rf_sim_result *out, rf_err *err)
{
    const rf_sim_sched *sc = s->sc;
    int64_t g = s->lockstep, total = 0, done = 0;
    engine *E = s->eng + first;
    rf_sim_batch *B = s->batch + first;
    for (int64_t i = 0; i < g; i++)
        total += E[i].n_req;
    double t = 0, fe = sc->frontend_s;
    while (done < total) {
        bool busy = false;
        double wake = INFINITY;
        for (int64_t i = 0; i < g; i++) {
            engine *e = &E[i];
            /* a request reaches the queue frontend_s after it is sent; with
             * idle_first an empty engine (nothing running or waiting) takes
             * only the first to arrive, the others at its step's end */
            bool one = sc->idle_first && !e->n_run && !e->waiting && !e->deferred;
            int64_t queued = 0;
            for (; e->next < e->issued && s->arrival[req(s, e, e->next)] + fe <= t &&
                   !(one && queued);
                 e->next++, queued++)
                push_back(e, req(s, e, e->next));
            e->deferred = one && e->next < e->issued && s->arrival[req(s, e, e->next)] + fe <= t;
            busy = busy || e->n_run || e->waiting;
            if (e->next < e->issued && s->arrival[req(s, e, e->next)] + fe < wake)
                wake = s->arrival[req(s, e, e->next)] + fe;
        }
        if (!busy) {
            t = wake; /* idle to the next arrival (one exists: done < total) */
            continue;
        }
        int64_t tokens = 0;
        for (int64_t i = 0; i < g; i++) {
            schedule(s, &E[i], t, &B[i], out);
            tokens += B[i].tokens;
        }
        if (!tokens)
            return rf_err_set(err, RF_EINTERNAL, "the scheduler ran nothing at %.9g s", t);
        double dt = 0;
        rf_status st = step(user, B, g, &dt, err);
        if (st)
            return rf_err_prefix(err, st, "step %lld (%lld decode, %lld chunks)",
                                 (long long)out->steps, (long long)B[0].n_decode,
                                 (long long)B[0].n_chunks);
        if (!(dt > 0) || !isfinite(dt))
            return rf_err_set(err, RF_EINVAL, "step %lld: the step model gave %g s (must be > 0)",
                              (long long)out->steps, dt);
        for (int64_t i = 0; i < sc->spec_k && draft_pass(E, B, g, i, s->dbatch + first); i++) {
            double dd = 0;
            if ((st = sc->draft(sc->draft_user, s->dbatch + first, g, &dd, err)))
                return rf_err_prefix(err, st, "step %lld, draft pass %lld", (long long)out->steps,
                                     (long long)i);
            if (!(dd > 0) || !isfinite(dd))
                return rf_err_set(err, RF_EINVAL,
                                  "step %lld, draft pass %lld: the draft's step model gave %g s "
                                  "(must be > 0)",
                                  (long long)out->steps, (long long)i, dd);
            dt += dd;
        }
        double end = t + dt;
        out->mean_step_tokens += (double)tokens;
        out->steps++;
        int64_t regular = 0;
        for (int64_t i = 0; i < g; i++) {
            engine *e = &E[i];
            int64_t held = sc->pool_blocks - e->free_blocks, finished = 0;
            if (e->free_blocks < 0)
                return rf_err_set(err, RF_EINTERNAL, "the pool was overdrawn at %.9g s", t);
            *kv_area += (double)held * dt;
            out->kv_peak_blocks = held > out->kv_peak_blocks ? held : out->kv_peak_blocks;
            out->peak_running = e->n_run > out->peak_running ? e->n_run : out->peak_running;
            for (int64_t k = 0; k < e->n_sched; k++) {
                int64_t r = e->sched[k], q = e->sched_tokens[k];
                if (q > 1 && decoding(s, r)) {
                    /* a verification: its proposals accepted in order
                     * until the first rejection, then the target's token */
                    int64_t a = 0;
                    while (a < q - 1 && rf__rng_uniform(&s->accept[r]) < sc->spec_accept)
                        a++;
                    out->spec_verifies++;
                    out->spec_accepted += a;
                    s->cached[r] += a + 1;
                    s->made[r] += a; /* and the last one below */
                } else {
                    if (s->made[r] && s->cached[r] < s->prompt[r] + s->made[r] - 1)
                        out->recompute_tokens += q;
                    s->cached[r] += q;
                    if (s->cached[r] < s->prompt[r] + s->made[r])
                        continue; /* a chunk short of the known tokens: no token yet */
                }
                if (++s->made[r] == 1)
                    s->ttft_end[r] = end;
                else if (s->last_emit[r] == t)
                    regular++;
                else
                    log_gap(s, end - s->last_emit[r], 1);
                s->last_emit[r] = end;
                if (s->made[r] < s->output[r])
                    continue;
                s->end[r] = end;
                e->free_blocks += s->own[r];
                s->own[r] = -1; /* marks it for removal below */
                finished++;
            }
            if (!finished)
                continue;
            int64_t k = 0;
            for (int64_t j = 0; j < e->n_run; j++)
                if (s->own[e->run[j]] >= 0)
                    e->run[k++] = e->run[j];
            e->n_run = k;
            done += finished;
            for (int64_t f = 0; closed && f < finished && e->issued < e->n_req; f++)
                s->arrival[req(s, e, e->issued++)] = end; /* the client's next request */
        }
        if (regular)
            log_gap(s, dt, regular);
        t = end;
    }
    *t_end = t;
    return RF_OK;
}

rf_status rf__sim_run(const rf_sim_workload *w, const rf_sim_sched *sc, rf_sim_group_fn step,
                      void *user, void *work, size_t work_bytes, int64_t max_log,
                      rf_sim_result *out, double *ttft, double *e2e, rf_err *err)
{
    size_t need = 0;
    int64_t n = 0;
    rf_status st = rf_sim_workspace_bytes(w, sc, max_log, &need, err);
    if (st)
        return st;
    if (work_bytes < need || !work || ((uintptr_t)work & 7))
        return rf_err_set(err, RF_EINVAL,
                          "the workspace has %zu bytes (8-byte aligned); the run "
                          "needs %zu",
                          work_bytes, need);
    rf__sim_workload_check(w, &n, err);
    sim s = {.sc = sc,
             .n = n,
             .max_log = max_log,
             .replicas = replicas_of(sc),
             .lockstep = lockstep_of(sc)};
    layout(&s, work, n, sc->max_seqs, s.replicas, max_log, sc->spec_k > 0);
    if ((st = rf__sim_requests(w, n, s.arrival, s.prompt, s.output, err)))
        return st;
    s.hit = sc->shared_prefix / sc->block_tokens * sc->block_tokens;
    s.prefix_blocks = s.hit / sc->block_tokens;
    if (s.prefix_blocks >= sc->pool_blocks)
        return rf_err_set(
            err, RF_EINVAL, "shared-prefix (%lld tokens) fills the pool's %lld blocks of %lld",
            (long long)sc->shared_prefix, (long long)sc->pool_blocks, (long long)sc->block_tokens);
    memset(out, 0, sizeof *out); /* padding too: equal runs give equal bytes */
    out->requests = n;
    out->pool_blocks = sc->pool_blocks;
    out->prefix_blocks = s.prefix_blocks;
    for (int64_t r = 0; r < n; r++) {
        int64_t cap = (s.prompt[r] - 1) / sc->block_tokens; /* a prompt token computed */
        s.hit_blocks[r] = s.prefix_blocks < cap ? s.prefix_blocks : cap;
        if ((st = fits_alone(&s, r, err)))
            return st;
        s.first[r] = -1;
        if (sc->spec_k) /* its own stream: streams 1 and 2 are the workload's */
            rf__rng_seed(&s.accept[r], w->seed, 3 + (uint64_t)r);
        s.cached[r] = hit_of(&s, r);
        s.made[r] = s.own[r] = 0;
        if (w->prefilled) { /* its prompt's KV and first token come with it */
            s.cached[r] = s.prompt[r];
            s.made[r] = 1;
            s.ttft_end[r] = s.last_emit[r] = s.arrival[r];
        }
        out->prompt_tokens += s.prompt[r];
        out->output_tokens += s.output[r];
    }
    bool closed = w->arrival == RF_SIM_CLOSED;
    if (closed)
        for (int64_t r = 0; r < n; r++)
            s.arrival[r] = 0;
    for (int64_t e = 0; e < s.replicas; e++)
        engine_init(&s, &s.eng[e], e, w);
    double kv_area = 0;
    /* replicas in different groups share nothing: each group runs alone */
    for (int64_t q = 0; q < s.replicas; q += s.lockstep) {
        double end = 0;
        if ((st = run_group(&s, q, closed, step, user, &kv_area, &end, out, err)))
            return st;
        out->duration_s = end > out->duration_s ? end : out->duration_s;
    }
    out->log_entries = s.log_needed;
    if (s.log_needed > max_log)
        return rf_err_set(err, RF_ERANGE,
                          "the run logs %lld ITL entries; the workspace holds %lld: call again "
                          "with max_log %lld",
                          (long long)s.log_needed, (long long)max_log, (long long)s.log_needed);
    finish(&s, !closed, kv_area, out);
    for (int64_t r = 0; r < n && ttft && e2e; r++) {
        ttft[r] = s.ttft_end[r] - s.arrival[r];
        e2e[r] = s.end[r] - s.arrival[r];
    }
    return RF_OK;
}

rf_status rf_sim_run_group(const rf_sim_workload *w, const rf_sim_sched *sc, rf_sim_group_fn step,
                           void *user, void *work, size_t work_bytes, int64_t max_log,
                           rf_sim_result *out, rf_err *err)
{
    return rf__sim_run(w, sc, step, user, work, work_bytes, max_log, out, NULL, NULL, err);
}

/* rf_sim_run's step model as a group's: one engine a group. */
typedef struct single {
    rf_sim_step_fn step;
    void *user;
} single;

static rf_status single_step(void *user, const rf_sim_batch *b, int64_t n, double *step_s,
                             rf_err *err)
{
    const single *one = user;
    (void)n; /* 1: rf_sim_run refuses lockstep */
    return one->step(one->user, b, step_s, err);
}

rf_status rf_sim_run(const rf_sim_workload *w, const rf_sim_sched *sc, rf_sim_step_fn step,
                     void *user, void *work, size_t work_bytes, int64_t max_log, rf_sim_result *out,
                     rf_err *err)
{
    if (lockstep_of(sc) > 1)
        return rf_err_set(err, RF_EINVAL,
                          "lockstep (%lld): replicas that step together need a group step "
                          "model (rf_sim_run_group)",
                          (long long)sc->lockstep);
    single one = {step, user};
    return rf_sim_run_group(w, sc, single_step, &one, work, work_bytes, max_log, out, err);
}
