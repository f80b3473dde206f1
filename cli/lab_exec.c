/* lab_exec.c - measure, bench and profile in the `roofline` binary: each
 * runs `roofline-lab` (the whole command line, cli/CMakeLists.txt) in this
 * process's place with the same command line, so `roofline` itself links
 * none of the lab's libraries (MPI, OpenBLAS, CUDA) and starts as fast as
 * the analytic commands need. The environment goes along unchanged, which
 * keeps `mpirun ... roofline measure --mpi` a rank of the same job.
 *
 * roofline-lab is looked for beside the running binary's real path
 * (/proc/self/exe): first RF_LAB_RELDIR from it (the install's
 * libexec/roofline, by the path from bindir), then its own folder (the
 * build tree). Not found or not runnable: one line naming the paths, exit 3
 * (RF_EXIT_UNAVAIL, as a backend that is not built). */
#define _POSIX_C_SOURCE 200809L /* readlink */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#ifndef RF_LAB_RELDIR
#define RF_LAB_RELDIR "."
#endif

enum { PATH_BYTES = 4096 };

/* The folder of the running binary into dir (no trailing slash); 0, or -1
 * with errno set. */
static int own_dir(char dir[PATH_BYTES])
{
    ssize_t n = readlink("/proc/self/exe", dir, PATH_BYTES - 1);
    if (n < 0)
        return -1;
    if (n == PATH_BYTES - 1) {
        errno = ENAMETOOLONG;
        return -1;
    }
    dir[n] = '\0';
    char *slash = strrchr(dir, '/');
    if (!slash) {
        errno = ENOENT;
        return -1;
    }
    *slash = '\0';
    return 0;
}

/* argv (argv[0] = the command's name) run as `roofline-lab NAME ...`: does
 * not return when the exec succeeds. */
static int lab_exec(const cli_io *io, int argc, char **argv)
{
    char dir[PATH_BYTES], installed[PATH_BYTES], beside[PATH_BYTES];
    if (own_dir(dir) != 0) {
        fprintf(io->err, "roofline %s: cannot find roofline-lab: /proc/self/exe: %s\n", argv[0],
                strerror(errno));
        return RF_EXIT_UNAVAIL;
    }
    int n_installed =
        snprintf(installed, sizeof installed, "%s/%s/roofline-lab", dir, RF_LAB_RELDIR);
    int n_beside = snprintf(beside, sizeof beside, "%s/roofline-lab", dir);
    if (n_installed < 0 || n_installed >= PATH_BYTES || n_beside < 0 || n_beside >= PATH_BYTES) {
        fprintf(io->err, "roofline %s: cannot find roofline-lab: %s: path too long\n", argv[0],
                dir);
        return RF_EXIT_UNAVAIL;
    }
    const char *lab = NULL;
    if (access(installed, X_OK) == 0)
        lab = installed;
    else if (access(beside, X_OK) == 0)
        lab = beside;
    if (!lab) {
        fprintf(io->err,
                "roofline %s: roofline-lab (the lab's binary: measure, bench, profile) not found "
                "at %s or %s\n",
                argv[0], installed, beside);
        return RF_EXIT_UNAVAIL;
    }
    char **lab_argv = malloc(((size_t)argc + 2) * sizeof *lab_argv);
    if (!lab_argv) {
        fprintf(io->err, "roofline %s: out of memory\n", argv[0]);
        return RF_EXIT_FAIL;
    }
    lab_argv[0] = (char *)lab;
    memcpy(lab_argv + 1, argv, (size_t)argc * sizeof *argv);
    lab_argv[argc + 1] = NULL;
    /* what this process wrote before comes first (io is the process's
     * streams: this file is the binary's, never the library's) */
    fflush(io->out);
    fflush(io->err);
    execv(lab, lab_argv);
    int err = errno;
    free(lab_argv);
    fprintf(io->err, "roofline %s: cannot run %s: %s\n", argv[0], lab, strerror(err));
    return RF_EXIT_UNAVAIL;
}

int cmd_measure(const cli_io *io, int argc, char **argv) { return lab_exec(io, argc, argv); }
int cmd_bench(const cli_io *io, int argc, char **argv) { return lab_exec(io, argc, argv); }
int cmd_profile(const cli_io *io, int argc, char **argv) { return lab_exec(io, argc, argv); }
