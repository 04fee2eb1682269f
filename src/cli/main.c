/* The lowerscope command: everything lives in cli.c so the tests can link it too. */
#include "cli.h"
#include "common.h"

int main(int argc, char **argv)
{
    ls_memory_keep_freed();
    return ls_cli_main(argc, argv);
}
