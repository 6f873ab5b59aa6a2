/*
 * The index's trigram reader in C: reads a batch of the files rg listed, beneath the root's
 * descriptor with no symlink followed, and gathers the ASCII trigrams of each file's text into
 * posting lists (file ids, ascending, delta-coded as varints) that the keeper writes to the
 * index's `postings` table (core/index/store.py).
 *
 * Why it exists: SQLite's FTS5 `trigram` tokenizer took 15 s of a single thread to index a
 * million small files, four times rg's whole pass over them, and reading the files in Python
 * took another 9 s (benchmarks/bench_index.py). The index's candidate query asks only for
 * trigrams of ASCII characters folded to lower case (core/index/plan.py), so only those are
 * kept: three bytes below 0x80, A-Z folded to a-z, a NUL read as a space. In UTF-8 an ASCII byte
 * is never part of another character, and a decoder that replaces bad bytes never swallows one,
 * so these are exactly the ASCII trigrams of the text FTS5 would have been given.
 *
 * What it decides per path (`kinds`): DSH_TEXT, the file was read and its trigrams gathered
 * (`sizes`, `mtimes`, `nuls` say what the index records of it); DSH_SKIP, a folder on its way is
 * a symlink or no folder (ELOOP, ENOTDIR, EXDEV): not a file rg's walk from the root lists;
 * DSH_PYTHON, anything else (not a regular file, over `max_bytes`, a UTF-16 byte-order mark, a
 * failure to open or read it): the keeper reads that one in Python (core/tools/indexing/files.py),
 * which words every such case as before. A folder is opened with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS) when `beneath` is set, else one name at a time with O_NOFOLLOW |
 * O_DIRECTORY (as core/fs/beneath.py), and kept open while the paths that follow share it (rg
 * lists a folder's files together); the file by its bare name with O_NOFOLLOW | O_NONBLOCK.
 *
 * A `dsh_grams` gathers; it is used by one thread at a time (the keeper's reading thread), and
 * ids given to it must grow from call to call. `dsh_grams_flush` hands its lists over and empties
 * it; `dsh_grams_decode` reads a list back for a query.
 *
 * What it must never do: read through a symlink, leave out an ASCII trigram of a file it calls
 * DSH_TEXT, or write past an output it was given.
 *
 * Below the reader, dsh_grams_join reads glob's and find's lists from the index in one pass (its
 * own comment says why).
 *
 * Built into libgrams.so.N when the package is built (hatch_build.py), loaded by
 * core/index/native.py; where it is missing, the index reads and indexes every file in Python
 * and FTS5, and glob and find join their lists in SQL (the same answers, slower), and says so
 * in the log.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DSH_TEXT 0
#define DSH_SKIP 3
#define DSH_PYTHON 4

#define GRAMS (1u << 21) /* three 7-bit characters */
#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
#define FILE_FLAGS (O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#define RESOLVE_NO_SYMLINKS_ 0x04
#define RESOLVE_BENEATH_ 0x08

/* Which build of this file a library is: core/index/native.py loads only the one it was written
 * for (libgrams.so.N). Change it with any function's arguments or meaning, and ABI there too. */
int dsh_grams_abi(void)
{
    return 4;
}

struct list {
    uint32_t last; /* the last id added (0: none yet; ids start at 1) */
    uint32_t len, cap;
    uint32_t gram; /* whose list it is (empty() clears that entry of `where`) */
    uint8_t *buf;
};

struct dsh_grams {
    uint32_t *where; /* GRAMS entries: the gram's list number + 1, 0 for none */
    struct list *lists;
    uint32_t count, cap;
    uint64_t bytes; /* held in the lists' buffers */
    uint8_t *text;  /* a file's bytes, max_bytes + 1 */
    long text_cap;
};

/* An ASCII byte as the trigrams keep it: A-Z as a-z, NUL as a space (FTS5 is given the text
 * with its NULs as spaces), any other as itself. */
static const uint8_t fold[128] = {
    32, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
    16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
    32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,
    48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63,
    64, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111,
    112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 91, 92, 93, 94, 95,
    96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111,
    112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127,
};

struct dsh_grams *dsh_grams_new(void)
{
    struct dsh_grams *g = calloc(1, sizeof *g);
    if (g == NULL)
        return NULL;
    g->where = calloc(GRAMS, sizeof *g->where);
    if (g->where == NULL) {
        free(g);
        return NULL;
    }
    return g;
}

/* Each list freed and its gram's entry of `where` cleared: not the whole 8 MB table, which
 * a flush of a few thousand lists barely touches (cleared whole, every page of it stayed in
 * memory in each reading thread, and each flush wrote all of it). */
static void empty(struct dsh_grams *g)
{
    for (uint32_t i = 0; i < g->count; i++) {
        g->where[g->lists[i].gram] = 0;
        free(g->lists[i].buf);
    }
    free(g->lists);
    g->lists = NULL;
    g->count = g->cap = 0;
    g->bytes = 0;
}

void dsh_grams_free(struct dsh_grams *g)
{
    if (g == NULL)
        return;
    empty(g);
    free(g->where);
    free(g->text);
    free(g);
}

/* Bytes the lists hold: the keeper flushes past a bound, so memory stays bounded. */
uint64_t dsh_grams_bytes(const struct dsh_grams *g)
{
    return g->bytes;
}

/* Lists held (the flush writes 8 bytes of head for each). */
uint32_t dsh_grams_count(const struct dsh_grams *g)
{
    return g->count;
}

/* 0, or -1: out of memory (the gram is not added: the caller must give up the build). */
static int add(struct dsh_grams *g, uint32_t gram, uint32_t id)
{
    uint32_t n = g->where[gram];
    if (n == 0) {
        if (g->count == g->cap) {
            uint32_t cap = g->cap ? g->cap * 2 : 4096;
            struct list *lists = realloc(g->lists, cap * sizeof *lists);
            if (lists == NULL)
                return -1;
            g->lists = lists;
            g->cap = cap;
        }
        g->lists[g->count] = (struct list){0, 0, 0, gram, NULL};
        n = g->where[gram] = ++g->count;
    }
    struct list *l = &g->lists[n - 1];
    if (l->last == id)
        return 0;
    if (l->cap - l->len < 5) {
        uint32_t cap = l->cap ? l->cap * 2 : 16;
        uint8_t *buf = realloc(l->buf, cap);
        if (buf == NULL)
            return -1;
        g->bytes += cap - l->cap;
        l->buf = buf;
        l->cap = cap;
    }
    uint32_t d = id - l->last;
    l->last = id;
    while (d >= 0x80) {
        l->buf[l->len++] = (uint8_t)(d | 0x80);
        d >>= 7;
    }
    l->buf[l->len++] = (uint8_t)d;
    return 0;
}

static int add_text(struct dsh_grams *g, uint32_t id, const uint8_t *p, long n)
{
    uint32_t code = 0;
    int run = 0;
    for (long i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (c >= 0x80) {
            run = 0;
            continue;
        }
        code = ((code << 7) | fold[c]) & (GRAMS - 1);
        if (++run >= 3 && add(g, code, id) != 0)
            return -1;
    }
    return 0;
}

struct how {
    uint64_t flags, mode, resolve;
};

static int open_folder(int root, const char *rel, int beneath)
{
    if (rel[0] == 0)
        return fcntl(root, F_DUPFD_CLOEXEC, 0);
    if (beneath) {
        struct how how = {DIR_FLAGS, 0, RESOLVE_BENEATH_ | RESOLVE_NO_SYMLINKS_};
        for (int i = 0; i < 3; i++) {
            long fd = syscall(SYS_openat2, root, rel, &how, sizeof how);
            if (fd >= 0)
                return (int)fd;
            if (errno == EAGAIN)
                continue;
            if (errno != ENAMETOOLONG && errno != ENOSYS)
                return -1;
            break;
        }
    }
    /* one name at a time, no symlink followed */
    int fd = fcntl(root, F_DUPFD_CLOEXEC, 0);
    char name[256];
    const char *at = rel;
    while (fd >= 0 && *at) {
        const char *slash = strchr(at, '/');
        size_t len = slash ? (size_t)(slash - at) : strlen(at);
        if (len == 0 || len >= sizeof name) {
            close(fd);
            errno = len ? ENAMETOOLONG : ENOENT;
            return -1;
        }
        memcpy(name, at, len);
        name[len] = 0;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) { /* names no folder beneath */
            close(fd);
            errno = ENOENT;
            return -1;
        }
        int below = openat(fd, name, DIR_FLAGS);
        int e = errno;
        close(fd);
        errno = e;
        fd = below;
        at += len + (slash != NULL);
    }
    return fd;
}

/* Reads the file (up to max_bytes + 1) into g->text; its length, or -1. It stops at `size`
 * (fstat's) when that many bytes came, without the read that would say the end is there: a
 * file that grows meanwhile is read again for its file event, as any change after the listing. */
static long read_all(struct dsh_grams *g, int fd, long max_bytes, long size)
{
    if (g->text_cap < max_bytes + 1) {
        uint8_t *text = realloc(g->text, (size_t)max_bytes + 1);
        if (text == NULL)
            return -1;
        g->text = text;
        g->text_cap = max_bytes + 1;
    }
    long got = 0;
    while (got <= max_bytes) {
        ssize_t n = read(fd, g->text + got, (size_t)(max_bytes + 1 - got));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (n == 0)
            break;
        got += n;
        if (size > 0 && got >= size)
            break;
    }
    return got;
}

/* A path's extension, as core/index/store.py's _ext says: from its last dot on, when no slash
 * follows that dot; else none (length 0). */
static size_t ext_at(const char *path, size_t len, const char **ext)
{
    for (size_t k = len; k-- > 0;) {
        if (path[k] == '/')
            break;
        if (path[k] == '.') {
            *ext = path + k;
            return len - k;
        }
    }
    return 0;
}

/*
 * The `n` NUL-separated relative paths of `paths` (`len` bytes), path i given id `first_id` + i.
 * Fills kinds[i] and, for DSH_TEXT, sizes[i], mtimes[i], nuls[i]; writes every path's extension
 * and a NUL into `exts` (room for `len` + 1 bytes always suffices), its length into *exts_len.
 * Returns how many paths it read, or -1 when out of memory (the caller gives up the build).
 */
long dsh_grams_read(struct dsh_grams *g, int root, int beneath, const char *paths, long len, long n,
                    uint32_t first_id, long max_bytes, int8_t *kinds, int64_t *sizes, int64_t *mtimes,
                    int8_t *nuls, char *exts, long *exts_len)
{
    long ext_at_ = 0;
    char folder[4096];
    long folder_len = -1; /* the held folder's path length, -1: none held */
    int folder_fd = -1, folder_errno = 0;
    const char *at = paths, *end = paths + len;
    long i = 0;
    for (; i < n && at < end; i++) {
        size_t plen = strnlen(at, (size_t)(end - at));
        const char *path = at;
        at += plen + 1;
        const char *ext = NULL;
        size_t elen = ext_at(path, plen, &ext);
        if (elen)
            memcpy(exts + ext_at_, ext, elen);
        ext_at_ += (long)elen;
        exts[ext_at_++] = 0;
        kinds[i] = DSH_PYTHON;
        const char *slash = memrchr(path, '/', plen);
        long flen = slash ? (long)(slash - path) : 0;
        const char *name = slash ? slash + 1 : path;
        if (flen >= (long)sizeof folder)
            continue;
        if (flen != folder_len || memcmp(folder, path, (size_t)flen) != 0) {
            if (folder_fd >= 0)
                close(folder_fd);
            memcpy(folder, path, (size_t)flen);
            folder[flen] = 0;
            folder_len = flen;
            folder_fd = open_folder(root, folder, beneath);
            folder_errno = folder_fd < 0 ? errno : 0;
        }
        if (folder_fd < 0) {
            if (folder_errno == ELOOP || folder_errno == ENOTDIR || folder_errno == EXDEV)
                kinds[i] = DSH_SKIP;
            continue; /* any other failure: Python words it */
        }
        int fd = openat(folder_fd, name, FILE_FLAGS);
        if (fd < 0)
            continue;
        struct stat st;
        if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > max_bytes) {
            close(fd);
            continue;
        }
        long got = read_all(g, fd, max_bytes, (long)st.st_size);
        close(fd);
        if (got < 0) {
            if (errno == ENOMEM)
                goto out_of_memory;
            continue;
        }
        if (got > max_bytes)
            continue;
        const uint8_t *text = g->text;
        if (got >= 2 && ((text[0] == 0xFF && text[1] == 0xFE) || (text[0] == 0xFE && text[1] == 0xFF)))
            continue; /* UTF-16: Python transcodes it, as rg does */
        if (add_text(g, first_id + (uint32_t)i, text, got) != 0)
            goto out_of_memory;
        kinds[i] = DSH_TEXT;
        sizes[i] = got;
        mtimes[i] = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
        nuls[i] = memchr(text, 0, (size_t)got) != NULL;
    }
    if (folder_fd >= 0)
        close(folder_fd);
    *exts_len = ext_at_;
    return i;
out_of_memory:
    if (folder_fd >= 0)
        close(folder_fd);
    return -1;
}

/*
 * Hands the lists over and empties `g`: into `out` (`cap` bytes, at least dsh_grams_bytes +
 * 8 * dsh_grams_count), for each list its gram (4 bytes, native order), its length in bytes (4)
 * and its varints, in the order the grams were first met (the index finds a gram's rows by its
 * own index, so no order is needed: a walk of the whole gram table in gram order was a twentieth
 * of the reading's CPU). Returns the bytes written, or -1 when `cap` is short (nothing is
 * emptied).
 */
long dsh_grams_flush(struct dsh_grams *g, uint8_t *out, long cap)
{
    long need = 0;
    for (uint32_t i = 0; i < g->count; i++)
        need += 8 + g->lists[i].len;
    if (need > cap)
        return -1;
    long at = 0;
    for (uint32_t i = 0; i < g->count; i++) {
        struct list *l = &g->lists[i];
        memcpy(out + at, &l->gram, 4);
        memcpy(out + at + 4, &l->len, 4);
        memcpy(out + at + 8, l->buf, l->len);
        at += 8 + l->len;
    }
    empty(g);
    return at;
}

/* The ids of one list (`len` bytes of varints) into `out` (room for `len` ids: a varint is at
 * least a byte); how many, or -1 when the list is malformed. */
long dsh_grams_decode(const uint8_t *list, long len, uint32_t *out)
{
    long n = 0;
    uint32_t id = 0;
    for (long at = 0; at < len;) {
        uint32_t d = 0;
        int shift = 0;
        for (;;) {
            if (at >= len || shift > 28)
                return -1;
            uint8_t b = list[at++];
            d |= (uint32_t)(b & 0x7F) << shift;
            if (!(b & 0x80))
                break;
            shift += 7;
        }
        id += d;
        out[n++] = id;
    }
    return n;
}

/*
 * glob's list (core/tools/glob/indexed.py): the paths one query of the index gives, joined by
 * newlines in the query's order, read in one pass here instead of by SQLite's group_concat.
 *
 * Why it exists: on a million files, glob `*.py` must count 600,000 paths, join them oldest first
 * (17 MB) and count each top-level entry's; group_concat took three times as long as reading the
 * rows (it copies each row's blob into text first), and the counts were a second pass on the other
 * core. Here each row is copied once, and the same pass counts the entries and says whether any
 * line needs a closer look before it may print bare.
 *
 * The SQLite functions are the ones Python's sqlite3 module calls, found by Python in the
 * library that module loaded (core/index/native.py), so one copy of SQLite runs in the process;
 * the file is opened read-only, on a connection of its own.
 */
typedef int (*sql_open_fn)(const char *, void **, int, const char *);
typedef int (*sql_close_fn)(void *);
typedef int (*sql_prepare_fn)(void *, const char *, int, void **, const char **);
typedef int (*sql_bind_blob_fn)(void *, int, const void *, int, void (*)(void *));
typedef int (*sql_bind_int64_fn)(void *, int, int64_t);
typedef int (*sql_step_fn)(void *);
typedef const void *(*sql_column_blob_fn)(void *, int);
typedef int (*sql_column_bytes_fn)(void *, int);
typedef int (*sql_finalize_fn)(void *);

#define SQL_OPEN_READONLY 0x1
#define SQL_OPEN_NOMUTEX 0x8000 /* the connection is this call's alone: no lock taken per step */
#define SQL_ROW 100
#define SQL_DONE 101
#define SQL_TRANSIENT ((void (*)(void *)) - 1)

/* What dsh_grams_join says of the lines in `flags` */
#define JOIN_NOT_ASCII 1  /* a byte of 0x80 or more: Python decodes and checks the names */
#define JOIN_LOOK 2       /* a line may need quoting: Python checks each (core/text/quoting.py) */
#define JOIN_LINE_BREAK 4 /* a path holds a line break, or is empty below the cut */
#define JOIN_MANY 8       /* more top-level entries than `max_keys`: no counts */

/* Bytes a line may hold with no closer look: printable ASCII and the space, but the backslash,
 * the quote and "<" (which "</" starts). 1: look closer. */
static uint8_t look_table[256];
static int look_ready;

static void make_look_table(void)
{
    for (int b = 0; b < 256; b++)
        look_table[b] = !(b >= 0x20 && b < 0x7F) || b == '\\' || b == '"' || b == '<';
    __atomic_store_n(&look_ready, 1, __ATOMIC_RELEASE);
}

struct slot {
    long at;      /* where the key starts in `keys`, or -1 for an empty slot */
    long len;
    long number;  /* the order it was first met in */
    int64_t count;
    int8_t dir;   /* the key is a folder (its lines go on past it) */
};

static uint64_t hash_of(const uint8_t *p, long n)
{
    uint64_t h = 1469598103934665603ull;
    for (long i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/*
 * Runs `sql` on the index file `db_path` (read-only): one column, a path as a BLOB; `n`
 * parameters, each a blob (`kinds[i]` 0: `blobs[i]`, `lens[i]` bytes) or an integer (1:
 * `ints[i]`). Each row, from byte `cut` on (0-based), goes into *out, with the byte `sep` (a
 * newline for glob, a NUL for find) between rows; *out is malloc'd (dsh_grams_release frees it), *out_len its length. `flags` gets the
 * JOIN_* bits. The top-level entries (a line up to its first "/", or the whole line) are counted:
 * each key and a NUL into `keys` (`keys_cap` bytes), its count into `counts`, 1 into `dirs` for a
 * folder; *nkeys how many (at most `max_keys`, else JOIN_MANY and no counts).
 * Returns the number of rows, -1 when SQLite failed, -2 when memory ran out.
 */
long dsh_grams_join(void *const *api, const char *db_path, const char *sql, int n, const int *kinds,
                    const void *const *blobs, const int *lens, const int64_t *ints, long cut, int sep, char **out,
                    long *out_len, int *flags, char *keys, long keys_cap, int64_t *counts, int8_t *dirs,
                    long max_keys, long *nkeys)
{
    sql_open_fn open_ = (sql_open_fn)api[0];
    sql_close_fn close_ = (sql_close_fn)api[1];
    sql_prepare_fn prepare = (sql_prepare_fn)api[2];
    sql_bind_blob_fn bind_blob = (sql_bind_blob_fn)api[3];
    sql_bind_int64_fn bind_int64 = (sql_bind_int64_fn)api[4];
    sql_step_fn step = (sql_step_fn)api[5];
    sql_column_blob_fn column_blob = (sql_column_blob_fn)api[6];
    sql_column_bytes_fn column_bytes = (sql_column_bytes_fn)api[7];
    sql_finalize_fn finalize = (sql_finalize_fn)api[8];
    if (!__atomic_load_n(&look_ready, __ATOMIC_ACQUIRE))
        make_look_table(); /* the same bytes whichever thread makes it first */

    *out = NULL;
    *out_len = 0;
    *flags = 0;
    *nkeys = 0;
    long rows = 0, len = 0, cap = 1 << 20, used_keys = 0, nslots = 1;
    while (nslots < 2 * max_keys + 2)
        nslots <<= 1;
    struct slot *slots = malloc((size_t)nslots * sizeof *slots);
    char *buf = malloc((size_t)cap);
    void *db = NULL, *stmt = NULL;
    long result = -2;
    if (slots == NULL || buf == NULL)
        goto done;
    for (long i = 0; i < nslots; i++)
        slots[i].at = -1;
    result = -1;
    if (open_(db_path, &db, SQL_OPEN_READONLY | SQL_OPEN_NOMUTEX, NULL) != 0 || prepare(db, sql, -1, &stmt, NULL) != 0)
        goto done;
    for (int i = 0; i < n; i++) {
        int rc = kinds[i] == 0 ? bind_blob(stmt, i + 1, blobs[i], lens[i], SQL_TRANSIENT)
                               : bind_int64(stmt, i + 1, ints[i]);
        if (rc != 0)
            goto done;
    }
    int f = 0;
    for (;;) {
        int rc = step(stmt);
        if (rc == SQL_DONE)
            break;
        if (rc != SQL_ROW)
            goto done;
        const uint8_t *path = column_blob(stmt, 0);
        long plen = column_bytes(stmt, 0);
        const uint8_t *p = path + (cut < plen ? cut : plen);
        long m = plen - (cut < plen ? cut : plen);
        if (len + m + 1 > cap) {
            while (len + m + 1 > cap)
                cap *= 2;
            char *grown = realloc(buf, (size_t)cap);
            if (grown == NULL) {
                result = -2;
                goto done;
            }
            buf = grown;
        }
        if (rows)
            buf[len++] = (char)sep;
        memcpy(buf + len, p, (size_t)m);
        len += m;
        rows++;
        if (m == 0) {
            f |= JOIN_LINE_BREAK | JOIN_LOOK;
            continue;
        }
        /* the closer look: a byte not plain, "</", a space at either end, "/" or "@" last */
        uint8_t any = 0;
        for (long i = 0; i < m; i++)
            any |= look_table[p[i]];
        int look = 0;
        for (long i = 0; any && i < m; i++) { /* rare: a byte to look at */
            uint8_t b = p[i];
            if (!look_table[b])
                continue;
            if (b >= 0x80)
                f |= JOIN_NOT_ASCII;
            if (b == '\n')
                f |= JOIN_LINE_BREAK;
            if (b != '<' || (i + 1 < m && p[i + 1] == '/'))
                look = 1;
        }
        const uint8_t *first_slash = memchr(p, '/', (size_t)m);
        long slash = first_slash == NULL ? -1 : first_slash - p;
        if (look || p[0] == ' ' || p[m - 1] == ' ' || p[m - 1] == '/' || p[m - 1] == '@')
            f |= JOIN_LOOK;
        if (f & JOIN_MANY)
            continue;
        long klen = slash < 0 ? m : slash;
        uint64_t h = hash_of(p, klen);
        long s = (long)(h & (uint64_t)(nslots - 1));
        while (slots[s].at >= 0 &&
               !(slots[s].len == klen && memcmp(keys + slots[s].at, p, (size_t)klen) == 0))
            s = (s + 1) & (nslots - 1);
        if (slots[s].at < 0) {
            if (*nkeys >= max_keys || used_keys + klen + 1 > keys_cap) {
                f |= JOIN_MANY;
                continue;
            }
            memcpy(keys + used_keys, p, (size_t)klen);
            keys[used_keys + klen] = 0;
            slots[s].at = used_keys;
            slots[s].len = klen;
            slots[s].number = *nkeys;
            slots[s].count = 0;
            slots[s].dir = 0;
            used_keys += klen + 1;
            (*nkeys)++;
        }
        slots[s].count++;
        slots[s].dir |= slash >= 0;
    }
    /* the counts in the order the keys were first met, as they lie in `keys` */
    if (!(f & JOIN_MANY)) {
        for (long i = 0; i < nslots; i++) {
            if (slots[i].at < 0)
                continue;
            counts[slots[i].number] = slots[i].count;
            dirs[slots[i].number] = slots[i].dir;
        }
    } else {
        *nkeys = 0;
    }
    *flags = f;
    *out = buf;
    *out_len = len;
    buf = NULL;
    result = rows;
done:
    if (stmt != NULL)
        finalize(stmt);
    if (db != NULL)
        close_(db);
    free(buf);
    free(slots);
    return result;
}

/* Frees what dsh_grams_join gave in *out. */
void dsh_grams_release(char *out)
{
    free(out);
}

/*
 * A build's rows written by C (core/tools/indexing/keeper.py): the rows the reader made, written
 * from its own arrays on a connection of C's own to the file being built.
 *
 * Why it exists: through Python's executemany each row cost 6.6 us here (seven parameters bound
 * from Python objects, a reset per row), where SQLite's own insert is about 1 us; on a million
 * files that was the larger part of the build's one writing thread. The connection writes with
 * no journal on disk, like the keeper's own during a build, and each batch in a transaction of
 * its own; the keeper's connection writes the rest (texts for FTS5, posting lists) in turn, on
 * the same thread, so the two never wait for each other.
 *
 * Rows go 64 to a statement (WRITER_ROWS), the last few of a batch one at a time: a million rows
 * took 2.0 s of CPU one to a statement and 0.9 s so, where SQLite's own INSERT ... SELECT of the
 * same rows takes 0.6 s.
 *
 * The reading threads' posting lists are written here too (dsh_grams_writer_postings), straight
 * from a flush's bytes: through Python each list was cut into a bytes object and bound from it,
 * 0.85 s of the writing thread's CPU on a million files.
 */
typedef int (*sql_exec_fn)(void *, const char *, void *, void *, char **);
typedef int (*sql_reset_fn)(void *);

#define SQL_OPEN_READWRITE 0x2

/* Rows one statement inserts: a step runs the statement's program once, and its start (the
 * transaction check, the table and index cursors opened) cost as much as a row's insert itself. */
#define WRITER_ROWS 64

struct dsh_writer {
    void *const *api;
    /* the functions each row's insert calls, typed once */
    sql_bind_blob_fn bind_blob;
    sql_bind_int64_fn bind_int64;
    sql_step_fn step;
    sql_reset_fn reset;
    void *db;
    void *insert;      /* one row */
    void *insert_many; /* WRITER_ROWS rows */
    void *posting;     /* one posting list */
};

static int run(struct dsh_writer *w, const char *sql)
{
    return ((sql_exec_fn)w->api[9])(w->db, sql, NULL, NULL, NULL);
}

/* A writer on the index file `db_path` (its tables made already); NULL on failure. */
struct dsh_writer *dsh_grams_writer_open(void *const *api, const char *db_path)
{
    struct dsh_writer *w = calloc(1, sizeof *w);
    if (w == NULL)
        return NULL;
    w->api = api;
    w->bind_blob = (sql_bind_blob_fn)api[3];
    w->bind_int64 = (sql_bind_int64_fn)api[4];
    w->step = (sql_step_fn)api[5];
    w->reset = (sql_reset_fn)api[10];
    static const char head[] = "INSERT INTO files(id, path, size, mtime_ns, kind, nul, ext) VALUES ";
    static const char row[] = "(?, ?, ?, ?, 0, ?, ?)";
    char many[sizeof head + WRITER_ROWS * sizeof row];
    size_t at = 0;
    memcpy(many, head, sizeof head - 1);
    at += sizeof head - 1;
    for (int i = 0; i < WRITER_ROWS; i++) {
        if (i)
            many[at++] = ',';
        memcpy(many + at, row, sizeof row - 1);
        at += sizeof row - 1;
    }
    many[at] = 0;
    if (((sql_open_fn)api[0])(db_path, &w->db, SQL_OPEN_READWRITE | SQL_OPEN_NOMUTEX, NULL) != 0 ||
        run(w, "PRAGMA journal_mode=MEMORY") != 0 || run(w, "PRAGMA synchronous=OFF") != 0 ||
        run(w, "PRAGMA cache_size=-16384") != 0 ||
        ((sql_prepare_fn)api[2])(w->db,
                                 "INSERT INTO files(id, path, size, mtime_ns, kind, nul, ext) "
                                 "VALUES (?, ?, ?, ?, 0, ?, ?)",
                                 -1, &w->insert, NULL) != 0 ||
        ((sql_prepare_fn)api[2])(w->db, many, -1, &w->insert_many, NULL) != 0 ||
        ((sql_prepare_fn)api[2])(w->db, "INSERT INTO postings(gram, ids) VALUES (?, ?)", -1, &w->posting, NULL) != 0) {
        if (w->posting != NULL)
            ((sql_finalize_fn)api[8])(w->posting);
        if (w->insert_many != NULL)
            ((sql_finalize_fn)api[8])(w->insert_many);
        if (w->insert != NULL)
            ((sql_finalize_fn)api[8])(w->insert);
        if (w->db != NULL)
            ((sql_close_fn)api[1])(w->db);
        free(w);
        return NULL;
    }
    return w;
}

void dsh_grams_writer_close(struct dsh_writer *w)
{
    if (w == NULL)
        return;
    ((sql_finalize_fn)w->api[8])(w->posting);
    ((sql_finalize_fn)w->api[8])(w->insert_many);
    ((sql_finalize_fn)w->api[8])(w->insert);
    ((sql_close_fn)w->api[1])(w->db);
    free(w);
}

/*
 * Writes, in one transaction, a row for each of the `n` paths of a dsh_grams_read whose kind is
 * DSH_TEXT: id `first_id + i`, the path (NUL-separated in `paths`, `len` bytes), its size, time,
 * NUL flag and extension (NUL-separated in `exts`). Returns the rows written, or -1 (the
 * transaction rolled back).
 */
long dsh_grams_writer_insert(struct dsh_writer *w, const char *paths, long len, long n, int64_t first_id,
                             const int8_t *kinds, const int64_t *sizes, const int64_t *mtimes,
                             const int8_t *nuls, const char *exts)
{
    if (run(w, "BEGIN") != 0)
        return -1;
    long written = 0, at = 0, ext_at_ = 0, left = 0;
    for (long i = 0; i < n; i++)
        left += kinds[i] == DSH_TEXT;
    void *stmt = NULL;
    int slot = 0; /* the row of stmt bound next */
    for (long i = 0; i < n; i++) {
        const char *path = paths + at;
        size_t plen = strnlen(path, (size_t)(len - at));
        const char *ext = exts + ext_at_;
        size_t elen = strlen(ext);
        at += (long)plen + 1;
        ext_at_ += (long)elen + 1;
        if (kinds[i] != DSH_TEXT)
            continue;
        if (slot == 0)
            stmt = left >= WRITER_ROWS ? w->insert_many : w->insert;
        int p = slot * 6;
        /* SQLITE_STATIC (0): the bytes outlive the step */
        if (w->bind_int64(stmt, p + 1, first_id + i) != 0 || w->bind_blob(stmt, p + 2, path, (int)plen, NULL) != 0 ||
            w->bind_int64(stmt, p + 3, sizes[i]) != 0 || w->bind_int64(stmt, p + 4, mtimes[i]) != 0 ||
            w->bind_int64(stmt, p + 5, nuls[i]) != 0 || w->bind_blob(stmt, p + 6, ext, (int)elen, NULL) != 0)
            goto failed;
        slot++;
        left--;
        if (slot == (stmt == w->insert_many ? WRITER_ROWS : 1)) {
            if (w->step(stmt) != SQL_DONE)
                goto failed;
            w->reset(stmt);
            written += slot;
            slot = 0;
        }
    }
    if (run(w, "COMMIT") != 0) {
        run(w, "ROLLBACK");
        return -1;
    }
    return written;
failed:
    w->reset(stmt);
    run(w, "ROLLBACK");
    return -1;
}

/*
 * Writes, in one transaction, a row of `postings` for each list of a dsh_grams_flush (`len` bytes
 * of `flushed`: a gram, a length and that many bytes of varints, each list in turn). Returns the
 * rows written, or -1 (the transaction rolled back): SQLite failed, or a list's length runs past
 * the end (nothing of a malformed flush is written).
 */
long dsh_grams_writer_postings(struct dsh_writer *w, const uint8_t *flushed, long len)
{
    if (run(w, "BEGIN") != 0)
        return -1;
    long written = 0;
    for (long at = 0; at < len;) {
        uint32_t gram, size;
        if (len - at < 8)
            goto failed;
        memcpy(&gram, flushed + at, 4);
        memcpy(&size, flushed + at + 4, 4);
        if ((uint64_t)size > (uint64_t)(len - at - 8) || size > 0x7FFFFFFF)
            goto failed;
        /* SQLITE_STATIC (NULL): the flush's bytes outlive the step */
        if (w->bind_int64(w->posting, 1, gram) != 0 ||
            w->bind_blob(w->posting, 2, flushed + at + 8, (int)size, NULL) != 0 || w->step(w->posting) != SQL_DONE)
            goto failed;
        w->reset(w->posting);
        written++;
        at += 8 + (long)size;
    }
    if (run(w, "COMMIT") != 0) {
        run(w, "ROLLBACK");
        return -1;
    }
    return written;
failed:
    w->reset(w->posting);
    run(w, "ROLLBACK");
    return -1;
}
