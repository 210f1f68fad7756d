// The kbench command line: `list`, `run`, `probe`, `help`. Returns the
// process exit code (docs/kbench-help.txt lists them).
#pragma once

namespace kb {

enum ExitCode { kExitOk = 0, kExitRowsFailed = 1, kExitUsage = 2, kExitNoDevice = 3 };

int kbench_main(int argc, char** argv);

}  // namespace kb
