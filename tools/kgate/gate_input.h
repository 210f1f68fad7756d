// What about tonight's input fails the night before any key is judged
// (DESIGN.md "The gate's rules", rule 5: fail closed): the rows of tonight's
// run that kgate cannot trust (History::untrusted()), and a newest run with
// far fewer keys than the run before it on the same GPU model.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "reports/gate_result.h"
#include "tools/kgate/history.h"

namespace kb {

// The newest run and the one before it, per arch (History::arch_runs()),
// and how many keys (the gate's keys: a run's GPUs of one kind are one)
// each has.
struct ArchGate {
  uint32_t newest = 0, previous = 0;
  bool has_previous = false;
  size_t keys = 0, previous_keys = 0;
};

// A newest run with fewer than this share of the keys of the run before it
// is partial: a run cut short, or a stray row appended as a run of its own.
inline constexpr double kPartialRunShare = 0.5;

void add_input_failures(const History& hist, const std::map<std::string, ArchGate>& arch_runs,
                        GateReport& rep);

}  // namespace kb
