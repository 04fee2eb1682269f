/* Writes the binary corpus files that are easier to make from a real file than by hand:
 *
 *     make corpus
 *
 * runs it as build/gen_corpus_pte SAMPLES_PTE CORPUS_DIR after exporting samples/shared_constant.pt2.
 * Each file is a valid file with one field changed, as a fuzzer found it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "pte.h"

int main(int argc, char **argv);

static int write_variant(const char *src, const char *dir, const char *name, void (*change)(ls_pte *))
{
    ls_pte pte;
    ls_error err;
    if (ls_pte_read_file(src, &pte, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    change(&pte);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int rc = ls_pte_write_file(&pte, path, &err);
    if (rc != 0) fprintf(stderr, "%s\n", err.msg);
    ls_pte_free(&pte);
    return rc != 0;
}

/* the DelegateCall keeps its delegate but loses every argument (the runtime accepts that: its
 * instruction arguments are a list of any length, method.cpp gen_instruction_arguments) */
static void delegate_call_without_arguments(ls_pte *pte)
{
    ls_pte_plan *pl = &pte->execution_plan.v[0];
    for (uint32_t c = 0; c < pl->chains.n; c++)
        for (uint32_t i = 0; i < pl->chains.v[c].instructions.n; i++) {
            ls_pte_instruction *in = &pl->chains.v[c].instructions.v[i];
            if (in->kind != LS_PTE_DELEGATE_CALL) continue;
            free(in->delegate_call.args.v);
            in->delegate_call.args.v = NULL;
            in->delegate_call.args.n = 0;
            in->delegate_call.args.present = true;
        }
}

/* strings a terminal would act on, and bytes that are not UTF-8 at all (flatbuffers' strings
 * are bytes): every command shows them escaped, and --json stays valid UTF-8 */
static void escapes(ls_pte *pte)
{
    static const char evil[] = "\x1b]0;title\x07\x1b[2J\xc2\x9b" "31m\xe2\x80\xae\xff\xc0\x80\xed\xa0\x80";
    ls_pte_plan *pl = &pte->execution_plan.v[0];
    for (uint32_t i = 0; i < pl->delegates.n; i++) {
        char *id = malloc(strlen(pl->delegates.v[i].id) + sizeof evil);
        sprintf(id, "%s%s", pl->delegates.v[i].id, evil);
        free(pl->delegates.v[i].id);
        pl->delegates.v[i].id = id;
    }
    for (uint32_t i = 0; i < pl->operators.n; i++) {
        char *name = malloc(strlen(pl->operators.v[i].name) + sizeof evil);
        sprintf(name, "%s%s", pl->operators.v[i].name, evil);
        free(pl->operators.v[i].name);
        pl->operators.v[i].name = name;
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: gen_corpus_pte SAMPLE.pte CORPUS_DIR\n");
        return 2;
    }
    return write_variant(argv[1], argv[2], "delegate_call_without_arguments.pte", delegate_call_without_arguments) |
           write_variant(argv[1], argv[2], "escapes.pte", escapes);
}
