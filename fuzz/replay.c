/* replay.c - a main() for the harnesses outside libFuzzer: runs
 * LLVMFuzzerTestOneInput once on every file named, or on every file in a
 * folder named, so ctest replays the corpora (seeds and every input that
 * once crashed) in the normal and sanitizer builds. A broken contract
 * aborts inside the harness; an unreadable file fails the run. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 1;
    }
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    int rc = 0;
    while (buf) {
        len += fread(buf + len, 1, cap - len, f);
        if (len < cap)
            break;
        uint8_t *bigger = realloc(buf, cap * 2);
        if (!bigger) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    if (!buf || ferror(f)) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        rc = 1;
    } else {
        LLVMFuzzerTestOneInput(buf, len);
    }
    free(buf);
    fclose(f);
    return rc;
}

int main(int argc, char **argv)
{
    int failed = 0, n = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s does not exist\n", argv[i]);
            failed++;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            failed += replay_file(argv[i]);
            n++;
            continue;
        }
        struct dirent **names = NULL;
        int k = scandir(argv[i], &names, NULL, alphasort);
        for (int j = 0; j < k; j++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], names[j]->d_name);
            if (names[j]->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
                failed += replay_file(path);
                n++;
            }
            free(names[j]);
        }
        free(names);
    }
    printf("%d passed, %d failed\n", n - failed, failed);
    return failed != 0;
}
