/* rf_gpu_io.h - an engine's directory of kernel tables read (gpu_tables.c,
 * io): the tables rf_gpu.h predicts from. */
#ifndef RF_GPU_IO_H
#define RF_GPU_IO_H

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

#ifdef __cplusplus
}
#endif
#endif
