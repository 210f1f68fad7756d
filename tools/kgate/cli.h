// The kgate command line: check, compare, and the hidden simulate and
// gen-history (the evidence and the benchmark behind docs/gate.md).
// Returns the exit code: 0 pass, 1 regression, 2 bad usage or input.
#pragma once

namespace kb {

int kgate_main(int argc, char** argv);

}  // namespace kb
