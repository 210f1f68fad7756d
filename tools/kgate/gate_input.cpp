#include "tools/kgate/gate_input.h"

#include <cstdint>

namespace kb {

void add_input_failures(const History& hist, const std::map<std::string, ArchGate>& arch_runs,
                        GateReport& rep) {
  for (const Warning& w : hist.untrusted())
    rep.input_failures.push_back(
        {w.path + (w.line && w.line != SIZE_MAX ? ":" + std::to_string(w.line) : std::string()),
         "untrusted row", w.what});
  const auto& runs = hist.runs();
  for (const auto& [arch, a] : arch_runs) {
    if (!a.has_previous || a.keys >= kPartialRunShare * static_cast<double>(a.previous_keys))
      continue;
    rep.input_failures.push_back(
        {arch.empty() ? std::string("rows without an arch") : arch, "partial run",
         "the newest run " + runs[a.newest].label + " has " + std::to_string(a.keys) +
             (a.keys == 1 ? " key" : " keys") + " where the run before it, " +
             runs[a.previous].label + ", had " + std::to_string(a.previous_keys) +
             ": fewer than half (a run cut short, or a stray row appended after the night's "
             "rows: the newest run is the one appended last)"});
  }
}

}  // namespace kb
