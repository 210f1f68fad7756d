#include <cstdio>

#include "suite/cli.h"
#include "suite/cli/commands.h"
#include "suite/cli/plan.h"
#include "suite/nccl_bench.h"

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
      if (e.is_hidden()) continue;
      std::printf("%-22s  %s\n", e.name().c_str(), e.axes_text().c_str());
      if (!e.description().empty()) std::printf("%-22s  %s\n", "", e.description().c_str());
    }
    for (const auto& c : collective_names())
      std::printf("%-22s  %s\n", c.c_str(), collective_axes_text().c_str());
    return kExitOk;
  }
  for (const Step& st : plan_steps(select(a.filter), collectives_matching(a.filter), a.shard)) {
    if (st.e) {
      const auto points = st.e->points();
      for (size_t i : st.indices)
        std::printf("%s\t%s\t%s\t%s\n", st.e->name().c_str(), points[i].shape.str().c_str(),
                    dtype_name(points[i].dtype), points[i].variant.c_str());
    } else {
      for (const auto& p : collective_points(st.collective))
        std::printf("%s\t%s\t%s\t%s\n", st.collective.c_str(), p.shape.c_str(), "bfloat16", "");
    }
  }
  return kExitOk;
}

}  // namespace kb::cli
