/* rf_cli.h - the command line as a library (libroofline-cli): run one
 * `roofline` command line inside this process.
 *
 * The binary `roofline` is `rf_cli_main` plus a checked close of stdout;
 * `rf_cli_run` runs the same code with standard output and standard error
 * captured in memory, for a program that embeds the tool (the Python
 * package, a test driver). The analytics library (rf_core and the layers
 * above it) never prints; this library is the one part that does, and it
 * prints only to the streams below.
 *
 * Each call starts from a clean state: the option scanner, the list of
 * files the run has read (an output never overwrites one) and the command's
 * scratch buffers are set afresh, and a temporary file of an output (-o
 * FILE) is renamed or removed, with the signal handlers that would remove
 * it put back, before the call returns. So any sequence of calls gives each
 * one the bytes and exit code the binary gives for it.
 *
 * Not thread-safe: a call owns the process's stdout and stderr (and the
 * option scanner's globals) while it runs; make one call at a time.
 */
#ifndef RF_CLI_LIB_H
#define RF_CLI_LIB_H

#include <stddef.h>

#if defined(__GNUC__)
#define RF_CLI_API __attribute__((visibility("default")))
#else
#define RF_CLI_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Exit codes, as the binary's (docs/cli.md, `roofline --help`): 0 ok,
 * 1 a runtime failure, 2 bad usage or input, 3 a backend or device
 * unavailable, 4 an output not written. */

/* Run argv (argv[0] the program name, ignored; argv[1] the command or
 * --help / --version) writing to the current stdout and stderr, as the
 * binary does: output is streamed, a progress line shows where stderr is a
 * terminal. stdout is flushed at the end and a failed write there (a full
 * disk, `> /dev/full`) returns 4 with "roofline: error writing standard
 * output" on stderr unless the command had failed already. stdout is left
 * open (the binary closes it and checks that too). argv's array may be
 * permuted by the option scanner; its strings are not changed. Returns the
 * exit code. */
RF_CLI_API int rf_cli_main(int argc, char **argv);

/* One command's captured output. */
typedef struct rf_cli_result {
    char *out;      /* standard output's bytes, NUL-terminated (heap)  */
    size_t out_len; /* bytes in out, not counting the NUL              */
    char *err;      /* standard error's bytes, NUL-terminated (heap)   */
    size_t err_len;
    int code;       /* the exit code, as rf_cli_main's                 */
} rf_cli_result;

/* Run argv as rf_cli_main does with stdout and stderr captured in memory
 * (argc >= 1; argv is copied, the caller's array and strings are left as
 * they are). Fills *res (free it with rf_cli_result_free) and returns
 * res->code. What the process had buffered on its own stdout is flushed
 * first; nothing of the call reaches the real streams. -o FILE writes FILE
 * as the binary does; -o - is captured with stdout.
 *
 * Capture needs glibc, whose stdout and stderr may be reassigned. Elsewhere
 * (musl, emscripten) it returns 3 with that reason on res->err and runs
 * nothing: call rf_cli_main and capture the streams outside (emscripten's
 * print callbacks). Out of memory for the capture: 1, with res->err saying
 * so where it could be allocated. */
RF_CLI_API int rf_cli_run(int argc, const char *const *argv, rf_cli_result *res);

/* Free what rf_cli_run allocated and zero *res; NULL and a zeroed result
 * are accepted. */
RF_CLI_API void rf_cli_result_free(rf_cli_result *res);

#ifdef __cplusplus
}
#endif

#endif
