/*
 * glob's dater in C: the modification time of each path of a block of rg's `--files --null`
 * output, looked up beneath the search root's descriptor one name at a time, no symlink followed.
 *
 * Why it exists: glob answers oldest first, so every path it lists must be dated. In Python a
 * date costs 2-4 us a path (os.stat builds a full stat_result, three times as float and as int);
 * the system call itself is about 1 us. On a tree of 60,000 matches that difference is the whole
 * gap to `rg --sort=modified`. This loop does only the system calls, and ctypes releases the
 * interpreter while it runs, so rg's walk and the server's other threads go on meanwhile.
 *
 * It answers exactly what `Rechecker.mtimes` (core/rg/recheck.py) answers for the same paths:
 * a path's folder is opened from the root one component at a time with O_NOFOLLOW|O_DIRECTORY
 * (a component "", "." or ".." names no folder), its last name is stat'ed with
 * AT_SYMLINK_NOFOLLOW, and only a regular file is dated. A path that is not one (gone, a
 * symlink on the way, not a regular file) is DSH_NONE; one that could not be looked at (a folder
 * on the way that may not be entered, no descriptor left) is DSH_UNDATED, so the caller can say
 * how many it left out. The folders of the previous path are kept open while paths share them
 * (rg lists a folder's files in runs), at most HELD_MAX at once however deep the tree (no
 * recursion, no array as deep as a path), and all are closed before returning. It reads only
 * `buf`, writes only `out`, keeps no state between calls and allocates nothing.
 *
 * Built into libmtimes.so.N when the package is built (hatch_build.py), loaded by core/fs/mtimes.py;
 * where it is missing, glob dates in Python (the same answer, slower), and says so in the log.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DSH_NONE INT64_MIN
#define DSH_UNDATED (INT64_MIN + 1)
#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

/* At most this many folders are held open at once: far deeper than an ordinary tree (a
 * checkout's deepest path has about 20 folders), so within it every folder shared with the
 * previous path is reused, and two dating threads at once hold 128, well inside the common
 * limit of 1,024 descriptors. Deeper, the window slides: the shallowest held folder is closed as
 * the next one is opened. HELD in core/rg/recheck.py says the same. */
#define HELD_MAX 64

/* Which build of this file a library is: core/fs/mtimes.py loads only the one it was written
 * for (named libmtimes.so.N after it), so a library left from an older build is never called
 * with other arguments. Change it with dsh_mtimes' arguments or meaning, and ABI there too. */
int dsh_mtimes_abi(void)
{
    return 2;
}

/* Failures that mean "no such file or folder beneath the root" (Rechecker's list): the path is
 * not there. Any other (no permission, out of descriptors, out of memory) means it could not be
 * looked at: DSH_UNDATED. */
static int names_nothing(int e)
{
    return e == ENOENT || e == ENOTDIR || e == ELOOP || e == ENAMETOOLONG;
}

/* The folders held: levels lo..top-1, level k (the folder of the first k+1 components of the
 * previous path's folder) in fds[k % HELD_MAX]. */
struct held {
    int fds[HELD_MAX];
    long lo, top;
};

static void close_above(struct held *h, long keep) /* close levels keep.. */
{
    long from = keep > h->lo ? keep : h->lo;
    for (long k = from; k < h->top; k++)
        close(h->fds[k % HELD_MAX]);
    if (h->top > from)
        h->top = from;
    if (h->top <= h->lo)
        h->lo = h->top = 0;
}

static void close_below(struct held *h, long keep) /* close levels ..keep-1 */
{
    for (; h->lo < keep && h->lo < h->top; h->lo++)
        close(h->fds[h->lo % HELD_MAX]);
}

/* The next component of a folder path from *c (before end): its start, and its size in *n;
 * *c moves past it and its slash. */
static const char *component(const char **c, const char *end, long *n)
{
    const char *start = *c;
    const char *stop = memchr(start, '/', (size_t)(end - start));
    if (!stop)
        stop = end;
    *n = stop - start;
    *c = stop < end ? stop + 1 : end + 1; /* end + 1: no component left */
    return start;
}

static int no_name(const char *c, long n)
{
    return n == 0 || n > 255 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.');
}

/*
 * buf[0:len] holds NUL-ended paths relative to root_fd, each with or without a leading "./".
 * Writes one time (ns), DSH_NONE (not a regular file beneath the root) or DSH_UNDATED (a folder
 * on the way, or the file, could not be looked at: no permission, out of descriptors) per path
 * into out, at most cap of them. Returns the number written; nothing is left open.
 *
 * A path's folder is reached from the deepest held folder it shares with the previous path's,
 * one component at a time; held folders deeper than the one it needs are closed first, and only
 * HELD_MAX are held at once (a deeper folder is reached hand over hand). A folder it needs above
 * the held ones is reached from the root again: never by "..", never by a path string.
 */
long dsh_mtimes(int root_fd, const char *buf, long len, int64_t *out, long cap)
{
    struct held h = {.lo = 0, .top = 0};
    const char *prev = NULL, *prev_end = NULL; /* the previous path's folder, as components */
    long depth = 0;   /* levels of prev walked: the first `reached` are folders held or passed */
    long reached = 0; /* == depth, or depth - 1 when level depth - 1 could not be opened */
    int64_t failed = 0; /* why level depth - 1 was not reached: DSH_NONE or DSH_UNDATED */
    char name[256];
    struct stat st;
    long count = 0, at = 0;

    while (at < len && count < cap) {
        const char *path = buf + at;
        long size = (long)strnlen(path, (size_t)(len - at));
        at += size + 1;
        if (size >= 2 && path[0] == '.' && path[1] == '/') {
            path += 2;
            size -= 2;
        }
        const char *slash = size ? memrchr(path, '/', (size_t)size) : NULL;
        const char *leaf = slash ? slash + 1 : path;
        long leaf_size = size - (leaf - path);
        int fd = root_fd;
        int64_t answer = DSH_NONE;
        int look = 1; /* the leaf is to be looked up in fd */
        if (slash && slash > path) {
            /* the folder path[0:slash], split as Rechecker splits it: an empty first component
             * is the root itself ("/x/leaf" is x/leaf), any other names no folder */
            const char *c = path[0] == '/' ? path + 1 : path, *end = slash;
            const char *p = prev, *p_end = prev_end;
            /* the components it shares with the previous path's folder */
            long common = 0, n = 0;
            int same = 1;
            const char *walk = c;
            while (walk <= end) {
                long cn, pn = 0;
                const char *cc = component(&walk, end, &cn);
                n++;
                if (same && common < depth && p <= p_end) {
                    const char *pc = component(&p, p_end, &pn);
                    if (pn == cn && memcmp(pc, cc, (size_t)cn) == 0) {
                        common++;
                        continue;
                    }
                }
                same = 0;
            }
            if (common >= depth && reached < depth) {
                answer = failed; /* through the level that failed before */
                look = 0;
            } else if (common == n && n <= reached && n - 1 >= h.lo && n - 1 < h.top) {
                fd = h.fds[(n - 1) % HELD_MAX]; /* the previous folder or one above it, held */
            } else {
                /* reach level n - 1 from the deepest shared level held, else from the root */
                long from = common < reached ? common : reached;
                long k = 0;
                if (from > 0 && from - 1 >= h.lo && from - 1 < h.top) {
                    close_above(&h, from);
                    fd = h.fds[(from - 1) % HELD_MAX];
                    k = from;
                } else {
                    close_above(&h, 0);
                    fd = root_fd;
                }
                walk = c;
                for (long skip = 0; skip < k; skip++) {
                    long cn;
                    component(&walk, end, &cn);
                }
                for (; k < n; k++) {
                    long cn;
                    const char *cc = component(&walk, end, &cn);
                    int opened = -1, e = ENOENT;
                    if (!no_name(cc, cn)) {
                        if (h.top - h.lo == HELD_MAX)
                            close_below(&h, h.lo + 1); /* never the folder it opens from: that is top - 1 */
                        memcpy(name, cc, (size_t)cn);
                        name[cn] = '\0';
                        opened = openat(fd, name, DIR_FLAGS);
                        e = errno;
                        if (opened < 0 && (e == EMFILE || e == ENFILE) && h.top - h.lo > 1) {
                            close_below(&h, h.top - 1); /* keep only the folder it opens from */
                            opened = openat(fd, name, DIR_FLAGS);
                            e = errno;
                        }
                    }
                    if (opened < 0) {
                        answer = failed = names_nothing(e) ? DSH_NONE : DSH_UNDATED;
                        look = 0;
                        break;
                    }
                    h.fds[h.top % HELD_MAX] = opened;
                    h.top++;
                    fd = opened;
                }
                prev = c;
                prev_end = end;
                depth = k < n ? k + 1 : n;
                reached = k;
            }
        }
        if (look && leaf_size > 0 && leaf_size <= 255) {
            memcpy(name, leaf, (size_t)leaf_size);
            name[leaf_size] = '\0';
            if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
                if (S_ISREG(st.st_mode))
                    answer = (int64_t)st.st_mtim.tv_sec * 1000000000LL + (int64_t)st.st_mtim.tv_nsec;
            } else if (!names_nothing(errno)) {
                answer = DSH_UNDATED;
            }
        }
        out[count++] = answer;
    }
    close_above(&h, 0);
    return count;
}
