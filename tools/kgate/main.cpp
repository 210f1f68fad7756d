#include "tools/kgate/cli/commands.h"

int main(int argc, char** argv) { return kb::kgate_main(argc, argv); }
