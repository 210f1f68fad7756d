#include "tools/kgate/history.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <set>

#include "core/attempts.h"
#include "core/gpu_name.h"
#include "core/metrics.h"
#include "core/record.h"

namespace kb {

namespace {

// In RowStatus order.
constexpr const char* kStatusNames[] = {status::ok,        status::below_target, status::throttled,
                                        status::incorrect, status::failed,       status::skipped};

RowStatus row_status(std::string_view s) {
  for (int i = 0; i < 5; ++i)
    if (s == kStatusNames[i]) return static_cast<RowStatus>(i);
  return RowStatus::skipped;  // the reader lets only known statuses through
}

std::string base_name(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

const char* status_name(RowStatus s) { return kStatusNames[static_cast<int>(s)]; }

std::string gate_key_device(const std::string& device) {
  if (device.rfind("cuda:", 0) == 0 && device.size() > 5 &&
      device.find_first_not_of("0123456789", 5) == std::string::npos)
    return "cuda";
  return device;
}

std::string GpuId::label() const {
  std::string s = device.empty() ? (index.empty() ? "cuda" : "gpu " + index) : device;
  if (!uuid.empty()) s += " " + uuid.substr(0, std::min<size_t>(uuid.size(), 12));
  if (!host.empty()) s += " on " + host;
  return s;
}

uint32_t History::intern_gpu(const ResultRow& r) {
  // The board (UUID) where the row names it; else the host's device label.
  scratch_.assign(r.gpu_uuid.empty() ? "dev\x1f" : "uuid\x1f");
  if (r.gpu_uuid.empty()) {
    scratch_.append(r.host);
    scratch_ += '\x1f';
    scratch_.append(r.device);
  } else {
    scratch_.append(r.gpu_uuid);
  }
  auto [it, fresh] = gpu_index_.try_emplace(scratch_, static_cast<uint32_t>(gpus_.size()));
  if (fresh)
    gpus_.push_back({std::string(r.device), std::string(r.gpu_index), std::string(r.gpu_uuid),
                     std::string(r.host)});
  return it->second;
}

std::string Warning::text() const {
  bool has_line = line != 0 && line != SIZE_MAX;
  return path + (has_line ? ":" + std::to_string(line) : std::string()) + ": " + what;
}

void History::warn(uint32_t file, size_t line, std::string what) {
  if (warning_count_.size() <= file) warning_count_.resize(file + 1, 0);
  // A file damaged on every line must not bury the report in warnings.
  if (++warning_count_[file] <= kMaxWarningsPerFile)
    warnings_.push_back({files_[file], line, std::move(what)});
}

std::string_view History::keep(std::string_view v, uint32_t file) {
  std::string_view t = texts_[file].view();
  if (v.empty() || (v.data() >= t.data() && v.data() + v.size() <= t.data() + t.size())) return v;
  return kept_.emplace_back(v);
}

void History::add_file(const std::string& path) {
  files_.push_back(path);
  texts_.emplace_back(path);
  parse(static_cast<uint32_t>(files_.size() - 1));
}

void History::add_text(std::string text, const std::string& path) {
  files_.push_back(path);
  texts_.emplace_back(FileText::InMemory(), std::move(text));
  parse(static_cast<uint32_t>(files_.size() - 1));
}

std::string_view History::arch_spelling(std::string_view arch) {
  // Rows come in runs of one GPU: skip the lookup while the name repeats.
  if (arch == std::string_view(last_arch_)) return last_spelling_;
  const std::string key = gpu_name_key(arch);
  auto it = arch_spelling_.find(key);
  if (it == arch_spelling_.end()) it = arch_spelling_.emplace(key, std::string(arch)).first;
  last_arch_.assign(arch);
  last_spelling_ = it->second;
  return last_spelling_;
}

uint32_t History::intern_key(const ResultRow& r) {
  // One GPU model is one series however a file spells its name (the first
  // spelling read stands for all); the parts joined by a byte no field holds.
  const std::string_view arch = arch_spelling(r.arch);
  scratch_.clear();
  for (std::string_view part : {r.name, r.metric, r.dtype, r.shape, arch, r.device}) {
    scratch_.append(part);
    scratch_ += '\x1f';
  }
  auto [it, fresh] = key_index_.try_emplace(scratch_, static_cast<uint32_t>(keys_.size()));
  if (!fresh) return it->second;
  Key k{std::string(r.name),  std::string(r.metric), std::string(r.dtype),
        std::string(r.shape), std::string(arch),     std::string(r.device)};
  // The reader lets only known metrics through.
  k.lower_is_better = metric_direction(k.metric) == Direction::lower_is_better;
  keys_.push_back(std::move(k));
  by_key_.emplace_back();
  repeats_.push_back(0);
  return it->second;
}

uint32_t History::intern_run(const ResultRow& r, uint32_t file, uint32_t key) {
  if (!r.run_id.empty()) {
    // Rows of one run come together: skip the lookup while the id repeats.
    if (last_run_ != UINT32_MAX && r.run_id == std::string_view(last_run_id_)) {
      runs_[last_run_].last_seen = static_cast<uint32_t>(obs_.size());
      return last_run_;
    }
    scratch_.assign("id\x1f");
    scratch_.append(split_attempt(r.run_id).base);
  } else {
    // No run id: the n-th time a key appears in this file is its n-th run.
    uint32_t n = repeats_[key]++;
    scratch_.assign("file\x1f" + std::to_string(file) + "\x1f" + std::to_string(n));
  }
  auto [it, fresh] = run_index_.try_emplace(scratch_, static_cast<uint32_t>(runs_.size()));
  const uint32_t id = it->second;
  if (fresh) {
    Run& run = runs_.emplace_back();
    run.has_id = !r.run_id.empty();
    run.label = run.has_id ? std::string(split_attempt(r.run_id).base)
                           : base_name(files_[file]) + "#" + std::to_string(repeats_[key]);
    run.timestamp = std::string(r.timestamp);
    run.first_seen = static_cast<uint32_t>(obs_.size());
  }
  Run& run = runs_[id];
  run.last_seen = static_cast<uint32_t>(obs_.size());
  // Its place is where its own rows are, whatever was read first.
  uint32_t attempt = r.run_id.empty() ? 1 : split_attempt(r.run_id).attempt;
  if (attempt == 1 && !run.own_seen) {
    run.first_seen = static_cast<uint32_t>(obs_.size());
    run.own_seen = true;
  }
  if (!r.timestamp.empty() && (run.timestamp.empty() || r.timestamp < run.timestamp))
    run.timestamp = std::string(r.timestamp);
  // Its context (commit, driver, CUDA) is its lowest attempt's.
  if (run.context_attempt == 0 || attempt < run.context_attempt) {
    run.git_sha = std::string(r.git_sha);
    run.driver = std::string(r.driver);
    run.cuda = std::string(r.cuda);
    run.suite_version = std::string(r.suite_version);
    run.context_attempt = attempt;
  }
  if (!r.run_id.empty()) {
    last_run_id_ = r.run_id;
    last_run_ = id;
  }
  return id;
}

void History::parse(uint32_t file) {
  const std::string& path = files_[file];
  std::string_view text = texts_[file].view();
  // Rows are 60 to 300 bytes; unused reserve is never touched, so costs nothing.
  obs_.reserve(obs_.size() + text.size() / 64 + 1);
  std::fill(repeats_.begin(), repeats_.end(), 0);
  last_run_ = UINT32_MAX;
  auto on_row = [&](const ResultRow& r) {
    Observation o;
    o.key = intern_key(r);
    o.run = intern_run(r, file, o.key);
    o.file = file;
    o.line = static_cast<uint32_t>(r.line);
    o.seq = static_cast<uint32_t>(obs_.size());
    o.attempt = split_attempt(r.run_id).attempt;
    o.gpu = intern_gpu(r);
    o.status = row_status(r.status);
    o.is_model = r.is_model;
    o.actual = r.actual.value_or(0);
    o.target_ = r.target.value_or(Observation::kNone);
    o.roofline_ = r.roofline.value_or(Observation::kNone);
    o.roofline_fraction_ = r.roofline_fraction.value_or(Observation::kNone);
    o.noise_rel_ = r.noise_rel.value_or(Observation::kNone);
    o.min_us_ = r.min_us.value_or(Observation::kNone);
    o.max_us_ = r.max_us.value_or(Observation::kNone);
    o.median_us_ = r.median_us.value_or(Observation::kNone);
    o.samples = static_cast<uint32_t>(std::min<int64_t>(r.samples, UINT32_MAX));
    o.variant = keep(r.variant, file);
    o.message = keep(r.message, file);
    obs_.push_back(o);
  };
  const size_t damaged_before = damaged_.size();
  auto on_bad_row = [&](const BadRow& b) {
    Damaged d;
    d.file = file;
    d.line = b.line;
    d.seq = static_cast<uint32_t>(obs_.size());
    d.what = b.what;
    if (well_formed_run_id(b.run_id)) d.run = std::string(split_attempt(b.run_id).base);
    damaged_.push_back(std::move(d));
  };
  try {
    parse_results(
        text, path, on_row, [&](size_t line, const std::string& what) { warn(file, line, what); },
        on_bad_row);
  } catch (const ResultFileError&) {
    // The file is refused: its damaged rows are what the error refers to.
    for (size_t i = damaged_before; i < damaged_.size(); ++i)
      warn(file, damaged_[i].line, damaged_[i].what + "; row skipped");
    damaged_.resize(damaged_before);
    last_run_ = UINT32_MAX;
    throw;
  }
  last_run_ = UINT32_MAX;
  texts_[file].release_pages();
}

void History::finish() {
  // Run order: append order, each run where its own first row is (history.h).
  std::vector<uint32_t> order(runs_.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return runs_[a].first_seen < runs_[b].first_seen;
  });
  std::vector<uint32_t> rank(runs_.size());
  std::vector<Run> sorted;
  sorted.reserve(runs_.size());
  for (uint32_t i = 0; i < order.size(); ++i) {
    rank[order[i]] = i;
    sorted.push_back(std::move(runs_[order[i]]));
  }
  runs_ = std::move(sorted);
  for (auto& o : obs_) o.run = rank[o.run];
  for (auto& [id, run] : run_index_) run = rank[run];
  find_arch_runs();
  judge_damaged();
  warn_out_of_order();

  for (auto& v : by_key_) v.clear();
  for (uint32_t i = 0; i < obs_.size(); ++i) by_key_[obs_[i].key].push_back(i);
  for (auto& v : by_key_) {
    std::stable_sort(v.begin(), v.end(), [&](uint32_t a, uint32_t b) {
      if (obs_[a].run != obs_[b].run) return obs_[a].run < obs_[b].run;
      if (obs_[a].attempt != obs_[b].attempt) return obs_[a].attempt < obs_[b].attempt;
      return obs_[a].gpu < obs_[b].gpu;
    });
    // A key twice in one attempt of a run on one GPU: keep the first row.
    size_t out = 0;
    for (size_t i = 0; i < v.size(); ++i) {
      const Observation* same = nullptr;
      for (size_t k = out; k-- > 0;) {
        const Observation& o = obs_[v[k]];
        if (o.run != obs_[v[i]].run || o.attempt != obs_[v[i]].attempt) break;
        if (o.gpu == obs_[v[i]].gpu) same = &o;
      }
      if (same) {
        const Observation& first = *same;
        const Observation& dup = obs_[v[i]];
        std::string attempt =
            dup.attempt == 1 ? std::string() : " (attempt " + std::to_string(dup.attempt) + ")";
        warn(dup.file, dup.line,
             "the same key again in run " + runs_[dup.run].label + attempt + " (first at " +
                 base_name(files_[first.file]) + ":" + std::to_string(first.line) +
                 "); row skipped");
        continue;
      }
      v[out++] = v[i];
    }
    v.resize(out);
  }
  close_list(warnings_, warning_count_, " more warning(s) in this file not shown");
}

void History::close_list(std::vector<Warning>& list, const std::vector<size_t>& count,
                         const std::string& more) const {
  for (uint32_t f = 0; f < count.size(); ++f)
    if (count[f] > kMaxWarningsPerFile)
      list.push_back({files_[f], SIZE_MAX, std::to_string(count[f] - kMaxWarningsPerFile) + more});
  // File order, then line order (the "more" line last).
  std::stable_sort(list.begin(), list.end(), [&](const Warning& a, const Warning& b) {
    if (a.path != b.path) {
      auto ia = std::find(files_.begin(), files_.end(), a.path) - files_.begin();
      auto ib = std::find(files_.begin(), files_.end(), b.path) - files_.begin();
      return ia < ib;
    }
    return a.line < b.line;
  });
}

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
  // A row after the runs before tonight's is tonight's (fail closed), but
  // for the last rows of an earlier file: they end that file's last run.
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

// A newest run stamped earlier than a run appended before it: files given
// newest first, or a node whose clock is off.
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
