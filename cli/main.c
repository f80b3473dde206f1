/* main.c - the `roofline` and `roofline-lab` binaries: the command line
 * library's rf_cli_main (entry.c) on the process's own streams, and stdout
 * closed and checked. roofline-lab has every command; roofline has the
 * analytic ones and runs roofline-lab for measure, bench and profile
 * (lab_exec.c), so that it starts without the lab's libraries. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>

#include "cli.h"
#include "rf_cli.h"
#include "roofline/rf_file.h"

/* SIGINT, SIGTERM, SIGHUP and SIGQUIT remove the output's named temporary
 * (rf_file_remove_temps: on Linux there is none but for an instant, the
 * file being unnamed until it is committed), then end the process by the
 * same signal, so the exit status still says which. Installed once, before
 * any file is opened, so no temporary exists unguarded; a signal the
 * process was started ignoring (nohup) stays ignored. */
static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

static void on_signal(int sig)
{
    rf_file_remove_temps();
    signal(sig, SIG_DFL);
    raise(sig); /* delivered when the handler returns */
}

static void guard_signals(void)
{
    struct sigaction sa = {.sa_handler = on_signal}, was;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof cleanup_signals / sizeof cleanup_signals[0]; i++)
        if (sigaction(cleanup_signals[i], NULL, &was) == 0 && was.sa_handler != SIG_IGN)
            sigaction(cleanup_signals[i], &sa, NULL);
}

int main(int argc, char **argv)
{
    guard_signals();
    int code = rf_cli_main(argc, argv); /* stdout flushed and checked */
    /* closing can fail still (a file system that reports late) */
    if (fclose(stdout) != 0 && !code) {
        fprintf(stderr, "roofline: error writing standard output\n");
        return RF_EXIT_IO;
    }
    return code;
}
