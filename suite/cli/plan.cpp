#include "suite/cli/plan.h"

#include <cstdint>
#include <regex>
#include <utility>

#include "suite/cli/args.h"

namespace kb::cli {

std::string experiment_names() {
  std::string s;
  for (const auto& e : Registry::instance().all()) s += "  " + e.name() + "\n";
  return s;
}

std::vector<const Experiment*> select(const std::string& filter) {
  std::vector<const Experiment*> out;
  std::regex re;
  try {
    re = std::regex(filter.empty() ? ".*" : filter, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw UsageError("--filter '" + filter + "' is not a valid regex: " + e.what());
  }
  for (const auto& e : Registry::instance().all())
    if (std::regex_search(e.name(), re)) out.push_back(&e);
  if (out.empty())
    throw UsageError("--filter '" + filter + "' matches no experiment. Experiments:\n" +
                     experiment_names());
  return out;
}

std::vector<Step> plan_steps(const std::vector<const Experiment*>& experiments,
                             const ShardSpec& shard) {
  // The same list on every node: the registry's order, each point in
  // order; multi-device experiments last, one unit each (they need every
  // GPU of a host).
  std::vector<const Experiment*> order;
  for (bool across : {false, true})
    for (const Experiment* e : experiments)
      if (e->is_across_devices() == across) order.push_back(e);
  constexpr size_t kWhole = SIZE_MAX;  // a multi-device experiment: every point, one unit
  std::vector<ShardItem> items;
  std::vector<std::pair<size_t, size_t>> where;  // (step, point) of each item
  std::vector<Step> all;
  for (const Experiment* e : order) {
    const auto points = e->points();
    for (size_t i = 0; i < points.size() && !e->is_across_devices(); ++i) {
      items.push_back({e->name(), points[i].in_seed_mean,
                       std::string(dtype_name(points[i].dtype)) + ";" + points[i].variant});
      where.emplace_back(all.size(), i);
    }
    if (e->is_across_devices()) {
      items.push_back({e->name(), false, ""});
      where.emplace_back(all.size(), kWhole);
    }
    all.push_back({e, {}});
  }
  const std::vector<int> dealt = deal_shards(items, shard.count);
  std::vector<char> keep(all.size(), 0);
  for (size_t k = 0; k < items.size(); ++k) {
    if (dealt[k] != shard.index) continue;
    Step& st = all[where[k].first];
    keep[where[k].first] = 1;
    if (where[k].second != kWhole) st.indices.push_back(where[k].second);
    for (size_t i = 0; where[k].second == kWhole && i < st.e->points().size(); ++i)
      st.indices.push_back(i);
  }
  std::vector<Step> out;
  for (size_t i = 0; i < all.size(); ++i)
    if (keep[i]) out.push_back(std::move(all[i]));
  return out;
}

}  // namespace kb::cli
