/* Errors, checked allocation, interned strings, string buffers and file helpers. */
#include "common.h"
#include "safe_text.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

int ls_vfail(ls_error *err, const char *fmt, va_list ap)
{
    if (err) {
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        err->code = LS_ERR_INPUT;
    }
    return -1;
}

int ls_fail_needs(ls_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ls_vfail(err, fmt, ap);
    va_end(ap);
    if (err) err->code = LS_ERR_NEEDS;
    return -1;
}

int ls_fail_kind(ls_error *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ls_vfail(err, fmt, ap);
    va_end(ap);
    if (err) err->code = code;
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

static _Thread_local const char *reading_now;

const char *ls_reading(const char *what)
{
    const char *was = reading_now;
    reading_now = what;
    return was;
}

static _Thread_local ls_running_now running_now;

ls_running_now ls_running(ls_running_now now)
{
    ls_running_now was = running_now;
    running_now = now;
    return was;
}

/* stderr is the CLI's output filter, which escapes what the names carry */
_Noreturn void ls_out_of_memory(size_t n, const char *what)
{
    const char *of = what ? " of " : "", *w = what ? what : "";
    const ls_running_now *r = &running_now;
    if (r->file && r->node)
        fprintf(stderr, "lowerscope: %s: out of memory (asked for %zu bytes%s%s) while running node %s (%s)\n", r->file, n,
                of, w, r->node, r->op ? r->op : "?");
    else if (r->file)
        fprintf(stderr, "lowerscope: %s: out of memory (asked for %zu bytes%s%s) while running it\n", r->file, n, of, w);
    else if (reading_now)
        fprintf(stderr, "lowerscope: %s: out of memory (asked for %zu bytes%s%s) while reading it\n", reading_now, n, of, w);
    else
        fprintf(stderr, "lowerscope: out of memory (asked for %zu bytes%s%s)\n", n, of, w);
    exit(3);
}

static void out_of_memory(size_t n)
{
    ls_out_of_memory(n, NULL);
}

/* ---- huge pages for the heap (ls_memory_keep_freed, with LS_HUGE_PAGES=1). At a million
 * nodes the tables are probed at random: with 4 KiB pages nearly every probe misses the TLB
 * and its page walk misses the cache too. In 2 MiB pages the user time is about a quarter
 * less, at 100k nodes as at 1M (so the 1M / 100k ratio stays). The kernel gives them where
 * madvise asks (transparent_hugepage "madvise", the Debian default); glibc asks only when
 * GLIBC_TUNABLES says so at start, so each part the heap grows by is advised here, before
 * malloc hands it out and anything touches it. */
static bool heap_in_huge_pages;
static uintptr_t heap_advised_top; /* the heap below this is advised */

static void advise_heap_growth(void)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    uintptr_t top = (uintptr_t)sbrk(0);
    if (top == heap_advised_top || top == (uintptr_t)-1) return;
    uintptr_t page = 4096, from = (heap_advised_top + page - 1) & ~(page - 1);
    if (top > from) madvise((void *)from, top - from, MADV_HUGEPAGE); /* a failure: small pages, as before */
    heap_advised_top = top;                                           /* below it when the heap shrank */
#endif
}

static inline void heap_check(void)
{
    if (heap_in_huge_pages) advise_heap_growth();
}

void *ls_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) out_of_memory(n);
    heap_check();
    return p;
}

void *ls_calloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p) out_of_memory(count * size);
    heap_check();
    return p;
}

void *ls_calloc_table(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size) out_of_memory(SIZE_MAX);
    size_t n = count * size;
    void *p = ls_malloc(n);
    memset(p, 0, n ? n : 1);
    return p;
}

void *ls_realloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) out_of_memory(n);
    heap_check();
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

/* The largest tensor allocation tried; the fuzz build lowers it (tests/fuzz/fuzz.mk), so a file
 * that makes the runtime compute a huge tensor fails as it would on a machine without that much
 * memory, instead of the fuzzer counting the attempt as a finding. */
#ifndef LS_ALLOC_LIMIT
#define LS_ALLOC_LIMIT ((size_t)1 << 46)
#endif

void *ls_alloc_aligned(size_t n)
{
    /* Round up so the allocation size is a multiple of the alignment; refuse absurd sizes
     * instead of letting the allocator abort. */
    if (n > (size_t)(LS_ALLOC_LIMIT)) return NULL;
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

typedef struct intern_table {
    intern_entry *slots;
    size_t cap, used;
} intern_table;

/* Three tables over one set of blocks: names (node names, targets, tags: what the passes look
 * up and make), texts (stack traces, module stacks: read, shown and written, never looked up)
 * and records (fixed-size tuples of interned pointers). A program has several texts per node;
 * in a table of their own they leave the table the passes probe a third of the size, so it
 * stays in cache longer and grows less in the middle of a pass. */
static intern_table names_table, texts_table, records_table;
static intern_block *blocks; /* the first is being filled */

static void table_grow(intern_table *t)
{
    size_t ncap = t->cap ? t->cap * 2 : 4096;
    intern_entry *ns = ls_calloc_table(ncap, sizeof *ns);
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->slots[i].s) continue;
        size_t j = t->slots[i].hash & (ncap - 1);
        while (ns[j].s) j = (j + 1) & (ncap - 1);
        ns[j] = t->slots[i];
    }
    free(t->slots);
    t->slots = ns;
    t->cap = ncap;
}

/* A NUL-terminated copy of s in the blocks; a long string gets a block of its own, behind the
 * one being filled. */
static const char *pool_store(const char *s, size_t n, size_t align)
{
    intern_block *b = blocks;
    size_t at = b ? (b->used + align - 1) & ~(align - 1) : 0;
    if (!b || at >= b->cap || b->cap - at <= n) {
        bool own = n >= INTERN_BLOCK / 4;
        b = ls_malloc(sizeof *b + (own ? n + 1 : INTERN_BLOCK));
        b->used = 0;
        b->cap = own ? n + 1 : INTERN_BLOCK;
        if (own && blocks) {
            b->next = blocks->next;
            blocks->next = b;
        } else {
            b->next = blocks;
            blocks = b;
        }
        at = 0;
    }
    char *d = b->data + at;
    memcpy(d, s, n);
    d[n] = 0;
    b->used = at + n + 1;
    return d;
}

static void check_len(size_t n)
{
    if (n >= UINT32_MAX) {
        fprintf(stderr, "lowerscope: a name of %zu bytes is more than lowerscope keeps\n", n);
        exit(3);
    }
}

/* h: XXH3_64bits of s */
static const char *intern_hashed(intern_table *t, const char *s, size_t n, uint64_t h)
{
    if (!s) return NULL;
    check_len(n);
    if ((t->used + 1) * 4 > t->cap * 3) table_grow(t); /* up to 3/4 full: at a million nodes the tables take hundreds of MB */
    size_t j = h & (t->cap - 1);
    while (t->slots[j].s) {
        intern_entry *e = &t->slots[j];
        if (e->hash == (uint32_t)h && e->len == n && memcmp(e->s, s, n) == 0) return e->s;
        j = (j + 1) & (t->cap - 1);
    }
    t->slots[j].s = pool_store(s, n, t == &records_table ? 8 : 1);
    t->slots[j].len = (uint32_t)n;
    t->slots[j].hash = (uint32_t)h;
    t->used++;
    return t->slots[j].s;
}

/* The pool is shared by every thread; while a second one works on programs (ls_threads_begin)
 * every intern takes the lock. Alone (the CLI, the load before the UI starts its pipeline), none. */
static pthread_mutex_t intern_mutex = PTHREAD_MUTEX_INITIALIZER;
static int threads_sharing;

void ls_threads_begin(void)
{
    __atomic_add_fetch(&threads_sharing, 1, __ATOMIC_SEQ_CST);
}

void ls_threads_end(void)
{
    __atomic_sub_fetch(&threads_sharing, 1, __ATOMIC_RELEASE); /* after this thread's last intern */
}

/* h: XXH3_64bits of s (ls_intern_hash) */
static const char *intern_locked_hashed(intern_table *t, const char *s, size_t n, uint64_t h)
{
    /* acquire: alone again, this thread sees what the one that ended interned */
    if (!__atomic_load_n(&threads_sharing, __ATOMIC_ACQUIRE)) return intern_hashed(t, s, n, h);
    pthread_mutex_lock(&intern_mutex);
    const char *r = intern_hashed(t, s, n, h);
    pthread_mutex_unlock(&intern_mutex);
    return r;
}

static const char *intern_locked(intern_table *t, const char *s, size_t n)
{
    return s ? intern_locked_hashed(t, s, n, XXH3_64bits(s, n)) : NULL;
}

const char *ls_intern_n(const char *s, size_t n)
{
    return intern_locked(&names_table, s, n);
}

const char *ls_intern_text_n(const char *s, size_t n)
{
    return intern_locked(&texts_table, s, n);
}

uint64_t ls_intern_hash(const char *s, size_t n)
{
    return XXH3_64bits(s, n);
}

const char *ls_intern_n_hashed(const char *s, size_t n, uint64_t hash)
{
    return intern_locked_hashed(&names_table, s, n, hash);
}

void ls_intern_prefetch(uint64_t hash)
{
    /* alone only: another thread may be growing the table */
    if (!__atomic_load_n(&threads_sharing, __ATOMIC_ACQUIRE) && names_table.cap)
        __builtin_prefetch(&names_table.slots[hash & (names_table.cap - 1)]);
}

/* At a million nodes the texts table is far larger than the cache and each probe is a miss:
 * hashing every text first and prefetching its slot lets a node's misses overlap. */
void ls_intern_text_batch(ls_intern_item *items, size_t count)
{
    bool shared = __atomic_load_n(&threads_sharing, __ATOMIC_ACQUIRE);
    if (shared) pthread_mutex_lock(&intern_mutex);
    intern_table *t = &texts_table;
    while ((t->used + count + 1) * 4 > t->cap * 3) table_grow(t); /* no growing between prefetch and probe */
    for (size_t i = 0; i < count; i++) {
        check_len(items[i].n);
        items[i].hash = XXH3_64bits(items[i].s, items[i].n);
        __builtin_prefetch(&t->slots[items[i].hash & (t->cap - 1)]);
    }
    for (size_t i = 0; i < count; i++) items[i].interned = intern_hashed(t, items[i].s, items[i].n, items[i].hash);
    if (shared) pthread_mutex_unlock(&intern_mutex);
}

const void *ls_intern_record(const void *rec, size_t n)
{
    return intern_locked(&records_table, rec, n);
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
    while (blocks) {
        intern_block *next = blocks->next;
        free(blocks);
        blocks = next;
    }
    intern_table *tables[] = {&names_table, &texts_table, &records_table};
    for (size_t i = 0; i < 3; i++) {
        free(tables[i]->slots);
        *tables[i] = (intern_table){0};
    }
}

static pthread_mutex_t cache_mutex = PTHREAD_MUTEX_INITIALIZER; /* see ls_cache_lock */

void ls_cache_lock(void)
{
    pthread_mutex_lock(&cache_mutex);
}

void ls_cache_unlock(void)
{
    pthread_mutex_unlock(&cache_mutex);
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

/* The conversions the messages and report sentences use (%s %c %d %i %u, with l, ll or z, and
 * %%) are written here: vsnprintf costs about a thousand instructions a call, and a pipeline
 * run writes tens of thousands of sentences. Widths, precisions and floats go to vsnprintf. */
static bool fmt_is_simple(const char *fmt)
{
    for (const char *p = strchr(fmt, '%'); p; p = strchr(p, '%')) {
        p++;
        if (*p == '%') {
            p++;
            continue;
        }
        if (*p == 'l') p += p[1] == 'l' ? 2 : 1;
        else if (*p == 'z') p++;
        if (!*p || !strchr("sdiuc", *p)) return false;
        p++;
    }
    return true;
}

static void put_u64(ls_buf *b, uint64_t v, bool negative)
{
    char digits[24];
    size_t n = 0;
    do digits[sizeof digits - 1 - n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    if (negative) digits[sizeof digits - 1 - n++] = '-';
    ls_buf_putn(b, digits + sizeof digits - n, n);
}

static void format_simple(ls_buf *b, const char *fmt, va_list ap)
{
    for (const char *p = fmt;;) {
        const char *pct = strchr(p, '%');
        if (!pct) {
            ls_buf_puts(b, p);
            return;
        }
        ls_buf_putn(b, p, (size_t)(pct - p));
        p = pct + 1;
        int len = 0; /* 0 int, 1 long, 2 long long, 3 size_t */
        if (*p == 'l') len = p[1] == 'l' ? (p++, 2) : 1, p++;
        else if (*p == 'z') len = 3, p++;
        char conv = *p++;
        switch (conv) {
        case '%': ls_buf_putc(b, '%'); break;
        case 'c': ls_buf_putc(b, (char)va_arg(ap, int)); break;
        case 's': {
            const char *str = va_arg(ap, const char *);
            ls_buf_puts(b, str ? str : "(null)");
            break;
        }
        case 'u': {
            uint64_t v = len == 0   ? va_arg(ap, unsigned)
                         : len == 1 ? va_arg(ap, unsigned long)
                         : len == 2 ? va_arg(ap, unsigned long long)
                                    : va_arg(ap, size_t);
            put_u64(b, v, false);
            break;
        }
        default: { /* d, i */
            int64_t v = len == 0   ? va_arg(ap, int)
                        : len == 1 ? va_arg(ap, long)
                        : len == 2 ? va_arg(ap, long long)
                                   : (int64_t)va_arg(ap, ptrdiff_t);
            put_u64(b, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, v < 0);
            break;
        }
        }
    }
}

void ls_buf_vprintf(ls_buf *b, const char *fmt, va_list ap)
{
    if (fmt_is_simple(fmt)) {
        format_simple(b, fmt, ap);
        return;
    }
    va_list again;
    va_copy(again, ap);
    size_t room = b->cap > b->len ? b->cap - b->len : 0;
    int n = vsnprintf(room ? b->s + b->len : NULL, room, fmt, ap);
    if (n > 0 && (size_t)n >= room) { /* did not fit: grow and write again */
        buf_reserve(b, (size_t)n);
        vsnprintf(b->s + b->len, (size_t)n + 1, fmt, again);
    }
    va_end(again);
    if (n > 0) b->len += (size_t)n;
    else if (b->s) b->s[b->len] = 0;
}

void ls_buf_printf(ls_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ls_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

void ls_buf_json_str(ls_buf *b, const char *s)
{
    if (!s) {
        ls_buf_puts(b, "null");
        return;
    }
    /* controls, bidi overrides and invalid UTF-8 escaped (safe_text.h): valid JSON and valid
     * UTF-8 whatever the file held, and nothing a terminal acts on */
    ls_buf_putc(b, '"');
    ls_buf_put_safe(b, s, strlen(s), LS_SAFE_JSON);
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
    if (!*path) return ls_fail(err, "a file named by an empty string: give its path"); /* not "lowerscope: : ..." */
    struct stat pre; /* before the open, which a FIFO would hold (a folder's models/model.json) */
    if (stat(path, &pre) == 0 && ls_refuse_stream(path, pre.st_mode, err) != 0) return -1;
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
    if (!S_ISREG(st.st_mode)) { /* /dev/zero: a size of 0, and reads without end */
        close(fd);
        return ls_fail(err, "%s: %s, not a file", path, ls_file_kind(st.st_mode));
    }
    if ((uint64_t)st.st_size > limit) {
        close(fd);
        return ls_fail(err, "%s: file is %lld bytes, more than the %zu this reader accepts", path,
                       (long long)st.st_size, limit);
    }
    size_t n = (size_t)st.st_size;
    const char *was = ls_reading(path);
    uint8_t *buf = ls_malloc(n + 1);
    ls_reading(was);
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

size_t ls_read_head(const char *path, void *buf, size_t n)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r <= 0) break;
        got += (size_t)r;
    }
    close(fd);
    return got;
}

int ls_refuse_empty_path(const char *opt, const char *value, const char *wants, ls_error *err)
{
    return *value ? 0 : ls_fail(err, "%s: an empty path: give %s", opt, wants);
}

const char *ls_fmt_bytes(uint64_t n, char *buf, size_t cap)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)n;
    int u = 0;
    while (v >= 1024 && u < 4) v /= 1024, u++;
    if (u == 0) snprintf(buf, cap, "%llu B", (unsigned long long)n);
    else snprintf(buf, cap, "%.1f %s", v, units[u]);
    return buf;
}

void ls_memory_keep_freed(void)
{
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 32 << 20); /* glibc's largest: tables below it come from the heap */
    mallopt(M_TRIM_THRESHOLD, 1 << 30);  /* the heap's free top is kept, up to 1 GiB */
    /* and tables above it too: a block glibc maps for itself goes back to the kernel when it is
     * freed, and the next table of that size faults every page in again (at a million nodes the
     * passes free and remake 1.5 GB of such tables: a quarter of the page faults). From the
     * heap, a freed table's pages are reused as they are. */
    mallopt(M_MMAP_MAX, 0);
    /* Huge pages only when asked (LS_HUGE_PAGES=1): they cut the user time by about a quarter
     * at 100k and 1M nodes, but on the VMs we measure on a fresh 2 MiB page costs the kernel
     * about five times what the same bytes in small pages do (bench_pipeline at 200k: 0.07 ->
     * 0.34 s in the kernel), and at 1M the system time swung 2-8 s from run to run. See
     * docs/design.md. */
    const char *huge = getenv("LS_HUGE_PAGES");
    if (huge && strcmp(huge, "1") == 0) {
        /* the heap grows in steps of at least 64 MiB: each step is advised (see
         * advise_heap_growth) while untouched; the 2 MiB block it starts in, already touched,
         * stays in small pages */
        mallopt(M_TOP_PAD, 64 << 20);
        heap_advised_top = (uintptr_t)sbrk(0);
        heap_in_huge_pages = true;
    }
#endif
}

double ls_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint32_t ls_ascii_of(uint32_t c)
{
    if (c < 0x80) return c;
    switch (c) {
    case 0x2500: return '-'; /* ─ */
    case 0x2502: return '|'; /* │ */
    case 0x250c: case 0x2510: case 0x2514: case 0x2518: case 0x253c: return '+';
    case 0x258c: return '|';  /* ▌ swatch */
    case 0x2588: return '#';  /* █ swatch */
    case 0x25bc: return 'v';  /* ▼ */
    case 0x25b6: return '>';  /* ▶ the current step */
    case 0x25b8: return '+';  /* ▸ a folded run */
    case 0x25be: return '-';  /* ▾ an unfolded one */
    case 0x2022: return '*';  /* • */
    case 0x00b7: return '.';  /* · */
    case 0x00d7: return 'x';  /* × */
    case 0x2026: return '~';  /* … */
    case 0x2014: return '-';  /* — */
    case 0x2190: return '<';  /* ← */
    case 0x2192: return '>';  /* → */
    case 0x2191: return '^';  /* ↑ */
    case 0x2193: return 'v';  /* ↓ */
    case 0x2717: return 'X';  /* ✗ */
    case 0x0394: return 'D';  /* Δ */
    case 0x00b2: return '2';  /* ² */
    default: return '?';
    }
}
