/* SPDX-License-Identifier: MIT */
/*
 * An ordinary MPI program, for railguard's corpus (scenarios/corpus/mpi-allreduce*.yaml):
 * ITERS MPI_Allreduce calls of COUNT doubles (argv[1], argv[2]; default 50 and 1024), each
 * checked against the sum every rank can compute, then MPI_Finalize. What it prints and its
 * exit status are what a real MPI job would give: 0 when every result was right, 1 (and the
 * first wrong element) when one was not. Under Open MPI over UCX's verbs transports its
 * traffic goes through libibverbs, where railguard's shim sees it and injects its faults.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = argc > 1 ? atoi(argv[1]) : 50, count = argc > 2 ? atoi(argv[2]) : 1024;
    if (iters <= 0 || count <= 0) {
        fprintf(stderr, "mpi-allreduce: ITERS and COUNT must be positive\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    double *in = malloc(sizeof(double) * (size_t)count),
           *out = malloc(sizeof(double) * (size_t)count);
    if (!in || !out)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int it = 0; it < iters; it++) {
        for (int i = 0; i < count; i++)
            in[i] = (double)(rank + 1) * (i % 7 + it);
        MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        /* sum over ranks r of (r + 1) * v = v * size * (size + 1) / 2: exact in doubles here */
        for (int i = 0; i < count; i++) {
            double want = (double)(i % 7 + it) * size * (size + 1) / 2;
            if (out[i] != want) {
                fprintf(stderr, "mpi-allreduce: rank %d, call %d: element %d is %g, not %g\n", rank,
                        it, i, out[i], want);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
    }
    if (rank == 0)
        printf("mpi-allreduce: %d calls of %d doubles on %d ranks: right\n", iters, count, size);
    free(in);
    free(out);
    MPI_Finalize();
    return 0;
}
