/* A stored zip member mapped from the archive file rather than read into memory (zip_map.h).
 *
 * Why: the model JSON of a million-node program is 800 MB, read once by the load. Read into
 * anonymous memory, every page of it is faulted in, zeroed and copied into, and on a VM the
 * first touch of a page costs a fault in the host as well (a fifth of the page faults of
 * `passes` at 1M). Mapped, its pages are the page cache's own: nothing is zeroed or copied.
 *
 * Where: the member's data starts after its local header, whose offset is in the central
 * directory (APPNOTE.TXT 4.3.12, 4.3.7; the ZIP64 end record and extra field, 4.3.14–4.3.15
 * and 4.5.3). libzip has already opened the archive with ZIP_CHECKCONS, which checks each
 * local header against its directory entry; this file reads the same records again only to
 * find the offset, and answers "not here" (the caller reads the member through libzip, which
 * reports what is wrong) for anything it does not expect. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "progress.h"
#include "zip_map.h"

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const uint8_t *p)
{
    return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static bool read_at(int fd, uint64_t off, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, (uint8_t *)buf + got, n - got, (off_t)(off + got));
        if (r <= 0) return false;
        got += (size_t)r;
    }
    return true;
}

typedef struct cdir {
    uint64_t entries, size, offset;
} cdir;

/* The end of central directory record (and its ZIP64 twin when a field is saturated). */
static bool find_cdir(int fd, uint64_t file_size, cdir *cd)
{
    enum { EOCD = 22, MAX_COMMENT = 65535, LOCATOR = 20, EOCD64 = 56 };
    size_t tail = file_size < EOCD + MAX_COMMENT ? (size_t)file_size : EOCD + MAX_COMMENT;
    if (tail < EOCD) return false;
    uint8_t *t = malloc(tail);
    if (!t || !read_at(fd, file_size - tail, t, tail)) {
        free(t);
        return false;
    }
    size_t at = SIZE_MAX;
    for (size_t i = tail - EOCD + 1; i-- > 0;)
        if (rd32(t + i) == 0x06054b50u && i + EOCD + rd16(t + i + 20) == tail) {
            at = i;
            break;
        }
    bool ok = at != SIZE_MAX;
    if (ok) {
        const uint8_t *e = t + at;
        cd->entries = rd16(e + 10);
        cd->size = rd32(e + 12);
        cd->offset = rd32(e + 16);
        if (cd->entries == 0xffff || cd->size == 0xffffffffu || cd->offset == 0xffffffffu) {
            uint64_t eocd_at = file_size - tail + at;
            uint8_t loc[LOCATOR], e64[EOCD64];
            ok = eocd_at >= LOCATOR && read_at(fd, eocd_at - LOCATOR, loc, LOCATOR) && rd32(loc) == 0x07064b50u;
            uint64_t e64_at = ok ? rd64(loc + 8) : 0;
            ok = ok && e64_at <= file_size - EOCD64 && read_at(fd, e64_at, e64, EOCD64) && rd32(e64) == 0x06064b50u;
            if (ok) {
                cd->entries = rd64(e64 + 32);
                cd->size = rd64(e64 + 40);
                cd->offset = rd64(e64 + 48);
            }
        }
    }
    free(t);
    return ok && cd->offset <= file_size && cd->size <= file_size - cd->offset;
}

/* Entry `index` of the directory, which must be called `name`: its local header's offset. */
static bool local_header_of(int fd, const cdir *cd, uint64_t index, const char *name, uint64_t *lho)
{
    enum { ENTRY = 46 };
    if (index >= cd->entries || cd->size > ((uint64_t)1 << 31)) return false;
    uint8_t *dir = malloc(cd->size ? (size_t)cd->size : 1);
    if (!dir || !read_at(fd, cd->offset, dir, (size_t)cd->size)) {
        free(dir);
        return false;
    }
    bool ok = false;
    size_t p = 0;
    for (uint64_t i = 0;; i++) {
        if (cd->size < ENTRY || p > cd->size - ENTRY || rd32(dir + p) != 0x02014b50u) break;
        size_t nlen = rd16(dir + p + 28), xlen = rd16(dir + p + 30), clen = rd16(dir + p + 32);
        size_t next = p + ENTRY + nlen + xlen + clen;
        if (next > cd->size) break;
        if (i < index) {
            p = next;
            continue;
        }
        if (nlen != strlen(name) || memcmp(dir + p + ENTRY, name, nlen) != 0) break;
        uint32_t usize = rd32(dir + p + 24), csize = rd32(dir + p + 20);
        uint64_t off = rd32(dir + p + 42);
        /* ZIP64 extra field: the saturated values, in the order usize, csize, offset */
        const uint8_t *x = dir + p + ENTRY + nlen, *xend = x + xlen;
        while (off == 0xffffffffu && xend - x >= 4) {
            uint16_t id = rd16(x), len = rd16(x + 2);
            if ((size_t)(xend - x - 4) < len) break;
            if (id == 0x0001) {
                size_t f = 0;
                if (usize == 0xffffffffu) f += 8;
                if (csize == 0xffffffffu) f += 8;
                if (f + 8 <= len) off = rd64(x + 4 + f);
                break;
            }
            x += 4 + len;
        }
        ok = off != 0xffffffffu;
        *lho = off;
        break;
    }
    free(dir);
    return ok;
}

/* ---- a file that shrinks under its mapping
 *
 * Another process may truncate the archive while the load reads the mapped text; a page past
 * the new end then raises SIGBUS. While a mapping lives, a SIGBUS handler looks the faulting
 * address up among the live mappings and, when it is one of them, maps zero pages over the rest
 * of that mapping and marks it: the faulting read resumes on zeros, the parse fails or ends as
 * it will, and the load, seeing the mark (ls_zip_map_done), reports that the file shrank.
 * Why not siglongjmp back to the load: the fault can come while a lock is held (the intern
 * table, the cJSON arena's) or half-way through a structure, and jumping out would leave them
 * held or broken; here every function returns as usual, nothing leaks, and any thread may take
 * the fault. Why not fstat before parsing: the file can shrink during the parse. A SIGBUS
 * elsewhere goes to the action there was before, which is put back when no mapping lives. */

enum { GUARDS = 16 }; /* mappings alive at once (a load holds one); past it: read, not mapped */

typedef struct guard {
    _Atomic uintptr_t start; /* 0: a free slot */
    _Atomic size_t len;
    atomic_bool shrank;
} guard;

static guard guards[GUARDS];
static pthread_mutex_t guard_lock = PTHREAD_MUTEX_INITIALIZER;
static int guards_alive;
static struct sigaction sigbus_before;
static uintptr_t guard_page; /* the page size, read before the handler can run */

void (*ls_zip_map_test_after_map)(const char *path);
void (*ls_zip_map_test_before_sum)(const char *path);

static void on_sigbus(int sig, siginfo_t *si, void *ctx)
{
    uintptr_t a = (uintptr_t)si->si_addr;
    for (int i = 0; i < GUARDS; i++) {
        uintptr_t s = atomic_load(&guards[i].start);
        size_t n = atomic_load(&guards[i].len);
        if (!s || a < s || a - s >= n) continue;
        uintptr_t from = a & ~(guard_page - 1);
        /* mmap is a plain system call on Linux, safe in a handler */
        if (mmap((void *)from, s + n - from, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
            MAP_FAILED)
            break;
        atomic_store(&guards[i].shrank, true);
        return;
    }
    if (sigbus_before.sa_flags & SA_SIGINFO) {
        sigbus_before.sa_sigaction(sig, si, ctx);
    } else if (sigbus_before.sa_handler == SIG_DFL || sigbus_before.sa_handler == SIG_IGN) {
        sigaction(SIGBUS, &sigbus_before, NULL); /* the access faults again and gets the action it had */
    } else {
        sigbus_before.sa_handler(sig);
    }
}

static bool guard_add(void *map, size_t len)
{
    pthread_mutex_lock(&guard_lock);
    int slot = -1;
    for (int i = 0; i < GUARDS && slot < 0; i++)
        if (!atomic_load(&guards[i].start)) slot = i;
    if (slot >= 0) {
        if (guards_alive++ == 0) {
            guard_page = (uintptr_t)sysconf(_SC_PAGESIZE);
            struct sigaction sa = {.sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO | SA_ONSTACK};
            sigemptyset(&sa.sa_mask);
            sigaction(SIGBUS, &sa, &sigbus_before);
        }
        atomic_store(&guards[slot].len, len);
        atomic_store(&guards[slot].shrank, false);
        atomic_store(&guards[slot].start, (uintptr_t)map);
    }
    pthread_mutex_unlock(&guard_lock);
    return slot >= 0;
}

/* Forgets the mapping at map (before it is unmapped): whether the file shrank under it. */
static bool guard_drop(const void *map)
{
    bool shrank = false;
    pthread_mutex_lock(&guard_lock);
    for (int i = 0; i < GUARDS; i++)
        if (map && atomic_load(&guards[i].start) == (uintptr_t)map) {
            shrank = atomic_load(&guards[i].shrank);
            atomic_store(&guards[i].start, 0);
            if (--guards_alive == 0) sigaction(SIGBUS, &sigbus_before, NULL);
            break;
        }
    pthread_mutex_unlock(&guard_lock);
    return shrank;
}

bool ls_zip_map_done(const ls_blob *b)
{
    return b && b->map && guard_drop(b->map);
}

int ls_zip_map_stored(const char *path, uint64_t index, const char *name, uint64_t size, uint32_t crc,
                      ls_blob **out)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 1;
    struct stat st;
    cdir cd;
    uint64_t lho = 0;
    uint8_t lh[30];
    bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && find_cdir(fd, (uint64_t)st.st_size, &cd) &&
              local_header_of(fd, &cd, index, name, &lho) && lho <= (uint64_t)st.st_size - sizeof lh &&
              read_at(fd, lho, lh, sizeof lh) && rd32(lh) == 0x04034b50u && rd16(lh + 8) == 0 /* stored */ &&
              (rd16(lh + 6) & 1) == 0 /* not encrypted */;
    uint64_t data = ok ? lho + sizeof lh + rd16(lh + 26) + rd16(lh + 28) : 0;
    /* a byte after the member to end the text with a NUL: the directory always follows */
    ok = ok && data < (uint64_t)st.st_size && size < (uint64_t)st.st_size - data;
    long page = sysconf(_SC_PAGESIZE);
    uint64_t base = ok ? data & ~(uint64_t)(page - 1) : 0;
    size_t len = ok ? (size_t)(data - base + size + 1) : 0;
    void *m = ok ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, (off_t)base) : MAP_FAILED;
    close(fd);
    if (m == MAP_FAILED) return 1;
    if (!guard_add(m, len)) {
        munmap(m, len);
        return 1;
    }
    uint8_t *text = (uint8_t *)m + (data - base);
    madvise(m, len, MADV_SEQUENTIAL);
    if (ls_zip_map_test_before_sum) ls_zip_map_test_before_sum(path);
    /* in parts of 64 MiB, so that a load given up stops here too (the caller says so) */
    uLong c = crc32_z(0L, Z_NULL, 0);
    for (uint64_t at = 0; at < size; at += (uint64_t)64 << 20) {
        if (ls_cancelled()) break;
        uint64_t part = size - at < ((uint64_t)64 << 20) ? size - at : (uint64_t)64 << 20;
        c = crc32_z(c, text + at, (z_size_t)part);
    }
    /* the reader through libzip says so, with the sums (or, if the file shrank during the sum,
     * that the member is short) */
    if ((uint32_t)c != crc || ls_cancelled()) {
        guard_drop(m);
        munmap(m, len);
        return 1;
    }
    text[size] = 0; /* the one page copied: the file is not written */
    *out = ls_blob_mapped(m, len, text, (size_t)size);
    return 0;
}
