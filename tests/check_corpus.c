/* The hostile inputs of tests/corpus, run through the binary as a user would: every file is
 * refused with exit 2 and one message naming it, unless the table below says what it must
 * give instead (each row: a command on it, the exit code and a piece of the output). What a
 * fuzzer found stays here; make check also replays every file through the fuzz harnesses. */
#include <check.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "npy.h"
#include "passes.h"
#include "program.h"
#include "progfixtures.h"
#include "reader.h"
#include "safe_text.h"
#include "testutil.h"

typedef struct corpus_case {
    const char *file; /* in tests/corpus */
    /* the command line: %1$s the file, %2$s samples/shared_constant.pt2, %3$s a path to write */
    const char *args;
    int exit;
    const char *says;
} corpus_case;

static const corpus_case cases[] = {
    {"target_not_a_string.json", "info %1$s", 2, "target_not_a_string.json: graph node #0: target is not a string"},
    {"tensor_values_list.json", "info %1$s", 2, "tensor_values_list.json: graph.tensor_values is not an object"},
    {"raw_nul_in_a_name.json", "info %1$s", 2, ": a raw control byte 0x00, which JSON allows nowhere (a string spells it \\u0000)"},
    {"raw_escape_in_a_name.json", "node %1$s add", 2, ": a raw control byte 0x1b, which JSON allows nowhere"},
    /* the archive's own members, checked as torch checks them (they were not read: a big-endian
     * archive's weights were read as little-endian, silently) */
    {"archive_format_zip.pt2", "info %1$s", 2, "prog/archive_format is \"zip\", not \"pt2\": not a .pt2 archive"},
    {"tensor_argument_none.json", "verify %1$s", 1,
     "error: node 'add' (aten.add.Tensor): argument 'self' is None, which the schema does not allow"},
    {"tensor_argument_none.json", "export %1$s -o %3$s", 2, "the verifier rejects the program's structure (1 error)"},
    {"archive_format_missing.pt2", "info %1$s", 2, "prog/archive_format is missing: torch.export.load refuses"},
    {"archive_version_missing.pt2", "verify %1$s", 0, "archive_version_missing.pt2: valid: 5 nodes, 0 warnings"},
    {"archive_version_99.pt2", "verify %1$s", 2,
     "prog/archive_version is \"99\": torch.export.load reads version 0 only (\"Saved archive version 99 does not match "
     "our current archive version 0.\")"},
    {"byteorder_big.pt2", "run %1$s", 3, "prog/byteorder is \"big\": the weights are big-endian"},
    /* a weight's member not in the archive: which weight, and the archive once (a short name was
     * taken as named already: 'w' is in "weights") */
    {"weight_member_missing.pt2", "info %1$s", 2,
     "weight_member_missing.pt2: 'w' of data/weights/model_weights_config.json: data/weights/weight_0 is missing"},
    /* the same words from a command that reads the bytes (info read only the sizes and said "no member") */
    {"weight_member_missing.pt2", "verify %1$s", 2,
     "weight_member_missing.pt2: 'w' of data/weights/model_weights_config.json: data/weights/weight_0 is missing"},
    /* a file shorter than an identifier: its bytes, only those (it said "45 00 00 00") */
    {"one_byte.pte", "info %1$s", 2, "one_byte.pte: not an ExecuTorch program: no \"ET12\" identifier at byte 4 (it is 1 byte long: 45)"},
    {"not_a_program.bin", "info %1$s", 2, "not_a_program.bin: not a .pt2 archive, an exported-program JSON or a .pte (it starts with 7f 45 4c 46)"},
    /* a call's output {"as_tensor": {}}: refused like an input without a name (was SIGSEGV) */
    {"output_without_name.json", "info %1$s", 2,
     "output_without_name.json: graph node #0 (torch.ops.aten.add.Tensor): output 0: a tensor output without a name"},
    {"output_without_name.json", "passes %1$s", 2, "output 0: a tensor output without a name"},
    {"output_without_name.json", "%1$s", 2, "output 0: a tensor output without a name"}, /* the UI */
    {"output_without_name.pt2", "verify %1$s", 2,
     "output_without_name.pt2: models/model.json: graph node #0 (torch.ops.aten.add.Tensor): output 0: a tensor "
     "output without a name"},
    /* a tensor_constant spec without its target: the verifier rejects it and no pass runs
     * (duplicate_constants was reached and crashed); the archive cannot even find its data */
    {"constant_without_target.json", "passes %1$s", 1, "  ! error: InputSpec for c has no target.\n"},
    {"constant_without_target.json", "passes %1$s", 1,
     "\nno pass ran: the verifier rejects the program's structure (1 error)\n"},
    {"constant_without_target.json", "passes %1$s --json", 1,
     "\"not_run\": \"the verifier rejects the program's structure (1 error)\"}"},
    {"constant_without_target.json", "partitions %1$s", 1,
     "constant_without_target.json: step 0 load: no pass ran: the verifier rejects the program's structure (1 "
     "error)"},
    {"constant_without_target.json", "diff %1$s --step 1", 2,
     "--step 1: the pipeline has step 0 only: no pass ran (the verifier rejects the program's structure"},
    /* the verifier's findings, as verify and passes exit (run exited 2; graph and node 0, silently) */
    {"constant_without_target.json", "run %1$s", 1,
     "constant_without_target.json: the verifier rejects the program's structure (1 error): it cannot run"},
    {"constant_without_target.json", "run %1$s --compare", 1, "step 0 load: no pass ran: the verifier rejects"},
    {"constant_without_target.json", "graph %1$s", 1, "step 0 load: no pass ran: the verifier rejects"},
    {"constant_without_target.json", "node %1$s c", 1, "step 0 load: no pass ran: the verifier rejects"},
    {"constant_without_target.json", "export %1$s -o %3$s", 2,
     "constant_without_target.json: step 0 load: no pass ran: the verifier rejects the program's structure (1 "
     "error), so there is nothing to export"},
    {"constant_without_target.pt2", "info %1$s", 2,
     "constant_without_target.pt2: models/model.json: input spec 0 ('c', tensor constant): no target"},
    /* a DelegateCall with no arguments is valid to the runtime (a list of any length); it loads,
     * and running it says what the delegate lacks (was arithmetic on a NULL pointer) */
    {"delegate_call_without_arguments.pte", "verify %1$s", 0, "delegate_call_without_arguments.pte: valid"},
    {"delegate_call_without_arguments.pte", "run %1$s", 1,
     "delegate lowered_module_0 (BundledBackend): BundledBackend: lowered_module_0: 0 inputs given, the delegate "
     "takes 1"},
    /* Fortran order with a zero dimension: no elements, nothing to reorder (the stride product
     * of the other sizes overflowed int64) */
    {"fortran_zero_dim.npy", "run %2$s --input x=%1$s", 2,
     "fortran_zero_dim.npy: the input expects float32[4], the file holds float32[2305843009213693952, 4, 0]"},
    /* strict where torch is strict: torch decodes the JSON as UTF-8 first (CPython's position and
     * reason for these bytes: 687, "invalid start byte"); a NUL would cut a name short */
    {"invalid_utf8.json", "info %1$s", 2,
     "invalid_utf8.json: byte 687 (line 49, column 20): invalid UTF-8 (byte 0x9b: invalid start byte), which torch's "
     "loader refuses too"},
    {"nul_in_name.json", "info %1$s", 2,
     "nul_in_name.json: byte 688 (line 49, column 21): \\u0000 in a string: lowerscope's names end at a NUL"},
    /* archives: every member's CRC, the local headers against the central directory, a size
     * the archive cannot hold refused before anything is inflated; info reads no weight bytes */
    {"crc_mismatch.pt2", "verify %1$s", 2,
     "crc_mismatch.pt2: 'w' of data/weights/model_weights_config.json: data/weights/weight_0: the member is damaged: its CRC-32 is 415c6f29, the archive's directory "
     "says 8ba71454"},
    {"crc_mismatch.pt2", "info %1$s", 0, "  weights   16 B in 1 tensor\n"},
    /* the model JSON is mapped from the archive (zip_map.c): a damaged one is still caught,
     * by the read through libzip it falls back to; a ZIP64 directory maps, weights and all */
    {"json_crc_mismatch.pt2", "info %1$s", 2,
     "json_crc_mismatch.pt2: models/model.json: the member is damaged: its CRC-32 is 50fd8b6e, the archive's "
     "directory says 77b691fc"},
    {"zip64_directory.pt2", "verify %1$s", 0, "zip64_directory.pt2: valid: 5 nodes, 0 warnings"},
    {"bad_local_header.pt2", "info %1$s", 2,
     "bad_local_header.pt2: a damaged zip archive (Not a zip archive): a member's local header does not match the "
     "central directory"},
    {"huge_member.pt2", "info %1$s", 2,
     "huge_member.pt2: models/model.json: the member claims 2.5 GiB uncompressed (639 B compressed), more than the "
     "64.0 MiB an archive of this size may hold"},
    /* found by fuzz_pte: an XNNPACK delegate whose convolution claims an 824 GiB output through
     * a padding of 1728053249; the reader refuses the padding, past any window XNNPACK takes */
    {"xnnpack_huge_output.pte", "run %1$s", 2,
     "XnnpackBackend blob: xnodes[1].xnode_union.padding_top: 1728053249 is past what lowerscope takes (65535)"},
    /* found by fuzz_pte (a slow unit): an XNNPACK convolution, an internal xnode, that computed
     * float32[1, 8, 272, 8207] (310 MB, 0.8 s; 20 s under ASan) where its value is defined as
     * [1, 8, 16, 16] before the runtime refused the delegate's output; now refused before it
     * computes (xnn_exec.c lsx_out), its shape in XNNPACK's NHWC; a step that fails at run time is a
     * finding (exit 1), as a .pte the runtime refuses at load is */
    {"xnnpack_conv_of_another_shape.pte", "run %1$s", 1,
     "delegate lowered_module_0 (XnnpackBackend): XnnpackBackend: xnodes[1] (XNNConv2d, debug handle 1): output value 3 "
     "would be float32[1, 272, 8207, 8], more elements than the float32[1, 16, 16, 8] it is defined with"},
    /* found by fuzz_pte (UBSan: signed overflow in xnn_ops_nn.c requantize): a quantized fully
     * connected xnode whose bias and zero point overflow int32; the sum now wraps as XNNPACK's
     * GEMM microkernels' adds do. The run gives the float32[2, 8] the program declares */
    {"xnnpack_fc_accumulator_overflow.pte", "run %1$s", 0, "out 0 getitem            float32[2, 8]"},
    /* found by fuzz_bpte: an embedded program's input whose sizes multiply past 64 bits (the
     * runtime's validate_tensor says numel overflowed); it loaded, and writing its .pt2 overflowed
     * the strides. The .pte loader refuses the shape as the .pt2 reader does */
    {"numel_overflow.bpte", "info %1$s", 2,
     "numel_overflow.bpte: program: forward: values[3]: float32[786448, 524288, 16, 100663296, 1, 8, 12] claims over "
     "1.8e+19 elements (1.8e+19 bytes), more than the 1.1e+12 bytes lowerscope accepts"},
    /* conv_huge_output.bpte: convolution_of_another_shape_is_refused_before_it_runs */
    {"conv_huge_output.bpte", "info %1$s", 0, "ops       19: dequantize_per_tensor 5"},
    /* dequantize_zero_point_min.bpte: the UI's run of it (dequantize_with_any_zero_point) */
    {"dequantize_zero_point_min.bpte", "info %1$s", 0, "dequantize_per_channel"},
    /* and verify gives the runtime's load checks of the program a .bpte embeds, as of a .pte */
    {"numel_overflow.bpte", "verify %1$s", 1,
     "numel_overflow.bpte: forward: values[3]: error: numel overflowed at dimension 3 with size 100663296 "
     "[program_validation.cpp validate_tensor]"},
    /* text that would drive the terminal, shown escaped (every_command_shows_text_escaped) */
    {"escapes.pt2", "info %1$s", 0, "tags      1: tag\\x1b]0;title\\x07\\x1b]52;c;aGk=\\x07\\x1b[2J\\u009b31m\\x7f\\u202egnp.exe\\u2066 1 node"},
    {"escapes.pte", "info %1$s", 0,
     "lowered_module_0 BundledBackend\\x1b]0;title\\x07\\x1b[2J\\u009b31m\\u202e\\xff\\xc0\\x80\\xed\\xa0\\x80: 448 B blob"},
    /* the devtools files carrying the same strings (every_devtools_command_shows_text_escaped);
     * an error message naming a method the file names */
    {"escapes.bpte", "run %1$s", 1,
     "case 0: error: program: no method 'forward\\x1b]0;title\\x07\\x1b[2J\\u009b31m\\u202e\\xff\\xc0\\x80\\xed\\xa0\\x80' "
     "(methods: forward)"},
    {"escapes.etrecord", "diff %1$s --step 1", 0,
     "- add\\x1b]0;title\\x07\\x1b]52;c;aGk=\\x07\\x1b[2J\\u009b31m\\x7f\\u202egnp.exe\\u2066: aten.add.Tensor(x, p_w)"},
    /* ';' inside module names (torch's nn_module_stack joins entries with ';', unescaped): one
     * module a line, the names whole */
    {"module_stack_semicolon.json", "node %1$s add --step 0", 0,
     "modules   L__self__,,m.M\n          L__self___blocks_a_b,getattr(L['self'].blocks, 'a;b'),m.Block\n"
     "          blocks.c;d,blocks.c;d,m.Inner\n"},
    {"source_fn_stack_entries.json", "node %1$s add --step 0", 0,
     "source_fn l__self___block,m.Block\n          add,torch.add\ntorch_fn  add_1;builtin_function_or_method.add\n"},
    /* names the UI cuts to their columns (check_tui: screen_long_and_wide_names); the CLI prints them whole */
    {"long_name.json", "node %1$s add --step 0", 0, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA_TAILEND float32[4]\n"},
    {"wide_names.json", "node %1$s add --step 0", 0,
     "self               \u4e2d\u4e2d\u4e2d\u4e2d\u4e2d\u4e2d\u4e2d\u4e2d\u4e2d\u4e2d\u4e2d\u4e2d\u4e2d\u4e2d\u4e2d\u4e2d\u4e2d"
     "\u4e2d\u4e2d\u4e2d_E float32[4]\n"},
    {"escapes.etdp", "info %1$s", 2, "escapes.etdp: an ETDump (\"ED00\", the trace ExecuTorch's runtime writes of a run), not a program"},
};
#define N_CASES (sizeof cases / sizeof cases[0])

/* every file in tests/corpus but the generators */
static int corpus_files(char names[][256], int max)
{
    DIR *d = opendir(tu_root("tests/corpus"));
    ck_assert_ptr_nonnull(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        if (e->d_name[0] == '.' || strncmp(e->d_name, "gen_", 4) == 0) continue;
        snprintf(names[n++], 256, "%s", e->d_name);
    }
    closedir(d);
    ck_assert_int_lt(n, max);
    return n;
}

static bool in_table(const char *file)
{
    for (size_t i = 0; i < N_CASES; i++)
        if (strcmp(cases[i].file, file) == 0) return true;
    return false;
}

static void assert_clean(const char *what, const char *out)
{
    ck_assert_msg(!tu_contains(out, "Sanitizer") && !tu_contains(out, "runtime error"), "%s: %s", what, out);
}

START_TEST(corpus_is_refused_with_a_message)
{
    char names[128][256];
    int n = corpus_files(names, 128);
    ck_assert_int_ge(n, 20);
    for (int i = 0; i < n; i++) {
        if (in_table(names[i])) continue;
        char rel[300];
        snprintf(rel, sizeof rel, "tests/corpus/%.200s", names[i]);
        const char *path = tu_root(rel);
        char *out = NULL;
        const char *argv[] = {"info", path, NULL};
        int rc = tu_run(&out, argv);
        ck_assert_msg(rc == 2, "%s: exit %d: %s", rel, rc, out);
        ck_assert_msg(tu_contains(out, path), "%s: message does not name the file: %s", rel, out);
        assert_clean(rel, out);
        /* one message, one line */
        ck_assert_msg(strchr(out, '\n') == out + strlen(out) - 1, "%s: %s", rel, out);
        free(out);
        ls_program *p;
        ls_error err;
        ck_assert_int_eq(ls_load(path, NULL, &p, &err), -1);
        ck_assert_ptr_null(p);
        ck_assert_msg(strncmp(err.msg, path, strlen(path)) == 0, "%s", err.msg);
    }
}
END_TEST

START_TEST(corpus_cases_give_what_they_must)
{
    for (size_t i = 0; i < N_CASES; i++) {
        const corpus_case *c = &cases[i];
        char rel[300], written[4096];
        snprintf(rel, sizeof rel, "tests/corpus/%s", c->file);
        snprintf(written, sizeof written, "%s/out.pte", tu_tmpdir());
        struct stat st;
        ck_assert_msg(stat(tu_root(rel), &st) == 0, "%s is missing (make corpus)", rel);
        char *out = NULL;
        int rc = tu_runf(&out, c->args, tu_root(rel), tu_root("samples/shared_constant.pt2"), written);
        ck_assert_msg(rc == c->exit, "%s: '%s': exit %d, want %d: %s", c->file, c->args, rc, c->exit, out);
        ck_assert_msg(tu_contains(out, c->says), "%s: '%s': want '%s' in:\n%s", c->file, c->args, c->says, out);
        assert_clean(c->file, out);
        free(out);
        if (strstr(c->args, "%3$s")) ck_assert_msg(stat(written, &st) != 0, "%s: '%s' wrote %s", c->file, c->args, written);
    }
}
END_TEST

/* Every command on the files whose strings would drive a terminal: nothing in the output is
 * left for a terminal to act on (safe_text.h), the text is there escaped, and --json parses. */
START_TEST(every_command_shows_text_escaped)
{
    static const char *const commands[] = {
        "info %s", "verify %s", "passes %s", "partitions %s --step 0", "partitions %s", "diff %s --step 1",
        "diff %s --step to_backend", "run %s", "run %s --compare", "info %s --json", "passes %s --json",
        "partitions %s --json --step 0", "run %s --json", "graph %s --step 0", "graph %s --step 0 --dot",
        "graph %s --json",
    };
    static const char *const files[] = {"tests/corpus/escapes.pt2", "tests/corpus/escapes.pte"};
    for (int f = 0; f < 2; f++) {
        int escaped = 0;
        for (size_t c = 0; c < sizeof commands / sizeof commands[0]; c++) {
            char *out = NULL;
            int rc = tu_runf(&out, commands[c], tu_root(files[f]));
            ck_assert_msg(rc >= 0 && rc <= 2, "%s: '%s': exit %d: %s", files[f], commands[c], rc, out);
            assert_clean(files[f], out);
            ck_assert_msg(ls_safe_is_plain(out, strlen(out), LS_SAFE_LAYOUT), "%s: '%s' printed raw controls:\n%s",
                          files[f], commands[c], out);
            escaped += tu_contains(out, "\\x1b]0;title\\x07") || tu_contains(out, "\\u001b]0;title\\u0007");
            if (strstr(commands[c], "--json") && rc == 0) { /* stderr is in out too when it is not */
                cJSON *j = cJSON_Parse(out);
                ck_assert_msg(j != NULL, "%s: '%s': not JSON:\n%s", files[f], commands[c], out);
                cJSON_Delete(j);
            }
            free(out);
        }
        ck_assert_msg(escaped >= 4, "%s: the escaped text is in only %d outputs", files[f], escaped);
    }
    /* and what JSON readers get back is the name the file has */
    char *out = NULL;
    ck_assert_int_eq(tu_runf(&out, "passes %s --json --pipeline to_edge", tu_root("tests/corpus/escapes.pt2")), 0);
    cJSON *j = cJSON_Parse(out);
    ck_assert_ptr_nonnull(j);
    const cJSON *node0 = cJSON_GetArrayItem(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "steps"), 0),
                                                                   "programs"),
                                               0),
                            "nodes"),
        0);
    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(node0, "name")),
                     "add\x1b]0;title\x07\x1b]52;c;aGk=\x07\x1b[2J\xc2\x9b" "31m\x7f\xe2\x80\xaegnp.exe\xe2\x81\xa6");
    cJSON_Delete(j);
    free(out);
}
END_TEST

/* lowerscope node on the nodes whose names, targets, tags, stack traces and backend carry those
 * strings (escapes.pt2's add at step 0; escapes.pte's delegate call, whose backend id has them,
 * and its CPU op), and on a missing name that has them (the error): nothing raw, the text escaped,
 * --json valid and giving back the name the file has. */
START_TEST(node_shows_text_escaped)
{
#define ESCAPED_NAME "add\x1b]0;title\x07\x1b]52;c;aGk=\x07\x1b[2J\xc2\x9b" "31m\x7f\xe2\x80\xaegnp.exe\xe2\x81\xa6"
    static const struct {
        const char *file, *args;
        int rc;
    } nodes[] = {
        {"tests/corpus/escapes.pt2", ESCAPED_NAME " --step 0", 0},
        {"tests/corpus/escapes.pt2", ESCAPED_NAME " --step 0 --json", 0},
        {"tests/corpus/escapes.pt2", "x" ESCAPED_NAME " --step 0", 2},
        {"tests/corpus/escapes.pte", "executorch_call_delegate", 0},
        {"tests/corpus/escapes.pte", "executorch_call_delegate --json", 0},
        {"tests/corpus/escapes.pte", "aten_atan2__0_title___2j__31m__________out", 0},
        {"tests/corpus/escapes.pte", "aten_atan2__0_title___2j__31m__________out --json", 0},
    };
    for (size_t c = 0; c < sizeof nodes / sizeof nodes[0]; c++) {
        char *out = NULL;
        int rc = tu_runf(&out, "node %s %s", tu_root(nodes[c].file), nodes[c].args);
        ck_assert_msg(rc == nodes[c].rc, "%s: node %s: exit %d: %s", nodes[c].file, nodes[c].args, rc, out);
        assert_clean(nodes[c].file, out);
        ck_assert_msg(ls_safe_is_plain(out, strlen(out), LS_SAFE_LAYOUT), "%s: node %s printed raw controls:\n%s",
                      nodes[c].file, nodes[c].args, out);
        ck_assert_msg(tu_contains(out, "\\x1b]0;title\\x07") || tu_contains(out, "\\u001b]0;title\\u0007"),
                      "%s: node %s: the text is not there escaped:\n%s", nodes[c].file, nodes[c].args, out);
        ck_assert_msg(tu_contains(out, "\\u202e"), "%s: node %s: no \\u202e:\n%s", nodes[c].file, nodes[c].args, out);
        if (strstr(nodes[c].args, "--json")) {
            cJSON *j = cJSON_Parse(out);
            ck_assert_msg(j != NULL, "%s: node %s: not JSON:\n%s", nodes[c].file, nodes[c].args, out);
            if (c == 1) ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(j, "name")), ESCAPED_NAME);
            cJSON_Delete(j);
        }
        free(out);
    }
#undef ESCAPED_NAME
}
END_TEST

/* Box text is cut to width as it is shown: every line of a box is as wide as its top */
static void assert_boxes_aligned(const char *what, const char *out)
{
    long top = -1;
    for (const char *line = out; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        long cols = 0;
        for (size_t i = 0; i < len; i++) cols += ((unsigned char)line[i] & 0xc0) != 0x80;
        if (!strncmp(line, "\xe2\x94\x8c", 3)) top = cols; /* ┌ */
        else if (top >= 0 && !strncmp(line, "\xe2\x94\x82", 3)) /* │ */
            ck_assert_msg(cols == top, "%s: a box line of %ld columns under a top of %ld:\n%.*s", what, cols, top, (int)len, line);
        line += len + (end != NULL);
    }
}

/* The commands that read the devtools files, on files carrying the same strings (a .bpte of
 * escapes.pte, an ETDump of a run of it with those strings as event names and a debug id, the
 * ETRecord of escapes.pt2): nothing raw, the text there escaped, --json valid, boxes aligned. */
START_TEST(every_devtools_command_shows_text_escaped)
{
    static const char *const commands[] = {
        "info %1$s/escapes.bpte", "info %1$s/escapes.bpte --json", "run %1$s/escapes.bpte",
        "run %1$s/escapes.bpte --json", "verify %1$s/escapes.bpte", "passes %1$s/escapes.bpte",
        "graph %1$s/escapes.bpte", "graph %1$s/escapes.bpte --json", "run %1$s/escapes.pte --etdump %1$s/escapes.etdp",
        "run %1$s/escapes.pte --etdump %1$s/escapes.etdp --json", "info %1$s/escapes.etrecord",
        "info %1$s/escapes.etrecord --json", "passes %1$s/escapes.etrecord", "passes %1$s/escapes.etrecord --json",
        "diff %1$s/escapes.etrecord --step 1", "diff %1$s/escapes.etrecord --step 1 --json",
        "graph %1$s/escapes.etrecord --step 0", "graph %1$s/escapes.etrecord --step 0 --dot",
        "run %1$s/escapes.etrecord --etdump %1$s/escapes.etdp", "run %1$s/escapes.etrecord --etdump %1$s/escapes.etdp --json",
        "info %1$s/escapes.etdp", "run %1$s/escapes.etdp",
    };
    int escaped = 0;
    for (size_t c = 0; c < sizeof commands / sizeof commands[0]; c++) {
        char *out = NULL;
        int rc = tu_runf(&out, commands[c], tu_root("tests/corpus"));
        ck_assert_msg(rc >= 0 && rc <= 2, "'%s': exit %d: %s", commands[c], rc, out);
        assert_clean(commands[c], out);
        ck_assert_msg(ls_safe_is_plain(out, strlen(out), LS_SAFE_LAYOUT), "'%s' printed raw controls:\n%s", commands[c], out);
        escaped += tu_contains(out, "\\x1b]0;title\\x07") || tu_contains(out, "\\u001b]0;title\\u0007");
        if (strstr(commands[c], "--json") && rc <= 1) {
            cJSON *j = cJSON_Parse(out);
            ck_assert_msg(j != NULL, "'%s': not JSON:\n%s", commands[c], out);
            cJSON_Delete(j);
        }
        if (!strncmp(commands[c], "graph", 5)) assert_boxes_aligned(commands[c], out);
        free(out);
    }
    ck_assert_msg(escaped >= 14, "the escaped text is in only %d outputs", escaped);
}
END_TEST

/* The output filter gets the text in the pieces stdio hands it: a name of 1- to 4-byte
 * characters long enough to cross many buffer boundaries comes out whole, not as \xNN. */
START_TEST(output_filter_keeps_characters_cut_by_buffers)
{
    uint8_t *base;
    size_t n;
    ls_error err;
    ck_assert_int_eq(ls_read_file(tu_root("tests/programs/base.json"), 1 << 20, &base, &n, &err), 0);
    ls_buf name = {0}, text = {0};
    for (int i = 0; i < 3000; i++) ls_buf_puts(&name, "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
    for (const char *p = (const char *)base; p < (const char *)base + n;) { /* "add" becomes the name */
        if (!strncmp(p, "\"add\"", 5)) {
            ls_buf_printf(&text, "\"%s\"", name.s);
            p += 5;
        } else {
            ls_buf_putc(&text, *p++);
        }
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/long.json", tu_tmpdir());
    ck_assert_int_eq(ls_write_file_atomic(path, text.s, text.len, &err), 0);
    char *out = NULL;
    ck_assert_int_eq(tu_runf(&out, "diff %s --step 1", path), 0);
    ck_assert_msg(tu_contains(out, name.s), "the name came out cut");
    ck_assert(!tu_contains(out, "\\x"));
    free(out);
    free(base);
    ls_buf_free(&name);
    ls_buf_free(&text);
}
END_TEST

/* Out of memory names the file being read: the binary with its address space capped (under
 * ASan, which reserves more than any cap, its allocator refuses big requests instead) reads a
 * 1 GiB JSON file (sparse: it costs no disk). */
/* The binary run with ARGS and its memory capped at 512 MiB (under ASan, which reserves more
 * than any cap, its allocator refuses big requests instead); its output into out. Returns the
 * wait status. */
static int run_capped(const char *const *args, char *out, size_t cap)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
#if defined(__SANITIZE_ADDRESS__)
        setenv("ASAN_OPTIONS", "allocator_may_return_null=1:max_allocation_size_mb=256:detect_leaks=0", 1);
#else
        struct rlimit rl = {(rlim_t)512 << 20, (rlim_t)512 << 20};
        setrlimit(RLIMIT_AS, &rl);
#endif
        const char *bin = getenv("LS_BIN");
        char *argv[16] = {"lowerscope"};
        for (int i = 0; args[i] && i < 14; i++) argv[i + 1] = (char *)args[i];
        execv(bin ? bin : "build/lowerscope", argv);
        _exit(127);
    }
    close(fds[1]);
    size_t n = 0;
    ssize_t r;
    while (n < cap - 1 && (r = read(fds[0], out + n, cap - 1 - n)) > 0) n += (size_t)r;
    out[n] = 0;
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    return status;
}

/* Found by fuzz_bpte: a convolution whose stride and padding make float32[1, 4, 4, 32899076]
 * where the program says [1, 4, 4, 4]. It computed that (6 GiB, 15 s) before the runtime said
 * so; now refused before anything is allocated, as ExecuTorch's resize of a static output
 * refuses it, so it gives the same message in 512 MiB. */
START_TEST(convolution_of_another_shape_is_refused_before_it_runs)
{
    const char *args[] = {"run", tu_root("tests/corpus/conv_huge_output.bpte"), NULL};
    char out[4096];
    int status = run_capped(args, out, sizeof out);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status %d: %s", status, out);
    ck_assert_msg(tu_contains(out, "forward case 0: error: program: node aten_convolution_default "
                                   "(aten.convolution.default): produced float32[1, 4, 4, 32899076] where the program "
                                   "says float32[1, 4, 4, 4]"), "%s", out);
}
END_TEST

/* Out of memory while running names the file and the node: a sum of int8[2^26] (64 MiB)
 * accumulates in int64, so the kernel's scratch copy of its input is 512 MiB, past the cap. The
 * exit code is that of every out of memory (3). */
START_TEST(out_of_memory_in_a_kernel_names_the_file_and_node)
{
    static const char program[] =
        "{\"graph_module\":{\"graph\":{\"inputs\":[{\"as_tensor\":{\"name\":\"x\"}}],\"outputs\":[{\"as_tenso"
        "r\":{\"name\":\"sum_1\"}}],\"nodes\":[{\"target\":\"torch.ops.aten.sum.default\",\"inputs\":[{\"name"
        "\":\"self\",\"arg\":{\"as_tensor\":{\"name\":\"x\"}},\"kind\":1}],\"outputs\":[{\"as_tensor\":{\"nam"
        "e\":\"sum_1\"}}],\"metadata\":{},\"is_hop_single_tensor_return\":null}],\"tensor_values\":{\"x\":{\""
        "dtype\":2,\"sizes\":[{\"as_int\":67108864}],\"requires_grad\":false,\"device\":{\"type\":\"cpu\",\"i"
        "ndex\":null},\"strides\":[{\"as_int\":1}],\"storage_offset\":{\"as_int\":0},\"layout\":7},\"sum_1\":"
        "{\"dtype\":5,\"sizes\":[],\"requires_grad\":false,\"device\":{\"type\":\"cpu\",\"index\":null},\"str"
        "ides\":[],\"storage_offset\":{\"as_int\":0},\"layout\":7}},\"sym_int_values\":{},\"sym_bool_values\""
        ":{},\"is_single_tensor_return\":false,\"custom_obj_values\":{},\"sym_float_values\":{}},\"signature\""
        ":{\"input_specs\":[{\"user_input\":{\"arg\":{\"as_tensor\":{\"name\":\"x\"}}}}],\"output_specs\":[{\""
        "user_output\":{\"arg\":{\"as_tensor\":{\"name\":\"sum_1\"}}}}]},\"module_call_graph\":[{\"fqn\":\"\""
        ",\"signature\":null}],\"metadata\":{},\"treespec_namedtuple_fields\":{}},\"opset_version\":{\"aten\""
        ":10},\"range_constraints\":{},\"schema_version\":{\"major\":8,\"minor\":12},\"verifiers\":[\"ATEN\"]"
        ",\"torch_version\":\"2.9.0\"}";
    char path[4096];
    snprintf(path, sizeof path, "%s/sum_int8_64m.json", tu_tmpdir());
    ls_error err;
    ck_assert_int_eq(ls_write_file_atomic(path, program, sizeof program - 1, &err), 0);
    const char *args[] = {"run", path, NULL};
    char out[4096];
    int status = run_capped(args, out, sizeof out);
    unlink(path);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 3, "status %d: %s", status, out);
    char want[4300];
    snprintf(want, sizeof want,
             "lowerscope: %s: out of memory (asked for 536870912 bytes of kernel scratch) while running node sum_1 "
             "(aten.sum.default)",
             path);
    ck_assert_msg(tu_contains(out, want), "%s", out);
}
END_TEST

START_TEST(out_of_memory_names_the_file)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/big.json", tu_tmpdir());
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "{", 1), 1);
    ck_assert_int_eq(ftruncate(fd, (off_t)1 << 30), 0);
    close(fd);
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
#if defined(__SANITIZE_ADDRESS__)
        setenv("ASAN_OPTIONS", "allocator_may_return_null=1:max_allocation_size_mb=256:detect_leaks=0", 1);
#else
        struct rlimit rl = {(rlim_t)512 << 20, (rlim_t)512 << 20};
        setrlimit(RLIMIT_AS, &rl);
#endif
        const char *bin = getenv("LS_BIN");
        execl(bin ? bin : "build/lowerscope", "lowerscope", "info", path, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char out[4096];
    size_t n = 0;
    ssize_t r;
    while (n < sizeof out - 1 && (r = read(fds[0], out + n, sizeof out - 1 - n)) > 0) n += (size_t)r;
    out[n] = 0;
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    unlink(path);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 3, "status %d: %s", status, out);
    char want[4200];
    snprintf(want, sizeof want, "lowerscope: %s: out of memory (asked for 1073741825 bytes) while reading it", path);
    ck_assert_msg(tu_contains(out, want), "%s", out);
}
END_TEST

/* The rule itself, in-process: a program with a structural error stays at step 0 with its
 * findings; the errors ExecuTorch meets later (a target listed twice, an op of the other
 * dialect) still run the pipeline so the user sees where it fails. */
START_TEST(structural_errors_stop_the_pipeline)
{
    ls_program *p = pf_load(tu_root("tests/corpus/constant_without_target.json"));
    ls_pipeline_opts o;
    ls_pipeline_opts_init(&o);
    ls_history h;
    ls_error err;
    ck_assert_int_eq(ls_pipeline_run(p, &o, &h, &err), 0);
    ck_assert_uint_eq(h.n, 1);
    ck_assert_ptr_nonnull(h.not_run);
    ck_assert_uint_eq(h.steps[0].verify.n_structural, 1);
    ck_assert(h.steps[0].verify.v[0].structural);
    ck_assert_str_eq(h.steps[0].verify.v[0].msg, "InputSpec for c has no target.");
    ls_history_free(&h);
    ls_program_unref(p);
    static const char *const late[] = {"tests/programs/listed_twice.json", "tests/programs/edge_in_aten.json"};
    for (int i = 0; i < 2; i++) {
        p = pf_load(tu_root(late[i]));
        ck_assert_int_eq(ls_pipeline_run(p, &o, &h, &err), 0);
        ck_assert_msg(h.steps[0].verify.n_errors > 0 && h.steps[0].verify.n_structural == 0, "%s", late[i]);
        ck_assert_msg(h.n > 1 && !h.not_run, "%s: %u steps", late[i], h.n);
        ls_history_free(&h);
        ls_program_unref(p);
    }
    ls_pipeline_opts_free(&o);
}
END_TEST

/* Fortran order with no elements reads as the empty tensor of that shape */
START_TEST(fortran_order_without_elements)
{
    ls_tensor *t;
    ls_error err;
    ck_assert_int_eq(ls_npy_load(tu_root("tests/corpus/fortran_zero_dim.npy"), &t, &err), 0);
    ck_assert_int_eq(t->ndim, 3);
    ck_assert_int_eq(t->sizes[0], (int64_t)1 << 61);
    ck_assert_int_eq(t->sizes[2], 0);
    ck_assert_int_eq(t->numel, 0);
    ls_tensor_unref(t);
}
END_TEST

/* Found by fuzz_bpte: a per-channel zero point of -2^63 in a program the UI's run screen runs
 * on seeded inputs (the dequantize of its constant weight): input - zero point overflowed int64
 * (UBSan stops make check's ASan run on it). It runs to what the program really lacks. */
START_TEST(dequantize_with_any_zero_point)
{
    const char *dir = tu_tmpdir();
    setenv("LOWERSCOPE_SCRIPT", tu_root("tests/screens/bpte_run.keys"), 1);
    setenv("LOWERSCOPE_DUMP_DIR", dir, 1);
    setenv("LOWERSCOPE_SIZE", "100x30", 1);
    char *out;
    int rc = tu_runf(&out, "%s", tu_root("tests/corpus/dequantize_zero_point_min.bpte"));
    unsetenv("LOWERSCOPE_SCRIPT");
    ck_assert_msg(rc == 0, "exit %d: %s", rc, out);
    assert_clean("dequantize_zero_point_min.bpte", out);
    free(out);
    char path[4200];
    snprintf(path, sizeof path, "%s/bpte_run.screen", dir);
    char *screen = tu_slurp(path);
    ck_assert_ptr_nonnull(screen);
    ck_assert_msg(tu_contains(screen, "run 1 failed:"), "%s", screen);
    ck_assert_msg(tu_contains(screen, "a 3-D or 4-D input (1-D or 2-D convolution), not 0-D"), "%s", screen);
    free(screen);
}
END_TEST

Suite *corpus_suite(void)
{
    Suite *s = suite_create("corpus");
    TCase *tc = tcase_create("corpus");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, corpus_is_refused_with_a_message);
    tcase_add_test(tc, corpus_cases_give_what_they_must);
    tcase_add_test(tc, every_command_shows_text_escaped);
    tcase_add_test(tc, node_shows_text_escaped);
    tcase_add_test(tc, every_devtools_command_shows_text_escaped);
    tcase_add_test(tc, output_filter_keeps_characters_cut_by_buffers);
    tcase_add_test(tc, structural_errors_stop_the_pipeline);
    tcase_add_test(tc, out_of_memory_names_the_file);
    tcase_add_test(tc, out_of_memory_in_a_kernel_names_the_file_and_node);
    tcase_add_test(tc, convolution_of_another_shape_is_refused_before_it_runs);
    tcase_add_test(tc, dequantize_with_any_zero_point);
    tcase_add_test(tc, fortran_order_without_elements);
    suite_add_tcase(s, tc);
    return s;
}
