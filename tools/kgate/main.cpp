#include "tools/kgate/cli.h"

int main(int argc, char** argv) { return kb::kgate_main(argc, argv); }
