/* The lowerscope command: everything lives in cli.c so the tests can link it too. */
#include "cli.h"

int main(int argc, char **argv)
{
    return ls_cli_main(argc, argv);
}
