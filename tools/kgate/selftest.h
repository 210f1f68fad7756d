// `kgate selftest-table` (tools/gate-selftest.sh; docs/gate.md "The
// self-test on a GPU"): each night of an A/A history gated against the
// nights before it, and per injected drop the share of keys failed on that
// night by noise class, as a Markdown table.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tools/kgate/gate.h"

namespace kb {

struct SelftestInput {
  std::string aa;                                     // the A/A history file
  std::vector<std::pair<double, std::string>> drops;  // (percent, file)
};

std::string selftest_markdown(const SelftestInput& in, const GateOptions& opt);

}  // namespace kb
