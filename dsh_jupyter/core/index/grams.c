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
 * Below the reader, dsh_grams_join reads glob's and find's lists from the index in one pass, the
 * writer writes a build's rows and posting lists from C, and the time order keeps glob's files
 * sorted by time outside SQLite's indexes (each one's own comment says why).
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
    return 5;
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

/* One list being joined: the rows so far, the top-level entries' counts, what was seen of the
 * lines. dsh_grams_join and dsh_grams_join_times each feed it rows in their order. */
struct joiner {
    char *buf;
    long len, cap, rows;
    int sep, f;
    struct slot *slots;
    long nslots, used_keys;
    char *keys;
    long keys_cap, max_keys;
    long *nkeys;
};

/* 0, or -2: memory ran out. The outputs say "nothing" until joiner_end fills them. */
static int joiner_start(struct joiner *j, int sep, char *keys, long keys_cap, long max_keys, long *nkeys, char **out,
                        long *out_len, int *flags)
{
    *out = NULL;
    *out_len = 0;
    *flags = 0;
    if (!__atomic_load_n(&look_ready, __ATOMIC_ACQUIRE))
        make_look_table(); /* the same bytes whichever thread makes it first */
    memset(j, 0, sizeof *j);
    j->sep = sep;
    j->cap = 1 << 20;
    j->keys = keys;
    j->keys_cap = keys_cap;
    j->max_keys = max_keys;
    j->nkeys = nkeys;
    *nkeys = 0;
    j->nslots = 1;
    while (j->nslots < 2 * max_keys + 2)
        j->nslots <<= 1;
    j->slots = malloc((size_t)j->nslots * sizeof *j->slots);
    j->buf = malloc((size_t)j->cap);
    if (j->slots == NULL || j->buf == NULL)
        return -2;
    for (long i = 0; i < j->nslots; i++)
        j->slots[i].at = -1;
    return 0;
}

/* A row (`m` bytes at `p`, below the cut) onto the list; 0, or -2: memory ran out. */
static int joiner_take(struct joiner *j, const uint8_t *p, long m)
{
    if (j->len + m + 1 > j->cap) {
        long cap = j->cap;
        while (j->len + m + 1 > cap)
            cap *= 2;
        char *grown = realloc(j->buf, (size_t)cap);
        if (grown == NULL)
            return -2;
        j->buf = grown;
        j->cap = cap;
    }
    if (j->rows)
        j->buf[j->len++] = (char)j->sep;
    memcpy(j->buf + j->len, p, (size_t)m);
    j->len += m;
    j->rows++;
    if (m == 0) {
        j->f |= JOIN_LINE_BREAK | JOIN_LOOK;
        return 0;
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
            j->f |= JOIN_NOT_ASCII;
        if (b == '\n')
            j->f |= JOIN_LINE_BREAK;
        if (b != '<' || (i + 1 < m && p[i + 1] == '/'))
            look = 1;
    }
    const uint8_t *first_slash = memchr(p, '/', (size_t)m);
    long slash = first_slash == NULL ? -1 : first_slash - p;
    if (look || p[0] == ' ' || p[m - 1] == ' ' || p[m - 1] == '/' || p[m - 1] == '@')
        j->f |= JOIN_LOOK;
    if (j->f & JOIN_MANY)
        return 0;
    long klen = slash < 0 ? m : slash;
    uint64_t h = hash_of(p, klen);
    long s = (long)(h & (uint64_t)(j->nslots - 1));
    struct slot *slots = j->slots;
    while (slots[s].at >= 0 && !(slots[s].len == klen && memcmp(j->keys + slots[s].at, p, (size_t)klen) == 0))
        s = (s + 1) & (j->nslots - 1);
    if (slots[s].at < 0) {
        if (*j->nkeys >= j->max_keys || j->used_keys + klen + 1 > j->keys_cap) {
            j->f |= JOIN_MANY;
            return 0;
        }
        memcpy(j->keys + j->used_keys, p, (size_t)klen);
        j->keys[j->used_keys + klen] = 0;
        slots[s].at = j->used_keys;
        slots[s].len = klen;
        slots[s].number = *j->nkeys;
        slots[s].count = 0;
        slots[s].dir = 0;
        j->used_keys += klen + 1;
        (*j->nkeys)++;
    }
    slots[s].count++;
    slots[s].dir |= slash >= 0;
    return 0;
}

/* The list handed over (*out, *out_len, the flags, the counts in the order the keys were first
 * met, as they lie in `keys`); the number of rows. */
static long joiner_end(struct joiner *j, char **out, long *out_len, int *flags, int64_t *counts, int8_t *dirs)
{
    if (!(j->f & JOIN_MANY)) {
        for (long i = 0; i < j->nslots; i++) {
            if (j->slots[i].at < 0)
                continue;
            counts[j->slots[i].number] = j->slots[i].count;
            dirs[j->slots[i].number] = j->slots[i].dir;
        }
    } else {
        *j->nkeys = 0;
    }
    *flags = j->f;
    *out = j->buf;
    *out_len = j->len;
    j->buf = NULL;
    return j->rows;
}

static void joiner_free(struct joiner *j)
{
    free(j->buf);
    free(j->slots);
    j->buf = NULL;
    j->slots = NULL;
}

/* joiner_start, and the file `path` opened read-only into *db (a connection of the call's own:
 * no lock taken per step); 0, -1 when SQLite failed, -2 when memory ran out. */
static long join_open(void *const *api, const char *path, void **db, struct joiner *j, int sep, char *keys,
                      long keys_cap, long max_keys, long *nkeys, char **out, long *out_len, int *flags)
{
    if (joiner_start(j, sep, keys, keys_cap, max_keys, nkeys, out, out_len, flags) != 0)
        return -2;
    return ((sql_open_fn)api[0])(path, db, SQL_OPEN_READONLY | SQL_OPEN_NOMUTEX, NULL) != 0 ? -1 : 0;
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
    sql_close_fn close_ = (sql_close_fn)api[1];
    sql_prepare_fn prepare = (sql_prepare_fn)api[2];
    sql_bind_blob_fn bind_blob = (sql_bind_blob_fn)api[3];
    sql_bind_int64_fn bind_int64 = (sql_bind_int64_fn)api[4];
    sql_step_fn step = (sql_step_fn)api[5];
    sql_column_blob_fn column_blob = (sql_column_blob_fn)api[6];
    sql_column_bytes_fn column_bytes = (sql_column_bytes_fn)api[7];
    sql_finalize_fn finalize = (sql_finalize_fn)api[8];
    struct joiner j;
    void *db = NULL, *stmt = NULL;
    long result = join_open(api, db_path, &db, &j, sep, keys, keys_cap, max_keys, nkeys, out, out_len, flags);
    if (result != 0)
        goto done;
    result = -1;
    if (prepare(db, sql, -1, &stmt, NULL) != 0)
        goto done;
    for (int i = 0; i < n; i++) {
        int rc = kinds[i] == 0 ? bind_blob(stmt, i + 1, blobs[i], lens[i], SQL_TRANSIENT)
                               : bind_int64(stmt, i + 1, ints[i]);
        if (rc != 0)
            goto done;
    }
    for (;;) {
        int rc = step(stmt);
        if (rc == SQL_DONE)
            break;
        if (rc != SQL_ROW)
            goto done;
        const uint8_t *path = column_blob(stmt, 0);
        long plen = column_bytes(stmt, 0);
        long at = cut < plen ? cut : plen;
        if (joiner_take(&j, path + at, plen - at) != 0) {
            result = -2;
            goto done;
        }
    }
    result = joiner_end(&j, out, out_len, flags, counts, dirs);
done:
    if (stmt != NULL)
        finalize(stmt);
    if (db != NULL)
        close_(db);
    joiner_free(&j);
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
#define SQL_OPEN_CREATE 0x4

/* Rows one statement inserts: a step runs the statement's program once, and its start (the
 * transaction check, the table and index cursors opened) cost as much as a row's insert itself. */
#define WRITER_ROWS 64

/* Rows of the time order gathered in memory (see the time order's comment, further down). */
struct timed {
    int64_t mtime;
    uint32_t id, len;
    uint64_t at; /* where the path lies in the arena */
};

struct timed_rows {
    struct timed *rows;
    long n, cap;
    uint8_t *arena;
    uint64_t arena_len, arena_cap;
    int64_t max_id;
};

/* 0, -2 when memory ran out, -3 when `id` does not fit in 32 bits (ids start at 1). */
static int timed_add(struct timed_rows *t, int64_t id, int64_t mtime, const void *path, long len)
{
    if (id < 1 || id > 0xFFFFFFFFll || len < 0 || len > 0x7FFFFFFF)
        return -3;
    if (t->n == t->cap) {
        long cap = t->cap ? t->cap * 2 : 65536;
        struct timed *rows = realloc(t->rows, (size_t)cap * sizeof *rows);
        if (rows == NULL)
            return -2;
        t->rows = rows;
        t->cap = cap;
    }
    if (t->arena_len + (uint64_t)len > t->arena_cap) {
        uint64_t cap = t->arena_cap ? t->arena_cap : (1u << 22);
        while (t->arena_len + (uint64_t)len > cap)
            cap *= 2;
        uint8_t *arena = realloc(t->arena, (size_t)cap);
        if (arena == NULL)
            return -2;
        t->arena = arena;
        t->arena_cap = cap;
    }
    if (len)
        memcpy(t->arena + t->arena_len, path, (size_t)len);
    t->rows[t->n++] = (struct timed){mtime, (uint32_t)id, (uint32_t)len, t->arena_len};
    t->arena_len += (uint64_t)len;
    if (id > t->max_id)
        t->max_id = id;
    return 0;
}

static void timed_free(struct timed_rows *t)
{
    free(t->rows);
    free(t->arena);
    memset(t, 0, sizeof *t);
}

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
    struct timed_rows timed; /* the rows inserted, for the build's time order */
    int timed_failed;        /* why they could not be kept (timed_add's answer), or 0 */
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
        run(w, "PRAGMA busy_timeout=30000") != 0 || run(w, "PRAGMA journal_mode=MEMORY") != 0 ||
        run(w, "PRAGMA synchronous=OFF") != 0 || run(w, "PRAGMA cache_size=-16384") != 0 ||
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
    timed_free(&w->timed);
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
        if (!w->timed_failed) /* a batch that fails fails the build: its rows kept here go with it */
            w->timed_failed = timed_add(&w->timed, first_id + i, mtimes[i], path, (long)plen);
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

/*
 * The time order (core/index/store.py's `times`): every file of the index as glob lists it,
 * oldest first and equal times by path, kept as blocks of entries rather than as SQLite indexes.
 *
 * Why it exists: glob reads its files oldest first, and a glob of one extension only that
 * extension's. As SQLite indexes on (time, path) and (extension, time, path) the two took 2.1 s
 * of a million-file build's 3.1 s after the reading, and 3.4 s of its CPU: SQLite's sorter
 * compares whole records wherever the first field ties, and an extension ties for nearly every
 * pair. Sorted here the same million rows take a tenth of that, and a pass over the entries that
 * keeps one extension's reads 27 MB of memory, not a million rows. Changes since the blocks were
 * made are merged in as they are read (dsh_grams_join_times); the keeper makes the blocks again
 * once the changes pass a bound. A build's rows are gathered by the writer as it inserts them
 * (dsh_grams_writer_times); the blocks made again later read the rows from the file
 * (dsh_grams_times_make).
 *
 * An entry: the time (int64), the row id (uint32), the path's length (uint32), all in the
 * machine's order, then the path's bytes.
 */
typedef int64_t (*sql_column_int64_fn)(void *, int);

#define TIMES_HEAD 16

/* A row's time order in memory: its paths lie in the rows' arena. */
static int timed_order(const void *a, const void *b, void *rows_)
{
    const struct timed_rows *t = rows_;
    const struct timed *x = &t->rows[*(const uint32_t *)a], *y = &t->rows[*(const uint32_t *)b];
    if (x->mtime != y->mtime)
        return x->mtime < y->mtime ? -1 : 1;
    int c = memcmp(t->arena + x->at, t->arena + y->at, x->len < y->len ? x->len : y->len);
    if (c != 0)
        return c;
    return (x->len > y->len) - (x->len < y->len);
}

/* The rows' order, by time and then by path, as row numbers (malloc'd; NULL: memory ran out): by
 * time in four passes of a radix sort over 16-bit digits (glibc's qsort, a merge sort through a
 * callback, took 0.25 s of a million rows), then each run of equal times by path. */
static uint32_t *sort_timed(const struct timed_rows *t)
{
    long n = t->n;
    struct keyed {
        uint64_t key; /* the time with its sign bit flipped: unsigned order is the signed order */
        uint32_t row;
    } *a = malloc((size_t)(n ? n : 1) * sizeof *a), *b = malloc((size_t)(n ? n : 1) * sizeof *b);
    uint32_t *count = malloc(65536 * sizeof *count);
    uint32_t *order = malloc((size_t)(n ? n : 1) * sizeof *order);
    if (a == NULL || b == NULL || count == NULL || order == NULL) {
        free(order);
        order = NULL;
        goto done;
    }
    for (long i = 0; i < n; i++)
        a[i] = (struct keyed){(uint64_t)t->rows[i].mtime ^ (1ull << 63), (uint32_t)i};
    for (int shift = 0; shift < 64; shift += 16) {
        memset(count, 0, 65536 * sizeof *count);
        for (long i = 0; i < n; i++)
            count[(a[i].key >> shift) & 0xFFFF]++;
        uint32_t at = 0;
        for (int d = 0; d < 65536; d++) {
            uint32_t c = count[d];
            count[d] = at;
            at += c;
        }
        for (long i = 0; i < n; i++)
            b[count[(a[i].key >> shift) & 0xFFFF]++] = a[i];
        struct keyed *swap = a;
        a = b;
        b = swap;
    }
    for (long i = 0; i < n; i++)
        order[i] = a[i].row;
    for (long i = 0; i < n;) { /* equal times: by path */
        long j = i + 1;
        while (j < n && a[j].key == a[i].key)
            j++;
        if (j - i > 1)
            qsort_r(order + i, (size_t)(j - i), sizeof *order, timed_order, (void *)t);
        i = j;
    }
done:
    free(a);
    free(b);
    free(count);
    return order;
}

/* One block into `times` (`insert` bound and stepped); 0, or -1. */
static int put_block(void *const *api, void *insert, int64_t seq, const uint8_t *block, long len)
{
    if (((sql_bind_int64_fn)api[4])(insert, 1, seq) != 0 ||
        ((sql_bind_blob_fn)api[3])(insert, 2, block, (int)len, NULL) != 0 || ((sql_step_fn)api[5])(insert) != SQL_DONE)
        return -1;
    ((sql_reset_fn)api[10])(insert);
    return 0;
}

/*
 * The rows `t` holds sorted and written as the time order. First, on the index's connection `db`
 * (no transaction open), a read finds the table holds the same rows (their count and largest
 * id); then the blocks go into the file `times_path` (a database of its own, made if missing:
 * written while a writer on the index file, the build's path index, works), `times` replaced by
 * blocks of about `block_bytes` and `info`'s `times_max` set to the largest id, in one
 * transaction; last, on `db`, in one transaction once the largest id is found unchanged, `gone`
 * emptied and meta's `times_max` set to it (a row with a larger id came later: the reader merges
 * it in; a reader trusts the blocks only while the two `times_max` agree). Returns the entries
 * written, -1 when SQLite failed or the rows are not the table's, -2 when memory ran out.
 */
static long times_write(void *const *api, void *db, const char *times_path, struct timed_rows *t, long block_bytes)
{
    sql_prepare_fn prepare = (sql_prepare_fn)api[2];
    sql_step_fn step = (sql_step_fn)api[5];
    sql_finalize_fn finalize = (sql_finalize_fn)api[8];
    sql_exec_fn exec = (sql_exec_fn)api[9];
    sql_column_int64_fn column_int64 = (sql_column_int64_fn)api[11];
    void *check = NULL, *insert = NULL, *meta = NULL, *tdb = NULL;
    uint8_t *block = NULL;
    long result = -2, block_cap = block_bytes, n = t->n;
    int begun = 0, t_begun = 0;
    uint32_t *order = sort_timed(t); /* before any lock: another writer may work meanwhile */
    block = malloc((size_t)block_cap);
    if (order == NULL || block == NULL)
        goto done;
    result = -1;
    if (exec(db, "BEGIN", NULL, NULL, NULL) != 0)
        goto done;
    begun = 1;
    if (prepare(db, "SELECT count(*), coalesce(max(id), 0) FROM files", -1, &check, NULL) != 0 ||
        step(check) != SQL_ROW || column_int64(check, 0) != n || column_int64(check, 1) != t->max_id)
        goto done;
    finalize(check);
    check = NULL;
    if (exec(db, "COMMIT", NULL, NULL, NULL) != 0)
        goto done;
    begun = 0;
    if (((sql_open_fn)api[0])(times_path, &tdb, SQL_OPEN_READWRITE | SQL_OPEN_CREATE | SQL_OPEN_NOMUTEX, NULL) != 0 ||
        exec(tdb, "PRAGMA busy_timeout=30000", NULL, NULL, NULL) != 0 ||
        exec(tdb, "PRAGMA journal_mode=MEMORY", NULL, NULL, NULL) != 0 ||
        exec(tdb, "PRAGMA synchronous=OFF", NULL, NULL, NULL) != 0 ||
        exec(tdb,
             "CREATE TABLE IF NOT EXISTS times(seq INTEGER PRIMARY KEY, block BLOB NOT NULL);"
             "CREATE TABLE IF NOT EXISTS info(key TEXT PRIMARY KEY, value)",
             NULL, NULL, NULL) != 0 ||
        exec(tdb, "BEGIN IMMEDIATE", NULL, NULL, NULL) != 0)
        goto done;
    t_begun = 1;
    if (exec(tdb, "DELETE FROM times", NULL, NULL, NULL) != 0 ||
        prepare(tdb, "INSERT INTO times(seq, block) VALUES (?, ?)", -1, &insert, NULL) != 0 ||
        prepare(tdb, "INSERT OR REPLACE INTO info(key, value) VALUES ('times_max', ?)", -1, &meta, NULL) != 0)
        goto done;
    long used = 0;
    int64_t seq = 0;
    for (long i = 0; i < n; i++) {
        const struct timed *r = &t->rows[order[i]];
        long need = TIMES_HEAD + (long)r->len;
        if (used && used + need > block_cap) {
            if (put_block(api, insert, seq++, block, used) != 0)
                goto done;
            used = 0;
        }
        if (need > block_cap) { /* a path longer than a block: a block of its own */
            uint8_t *grown = realloc(block, (size_t)need);
            if (grown == NULL) {
                result = -2;
                goto done;
            }
            block = grown;
            block_cap = need;
        }
        memcpy(block + used, &r->mtime, 8);
        memcpy(block + used + 8, &r->id, 4);
        memcpy(block + used + 12, &r->len, 4);
        if (r->len)
            memcpy(block + used + TIMES_HEAD, t->arena + r->at, r->len);
        used += need;
    }
    if (used && put_block(api, insert, seq, block, used) != 0)
        goto done;
    if (((sql_bind_int64_fn)api[4])(meta, 1, t->max_id) != 0 || step(meta) != SQL_DONE ||
        exec(tdb, "COMMIT", NULL, NULL, NULL) != 0)
        goto done;
    t_begun = 0;
    finalize(meta);
    meta = NULL;
    if (exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != 0)
        goto done;
    begun = 1;
    if (prepare(db, "SELECT coalesce(max(id), 0) FROM files", -1, &check, NULL) != 0 || step(check) != SQL_ROW ||
        column_int64(check, 0) != t->max_id ||
        prepare(db, "INSERT OR REPLACE INTO meta(key, value) VALUES ('times_max', ?)", -1, &meta, NULL) != 0 ||
        exec(db, "DELETE FROM gone", NULL, NULL, NULL) != 0 ||
        ((sql_bind_int64_fn)api[4])(meta, 1, t->max_id) != 0 || step(meta) != SQL_DONE)
        goto done;
    finalize(check);
    check = NULL;
    if (exec(db, "COMMIT", NULL, NULL, NULL) != 0)
        goto done;
    begun = 0;
    result = n;
done:
    if (check != NULL)
        finalize(check);
    if (insert != NULL)
        finalize(insert);
    if (meta != NULL)
        finalize(meta);
    if (t_begun)
        exec(tdb, "ROLLBACK", NULL, NULL, NULL);
    if (tdb != NULL)
        ((sql_close_fn)api[1])(tdb);
    if (begun)
        exec(db, "ROLLBACK", NULL, NULL, NULL);
    free(order);
    free(block);
    return result;
}

/*
 * Makes the time order of the index file `db_path` again, into `times_path`, on connections of
 * its own: every row of `files` read (one read transaction), then sorted and written
 * (times_write). Returns the entries written, -1 when SQLite failed or the rows changed between,
 * -2 when memory ran out, -3 when an id does not fit in 32 bits.
 */
long dsh_grams_times_make(void *const *api, const char *db_path, const char *times_path, long block_bytes)
{
    sql_step_fn step = (sql_step_fn)api[5];
    sql_column_int64_fn column_int64 = (sql_column_int64_fn)api[11];
    sql_exec_fn exec = (sql_exec_fn)api[9];
    void *db = NULL, *select = NULL;
    struct timed_rows t = {0};
    long result = -1;
    int begun = 0;
    /* the busy timeout first: any other statement reads the schema, which waits for a writer */
    if (((sql_open_fn)api[0])(db_path, &db, SQL_OPEN_READWRITE | SQL_OPEN_NOMUTEX, NULL) != 0 ||
        exec(db, "PRAGMA busy_timeout=30000", NULL, NULL, NULL) != 0 ||
        exec(db, "PRAGMA synchronous=OFF", NULL, NULL, NULL) != 0 || exec(db, "BEGIN", NULL, NULL, NULL) != 0)
        goto done;
    begun = 1;
    if (((sql_prepare_fn)api[2])(db, "SELECT id, mtime_ns, path FROM files", -1, &select, NULL) != 0)
        goto done;
    for (;;) {
        int rc = step(select);
        if (rc == SQL_DONE)
            break;
        if (rc != SQL_ROW)
            goto done;
        int rc2 = timed_add(&t, column_int64(select, 0), column_int64(select, 1),
                            ((sql_column_blob_fn)api[6])(select, 2), ((sql_column_bytes_fn)api[7])(select, 2));
        if (rc2 != 0) {
            result = rc2;
            goto done;
        }
    }
    ((sql_finalize_fn)api[8])(select);
    select = NULL;
    /* the read ends, so that a writer on another connection (the build's path index, made
     * meanwhile) may commit while the rows are sorted; times_write waits for it */
    if (exec(db, "COMMIT", NULL, NULL, NULL) != 0)
        goto done;
    begun = 0;
    result = times_write(api, db, times_path, &t, block_bytes);
done:
    if (select != NULL)
        ((sql_finalize_fn)api[8])(select);
    if (begun)
        exec(db, "ROLLBACK", NULL, NULL, NULL);
    if (db != NULL)
        ((sql_close_fn)api[1])(db);
    timed_free(&t);
    return result;
}

/*
 * The time order of a build, from the rows this writer inserted and `extra` (`extra_len` bytes
 * of entries in the time order's form: the rows the keeper's connection inserted), sorted and
 * written into `times_path` (times_write, on the writer's connection: it finds the table holds
 * exactly these rows, or writes nothing). Returns as times_write does; -3 when an id does not
 * fit in 32 bits.
 */
long dsh_grams_writer_times(struct dsh_writer *w, const char *times_path, const uint8_t *extra, long extra_len,
                            long block_bytes)
{
    if (w->timed_failed)
        return w->timed_failed;
    for (long at = 0; at < extra_len;) {
        int64_t mtime;
        uint32_t id, len;
        if (extra_len - at < TIMES_HEAD)
            return -1;
        memcpy(&mtime, extra + at, 8);
        memcpy(&id, extra + at + 8, 4);
        memcpy(&len, extra + at + 12, 4);
        if ((uint64_t)len > (uint64_t)(extra_len - at - TIMES_HEAD))
            return -1;
        int rc = timed_add(&w->timed, id, mtime, extra + at + TIMES_HEAD, (long)len);
        if (rc != 0)
            return rc;
        at += TIMES_HEAD + (long)len;
    }
    return times_write(w->api, w->db, times_path, &w->timed, block_bytes);
}

/* An entry of a block, or of the changes merged in: 1 and its fields, 0 at the end, -1 when
 * it runs past the end (the blocks are not what dsh_grams_times_make wrote). */
static int entry_at(const uint8_t *p, long len, long *at, struct timed *e, const uint8_t **path)
{
    if (*at >= len)
        return 0;
    if (len - *at < TIMES_HEAD)
        return -1;
    memcpy(&e->mtime, p + *at, 8);
    memcpy(&e->id, p + *at + 8, 4);
    memcpy(&e->len, p + *at + 12, 4);
    if ((uint64_t)e->len > (uint64_t)(len - *at - TIMES_HEAD))
        return -1;
    *path = p + *at + TIMES_HEAD;
    *at += TIMES_HEAD + (long)e->len;
    return 1;
}

/* Whether the entry `x` (its path at `xp`) sorts before `y`: by time, then by path's bytes. */
static int entry_before(const struct timed *x, const uint8_t *xp, const struct timed *y, const uint8_t *yp)
{
    if (x->mtime != y->mtime)
        return x->mtime < y->mtime;
    int c = memcmp(xp, yp, x->len < y->len ? x->len : y->len);
    return c < 0 || (c == 0 && x->len < y->len);
}

static int wanted(const uint8_t *path, uint32_t len, const uint8_t *prefix, long prefix_len, const uint8_t *ends,
                  const long *end_lens, int nends)
{
    if ((long)len < prefix_len || memcmp(path, prefix, (size_t)prefix_len) != 0)
        return 0;
    if (nends == 0)
        return 1;
    const uint8_t *e = ends;
    for (int i = 0; i < nends; e += end_lens[i], i++)
        if ((long)len - prefix_len >= end_lens[i] && memcmp(path + len - end_lens[i], e, (size_t)end_lens[i]) == 0)
            return 1;
    return 0;
}

/*
 * The files below `prefix` (`prefix_len` bytes, ending in "/", or none) ending in one of the
 * `nends` endings (their bytes one after another in `ends`, their lengths in `end_lens`; none:
 * every file), oldest first and equal times by path, joined as dsh_grams_join joins a query's
 * rows (each from byte `prefix_len` on): the entries of `times` in the file `times_path`
 * (read-only; only when its `times_max` is the index's, `times_max`) but those whose id is set
 * in the bitmap `gone` (`gone_bytes`; bit i of byte i/8:
 * the id i), merged with the entries of `added` (`added_len` bytes, in the same form and
 * order: the rows since, their ids not read). Returns the number of rows, -1 when SQLite failed
 * or an entry runs past its block, -2 when memory ran out.
 */
long dsh_grams_join_times(void *const *api, const char *times_path, int64_t times_max, const uint8_t *prefix,
                          long prefix_len,
                          const uint8_t *ends, const long *end_lens, int nends, const uint8_t *gone, long gone_bytes,
                          const uint8_t *added, long added_len, int sep, char **out, long *out_len, int *flags,
                          char *keys, long keys_cap, int64_t *counts, int8_t *dirs, long max_keys, long *nkeys)
{
    sql_step_fn step = (sql_step_fn)api[5];
    sql_column_blob_fn column_blob = (sql_column_blob_fn)api[6];
    sql_column_bytes_fn column_bytes = (sql_column_bytes_fn)api[7];
    struct joiner j;
    void *db = NULL, *stmt = NULL;
    long result = join_open(api, times_path, &db, &j, sep, keys, keys_cap, max_keys, nkeys, out, out_len, flags);
    if (result != 0)
        goto done;
    result = -1;
    if (((sql_prepare_fn)api[2])(db, "SELECT value FROM info WHERE key = 'times_max'", -1, &stmt, NULL) != 0 ||
        step(stmt) != SQL_ROW || ((sql_column_int64_fn)api[11])(stmt, 0) != times_max)
        goto done; /* no blocks, or blocks of another time than the index's */
    ((sql_finalize_fn)api[8])(stmt);
    stmt = NULL;
    if (((sql_prepare_fn)api[2])(db, "SELECT block FROM times ORDER BY seq", -1, &stmt, NULL) != 0)
        goto done;
    const uint8_t *block = NULL, *a_path = NULL, *b_path = NULL;
    long block_len = 0, block_at = 0, added_at = 0;
    struct timed a, b;
    int has_a = 0, blocks_done = 0, has_b = entry_at(added, added_len, &added_at, &b, &b_path);
    if (has_b < 0)
        goto done;
    for (;;) {
        while (!has_a && !blocks_done) { /* the next entry of the blocks that is still a file's */
            int got = block == NULL ? 0 : entry_at(block, block_len, &block_at, &a, &a_path);
            if (got < 0)
                goto done;
            if (got == 0) {
                int rc = step(stmt); /* never again once done: a step after the end starts over */
                if (rc == SQL_DONE) {
                    blocks_done = 1;
                    break;
                }
                if (rc != SQL_ROW)
                    goto done;
                block = column_blob(stmt, 0);
                block_len = column_bytes(stmt, 0);
                block_at = 0;
                if (block == NULL)
                    block = (const uint8_t *)"";
                continue;
            }
            if ((long)(a.id >> 3) < gone_bytes && (gone[a.id >> 3] >> (a.id & 7)) & 1)
                continue;
            has_a = 1;
        }
        if (!has_a && !has_b)
            break;
        const uint8_t *path;
        uint32_t len;
        if (has_a && (!has_b || entry_before(&a, a_path, &b, b_path))) {
            path = a_path;
            len = a.len;
            has_a = 0;
        } else {
            path = b_path;
            len = b.len;
            has_b = entry_at(added, added_len, &added_at, &b, &b_path);
            if (has_b < 0)
                goto done;
        }
        if (wanted(path, len, prefix, prefix_len, ends, end_lens, nends) &&
            joiner_take(&j, path + prefix_len, (long)len - prefix_len) != 0) {
            result = -2;
            goto done;
        }
    }
    result = joiner_end(&j, out, out_len, flags, counts, dirs);
done:
    if (stmt != NULL)
        ((sql_finalize_fn)api[8])(stmt);
    if (db != NULL)
        ((sql_close_fn)api[1])(db);
    joiner_free(&j);
    return result;
}
