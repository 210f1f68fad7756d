#include "suite/cli/plan.h"

#include <regex>
#include <utility>

#include "suite/cli/args.h"
#include "suite/nccl_bench.h"

namespace kb::cli {

std::string experiment_names() {
  std::string s;
  for (const auto& e : Registry::instance().all())
    if (!e.is_hidden()) s += "  " + e.name() + "\n";
  for (const auto& c : collective_names()) s += "  " + c + "\n";
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
  for (const auto& e : Registry::instance().all()) {
    // Hidden self-tests run only when the filter names them in full.
    const bool match = e.is_hidden() ? !filter.empty() && std::regex_match(e.name(), re)
                                     : std::regex_search(e.name(), re);
    if (match) out.push_back(&e);
  }
  if (out.empty() && collectives_matching(filter).empty())
    throw UsageError("--filter '" + filter + "' matches no experiment. Experiments:\n" +
                     experiment_names());
  return out;
}

std::vector<Step> plan_steps(const std::vector<const Experiment*>& experiments,
                             const std::vector<std::string>& collectives, const ShardSpec& shard) {
  // The same list on every node: the registry's order, each point in
  // order; collectives last (one unit each: they need every GPU of a host).
  std::vector<ShardItem> items;
  std::vector<std::pair<size_t, size_t>> where;  // (step, point) of each item
  std::vector<Step> all;
  for (const Experiment* e : experiments) {
    const auto points = e->points();
    for (size_t i = 0; i < points.size(); ++i) {
      items.push_back({e->name(), points[i].in_seed_mean,
                       std::string(dtype_name(points[i].dtype)) + ";" + points[i].variant});
      where.emplace_back(all.size(), i);
    }
    all.push_back({e, {}, ""});
  }
  for (const auto& c : collectives) {
    items.push_back({c, false, ""});
    where.emplace_back(all.size(), 0);
    all.push_back({nullptr, {}, c});
  }
  const std::vector<int> dealt = deal_shards(items, shard.count);
  std::vector<char> keep(all.size(), 0);
  for (size_t k = 0; k < items.size(); ++k) {
    if (dealt[k] != shard.index) continue;
    Step& st = all[where[k].first];
    keep[where[k].first] = 1;
    if (st.e) st.indices.push_back(where[k].second);
  }
  std::vector<Step> out;
  for (size_t i = 0; i < all.size(); ++i)
    if (keep[i]) out.push_back(std::move(all[i]));
  return out;
}

}  // namespace kb::cli
