/* Shared basics of the core: errors, checked allocation, interned strings, growable arrays. */
#ifndef LS_COMMON_H
#define LS_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LS_VERSION "0.1.0"

#if defined(__GNUC__)
#define LS_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define LS_UNUSED __attribute__((unused))
#else
#define LS_PRINTF(f, a)
#define LS_UNUSED
#endif

/* Every fallible core function fills one of these and returns -1 (or NULL).
 * Messages read "FILE: PLACE: what is wrong" so the CLI can print them as they are. */
/* 4096: a message that names a long path (PATH_MAX is 4096) keeps what it says after it (at 1024 a
 * path of a thousand characters left "…/x.pte: exte") */
#define LS_ERR_MAX 4096
typedef struct ls_error {
    char msg[LS_ERR_MAX];
    int code; /* what kind of failure, set with the message: LS_ERR_INPUT or LS_ERR_NEEDS */
} ls_error;
enum {
    LS_ERR_INPUT = 2, /* bad input (the CLI's exit 2) */
    LS_ERR_NEEDS = 3, /* valid, but needs what lowerscope lacks: a backend, a kernel, an op (exit 3) */
};

/* Sets err->msg and err->code = LS_ERR_INPUT (err may be NULL) and returns -1. */
int ls_fail(ls_error *err, const char *fmt, ...) LS_PRINTF(2, 3);
/* The same with err->code = LS_ERR_NEEDS. */
int ls_fail_needs(ls_error *err, const char *fmt, ...) LS_PRINTF(2, 3);
/* The same with err->code = code: a message that wraps another keeps its kind (code of the
 * error it quotes). */
int ls_fail_kind(ls_error *err, int code, const char *fmt, ...) LS_PRINTF(3, 4);
/* What a message says of data the load left out (a blob, a .pte or a .pt2 needs the bytes). */
#define LS_NO_WEIGHTS "the program was loaded without weights: --metadata-only, or a JSON without its archive"

int ls_vfail(ls_error *err, const char *fmt, va_list ap);
/* Prepends "prefix: " to an error already set, keeping it within LS_ERR_MAX (and its code). */
int ls_fail_prefix(ls_error *err, const char *fmt, ...) LS_PRINTF(2, 3);

/* What is being read ("FILE" or "FILE: MEMBER"; a string that outlives the read, e.g.
 * interned), which the out-of-memory message names; returns what was set before, to put back.
 * Per thread; NULL: nothing. */
const char *ls_reading(const char *what);
/* What is being run: the file, and the node and its operator (or a delegate call and its
 * backend), which the out-of-memory message names before what is being read. Set by the
 * runtime around a run and per node; returns what was set before, to put back. Per thread;
 * NULL fields: not known. The strings outlive the run (interned or the program's). */
typedef struct {
    const char *file, *node, *op;
} ls_running_now;
ls_running_now ls_running(ls_running_now now);
/* Prints the out-of-memory message for n bytes ("of WHAT" when what is not NULL, e.g. "kernel
 * scratch"), naming what ls_running and ls_reading say, and exits 3. */
_Noreturn void ls_out_of_memory(size_t n, const char *what);
/* Allocation that never returns NULL: out of memory prints a message (naming what ls_running
 * says is being run, or what ls_reading says is being read) and exits 3. */
void *ls_malloc(size_t n);
void *ls_calloc(size_t count, size_t size);
/* ls_calloc for a hash table about to be probed and filled at random: zeroed by writing it now.
 * A large calloc is fresh zero pages; a probe reads a page first (the kernel maps the shared
 * zero page) and the insert then writes it (a second fault, to give the page its own copy).
 * Written first, each page faults once: at 1M nodes a quarter of `passes`' page faults. */
void *ls_calloc_table(size_t count, size_t size);
void *ls_realloc(void *p, size_t n);
char *ls_strdup(const char *s);
char *ls_strndup(const char *s, size_t n);
/* Allocation for tensor data: 64-byte aligned (vector loads), free with ls_free_aligned.
 * Returns NULL (does not exit) when n is absurd, so loaders can report the file. */
void *ls_alloc_aligned(size_t n);
void ls_free_aligned(void *p);

/* Interned strings: equal contents give the same pointer, so names compare with ==.
 * The pool lives as long as the process, or until ls_intern_release_all() (the tests call it
 * at exit, so the leak checker sees nothing left). NULL in, NULL out. */
const char *ls_intern(const char *s);
const char *ls_intern_n(const char *s, size_t n);
const char *ls_internf(const char *fmt, ...) LS_PRINTF(1, 2);
/* Metadata texts (stack traces, module stacks): interned apart from names. The same text
 * interned both ways gives two pointers, so compare a text only with texts. */
const char *ls_intern_text_n(const char *s, size_t n);
/* The hash the pool uses (XXH3_64bits): a caller that has it already saves hashing twice. */
uint64_t ls_intern_hash(const char *s, size_t n);
const char *ls_intern_n_hashed(const char *s, size_t n, uint64_t hash);
/* A hint: the name of this hash will be interned soon (its slot is fetched into the cache). */
void ls_intern_prefetch(uint64_t hash);
/* Several texts at once (a node's): each gets .interned, as ls_intern_text_n gives it. */
typedef struct ls_intern_item {
    const char *s;
    size_t n;
    uint64_t hash; /* set by the call */
    const char *interned;
} ls_intern_item;
void ls_intern_text_batch(ls_intern_item *items, size_t count);
/* The one copy of a record of n bytes (8-byte aligned, compared byte for byte; pad it with
 * zeros), kept with the interned strings: records of interned pointers, e.g. a node's texts. */
const void *ls_intern_record(const void *rec, size_t n);
void ls_intern_release_all(void);

/* The lock around caches built on demand inside shared objects (a program's index and lookup
 * maps): the UI's thread and the pipeline's read the same programs of the history. Held only
 * while a cache is built; readers find a built cache through an acquire load. */
void ls_cache_lock(void);
void ls_cache_unlock(void);
/* Around the life of a second thread that reads or makes programs (the UI's pipeline): the
 * intern pool takes a lock while one runs. Call begin before the thread starts. */
void ls_threads_begin(void);
void ls_threads_end(void);

/* A growable array of T: LS_VEC(int) v = {0}; ls_vec_push(&v, 3); free(v.v); */
#define LS_VEC(T)      \
    struct {           \
        T *v;          \
        uint32_t n;    \
        uint32_t cap;  \
    }
#define ls_vec_reserve(vec, want)                                                        \
    do {                                                                                 \
        if ((want) > (vec)->cap) {                                                       \
            uint32_t ls_nc_ = (vec)->cap ? (vec)->cap : 8;                               \
            while (ls_nc_ < (want)) ls_nc_ *= 2;                                         \
            (vec)->v = ls_realloc((vec)->v, (size_t)ls_nc_ * sizeof(*(vec)->v));         \
            (vec)->cap = ls_nc_;                                                         \
        }                                                                                \
    } while (0)
#define ls_vec_push(vec, x)                  \
    do {                                     \
        ls_vec_reserve((vec), (vec)->n + 1); \
        (vec)->v[(vec)->n++] = (x);          \
    } while (0)

/* What an ASCII terminal shows for a character we draw (box drawing, arrows, marks, ·, ×, …):
 * | - + v > < # . * x ~ ' ' and so on; ASCII itself unchanged, anything else '?'. The UI with
 * TERM=vt100 or a locale that is not UTF-8, and `lowerscope graph --ascii`. */
uint32_t ls_ascii_of(uint32_t cp);

/* A growable string buffer for building messages, JSON and reports. */
typedef struct ls_buf {
    char *s;
    size_t len, cap;
} ls_buf;
void ls_buf_putc(ls_buf *b, char c);
void ls_buf_puts(ls_buf *b, const char *s);
void ls_buf_putn(ls_buf *b, const char *s, size_t n);
void ls_buf_printf(ls_buf *b, const char *fmt, ...) LS_PRINTF(2, 3);
void ls_buf_vprintf(ls_buf *b, const char *fmt, va_list ap);
void ls_buf_json_str(ls_buf *b, const char *s); /* quoted JSON string, escaped as safe_text.h says; NULL → null */
char *ls_buf_take(ls_buf *b);                   /* returns the string (never NULL), resets b */
void ls_buf_free(ls_buf *b);

/* Reads a whole file. Fails with "PATH: reason" on error; limit bounds the size read. */
int ls_read_file(const char *path, size_t limit, uint8_t **data, size_t *size, ls_error *err);
/* What a path that is not a regular file is, from its st_mode ("a folder", "a FIFO (named
 * pipe)", "a character device", ...), for messages (src/model/write_file.c). */
const char *ls_file_kind(unsigned mode);
/* An option that names a file given an empty string: "OPT: an empty path: give WANTS" and -1
 * (the CLI and the UI say it alike, naming the option), else 0. */
/* The first n bytes of a regular file into buf: how many it has (0: not a regular file, or
 * unreadable). A FIFO is not opened (its open would wait for a writer). For the sniffers that
 * tell a .pte, a .bpte or a .ptd by its identifier. */
size_t ls_read_head(const char *path, void *buf, size_t n);
int ls_refuse_empty_path(const char *opt, const char *value, const char *wants, ls_error *err);
/* -1 and a message naming path when st_mode is a FIFO or a socket, else 0: a FIFO's open waits
 * for a writer, forever when there is none, and a program is read more than once. */
int ls_refuse_stream(const char *path, unsigned mode, ls_error *err);
/* Writes bytes to PATH through a temporary file in the same folder and a rename, so a failure
 * never leaves a half-written file where the user's file was (src/model/write_file.c). A PATH
 * that exists and is not a regular file (a folder, a FIFO, a device) is refused whatever the
 * flags; one that is a regular file is refused unless LS_WRITE_REPLACE, and the check cannot
 * race with the rename (renameat2 RENAME_NOREPLACE). A replaced file keeps its mode (and, for
 * root, its owner); a new one gets 0666 less the umask. SIGINT, SIGTERM and SIGHUP while the
 * temporary file exists remove it, then end the process with 128 + the signal (or do what the
 * handler installed before does). */
enum { LS_WRITE_REPLACE = 1 };
int ls_write_file(const char *path, const void *data, size_t size, unsigned flags, ls_error *err);
/* ls_write_file(..., LS_WRITE_REPLACE, ...): for the files lowerscope owns (--save, the UI's dumps). */
int ls_write_file_atomic(const char *path, const void *data, size_t size, ls_error *err);

/* Little-endian integers of n bytes (1 to 8), as every format lowerscope reads and writes
 * stores them (.pte, .ptd, flatbuffers, .npy, the bundled blob). */
static inline uint64_t ls_le_get(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}
static inline void ls_le_put(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* A byte count as people read it: "448 B", "1.7 KiB", "2.0 MiB", "3.1 GiB". Returns buf. */
const char *ls_fmt_bytes(uint64_t n, char *buf, size_t cap);

/* Monotonic clock in seconds, for the times the run command and benchmarks print. */
double ls_now(void);

/* Tells malloc to keep what a pass frees for the next pass instead of giving it back to the
 * kernel: every step of the history stays in memory anyway (`passes` releases old steps, and
 * their memory is just what the next pass needs), and each pass allocates tables as
 * large as the program, which the kernel would otherwise zero and map again page by page (on
 * the VMs we run on, a third of the pipeline's time). Called once by the command's main. */
void ls_memory_keep_freed(void);

#endif
