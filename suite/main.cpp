#include "suite/cli.h"

int main(int argc, char** argv) { return kb::kbench_main(argc, argv); }
