#include "tools/kgate/noise.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/csv_writer.h"
#include "core/metrics.h"
#include "reports/console_table.h"
#include "reports/format.h"
#include "reports/gate_result.h"
#include "tools/kgate/history_rule.h"

namespace kb {

namespace {

std::string boards_text(const NoiseKey& k) {
  if (k.boards < 2) return "-";
  return std::to_string(k.boards) + ": " + percent(k.board_spread, 2) + " apart, all " +
         percent(k.noise_all, 2);
}

std::string modes_text(const NoiseKey& k) {
  if (k.mode_runs.empty()) return "-";
  std::string s = std::to_string(k.mode_runs.size()) + ":";
  for (size_t i = 0; i < k.mode_runs.size(); ++i)
    s += " " + k.mode_runs[i] + (k.mode_slow[i] ? " (slow)" : " (fast)");
  return s;
}

std::string timed_text(const NoiseKey& k) { return k.timed_us ? show_value(*k.timed_us) : "-"; }

// "0.5% ok", "1.5% OVER", "0.5% few runs" (under kMinRunsForBar), "-" (no bar).
std::string bar_text(const NoiseKey& k) {
  if (k.bar <= 0) return "-";
  return percent(k.bar, 1) + (k.runs < kMinRunsForBar ? " few runs"
                              : k.meets_bar           ? " ok"
                                                      : " OVER");
}

// The report's columns, the console's and the Markdown's alike.
const std::vector<std::string> kColumns = {"noise",    "bar",   "timed_us", "runs", "median",
                                           "variants", "modes", "boards",   "key",  "arch"};
constexpr size_t kKeyColumn = 8;  // then arch

std::vector<std::string> cells_of(const NoiseKey& k) {
  return {percent(k.noise, 2),  bar_text(k),
          timed_text(k),        std::to_string(k.runs),
          show_value(k.median), std::to_string(k.variants),
          modes_text(k),        boards_text(k),
          key_label(k, ""),     k.arch.empty() ? "-" : k.arch};
}

std::string class_summary(const NoiseReport& r) {
  size_t c[4] = {0, 0, 0, 0};
  size_t barred = 0, meeting = 0;
  for (const auto& k : r.keys) {
    std::string n = noise_class(k.noise);
    c[n == "<=0.5%" ? 0 : n == "<=1%" ? 1 : n == "<=3%" ? 2 : 3]++;
    if (k.bar > 0) ++barred, meeting += k.meets_bar;
  }
  return std::to_string(r.keys.size()) + " keys over " + std::to_string(r.runs) +
         " runs; noise <=0.5%: " + std::to_string(c[0]) + ", <=1%: " + std::to_string(c[1]) +
         ", <=3%: " + std::to_string(c[2]) + ", >3%: " + std::to_string(c[3]) + "; " +
         std::to_string(meeting) + " of " + std::to_string(barred) + " rate keys meet their bar";
}

}  // namespace

double noise_bar(double timed_us) { return timed_us >= kBarBoundaryUs ? 0.005 : 0.015; }

const char* noise_class(double noise) {
  return noise <= 0.005 ? "<=0.5%" : noise <= 0.01 ? "<=1%" : noise <= 0.03 ? "<=3%" : ">3%";
}

NoiseReport noise_report(const History& h) {
  NoiseReport rep;
  rep.runs = h.runs().size();
  const auto& obs = h.observations();
  for (uint32_t k = 0; k < h.keys().size(); ++k) {
    std::vector<double> values, mins, timed;
    std::vector<std::string> labels, boards;
    std::set<std::string> variants;
    bool all_named = true;
    for (uint32_t i : h.series(k)) {
      const Observation& o = obs[i];
      if (o.attempt != 1 || !o.measured()) continue;
      values.push_back(o.actual);
      // The fastest call's time where the row has one, else the value
      // (a time, or a rate counted as its reciprocal: faster is smaller).
      mins.push_back(o.min_us()                    ? *o.min_us()
                     : h.keys()[k].lower_is_better ? o.actual
                     : o.actual > 0                ? 1 / o.actual
                                                   : 0);
      if (o.median_us()) timed.push_back(*o.median_us());
      labels.push_back(h.runs()[o.run].label);
      variants.insert(kernel_identity(o.variant));
      boards.push_back(h.gpus()[o.gpu].uuid);
      all_named = all_named && !boards.back().empty();
    }
    if (values.empty()) continue;
    if (!all_named) std::fill(boards.begin(), boards.end(), std::string());
    const Key& key = h.keys()[k];
    NoiseKey n;
    static_cast<Key&>(n) = key;
    n.runs = static_cast<int>(values.size());
    n.median = median_of(values);
    n.noise_all = n.median > 0 ? mad_scale(values) / n.median : 0;
    n.variants = static_cast<int>(variants.size());
    // Each run against its own board's median.
    std::map<std::string, std::vector<size_t>> by_board;
    for (size_t i = 0; i < values.size(); ++i) by_board[boards[i]].push_back(i);
    n.boards = static_cast<int>(by_board.size());
    std::vector<double> dev;
    std::vector<double> board_medians;
    for (const auto& [b, idx] : by_board) {
      std::vector<double> v;
      for (size_t i : idx) v.push_back(values[i]);
      const double m = median_of(v);
      for (double x : v) dev.push_back(m > 0 ? x / m - 1 : 0);
      if (idx.size() >= 3) board_medians.push_back(m);
    }
    n.noise = n.boards > 1 ? mad_scale(dev) : n.noise_all;
    if (board_medians.size() >= 2 && n.median > 0)
      n.board_spread = (*std::max_element(board_medians.begin(), board_medians.end()) -
                        *std::min_element(board_medians.begin(), board_medians.end())) /
                       n.median;
    // The bar: rate keys only, on the noise the table shows.
    if (!timed.empty()) n.timed_us = median_of(timed);
    if (n.timed_us && metric_direction(key.metric) == Direction::higher_is_better) {
      n.bar = noise_bar(*n.timed_us);
      n.meets_bar = n.runs >= kMinRunsForBar && n.noise <= n.bar;
    }
    // A mode: a run whose fastest call is outside the others' range on its
    // board and further from their median than 5 robust standard deviations
    // (and 1%): another state, not a tail. Only a board's unique lowest or
    // highest run can be one, so only those two are tested.
    for (const auto& [b, idx] : by_board) {
      if (idx.size() < 4) continue;
      const auto [lowest, highest] = std::minmax_element(
          idx.begin(), idx.end(), [&](size_t x, size_t y) { return mins[x] < mins[y]; });
      const double low = mins[*lowest], high = mins[*highest];
      size_t at_low = 0, at_high = 0;
      for (size_t i : idx) at_low += mins[i] == low, at_high += mins[i] == high;
      for (size_t i : idx) {
        if (!(mins[i] == low && at_low == 1) && !(mins[i] == high && at_high == 1)) continue;
        std::vector<double> others;
        for (size_t j : idx)
          if (j != i) others.push_back(mins[j]);
        double med = median_of(others);
        double lo = *std::min_element(others.begin(), others.end());
        double hi = *std::max_element(others.begin(), others.end());
        double d = std::fabs(mins[i] - med);
        if ((mins[i] < lo || mins[i] > hi) && d > 5 * mad_scale(others) && d > 0.01 * med)
          n.mode_runs.push_back(labels[i]), n.mode_slow.push_back(mins[i] > med);
      }
    }
    rep.keys.push_back(std::move(n));
  }
  std::stable_sort(rep.keys.begin(), rep.keys.end(),
                   [](const NoiseKey& a, const NoiseKey& b) { return a.noise > b.noise; });
  return rep;
}

std::string noise_console(const NoiseReport& r) {
  std::vector<std::vector<std::string>> cells;
  for (const auto& k : r.keys) cells.push_back(cells_of(k));
  return "kgate noise: " + class_summary(r) + "\n\n" + text_table(kColumns, cells, 0, 5) + "\n";
}

std::string noise_markdown(const NoiseReport& r) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& k : r.keys) {
    std::vector<std::string>& c = rows.emplace_back(cells_of(k));
    c[kKeyColumn + 1] = k.arch;  // empty stays empty in a Markdown cell
    for (auto& cell : c) cell = markdown_text(cell);
  }
  return "## Run-to-run noise\n\n" + class_summary(r) + ".\n\n" +
         markdown_table(kColumns, "rrrrrr", rows);
}

std::string noise_csv(const NoiseReport& r) {
  std::string out =
      "name,metric,dtype,shape,arch,device,runs,median,noise_rel,noise_class,variants,modes,"
      "mode_runs,boards,board_spread,noise_all_boards,timed_us,bar,meets_bar\n";
  for (const auto& k : r.keys) {
    std::string mr;
    for (const auto& m : k.mode_runs) mr += (mr.empty() ? "" : " ") + m;
    const std::string timed = k.timed_us ? format_double("%.6g", *k.timed_us) : "";
    const std::string bar = k.bar > 0 ? format_double("%.6g", k.bar) : "";
    const char* meets = k.bar <= 0 ? "" : k.meets_bar ? "yes" : "no";
    out += csv_line({k.name, k.metric, k.dtype, k.shape, k.arch, k.device, std::to_string(k.runs),
                     format_double("%.9g", k.median), format_double("%.6g", k.noise),
                     noise_class(k.noise), std::to_string(k.variants),
                     std::to_string(k.mode_runs.size()), mr, std::to_string(k.boards),
                     format_double("%.6g", k.board_spread), format_double("%.6g", k.noise_all),
                     timed, bar, meets}) +
           "\n";
  }
  return out;
}

}  // namespace kb
