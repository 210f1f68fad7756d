// The kgate commands, one file each; each takes the command line from its
// name on and returns the exit code.
#pragma once

#include "tools/kgate/cli/options.h"

namespace kb::kgate_cli {

int cmd_check(const Args& args);
int cmd_compare(const Args& args);
int cmd_dashboard(const Args& args);
int cmd_gpt_fast(const Args& args);
int cmd_bringup(const Args& args);
int cmd_noise(const Args& args);
int cmd_siblings(const Args& args);
int cmd_selftest_table(const Args& args);

}  // namespace kb::kgate_cli

namespace kb {
// The kgate command line; returns the exit code: 0 pass, 1 regression, 2
// bad usage or input.
int kgate_main(int argc, char** argv);
}  // namespace kb
