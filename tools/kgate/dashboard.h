// `kgate dashboard`: the whole history as a DashboardData; the newest run of
// each GPU carries run_gate()'s verdicts, every earlier point is judged as
// the gate would have judged it that night (judge_series).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "reports/dashboard_data.h"
#include "tools/kgate/gate.h"
#include "tools/kgate/history.h"

namespace kb {

// Every point of one gate key (`series`: merge_series), oldest first, each
// judged by judge_key as on its own night.
std::vector<DashboardPoint> judge_series(const GateContext& g, const Key& key,
                                         const std::vector<uint32_t>& series);

struct DashboardOptions {
  GateOptions gate;
  std::string title = "kbench history";
};

DashboardData build_dashboard(const History& h, const DashboardOptions& opt);

// "YYYY-MM-DDThh:mm:ssZ", the only timestamp the reader lets through, as
// seconds since 1970; false when it is not such a time.
bool parse_iso_time(std::string_view s, int64_t& out);

}  // namespace kb
