/* mpi_allreduce_loop.c - the plainest measure of an all-reduce, for the
 * mpi_measure test to hold `measure --mpi`'s figure against: a 64 MiB
 * float sum, one warm-up, then 10 back to back; rank 0 prints the bus
 * bandwidth (nccl-tests: algbw x 2 (r-1)/r) in bytes/s. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, r, count = (64 << 20) / (int)sizeof(float);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &r);
    float *in = calloc((size_t)count, sizeof *in), *out = calloc((size_t)count, sizeof *out);
    if (!in || !out)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < 10; i++)
        MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double t = (MPI_Wtime() - t0) / 10, slowest = 0;
    MPI_Reduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%.6g\n", (double)count * sizeof(float) / slowest * 2.0 * (r - 1) / r);
    free(in);
    free(out);
    MPI_Finalize();
    return 0;
}
