// `kgate selftest-table` (hidden; tools/gate-selftest.sh): the gate measured
// on the GPU, as a Markdown table (the figures of docs/decisions/0017).
// - A/A: an A/A history of nightly runs (with their re-measurements), as
//   nightly.sh appends it (night by night: the file before night k+1 is the
//   history night k was gated on); each
//   night k is gated against the nights before it, as the nightly did:
//   failing nights and the keys re-measured per night.
// - Injected drops: per drop size, a copy of the A/A history with one more
//   nightly run made PCT% slower; the share of keys failed on that night,
//   per noise class of the A/A history (kgate noise).
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
