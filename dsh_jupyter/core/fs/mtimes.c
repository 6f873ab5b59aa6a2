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
 * AT_SYMLINK_NOFOLLOW, and only a regular file is dated. Anything else is DSH_NONE. The folders
 * of the previous path are kept open while paths share them (rg lists a folder's files in runs)
 * and all are closed before returning. It reads only `buf`, writes only `out`, keeps no state
 * between calls and allocates nothing.
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
#define MAX_DEPTH 2048 /* a path rg can report (shorter than PATH_MAX) has fewer components */
#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

/* Which build of this file a library is: core/fs/mtimes.py loads only the one it was written
 * for (named libmtimes.so.N after it), so a library left from an older build is never called
 * with other arguments. Change it with dsh_mtimes' arguments or meaning, and ABI there too. */
int dsh_mtimes_abi(void)
{
    return 1;
}

/* Failures that mean "no such folder beneath the root" (Rechecker.folder's list); any other
 * (out of descriptors, out of memory) is the caller's to raise. */
static int names_no_folder(int e)
{
    return e == ENOENT || e == ENOTDIR || e == ELOOP || e == EACCES || e == EPERM || e == ENAMETOOLONG;
}

static void close_from(int *fds, int from, int depth)
{
    for (int k = from; k < depth; k++)
        if (fds[k] >= 0)
            close(fds[k]);
}

/*
 * buf[0:len] holds NUL-ended paths relative to root_fd, each with or without a leading "./".
 * Writes one time (ns) or DSH_NONE per path into out, at most cap of them. Returns the number
 * written, or -errno if a folder could not be opened for a reason other than its absence
 * (nothing is left open either way).
 */
long dsh_mtimes(int root_fd, const char *buf, long len, int64_t *out, long cap)
{
    int fds[MAX_DEPTH];          /* fds[k]: the folder of the first k+1 components held; -1: none */
    const char *names[MAX_DEPTH]; /* where each held component lies in buf, and its size */
    long sizes[MAX_DEPTH];
    int depth = 0;               /* components held */
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
        if (slash && slash > path) {
            /* the folder path[0:slash], split as Rechecker.folder splits it: an empty first
             * component is the root itself ("/x/leaf" is x/leaf), any other names no folder */
            const char *c = path, *end = slash;
            int k = 0;
            if (*c == '/')
                c++;
            for (;;) {
                const char *stop = memchr(c, '/', (size_t)(end - c));
                if (!stop)
                    stop = end;
                long n = stop - c;
                if (k < depth && sizes[k] == n && memcmp(names[k], c, (size_t)n) == 0) {
                    fd = fds[k];
                } else {
                    close_from(fds, k, depth);
                    depth = k;
                    if (k >= MAX_DEPTH) {
                        close_from(fds, 0, depth);
                        return -ENAMETOOLONG;
                    }
                    int opened = -1;
                    int no_name = n == 0 || n > 255 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.');
                    if (!no_name) {
                        memcpy(name, c, (size_t)n);
                        name[n] = '\0';
                        opened = openat(fd, name, DIR_FLAGS);
                        if (opened < 0 && !names_no_folder(errno)) {
                            int e = errno;
                            close_from(fds, 0, depth);
                            return -e;
                        }
                    }
                    fds[k] = opened;
                    names[k] = c;
                    sizes[k] = n;
                    depth = k + 1;
                    fd = opened;
                }
                k++;
                if (fd < 0 || stop == end)
                    break;
                c = stop + 1;
            }
        }
        out[count] = DSH_NONE;
        if (fd >= 0 && leaf_size > 0 && leaf_size <= 255) {
            memcpy(name, leaf, (size_t)leaf_size);
            name[leaf_size] = '\0';
            if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
                out[count] = (int64_t)st.st_mtim.tv_sec * 1000000000LL + (int64_t)st.st_mtim.tv_nsec;
        }
        count++;
    }
    close_from(fds, 0, depth);
    return count;
}
