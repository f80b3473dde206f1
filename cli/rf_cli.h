/* rf_cli.h - the command line as a library (libroofline-cli): run one
 * `roofline` command line inside this process.
 *
 * The binary `roofline` is `rf_cli_main` plus a checked close of standard
 * output; `rf_cli_run` runs the same code with the command's output and
 * errors written to memory streams of its own, for a program that embeds
 * the tool (the Python package, the WebAssembly explorer, a test driver).
 * The analytics library (rf_core and the layers above it) never prints;
 * this library is the one part that does, and it prints only to the
 * streams below.
 *
 * Each call starts from a clean state and leaves none: its options, the
 * files it read and what they resolved to, its GPU kernel tables and its
 * scratch live in the call (its stack, or the heap, freed before it
 * returns), and a temporary file of an output (-o FILE) is renamed or
 * removed before it returns. So any sequence of calls gives each one the
 * bytes and exit code the binary gives for it.
 *
 * Threads: rf_cli_run may be called from several threads at once. Two
 * calls share no stream, no option scanner and no result; what they share
 * is the process's:
 *   - the file system: two calls writing one -o FILE race as two processes
 *     would (each file is written whole, the last rename wins);
 *   - the current directory, the environment (ROOFLINE_GPU_DATA, RF_ISA)
 *     and the umask, read, never changed;
 *   - the machine: measure, bench and profile time it (and set OpenBLAS's
 *     thread count, process-wide), so two of them at once time each other;
 *     measure --mpi also starts MPI (once a process) and, with --timeout,
 *     SIGALRM's handler: run those one at a time;
 *   - the table of named temporaries that rf_file_remove_temps empties
 *     (rf_file.h), which is safe for threads and signal handlers.
 * rf_cli_main writes to the process's stdout and stderr: concurrent calls
 * of it interleave their lines as any two writers of one stream do.
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
 * --help / --version) writing to the process's stdout and stderr, as the
 * binary does: output is streamed, a progress line shows where stderr is a
 * terminal. stdout is flushed at the end and a failed write there (a full
 * disk, `> /dev/full`) returns 4 with "roofline: error writing standard
 * output" on stderr unless the command had failed already. stdout is left
 * open (the binary closes it and checks that too). The option scanner
 * moves argv's operands after its options (as GNU getopt_long does); its
 * strings are not changed. Returns the exit code. */
RF_CLI_API int rf_cli_main(int argc, char **argv);

/* One command's captured output. */
typedef struct rf_cli_result {
    char *out;      /* standard output's bytes, NUL-terminated (heap)  */
    size_t out_len; /* bytes in out, not counting the NUL              */
    char *err;      /* standard error's bytes, NUL-terminated (heap)   */
    size_t err_len;
    int code; /* the exit code, as rf_cli_main's                 */
} rf_cli_result;

/* Run argv as rf_cli_main does, the command's output and errors written
 * to two memory streams of the call's own (open_memstream: glibc, musl,
 * emscripten) that become res->out and res->err (argc >= 1; argv is
 * copied, the caller's array and strings are left as they are). Fills
 * *res (free it with rf_cli_result_free) and returns res->code. The
 * process's stdout and stderr are not touched; res->err is no terminal,
 * so no progress line is shown. -o FILE writes FILE as the binary does;
 * -o - is captured with the output. Out of memory for the capture: 1,
 * with res->err saying so where it could be allocated. */
RF_CLI_API int rf_cli_run(int argc, const char *const *argv, rf_cli_result *res);

/* Free what rf_cli_run allocated and zero *res; NULL and a zeroed result
 * are accepted. */
RF_CLI_API void rf_cli_result_free(rf_cli_result *res);

#ifdef __cplusplus
}
#endif

#endif
