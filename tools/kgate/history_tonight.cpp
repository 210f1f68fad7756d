// Which runs are tonight's, and what a damaged row means (history.h: "Run
// order is append order" and "Tonight").
#include <algorithm>
#include <set>

#include "tools/kgate/history.h"

namespace kb {

void History::find_arch_runs() {
  arch_runs_.clear();
  for (const auto& o : obs_) {
    auto [it, fresh] = arch_runs_.try_emplace(keys_[o.key].arch);
    ArchRuns& a = it->second;
    if (fresh) {
      a.newest = o.run;
    } else if (o.run > a.newest) {
      a.previous = a.newest;
      a.has_previous = true;
      a.newest = o.run;
    } else if (o.run < a.newest && (!a.has_previous || o.run > a.previous)) {
      a.previous = o.run;
      a.has_previous = true;
    }
  }
}

void History::judge_damaged() {
  untrusted_.clear();
  // Tonight: the newest run, and the GPU models' newest runs whose rows
  // reach past its first row (several GPU models appending at once).
  std::set<uint32_t> tonight;
  uint32_t start = UINT32_MAX;
  if (!runs_.empty()) {
    const Run& last = runs_.back();
    for (const auto& [arch, a] : arch_runs_) {
      const Run& r = runs_[a.newest];
      if (r.last_seen < last.first_seen) continue;
      tonight.insert(a.newest);
      start = std::min(start, r.first_seen);
    }
  }
  // A row between the runs before tonight's and tonight's first row is
  // tonight's (fail closed), but for the last rows of an earlier file: they
  // end that file's last run.
  auto after_start = [&](const Damaged& d) {
    if (start == UINT32_MAX) return false;
    return d.seq > start || (d.seq == start && d.file == obs_[start].file);
  };
  std::vector<size_t> shown(files_.size(), 0);
  for (Damaged& d : damaged_) {
    bool ours = false;
    std::string whose;
    auto it = d.run.empty() ? run_index_.end() : run_index_.find("id\x1f" + d.run);
    if (it != run_index_.end()) {
      // Its run id names a run kgate read: the row is that run's.
      ours = tonight.count(it->second) > 0;
      whose = "a row of tonight's run " + runs_[it->second].label;
    } else if (after_start(d)) {
      // It cannot be placed by its run id: by where it was appended.
      ours = true;
      whose = "a row appended after the runs before the newest run " + runs_.back().label +
              ": tonight's" +
              (d.run.empty() ? "" : "; its run " + d.run + " has no row kgate could read");
    }
    if (!ours) {
      warn(d.file, d.line, d.what + "; row skipped (an older run's row: history, not tonight's)");
    } else if (++shown[d.file] <= kMaxWarningsPerFile) {
      untrusted_.push_back({files_[d.file], d.line, d.what + " (" + whose + ")"});
    }
  }
  damaged_.clear();
  close_list(untrusted_, shown, " more row(s) of tonight that kgate cannot trust, not shown");
}

// The clock is not trusted to order runs, but a newest run stamped earlier
// than a run appended before it is worth a word: files given newest first,
// or a node whose clock is off.
void History::warn_out_of_order() {
  for (const auto& [arch, a] : arch_runs_) {
    const Run& now = runs_[a.newest];
    if (now.timestamp.empty()) continue;
    const Run* later = nullptr;
    uint32_t seen = UINT32_MAX;  // rows of one run come together: look at each run once
    for (const auto& o : obs_) {
      if (o.run == seen || o.run == a.newest || keys_[o.key].arch != arch) continue;
      seen = o.run;
      const Run& r = runs_[o.run];
      if (r.timestamp > now.timestamp && (!later || r.timestamp > later->timestamp)) later = &r;
    }
    if (!later) continue;
    const Observation& first = obs_[now.first_seen];
    warn(first.file, first.line,
         "the newest run of " + (arch.empty() ? std::string("rows without an arch") : arch) + ", " +
             now.label + " (" + now.timestamp + "), appended last and gated, is stamped " +
             "earlier than run " + later->label + " (" + later->timestamp +
             ") appended before it: give the files oldest first; kgate orders runs by where " +
             "they were appended, not by their clocks");
  }
}

}  // namespace kb
