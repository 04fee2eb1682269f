/* The shipped profiles compiled into the library (private to src/passes/): profiles/NAME.json,
 * turned into C data by profiles/embed.sh when the library is built (build/gen/). */
#ifndef LS_PROFILE_EMBED_H
#define LS_PROFILE_EMBED_H

#include <stddef.h>

typedef struct ls_embedded_profile {
    const char *name; /* the file name without .json */
    const char *json;
    size_t len;
} ls_embedded_profile;

extern const ls_embedded_profile ls_embedded_profiles[];
extern const unsigned ls_embedded_profile_count;

#endif
