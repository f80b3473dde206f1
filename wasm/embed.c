/* embed.c - `rf_embed OUT.c NAME FILE [NAME FILE ...]`: each FILE as a C
 * array NAME (its bytes and a NUL) and NAME_len (its length), for the
 * texts the binary puts in the report page (the WebAssembly module's
 * script, the page's script and style). A text that holds "</script" or
 * "</style" would end its element in the page early, and one that holds
 * "]]>" its CDATA section: refused, exit 1. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Does s hold "</" + tag in any case? */
static int closes(const unsigned char *s, size_t n, const char *tag)
{
    size_t t = strlen(tag);
    for (size_t i = 0; i + 2 + t <= n; i++) {
        if (s[i] != '<' || s[i + 1] != '/')
            continue;
        size_t k = 0;
        while (k < t && tolower(s[i + 2 + k]) == tag[k])
            k++;
        if (k == t)
            return 1;
    }
    return 0;
}

static int embed(FILE *out, const char *name, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return fprintf(stderr, "rf_embed: cannot read %s\n", path), 1;
    size_t n = 0, cap = 1 << 20;
    unsigned char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) {
            unsigned char *p = realloc(buf, cap *= 2);
            if (!p)
                free(buf);
            buf = p;
        }
    }
    fclose(f);
    if (!buf)
        return fprintf(stderr, "rf_embed: out of memory reading %s\n", path), 1;
    int cdata_end = 0;
    for (size_t i = 0; i + 3 <= n && !cdata_end; i++)
        cdata_end = !memcmp(buf + i, "]]>", 3);
    if (closes(buf, n, "script") || closes(buf, n, "style") || cdata_end) {
        free(buf);
        return fprintf(stderr, "rf_embed: %s holds </script, </style or ]]>\n", path), 1;
    }
    /* one string literal (its NUL ends the array), 96 bytes a line: a
     * compiler reads it about 20 times faster than a list of a million
     * numbers. Printable bytes stand for themselves; '"', '\\' and '?' (a
     * trigraph's start in C11) and the others as three octal digits. */
    fprintf(out, "const unsigned char %s[] =\n\"", name);
    for (size_t i = 0; i < n; i++) {
        unsigned c = buf[i];
        if (i && i % 96 == 0)
            fputs("\"\n\"", out);
        if (c >= 32 && c < 127 && c != '"' && c != '\\' && c != '?')
            fputc((int)c, out);
        else
            fprintf(out, "\\%03o", c);
    }
    fprintf(out, "\";\nconst size_t %s_len = %zu;\n", name, n);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4 || argc % 2)
        return fprintf(stderr, "usage: rf_embed OUT.c NAME FILE [NAME FILE ...]\n"), 2;
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]);
    FILE *out = fopen(tmp, "w");
    if (!out)
        return fprintf(stderr, "rf_embed: cannot write %s\n", tmp), 1;
    fprintf(out, "/* Written by rf_embed (wasm/embed.c) at build time: do not edit. */\n"
                 "#include <stddef.h>\n\n");
    int rc = 0;
    for (int i = 2; i < argc && !rc; i += 2) {
        fprintf(out, "extern const unsigned char %s[];\nextern const size_t %s_len;\n", argv[i],
                argv[i]);
        rc = embed(out, argv[i], argv[i + 1]);
    }
    if (fclose(out) || rc || rename(tmp, argv[1])) {
        remove(tmp);
        return fprintf(stderr, "rf_embed: %s not written\n", argv[1]), 1;
    }
    return 0;
}
