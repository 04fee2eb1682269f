/* Writing an ETRecord (etrecord.h) as ETRecord.save lays one out: ETRECORD_V0 first, then the
 * programs (each followed by its _state_dict, _constants and _example_inputs), then the maps,
 * STORED as Python's zipfile writes them. */
#include <stdlib.h>
#include <string.h>

#include "../formats.h"
#include "etrecord.h"
#include "export.h"

typedef LS_VEC(ls_zip_member) members;

static void add(members *m, const char *name, const char *text)
{
    ls_zip_member x = {.name = ls_strdup(name), .data = (uint8_t *)ls_strdup(text ? text : ""), .size = text ? strlen(text) : 0};
    ls_vec_push(m, x);
}

static int add_program(members *m, const char *base, const ls_program *p, ls_error *err)
{
    char *json = ls_program_json_exir(p, err);
    if (!json) return -1;
    add(m, base, json);
    free(json);
    static const char *const pickles[] = {"_state_dict", "_constants", "_example_inputs"};
    for (int i = 0; i < 3; i++) add(m, ls_internf("%s%s", base, pickles[i]), NULL);
    return 0;
}

int ls_etrecord_write(const ls_etrecord_parts *parts, const char *path, ls_error *err)
{
    if (!parts->edge) return ls_fail(err, "%s: an ETRecord needs the Edge program", path);
    members m = {0};
    add(&m, "ETRECORD_V0", NULL);
    int rc = 0;
    if (parts->exported) rc = add_program(&m, "exported_program", parts->exported, err);
    if (rc == 0) rc = add_program(&m, "edge_dialect_exported_program", parts->edge, err);
    if (rc == 0 && parts->debug_handle_map) add(&m, "debug_handle_map", parts->debug_handle_map);
    if (rc == 0 && parts->delegate_map) add(&m, "delegate_map", parts->delegate_map);
    if (rc == 0) add(&m, "export_graph_id", "0");
    uint8_t *bytes = NULL;
    size_t size = 0;
    if (rc == 0) rc = ls_zip_build(m.v, m.n, 0, &bytes, &size, err);
    if (rc == 0) rc = ls_write_file_atomic(path, bytes, size, err);
    else ls_fail_prefix(err, "%s", path);
    free(bytes);
    for (uint32_t i = 0; i < m.n; i++) {
        free(m.v[i].name);
        free(m.v[i].data);
    }
    free(m.v);
    return rc;
}
