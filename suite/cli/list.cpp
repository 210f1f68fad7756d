#include <cstdio>

#include "suite/cli.h"
#include "suite/cli/commands.h"
#include "suite/cli/plan.h"

namespace kb::cli {

// `kbench list`: the experiments and their axes; `--points`: every point a
// run would measure (with --filter and --shard as `kbench run` takes them),
// one per line: experiment, shape, dtype, variant (tab-separated). Needs no GPU.
int cmd_list(const Args& a) {
  if (!a.points) {
    if (!a.filter.empty() || !a.shard.whole())
      throw UsageError("--filter and --shard go with --points (the points a run would measure)");
    std::printf("%-22s  %s\n", "experiment", "axes");
    for (const auto& e : Registry::instance().all()) {
      std::printf("%-22s  %s\n", e.name().c_str(), e.axes_text().c_str());
      if (!e.description().empty()) std::printf("%-22s  %s\n", "", e.description().c_str());
    }
    return kExitOk;
  }
  for (const Step& st : plan_steps(select(a.filter), a.shard)) {
    const auto points = st.e->points();
    for (size_t i : st.indices)
      std::printf("%s\t%s\t%s\t%s\n", st.e->name().c_str(), points[i].shape.str().c_str(),
                  dtype_name(points[i].dtype), points[i].variant.c_str());
  }
  return kExitOk;
}

}  // namespace kb::cli
