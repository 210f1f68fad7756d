// The kgate command line: check, compare, dashboard, noise, siblings,
// gpt-fast, bringup and selftest-table; one file per command in
// tools/kgate/cli/.
// Returns the exit code: 0 pass, 1 regression, 2 bad usage or input.
#pragma once

namespace kb {

int kgate_main(int argc, char** argv);

}  // namespace kb
