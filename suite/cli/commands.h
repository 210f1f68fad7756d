// The commands of kbench, one file each under suite/cli/; each returns the
// process exit code (suite/cli.h) and throws UsageError for a bad command line.
#pragma once

#include "suite/cli/args.h"

namespace kb::cli {

int cmd_list(const Args& a);   // list.cpp
int cmd_run(const Args& a);    // run.cpp
int cmd_rerun(const Args& a);  // rerun.cpp: run --rerun
int cmd_probe(const Args& a);  // probe.cpp
int cmd_tune(const Args& a);   // tune.cpp: cuBLASLt's table, or `tune gemv`'s

}  // namespace kb::cli
