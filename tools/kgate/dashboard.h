// `kgate dashboard`: the whole history as a DashboardData
// (reports/dashboard_data.h), for a page that shows every key's trend.
//
// Nothing here re-decides what the gate decides: the newest run of each GPU
// carries run_gate()'s verdicts, and every earlier point is judged the way
// the gate would have judged it on its own night (the same history rule,
// window and target lookup: judge_series), so the colours of a trend are the
// verdicts a nightly job would have printed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "reports/dashboard_data.h"
#include "tools/kgate/gate.h"
#include "tools/kgate/history.h"

namespace kb {

// The columns History does not keep (git_sha, driver, cuda, attempt), read
// from the same files by a second, light pass; rows are found again by
// (file, line).
class RowExtras {
 public:
  // `file` is the file's index in History::files().
  void add_text(uint32_t file, std::string_view text);
  void add_file(uint32_t file, const std::string& path);

  struct Extra {
    uint32_t line = 0;
    uint32_t git_sha = 0, driver = 0, cuda = 0;  // indices into strings(); 0 = ""
    int attempt = 1;                             // 1 when the column is absent or empty
  };
  // nullptr when the row was not seen (a file without these columns).
  const Extra* find(uint32_t file, uint32_t line) const;
  const std::string& str(uint32_t i) const { return strings_[i]; }

 private:
  uint32_t intern(std::string_view s);
  std::vector<std::vector<Extra>> rows_;  // per file, by line
  std::vector<std::string> strings_{""};
  std::unordered_map<std::string, uint32_t> index_{{"", 0}};
};

// Every point of one key, oldest first, each judged as the gate judges its
// newest run: rule 1 (failed/incorrect), rule 2 (target, from the target
// files or the row's column), rule 3 (history_rule on the earlier measured,
// unthrottled runs of the window), throttled failures inconclusive.
std::vector<DashboardPoint> judge_series(const History& h, uint32_t key, const GateOptions& opt);

struct DashboardOptions {
  GateOptions gate;
  std::string title = "kbench history";
};

DashboardData build_dashboard(const History& h, const RowExtras& extras,
                              const DashboardOptions& opt);

// "YYYY-MM-DDThh:mm:ssZ" (also with fractional seconds, or "+00:00") as
// seconds since 1970; false when it is not such a time.
bool parse_iso_time(std::string_view s, int64_t& out);

}  // namespace kb
