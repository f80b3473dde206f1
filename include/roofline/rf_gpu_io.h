/* rf_gpu_io.h - an engine's directory of kernel tables read (gpu_tables.c,
 * io): the tables rf_gpu.h predicts from. */
#ifndef RF_GPU_IO_H
#define RF_GPU_IO_H

#include "rf_closed_loop.h"
#include "rf_gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Read the tables of `dir` (an engine's directory: <dir>/gemm_perf.csv,
 * ..., and <dir>/../nccl/nccl_perf.csv) into *out (heap arrays: free with
 * rf_gpu_tables_free), their floors on hw. A missing file leaves its kind
 * absent (present false: predicted on its floor, rf_gpu_pred says so). A
 * bad table is RF_EINVAL naming the file and line: a missing column, a
 * value that is not a positive number, a latency not positive, a
 * repeated point, more than RF_GPU_MAX_CATS values of a categorical
 * column. custom_allreduce_perf keeps its CUDA-graph rows where it has
 * both (kernel_source naming "graph" and "eager": engines replay decode as
 * graphs). RF_EINVAL too for a directory with no table at all. */
rf_status rf_gpu_tables_load(const char *dir, const rf_hw *hw, rf_gpu_tables *out, rf_err *err);
void rf_gpu_tables_free(rf_gpu_tables *t);
/* Free one table's arrays (rf_gpu_tables_free does it for each kind). */
void rf_gpu_table_free(rf_gpu_table *t);

/* Write t as the reader reads it (gpu_tables_write.c): a header of its key
 * columns' names then `latency`, one row a line in t's order, categorical
 * keys as their values, numeric ones as integers when whole (else %.17g),
 * latency in milliseconds (%.9g: the reader gets it back within 1e-9). The
 * file is replaced atomically (rf_file_write_atomic). Any column set works:
 * a table of a kind the reader has no use for (kind RF_GPU_KIND_COUNT, its
 * columns set by hand) is written the same way. RF_EINVAL for a table
 * without rows; RF_EIO naming the file when writing fails. */
rf_status rf_gpu_table_write(const rf_gpu_table *t, const char *path, rf_err *err);

/* Write each kind of g that has rows to <dir>/<rf_gpu_kind_file(kind)>,
 * creating dir (and nccl's ../nccl) when missing: what rf_gpu_tables_load
 * reads back, so `--calibration DIR` predicts from it. Errors: those of
 * rf_gpu_table_write; RF_EIO naming a folder that cannot be made;
 * RF_EINVAL when g has no table with rows. */
rf_status rf_gpu_tables_write(const rf_gpu_tables *g, const char *dir, rf_err *err);

/* The measured error of `serve --predict` on one GPU's preset tables, an
 * engine: |predicted - measured| / measured of the mean TTFT and TPOT over
 * real serving runs that engine ran (bench/predict-gpu.sh writes the file,
 * <data>/<gpu>/serving_error.json; docs/gpu-predict.md), over all of its
 * runs or over those at concurrencies [c_min, c_max]. Fractions: 0.348 is
 * 34.8%. */
typedef struct rf_gpu_serving_error {
    int64_t runs;
    int64_t c_min, c_max; /* the runs' concurrencies (0, 0: every run) */
    double ttft_median, ttft_p90, tpot_median, tpot_p90;
    char source[512]; /* the bench, its commit and the runs it held to */
} rf_gpu_serving_error;

/* Read engine's entry of the serving-error file at path into *out: the
 * figures of its runs at concurrency c (the by_concurrency bucket holding
 * c) when c > 0 and a bucket holds it, else of all its runs. *found false
 * (RF_OK) when the file does not exist or has no entry for engine.
 * RF_EINVAL naming the file and the field for anything else: not JSON, a
 * field missing or not a number, runs not a whole number in [1, 10^6], a
 * bucket's bounds not 1 <= min <= max <= 10^6, an error not within
 * [0, 100] (0% .. 10,000%), a p90 below its median; RF_EIO naming it when
 * it exists and cannot be read. */
rf_status rf_gpu_serving_error_load(const char *path, const char *engine, int64_t c,
                                    rf_gpu_serving_error *out, bool *found, rf_err *err);
/* The same from text in memory (len bytes), origin naming it in refusals. */
rf_status rf_gpu_serving_error_parse(const char *text, size_t len, const char *origin,
                                     const char *engine, int64_t c, rf_gpu_serving_error *out,
                                     bool *found, rf_err *err);

/* Read engine's closed-loop TTFT factor for fixed or varied lengths
 * (rf_closed_loop.h) from the file at path (<data>/closed_loop_ttft.json,
 * tools/closed-loop/fit.py writes it). *found false (RF_OK) when the file
 * does not exist or has no entry for engine. RF_EINVAL naming the file and
 * the field for anything else: not JSON, a field missing or not a number,
 * runs not a whole number in [1, 10^6], c_min > c_max, an error not within
 * [0, 100], a p90 below its median, no points or more than
 * RF_CLOSED_LOOP_MAX_POINTS, a point that is not [c, f], a concurrency
 * outside [1, 10^6] or not above the one before, a factor outside
 * [10^-3, 10^6]; RF_EIO naming it when it exists and cannot be read. */
rf_status rf_closed_loop_load(const char *path, const char *engine, bool varied,
                              rf_closed_loop *out, bool *found, rf_err *err);
/* The same from text in memory (len bytes), origin naming it in refusals. */
rf_status rf_closed_loop_parse(const char *text, size_t len, const char *origin, const char *engine,
                               bool varied, rf_closed_loop *out, bool *found, rf_err *err);

#ifdef __cplusplus
}
#endif
#endif
