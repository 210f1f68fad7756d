// kgate gpt-fast: the newest run of each GPU model as PyTorch's gpt_fast
// writes it (docs/csv-schema.md "Reading it as gpt_fast").
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "core/csv_writer.h"
#include "core/record.h"
#include "core/result_reader.h"
#include "tools/kgate/cli/commands.h"

namespace kb::kgate_cli {

namespace {

struct GptFastRow {
  std::string name, metric, target, actual, dtype, device, arch;
  bool is_model = false;
};

struct GptFastExport {
  std::vector<GptFastRow> rows;    // in gpt_fast's order (models, then micro-benchmarks)
  std::vector<std::string> notes;  // rows left out or targets missing, one line each
};

// gpt_fast's rows, in the order its benchmark.py writes them (the models
// first, each metric in turn, then the micro-benchmarks).
struct SeedRow {
  const char* name;
  const char* metric;
  const char* dtype;
  bool is_model;
};

constexpr const char* kTok = "token_per_sec";
constexpr const char* kBw = "memory_bandwidth(GB/s)";
constexpr const char* kCompile = "compilation_time(s)";

const SeedRow kSeedRows[] = {
    {"Llama-2-7b-chat-hf", kTok, "bfloat16", true},
    {"Llama-2-7b-chat-hf", kBw, "bfloat16", true},
    {"Llama-2-7b-chat-hf", kCompile, "bfloat16", true},
    {"Llama-2-7b-chat-hf", kTok, "int8", true},
    {"Llama-2-7b-chat-hf", kBw, "int8", true},
    {"Llama-2-7b-chat-hf", kCompile, "int8", true},
    {"Mixtral-8x7B-v0.1", kTok, "int8", true},
    {"Mixtral-8x7B-v0.1", kBw, "int8", true},
    {"Mixtral-8x7B-v0.1", kCompile, "int8", true},
    {"mlp_layer_norm_gelu", "flops_utilization", "bfloat16", false},
    {"layer_norm", kBw, "bfloat16", false},
    {"gather_gemv", kBw, "int8", false},
    {"gather_gemv", kBw, "bfloat16", false},
    {"gemv", kBw, "int8", false},
    {"gemv", kBw, "bfloat16", false},
};

// gpt_fast's models run batch size 1.
bool seed_model_shape(const std::string& shape) {
  return shape.rfind("BS=1;", 0) == 0 || shape == "BS=1";
}

GptFastExport gpt_fast_rows(const History& hist, const std::vector<TargetFile>& targets) {
  GptFastExport out;
  const auto& keys = hist.keys();
  const auto& obs = hist.observations();
  for (const auto& [arch, runs_of_arch] : hist.arch_runs()) {
    const uint32_t run = runs_of_arch.newest;
    for (const SeedRow& s : kSeedRows) {
      // Every device of the run that has this row (cuda, or cuda:N): the
      // run's first row and its value as the gate values it (group_runs).
      std::map<std::string, std::pair<const Observation*, double>> found;
      std::map<std::string, std::string> why_not;
      for (uint32_t k = 0; k < keys.size(); ++k) {
        const Key& key = keys[k];
        if (key.arch != arch || key.name != s.name || key.metric != s.metric ||
            key.dtype != s.dtype)
          continue;
        const auto& series = hist.series(k);
        if (series.empty() || obs[series.back()].run != run) continue;
        std::vector<RunValue> rv;
        group_runs(obs, series, rv);
        const Observation& o = obs[series[rv.back().first]];
        if (o.is_model != s.is_model || (!s.is_model && key.shape != "mean")) continue;
        if (!o.measured()) {
          why_not[key.device] = "status " + std::string(status_name(o.status)) +
                                (o.message.empty() ? "" : ": " + std::string(o.message));
          continue;
        }
        auto& slot = found[key.device];
        if (!slot.first || (s.is_model && seed_model_shape(key.shape) &&
                            !seed_model_shape(keys[slot.first->key].shape)))
          slot = {&o, rv.back().value};
      }
      const std::string label = std::string(s.name) + " " + s.metric + " " + s.dtype + " @ " + arch;
      if (found.empty()) {
        const std::string& r = hist.runs()[run].label;
        out.notes.push_back(
            label + ": left out (" +
            (why_not.empty() ? "not in run " + r : why_not.begin()->second + " in run " + r) + ")");
      }
      for (const auto& [device, f] : found) {
        const auto& [o, value] = f;
        const TargetCheck t = find_target(keys[o->key], *o, match_gpu(targets, arch));
        if (!t.target)
          out.notes.push_back(label +
                              ": no target (no target file entry, none in the row): "
                              "written as 0, gpt_fast's \"none\"");
        out.rows.push_back({s.name, s.metric, t.target ? format_number(*t.target) : "0",
                            format_number(value), s.dtype, device.empty() ? "cuda" : device, arch,
                            s.is_model});
      }
    }
  }
  return out;
}

std::string gpt_fast_csv(const std::vector<GptFastRow>& rows) {
  std::string s = "name,metric,target,actual,dtype,device,arch,is_model\n";
  for (const auto& r : rows)
    s += csv_line({r.name, r.metric, r.target, r.actual, r.dtype, r.device, r.arch,
                   r.is_model ? "True" : "False"}) +
         "\n";
  return s;
}

std::string gpt_fast_json(const std::vector<GptFastRow>& rows) {
  std::string s;
  for (const auto& r : rows) {
    // The record gpt_fast's output_json builds, values as numbers.
    nlohmann::ordered_json j;
    j["benchmark"] = {{"name", "PyTorch gpt-fast benchmark"},
                      {"mode", "inference"},
                      {"dtype", r.dtype},
                      {"extra_info", {{"device", r.device}, {"arch", r.arch}}}};
    j["model"] = {{"name", r.name},
                  {"type", r.is_model ? "OSS model" : "micro-benchmark"},
                  {"origins", {"pytorch"}}};
    j["metric"] = {{"name", r.metric},
                   {"benchmark_values", {std::stod(r.actual)}},
                   {"target_value", std::stod(r.target)}};
    s += j.dump() + "\n";
  }
  return s;
}

}  // namespace

int cmd_gpt_fast(const Args& args) {
  std::vector<std::string> results;
  std::string csv_out, json_out;
  std::vector<TargetFile> targets;
  parse_options(args,
                {{"--results", files(results)},
                 {"--targets", target_files(targets)},
                 {"--csv", text(csv_out)},
                 {"--json", text(json_out)}},
                "--results");
  if (results.empty()) throw UsageError("gpt-fast needs --results FILE...");
  if (csv_out.empty() && json_out.empty())
    throw UsageError("gpt-fast needs --csv FILE and/or --json FILE");
  refuse_clashes(inputs_of(results, targets), {{"--csv", csv_out}, {"--json", json_out}});
  History h;
  read_history(h, results, true);
  GptFastExport ex = gpt_fast_rows(h, targets);
  for (const auto& n : ex.notes) std::fprintf(stderr, "kgate: gpt-fast: %s\n", n.c_str());
  if (ex.rows.empty())
    throw ResultFileError("no row of gpt_fast's (its seed-mean and model rows) in the newest run");
  if (!csv_out.empty()) atomic_write(csv_out, gpt_fast_csv(ex.rows));
  if (!json_out.empty()) atomic_write(json_out, gpt_fast_json(ex.rows));
  std::printf("kgate gpt-fast: %zu row(s) written%s%s%s%s\n", ex.rows.size(),
              csv_out.empty() ? "" : " to ", csv_out.c_str(),
              json_out.empty() ? "" : (csv_out.empty() ? " to " : " and "), json_out.c_str());
  return 0;
}

}  // namespace kb::kgate_cli
