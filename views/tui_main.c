/* `lowerscope FILE`: options, loading, and the UI. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: lowerscope FILE [--no-color] [--step S] [--pipeline A,B,...] [--backend FILE|bundled] [--etdump D.etdp]\n"
               "                       [--relower] [--method NAME] [--data FILE.ptd]... [--ops FILE]\n"
               "opens the terminal UI on FILE (.pt2, its JSON, .pte, .bpte, an ETRecord) and its pass history;\n"
               "a .pte opens as the file holds it (step 0) unless --relower, --pipeline or --backend lower it\n"
               "again; --etdump shows what a device measured (an ETDump of FILE's program) on its nodes.\n"
               "environment: NO_COLOR (tags as letters), LOWERSCOPE_SCRIPT=FILE with LOWERSCOPE_SIZE=COLSxROWS\n"
               "(scripted, off-screen: docs/tui.md). Press ? in the UI for every key.\n");
}

int ls_tui_main(int argc, char **argv)
{
    ls_tui_opts o = {0};
    ls_tui_opts_env(&o);
    ls_error err = {0};
    if (ui_core_options(&argc, argv, &err) != 0) {
        fprintf(stderr, "lowerscope: %s\n", err.msg);
        return 2;
    }
    const char *file = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--no-color")) {
            o.no_color = true;
        } else if (!strcmp(argv[i], "--step") && i + 1 < argc) {
            o.start_step = argv[++i];
        } else if (!strcmp(argv[i], "--etdump") && i + 1 < argc) {
            o.etdump = argv[++i];
            ls_error empty;
            if (ls_refuse_empty_path("--etdump", o.etdump, "the ETDump (.etdp) a device wrote", &empty) != 0) {
                fprintf(stderr, "lowerscope: %s\n", empty.msg);
                return 2;
            }
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "lowerscope: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        } else if (!file) {
            file = argv[i];
        } else {
            fprintf(stderr, "lowerscope: one file at a time ('%s' and '%s')\n", file, argv[i]);
            return 2;
        }
    }
    if (!file) {
        usage(stderr);
        return 2;
    }
    ls_history *h = NULL;
    if (ui_core_open_live(file, &h, &err) != 0) {
        fprintf(stderr, "lowerscope: %s\n", err.msg);
        ui_core_done();
        return 2;
    }
    int rc = ls_tui_run(h, &o, &err);
    if (rc == 2) fprintf(stderr, "lowerscope: %s\n", err.msg);
    ui_core_free(h);
    ui_core_done();
    return rc;
}
