/* Programs for the Check suites: loaded from a file or lowered (failing the test with the
 * core's message when that does not work), built in C (include/build.h), and the small lowered
 * submodules the bundled delegate's tests share (shaped as to_backend leaves them). */
#ifndef LS_PROGFIXTURES_H
#define LS_PROGFIXTURES_H

#include "backend.h"
#include "build.h"
#include "history.h"
#include "runtime.h"

/* ---- from files */

/* The program in the file (a path as given: tu_root(...) for the repository's files). */
ls_program *pf_load(const char *path);
/* samples/NAME.pt2 */
ls_program *pf_sample(const char *name);
/* Every sample of samples/, with the steps a run of it takes (3 for the ones with state). */
typedef struct pf_sample_info {
    const char *name;
    int steps;
} pf_sample_info;
extern const pf_sample_info pf_samples[];
#define PF_N_SAMPLES 8
/* The pipeline (pipeline: a --pipeline value, NULL for the default) run on p into *h; every
 * step must run. */
void pf_lower(ls_program *p, const char *pipeline, ls_history *h);
/* The default pipeline with one --backend (a profile name or file) run on p into *h. */
void pf_lower_backend(ls_program *p, const char *backend, ls_history *h);
/* A runner of p. */
ls_runner *pf_runner(const ls_program *p);
/* Releases n values and the array holding them (what ls_runner_run returns). */
void pf_values_free(ls_value *v, uint32_t n);

/* two_delegates lowered by the default pipeline up to to_backend, then one more step,
 * "wrong_on_purpose", whose program is to_backend's with the CPU's cos (between the two
 * delegates) made a sin: a lowered form that differs from the loaded program from that node on
 * (the run overlay's first divergence). The step's program is *wrong's, the cos node's name in
 * *cos (both may be NULL). */
void pf_diverging_history(ls_history *h, const ls_node **cos);

/* ---- screen tests (tests/screens) */

/* Runs tests/screens/NAME.keys on h (borrowed) headless at cols×rows from its last step, in the
 * folder dir (relative paths of the script are found there; NULL: a fresh one), and compares
 * what it saved with the expected screens (tu_compare_screens). */
void pf_screens(ls_history *h, const char *name, int cols, int rows, const char *dir);
/* The same on the file at path lowered by the default pipeline (with the backend profile, a path
 * from the repository's root or a shipped profile's name, when given); the UI shows the file as
 * `shown`. */
void pf_screens_file(const char *path, const char *shown, const char *backend, const char *name, int cols, int rows,
                     const char *dir);

/* ---- built in C */

/* An input with its data (the builder takes its own reference: data is released here). */
uint32_t pf_input(ls_builder *b, const char *name, ls_input_kind kind, const char *target, ls_tensor *data);
/* A user input of that dtype and shape. */
uint32_t pf_user_input(ls_builder *b, const char *name, ls_dtype dt, int ndim, const int64_t *sizes);
/* A call node with the value dt[sizes]; the argument array is copied (its lists are taken). */
uint32_t pf_call(ls_builder *b, const char *name, ls_op_id op, const ls_arg *args, uint16_t nargs, ls_dtype dt,
                 int ndim, const int64_t *sizes);
ls_output_spec pf_out_spec(ls_output_kind kind, const char *name, const char *target);
/* A float32 tensor holding v (NULL: zeros). */
ls_tensor *pf_f32(int ndim, const int64_t *sizes, const float *v);

/* ---- lowered submodules for the bundled delegate */

/* x:[2,3] user input; c (tensor constant) and w (parameter) consumed: out = (x + c) + w */
ls_program *pf_chain_program(void);
/* exir-semantics §9 test 10 with a [4,3] cache: q:[1,3], k_val:[1,3], input_pos:[1] int64;
 * cache[input_pos] = k_val (BUFFER_MUTATION), out = mm(cache, q^T). With cache_out, the buffer
 * placeholder is a user output too; with inplace, the write is index_put_. */
ls_program *pf_kv_program(bool cache_out, bool inplace);
/* x:[4] user input; x[c_mask] with a constant boolean mask */
ls_program *pf_mask_program(void);
/* The program as a BundledBackend blob. */
ls_blob *pf_encode(const ls_program *p);
/* A new blob holding the first size bytes of b (zeros past its end). */
ls_blob *pf_blob_copy(const ls_blob *b, size_t size);

#endif
