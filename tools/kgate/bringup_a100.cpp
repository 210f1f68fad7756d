// The seed's rows against the seed's A100 targets (docs/bringup.md): an A100
// roofline modelled from this GPU's row and the two datasheets.
#include <map>

#include "tools/kgate/bringup.h"

namespace kb {

std::string targets_dir_name(const BringupInputs& in) {
  return in.targets_dir.empty() ? std::string("(no --targets given)") : in.targets_dir;
}

namespace {

// The limiter of a row: its own, or (a seed-mean row) the most common
// among the run's rows of the same experiment, metric and dtype.
std::string limiter(const RunView& here, const Key& k, const Observation* o) {
  std::string b = bound_of(std::string(o->variant));
  if (!b.empty()) return b;
  std::map<std::string, int> n;
  for (const auto* x : here.obs) {
    const Key& kx = here.key(x);
    if (kx.name == k.name && kx.metric == k.metric && kx.dtype == k.dtype)
      ++n[bound_of(std::string(x->variant))];
  }
  int best = 0;
  for (const auto& [name, count] : n)
    if (!name.empty() && name != "launch" && count > best) {
      b = name;
      best = count;
    }
  return b;
}

// A rate row's A100 roofline: this row's divided by its limiter's spec ratio.
void a100_roofline(const RunView& here, const Datasheet* ds, const Datasheet* a100, const Key& k,
                   const Observation* o, const TargetEntry& e, BringupA100Row& row) {
  const bool lower = k.lower_is_better;
  const std::string b = limiter(here, k, o);
  row.bound = b;
  if (b == "memory" && ds && ds->hbm_gbps.value && a100 && a100->hbm_gbps.value)
    row.spec_ratio = *ds->hbm_gbps.value / *a100->hbm_gbps.value;
  else if (b == "compute" && dtype_peak(ds, k.dtype) && dtype_peak(a100, k.dtype))
    row.spec_ratio = *dtype_peak(ds, k.dtype) / *dtype_peak(a100, k.dtype);
  if (row.spec_ratio && row.roofline) {
    row.a100_roofline = lower ? *row.roofline * *row.spec_ratio : *row.roofline / *row.spec_ratio;
    row.a100_fraction = lower ? *row.a100_roofline / *e.target : *e.target / *row.a100_roofline;
  } else if (b == "launch") {
    row.note = "launch-bound: the datasheets give no launch time";
  } else if (!row.spec_ratio && ds) {
    row.note = "no datasheet figure for its limiter";
  }
}

// One of the seed's targets against this run's row it covers.
BringupA100Row a100_row(const RunView& here, const Datasheet* ds, const TargetFile& file,
                        const Datasheet* a100, const TargetEntry& e) {
  BringupA100Row row;
  row.name = e.name;
  row.metric = e.metric;
  row.dtype = e.dtype;
  row.shape = e.shape.empty() ? "*" : e.shape;
  row.a100_target = e.target;
  const Observation* o = nullptr;
  for (const auto* x : here.obs) {
    const Key& k = here.key(x);
    if (k.name == e.name && k.metric == e.metric && k.dtype == e.dtype &&
        file.find(k.name, k.metric, k.dtype, k.shape, std::string(x->variant)) == &e) {
      o = x;
      break;
    }
  }
  if (!o) {
    row.note = "not in this run";
    return row;
  }
  const Key& k = here.key(o);
  row.shape = k.shape;
  if (!o->measured()) {
    row.note = "not measured here (" + std::string(o->message) + ")";
    return row;
  }
  row.actual = o->actual;
  row.roofline = o->roofline();
  row.fraction = o->roofline_fraction();
  row.measured_ratio = k.lower_is_better ? *e.target / o->actual : o->actual / *e.target;
  if (k.metric == "compilation_time(s)") {
    row.note = "setup time (the seed's is torch.compile's): no roofline, no spec ratio";
  } else if (k.metric == "flops_utilization") {
    row.measured_ratio.reset();
    row.note =
        "the seed's flops_utilization multiplies by time (docs/metrics.md): its 0.8 is "
        "not comparable with ours";
  } else {
    a100_roofline(here, ds, a100, k, o, e, row);
  }
  return row;
}

}  // namespace

void add_a100(BringupReport& r, const BringupInputs& in, const RunView& here, const Datasheet* ds) {
  const TargetFile* file = match_gpu(in.targets, "NVIDIA A100-SXM4-40GB");
  if (!file) {
    r.problems.push_back("no A100 target file (a100-sxm4-40gb.json, the seed's targets) in " +
                         targets_dir_name(in) + ": the comparison with the A100 is left out");
    return;
  }
  r.a100_file = file->path;
  const Datasheet* a100 = in.datasheets ? find_datasheet(*in.datasheets, file->gpu) : nullptr;
  r.a100_datasheet = a100 ? a100->gpu : "not in the datasheet table";
  if (!ds)
    r.a100_notes.push_back("'" + r.gpu +
                           "' is not in the datasheet table: no spec ratio, no A100 roofline");
  r.a100_notes.push_back(
      "A100 roofline: this row's roofline divided by the spec ratio of its limiter "
      "(memory: datasheet HBM; compute: the dtype's dense peak), i.e. the same work on an "
      "A100 that reaches the same share of its datasheet as this GPU does. kbench has not "
      "measured an A100 (its target file has no `measured`): a model, not a measurement. "
      "Launch-bound rows have no spec ratio (datasheets give no launch time)");
  for (const auto& e : file->targets)
    if (e.target) r.a100.push_back(a100_row(here, ds, *file, a100, e));
}

}  // namespace kb
