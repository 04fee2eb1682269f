/* Errors, checked allocation, interned strings, string buffers and file helpers. */
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

int ls_vfail(ls_error *err, const char *fmt, va_list ap)
{
    if (err) vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    return -1;
}

int ls_fail(ls_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ls_vfail(err, fmt, ap);
    va_end(ap);
    return -1;
}

int ls_fail_prefix(ls_error *err, const char *fmt, ...)
{
    if (!err) return -1;
    char prefix[LS_ERR_MAX / 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    size_t pl = strlen(prefix);
    memmove(err->msg + pl + 2, err->msg, LS_ERR_MAX - pl - 2);
    err->msg[LS_ERR_MAX - 1] = 0;
    memcpy(err->msg, prefix, pl);
    err->msg[pl] = ':';
    err->msg[pl + 1] = ' ';
    return -1;
}

static void out_of_memory(size_t n)
{
    fprintf(stderr, "lowerscope: out of memory (asked for %zu bytes)\n", n);
    exit(3);
}

void *ls_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) out_of_memory(n);
    return p;
}

void *ls_calloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p) out_of_memory(count * size);
    return p;
}

void *ls_realloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) out_of_memory(n);
    return q;
}

char *ls_strdup(const char *s)
{
    return ls_strndup(s, strlen(s));
}

char *ls_strndup(const char *s, size_t n)
{
    char *d = ls_malloc(n + 1);
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

void *ls_alloc_aligned(size_t n)
{
    /* Round up so the allocation size is a multiple of the alignment; refuse absurd sizes
     * instead of letting the allocator abort. */
    if (n > ((size_t)1 << 46)) return NULL;
    void *p = NULL;
    size_t sz = (n + 63) & ~(size_t)63;
    if (posix_memalign(&p, 64, sz ? sz : 64) != 0) return NULL;
    return p;
}

void ls_free_aligned(void *p)
{
    free(p);
}

/* ---- interned strings: open addressing, power-of-two table, XXH3 hashes (loading a big
 * program interns every name and stack trace: the hash has to be fast on long strings). A load
 * interns hundreds of thousands of strings, so the table's entries are 16 bytes and the strings
 * are packed into large blocks rather than given a malloc each. */

typedef struct intern_entry {
    const char *s;
    uint32_t len;
    uint32_t hash; /* the low half of the XXH3 hash, which also picks the slot */
} intern_entry;

typedef struct intern_block {
    struct intern_block *next;
    size_t used, cap;
    char data[];
} intern_block;

#define INTERN_BLOCK ((size_t)256 << 10)

static struct {
    intern_entry *slots;
    size_t cap, used;
    intern_block *blocks; /* the first is being filled */
} pool;

static void pool_grow(void)
{
    size_t ncap = pool.cap ? pool.cap * 2 : 4096;
    intern_entry *ns = ls_calloc(ncap, sizeof *ns);
    for (size_t i = 0; i < pool.cap; i++) {
        if (!pool.slots[i].s) continue;
        size_t j = pool.slots[i].hash & (ncap - 1);
        while (ns[j].s) j = (j + 1) & (ncap - 1);
        ns[j] = pool.slots[i];
    }
    free(pool.slots);
    pool.slots = ns;
    pool.cap = ncap;
}

/* A NUL-terminated copy of s in the blocks; a long string gets a block of its own, behind the
 * one being filled. */
static const char *pool_store(const char *s, size_t n)
{
    intern_block *b = pool.blocks;
    if (!b || b->cap - b->used <= n) {
        bool own = n >= INTERN_BLOCK / 4;
        b = ls_malloc(sizeof *b + (own ? n + 1 : INTERN_BLOCK));
        b->used = 0;
        b->cap = own ? n + 1 : INTERN_BLOCK;
        if (own && pool.blocks) {
            b->next = pool.blocks->next;
            pool.blocks->next = b;
        } else {
            b->next = pool.blocks;
            pool.blocks = b;
        }
    }
    char *d = b->data + b->used;
    memcpy(d, s, n);
    d[n] = 0;
    b->used += n + 1;
    return d;
}

const char *ls_intern_n(const char *s, size_t n)
{
    if (!s) return NULL;
    if (n >= UINT32_MAX) {
        fprintf(stderr, "lowerscope: a name of %zu bytes is more than lowerscope keeps\n", n);
        exit(3);
    }
    if ((pool.used + 1) * 2 > pool.cap) pool_grow();
    uint64_t h = XXH3_64bits(s, n);
    size_t j = h & (pool.cap - 1);
    while (pool.slots[j].s) {
        intern_entry *e = &pool.slots[j];
        if (e->hash == (uint32_t)h && e->len == n && memcmp(e->s, s, n) == 0) return e->s;
        j = (j + 1) & (pool.cap - 1);
    }
    pool.slots[j].s = pool_store(s, n);
    pool.slots[j].len = (uint32_t)n;
    pool.slots[j].hash = (uint32_t)h;
    pool.used++;
    return pool.slots[j].s;
}

const char *ls_intern(const char *s)
{
    return s ? ls_intern_n(s, strlen(s)) : NULL;
}

const char *ls_internf(const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return ls_intern("");
    if ((size_t)n < sizeof small) return ls_intern_n(small, (size_t)n);
    char *big = ls_malloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    const char *r = ls_intern_n(big, (size_t)n);
    free(big);
    return r;
}

void ls_intern_release_all(void)
{
    while (pool.blocks) {
        intern_block *next = pool.blocks->next;
        free(pool.blocks);
        pool.blocks = next;
    }
    free(pool.slots);
    pool.slots = NULL;
    pool.cap = pool.used = 0;
}

/* ---- string buffers */

static void buf_reserve(ls_buf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap) return;
    size_t nc = b->cap ? b->cap : 64;
    while (nc < b->len + extra + 1) nc *= 2;
    b->s = ls_realloc(b->s, nc);
    b->cap = nc;
}

void ls_buf_putn(ls_buf *b, const char *s, size_t n)
{
    buf_reserve(b, n);
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}

void ls_buf_putc(ls_buf *b, char c)
{
    ls_buf_putn(b, &c, 1);
}

void ls_buf_puts(ls_buf *b, const char *s)
{
    ls_buf_putn(b, s, strlen(s));
}

void ls_buf_printf(ls_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n <= 0) return;
    buf_reserve(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void ls_buf_json_str(ls_buf *b, const char *s)
{
    if (!s) {
        ls_buf_puts(b, "null");
        return;
    }
    ls_buf_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': ls_buf_puts(b, "\\\""); break;
        case '\\': ls_buf_puts(b, "\\\\"); break;
        case '\n': ls_buf_puts(b, "\\n"); break;
        case '\r': ls_buf_puts(b, "\\r"); break;
        case '\t': ls_buf_puts(b, "\\t"); break;
        default:
            if (*p < 0x20) ls_buf_printf(b, "\\u%04x", *p);
            else ls_buf_putc(b, (char)*p);
        }
    }
    ls_buf_putc(b, '"');
}

char *ls_buf_take(ls_buf *b)
{
    char *s = b->s ? b->s : ls_strdup("");
    b->s = NULL;
    b->len = b->cap = 0;
    return s;
}

void ls_buf_free(ls_buf *b)
{
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
}

/* ---- files */

int ls_read_file(const char *path, size_t limit, uint8_t **data, size_t *size, ls_error *err)
{
    *data = NULL;
    *size = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return ls_fail(err, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return ls_fail(err, "%s: cannot stat: %s", path, strerror(errno));
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return ls_fail(err, "%s: is a folder, not a file", path);
    }
    if ((uint64_t)st.st_size > limit) {
        close(fd);
        return ls_fail(err, "%s: file is %lld bytes, more than the %zu this reader accepts", path,
                       (long long)st.st_size, limit);
    }
    size_t n = (size_t)st.st_size;
    uint8_t *buf = ls_malloc(n + 1);
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            int e = errno;
            free(buf);
            close(fd);
            return ls_fail(err, "%s: read failed: %s", path, r == 0 ? "file shrank while reading" : strerror(e));
        }
        got += (size_t)r;
    }
    close(fd);
    buf[n] = 0; /* lets text readers treat the buffer as a C string */
    *data = buf;
    *size = n;
    return 0;
}

int ls_write_file_atomic(const char *path, const void *data, size_t size, ls_error *err)
{
    size_t plen = strlen(path);
    char *tmp = ls_malloc(plen + 32);
    snprintf(tmp, plen + 32, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        return ls_fail(err, "%s: cannot create a temporary file next to it: %s", path, strerror(e));
    }
    const uint8_t *p = data;
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(fd, p + done, size - done);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) {
            int e = errno;
            close(fd);
            unlink(tmp);
            free(tmp);
            return ls_fail(err, "%s: write failed: %s (nothing was replaced)", path, strerror(e));
        }
        done += (size_t)w;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        int e = errno;
        unlink(tmp);
        free(tmp);
        return ls_fail(err, "%s: write failed: %s (nothing was replaced)", path, strerror(e));
    }
    chmod(tmp, 0644);
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        free(tmp);
        return ls_fail(err, "%s: cannot rename the finished file into place: %s", path, strerror(e));
    }
    free(tmp);
    return 0;
}

void ls_memory_keep_freed(void)
{
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 32 << 20); /* glibc's largest: tables below it come from the heap */
    mallopt(M_TRIM_THRESHOLD, 1 << 30);  /* the heap's free top is kept, up to 1 GiB */
#endif
}

double ls_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
