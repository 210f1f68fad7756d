#include "core/datasheets.h"

#include <cmath>

#include "core/atomic_write.h"
#include "core/gpu_name.h"
#include "core/json_file.h"

namespace kb {

using nlohmann::ordered_json;

namespace {

// "path:line: field: what".
[[noreturn]] void fail(const JsonDoc& doc, const std::string& field, const std::string& what) {
  throw DatasheetError(doc.message(field, what));
}

// A rounded figure for a drafted file (datasheet figures keep their digits).
double round_to(double v, double step) { return std::round(v / step) * step; }

// The figures an entry should have, in the table's order, with their keys.
const std::pair<const char*, DatasheetFigure Datasheet::*> kFigures[] = {
    {"hbm_gbps", &Datasheet::hbm_gbps},
    {"bf16_tflops", &Datasheet::bf16_tflops},
    {"f16_tflops", &Datasheet::f16_tflops},
    {"tf32_tflops", &Datasheet::tf32_tflops},
    {"fp32_tflops", &Datasheet::fp32_tflops},
    {"fp8_tflops", &Datasheet::fp8_tflops},
    {"int8_tops", &Datasheet::int8_tops},
    {"sm_count", &Datasheet::sm_count},
    {"l2_mb", &Datasheet::l2_mb}};

}  // namespace

DatasheetTable parse_datasheets(const std::string& text, const std::string& path) {
  JsonDoc d;
  if (std::string error; !parse_json_file(text, path, &d, &error)) throw DatasheetError(error);
  const ordered_json& doc = d.value;
  if (!doc.is_object()) fail(d, "", "expected an object with \"gpus\": [...]");
  auto g = doc.find("gpus");
  if (g == doc.end() || !g->is_array()) fail(d, "gpus", "missing (expected an array)");
  DatasheetTable t;
  t.path = path;
  for (size_t i = 0; i < g->size(); ++i) {
    const ordered_json& e = (*g)[i];
    const std::string where = "gpus[" + std::to_string(i) + "].";
    if (!e.is_object()) fail(d, "gpus[" + std::to_string(i) + "]", "expected an object");
    Datasheet entry;
    auto gpu = e.find("gpu");
    if (gpu == e.end() || !gpu->is_string() || gpu->get<std::string>().empty())
      fail(d, where + "gpu", "missing (expected the model's name)");
    entry.gpu = gpu->get<std::string>();
    const JsonFields<DatasheetError> in{path, &d.lines};
    entry.driver_names = in.strings(e, "driver_names", where);
    entry.match = in.strings(e, "match", where);
    if (entry.driver_names.empty() && entry.match.empty())
      fail(d, where + "match", "give driver_names or match: nothing would find this entry");
    for (const auto& [key, figure] : kFigures) {
      auto it = e.find(key);
      DatasheetFigure& fig = entry.*figure;
      if (it == e.end()) continue;
      fig.present = true;
      if (it->is_null()) continue;
      if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() <= 0)
        fail(d, where + key, "expected a number > 0, or null (none, or not published)");
      fig.value = it->get<double>();
    }
    auto src = e.find("source");
    if (src == e.end() || !src->is_string() || src->get<std::string>().empty())
      fail(d, where + "source", "missing: name the datasheet or whitepaper the figures are from");
    entry.source = src->get<std::string>();
    if (auto n = e.find("note"); n != e.end()) {
      if (!n->is_string()) fail(d, where + "note", "expected a string");
      entry.note = n->get<std::string>();
    }
    t.gpus.push_back(std::move(entry));
  }
  return t;
}

DatasheetTable load_datasheets(const std::string& path) {
  const auto text = read_whole_file(path);
  if (!text) throw DatasheetError(path + ": cannot read the datasheet table");
  return parse_datasheets(*text, path);
}

std::string datasheets_path(const std::string& targets_dir) {
  return targets_dir + "/datasheets/nvidia.json";
}

const Datasheet* find_datasheet(const DatasheetTable& t, const std::string& gpu_name) {
  for (const auto& d : t.gpus)
    for (const auto& n : d.driver_names)
      if (same_gpu_name(n, gpu_name)) return &d;
  const Datasheet* best = nullptr;
  size_t best_len = 0;
  for (const auto& d : t.gpus)
    for (const auto& m : d.match)
      if (m.size() > best_len && gpu_name_contains(gpu_name, m)) {
        best = &d;
        best_len = m.size();
      }
  return best;
}

std::vector<std::string> missing_figures(const Datasheet& d, const std::string& path) {
  std::vector<std::string> out;
  for (const auto& [key, figure] : kFigures)
    if (!(d.*figure).present)
      out.push_back(path + ": " + d.gpu + " has no " + key +
                    ": add it from the datasheet (or null where the model has none)");
  return out;
}

nlohmann::ordered_json draft_peaks(const Datasheet* d, const std::string& table_path,
                                   const std::string& gpu_name, double measured_read_gbps,
                                   std::string* message) {
  nlohmann::ordered_json p;
  if (d && d->hbm_gbps.value) {
    // The target file's names: f32_tflops is the non-tensor FP32 peak.
    const std::pair<const char*, const DatasheetFigure*> keys[] = {
        {"hbm_gbps", &d->hbm_gbps},       {"bf16_tflops", &d->bf16_tflops},
        {"f16_tflops", &d->f16_tflops},   {"f32_tflops", &d->fp32_tflops},
        {"tf32_tflops", &d->tf32_tflops}, {"int8_tops", &d->int8_tops},
        {"fp8_tflops", &d->fp8_tflops}};
    std::string absent;
    for (const auto& [key, fig] : keys) {
      if (fig->value)
        p[key] = *fig->value;
      else if (!fig->present)
        absent += std::string(absent.empty() ? "" : ", ") + key;
    }
    p["source"] = d->source + ", dense (" + table_path + ")";
    if (message)
      *message = absent.empty() ? ""
                                : table_path + ": " + d->gpu + " has no " + absent +
                                      ": those peaks are left out of the draft; add them from "
                                      "the datasheet";
    return p;
  }
  p["hbm_gbps"] = round_to(measured_read_gbps, 1);
  p["source"] =
      "NOT A DATASHEET FIGURE: hbm_gbps is the read bandwidth kbench measured, a placeholder. "
      "Replace it with the datasheet's HBM bandwidth and add bf16_tflops, int8_tops, "
      "fp8_tflops (dense), and add the GPU to " +
      table_path;
  if (message)
    *message = d ? table_path + ": " + d->gpu + " has no hbm_gbps: add it from the datasheet"
                 : "GPU '" + gpu_name + "' is not in the datasheet table " + table_path +
                       ": its peaks are unknown. Add an entry (gpu, driver_names, hbm_gbps, "
                       "bf16_tflops, f16_tflops, tf32_tflops, fp32_tflops, fp8_tflops, "
                       "int8_tops, sm_count, l2_mb, source) from NVIDIA's datasheet";
  return p;
}

}  // namespace kb
