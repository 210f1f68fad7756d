#include "core/targets.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/atomic_write.h"
#include "core/gpu_name.h"
#include "core/json_file.h"

namespace kb {

using nlohmann::ordered_json;

namespace {

// "path:line: field: what".
[[noreturn]] void fail(const JsonDoc& doc, const std::string& field, const std::string& what) {
  throw TargetError(doc.message(field, what));
}

std::optional<double> get_number(const ordered_json& obj, const char* key, const JsonDoc& doc,
                                 const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  if (!it->is_number()) fail(doc, where + key, "expected a number");
  double v = it->get<double>();
  if (!std::isfinite(v) || v <= 0) fail(doc, where + key, "expected a finite number > 0");
  return v;
}

// A tolerance, the file's default or an entry's: one range for both, [0, 1)
// (docs/targets.md). 0 is no tolerance (any miss fails), never the default,
// which holds only where the field is absent.
std::optional<double> get_tolerance(const ordered_json& obj, const JsonDoc& doc,
                                    const std::string& where) {
  auto it = obj.find("tolerance");
  if (it == obj.end()) return std::nullopt;
  const double v = it->is_number() ? it->get<double>() : -1;
  if (!std::isfinite(v) || v < 0 || v >= 1)
    fail(doc, where + "tolerance", "expected a number in [0, 1) (0: any miss fails)");
  return v;
}

// The ceilings a target file's `peaks` and `measured` name, each spelled once.
const std::pair<const char*, double Ceilings::*> kCeilingFields[] = {
    {"read_gbps", &Ceilings::read_gbps},         {"copy_gbps", &Ceilings::copy_gbps},
    {"bf16_tflops", &Ceilings::bf16_tflops},     {"f16_tflops", &Ceilings::f16_tflops},
    {"f32_tflops", &Ceilings::f32_tflops},       {"int8_tops", &Ceilings::int8_tops},
    {"fp8_tflops", &Ceilings::fp8_tflops},       {"launch_us", &Ceilings::launch_us},
    {"graph_node_us", &Ceilings::graph_node_us}, {"mem_latency_us", &Ceilings::mem_latency_us}};

// Every key of `obj` (the field `where`: "" or ending in ".") among `known`:
// a misspelt field (a per-entry "tolerence") would be ignored without a word.
void only(const ordered_json& obj, const JsonDoc& doc, const std::string& where,
          const std::vector<std::string>& known) {
  JsonFields<TargetError>{doc.path, &doc.lines}.only(obj, where, known);
}

// `peaks` or `measured`: the ceilings, `hbm_gbps` for both bandwidths, and `more`.
Ceilings parse_ceilings(const ordered_json& obj, const JsonDoc& doc, const std::string& where,
                        std::vector<std::string> more) {
  if (!obj.is_object()) fail(doc, where, "expected an object");
  // tf32_tflops: a datasheet figure drafted files carry; no roofline uses it.
  for (const char* k : {"hbm_gbps", "tf32_tflops", "source", "note"}) more.push_back(k);
  for (const auto& [key, field] : kCeilingFields) more.push_back(key);
  only(obj, doc, where + ".", more);
  Ceilings c;
  auto num = [&](const char* key) { return get_number(obj, key, doc, where + ".").value_or(0); };
  for (const auto& [key, field] : kCeilingFields) c.*field = num(key);
  const double hbm = num("hbm_gbps");  // both bandwidths where not given apart
  if (c.read_gbps == 0) c.read_gbps = hbm;
  if (c.copy_gbps == 0) c.copy_gbps = hbm;
  return c;
}

// The [x, us] pairs of the array `a` at `field` ("expected [<x>, us], two
// numbers" naming the element otherwise).
std::vector<std::pair<double, double>> parse_pairs(const ordered_json& a, const JsonDoc& doc,
                                                   const std::string& field, const char* x) {
  std::vector<std::pair<double, double>> out;
  for (size_t i = 0; i < a.size(); ++i) {
    const ordered_json& r = a[i];
    if (!r.is_array() || r.size() != 2 || !r[0].is_number() || !r[1].is_number())
      fail(doc, field + "[" + std::to_string(i) + "]",
           std::string("expected [") + x + ", us], two numbers");
    out.push_back({r[0].get<double>(), r[1].get<double>()});
  }
  return out;
}

Ladder parse_rungs(const ordered_json& obj, const char* key, const JsonDoc& doc,
                   const std::string& where) {
  const std::string field = where + key;
  auto it = obj.find(key);
  if (it == obj.end()) fail(doc, field, "missing (expected an array of [bytes, us] rungs)");
  if (!it->is_array()) fail(doc, field, "expected an array of [bytes, us] rungs");
  Ladder l;
  for (const auto& [bytes, us] : parse_pairs(*it, doc, field, "bytes"))
    l.rungs.push_back({bytes, us * 1e-6});
  if (std::string why = ladder_problem(l); !why.empty()) fail(doc, field, why);
  return l;
}

// `measured.ladder`: {"read": [[bytes, us], ...], "copy": [[bytes, us], ...],
// "launch_extra_us": x, "graph_node_extra_us": y} required;
// "launch_extra_by_link", "graph_node_extra_by_link": [[link bytes, us], ...]
// optional.
SpeedOfLight parse_ladder(const ordered_json& obj, const JsonDoc& doc, const std::string& where) {
  if (!obj.is_object()) fail(doc, where, "expected an object");
  only(obj, doc, where + ".",
       {"read", "copy", "launch_extra_us", "graph_node_extra_us", "launch_extra_by_link",
        "graph_node_extra_by_link", "date", "driver", "source"});
  SpeedOfLight s;
  s.read = parse_rungs(obj, "read", doc, where + ".");
  s.copy = parse_rungs(obj, "copy", doc, where + ".");
  auto extra = [&](const char* key) {
    auto it = obj.find(key);
    if (it == obj.end() || !it->is_number() || !std::isfinite(it->get<double>()) ||
        it->get<double>() < 0)
      fail(doc, where + "." + key, "expected a finite number >= 0 (us)");
    return it->get<double>();
  };
  s.launch_extra_us = extra("launch_extra_us");
  s.graph_node_extra_us = extra("graph_node_extra_us");
  // Optional (files probed by older suites lack them): the same by the
  // bytes of one link.
  auto table = [&](const char* key) {
    std::vector<std::pair<double, double>> t;
    auto it = obj.find(key);
    if (it == obj.end()) return t;
    const std::string field = where + "." + key;
    if (!it->is_array()) fail(doc, field, "expected an array of [link bytes, us]");
    t = parse_pairs(*it, doc, field, "link bytes");
    for (size_t i = 0; i < t.size(); ++i) {
      const std::string at = field + "[" + std::to_string(i) + "]";
      const auto [b, us] = t[i];
      if (!std::isfinite(b) || b <= 0 || (i > 0 && b <= t[i - 1].first))
        fail(doc, at, "link bytes must be > 0 and increasing");
      if (!std::isfinite(us) || us < 0) fail(doc, at, "expected us >= 0");
    }
    return t;
  };
  s.launch_extra_by_link = table("launch_extra_by_link");
  s.graph_node_extra_by_link = table("graph_node_extra_by_link");
  return s;
}

std::vector<std::string> split_fields(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(';', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// Whether two entries select the same rows ("" and "*" are one shape; a
// variant is its set of fields): find() would always take the first.
bool same_rows(const TargetEntry& a, const TargetEntry& b) {
  auto shape = [](const std::string& s) { return s.empty() ? std::string("*") : s; };
  auto fields = [](const std::string& v) {
    auto f = split_fields(v);
    std::sort(f.begin(), f.end());
    return f;
  };
  return a.name == b.name && a.metric == b.metric && a.dtype == b.dtype &&
         shape(a.shape) == shape(b.shape) && fields(a.variant) == fields(b.variant);
}

// `e`, the entry after `earlier`, selects no rows an earlier one does.
void refuse_same_rows(const std::vector<TargetEntry>& earlier, const TargetEntry& e,
                      const JsonDoc& d) {
  for (size_t j = 0; j < earlier.size(); ++j) {
    if (!same_rows(earlier[j], e)) continue;
    const std::string other = "targets[" + std::to_string(j) + "]";
    fail(d, "targets[" + std::to_string(earlier.size()) + "]",
         "the same rows as " + other + " (line " + std::to_string(d.lines.line_of(other)) +
             "): name, metric, dtype, shape and variant; which one holds would depend on their "
             "order: keep one");
  }
}

// Whether target file `f` is for the GPU the driver calls `gpu_name`; `*why`
// says by which name.
bool file_matches(const TargetFile& f, const std::string& gpu_name, std::string* why) {
  if (!f.gpu.empty() && same_gpu_name(f.gpu, gpu_name)) {
    *why = "gpu \"" + f.gpu + "\"";
    return true;
  }
  for (const auto& m : f.match)
    if (gpu_name_contains(gpu_name, m)) {
      *why = "match \"" + m + "\"";
      return true;
    }
  return false;
}

// A per-link table as [link bytes, us], us rounded to 0.001.
ordered_json extras_json(const std::vector<std::pair<double, double>>& t) {
  ordered_json a = ordered_json::array();
  for (const auto& [bytes, us] : t)
    a.push_back({static_cast<long long>(bytes), std::round(us * 1000) / 1000});
  return a;
}

// Rungs as [bytes, us], us rounded to 0.001.
ordered_json rungs_json(const Ladder& l) {
  ordered_json a = ordered_json::array();
  for (const auto& [b, t] : l.rungs)
    a.push_back({static_cast<long long>(b), std::round(t * 1e9) / 1e3});
  return a;
}

// `v` at `path`: the top level, `measured` and its `ladder` one member a
// line, `targets` one entry a line, so that diffs of a re-probe stay readable.
std::string layout(const ordered_json& v, const std::string& path, const std::string& indent) {
  const bool arr = v.is_array();
  if (!(path.empty() || (path == "targets" && arr) ||
        ((path == "measured" || path == "measured.ladder") && v.is_object())))
    return v.dump();
  std::string out = arr ? "[\n" : "{\n";
  bool first = true;
  for (const auto& [key, x] : v.items()) {
    out += (first ? "" : ",\n") + indent + "  " + (arr ? "" : ordered_json(key).dump() + ": ") +
           layout(x, path.empty() ? key : path + "." + key, indent + "  ");
    first = false;
  }
  return out + "\n" + indent + (arr ? "]" : "}");
}

}  // namespace

Ceilings TargetFile::ceilings() const {
  Ceilings c;
  for (const auto& [key, field] : kCeilingFields)
    c.*field = measured.*field > 0 ? measured.*field : peaks.*field;
  // flops_utilization divides by the datasheet (the MFU convention); the
  // measured peaks above are the roofline's ceilings.
  c.datasheet = peaks;
  c.ladder = measured.ladder;
  return c;
}

bool variant_matches(const std::string& entry, const std::string& row) {
  if (entry.empty()) return true;
  const auto have = split_fields(row);
  for (const auto& f : split_fields(entry))
    if (std::find(have.begin(), have.end(), f) == have.end()) return false;
  return true;
}

const TargetEntry* TargetFile::find(const std::string& name, const std::string& metric,
                                    const std::string& dtype, const std::string& shape,
                                    const std::string& variant) const {
  const TargetEntry* best = nullptr;
  int best_score = -1;
  for (const auto& e : targets) {
    if (e.name != name || e.metric != metric || e.dtype != dtype) continue;
    bool any_shape = e.shape.empty() || e.shape == "*";
    if (!any_shape && e.shape != shape) continue;
    // A wildcard never stands for the seed-mean row: it is a different quantity.
    if (any_shape && shape == "mean") continue;
    if (!variant_matches(e.variant, variant)) continue;
    int score = (any_shape ? 0 : 2) + (e.variant.empty() ? 0 : 1);
    if (score > best_score) {
      best = &e;
      best_score = score;
    }
  }
  return best;
}

TargetFile parse_target_file(const std::string& text, const std::string& path) {
  JsonDoc d;
  if (std::string error; !parse_json_file(text, path, &d, &error)) throw TargetError(error);
  const ordered_json& doc = d.value;
  if (!doc.is_object()) fail(d, "", "expected an object at the top level");
  const JsonFields<TargetError> in{path, &d.lines};
  in.only(doc, "", {"gpu", "match", "note", "peaks", "measured", "tolerance", "targets"});
  TargetFile f;
  f.path = path;
  f.gpu = in.string(doc, "gpu", "", nullptr);
  f.match = in.strings(doc, "match", "");
  auto p = doc.find("peaks");
  if (p == doc.end()) fail(d, "peaks", "missing (the GPU's datasheet peaks)");
  f.peaks = parse_ceilings(*p, d, "peaks", {});
  if (f.peaks.read_gbps <= 0) fail(d, "peaks.hbm_gbps", "missing (expected a number > 0)");
  auto ms = doc.find("measured");
  if (ms != doc.end() && !ms->is_null()) {
    f.measured = parse_ceilings(*ms, d, "measured", {"date", "driver", "ladder"});
    f.measured_date = in.string(*ms, "date", "measured.", "");
    f.measured_driver = in.string(*ms, "driver", "measured.", "");
    if (auto l = ms->find("ladder"); l != ms->end() && !l->is_null())
      f.measured.ladder = parse_ladder(*l, d, "measured.ladder");
  }
  const double default_tol = get_tolerance(doc, d, "").value_or(0.05);
  auto ts = doc.find("targets");
  if (ts == doc.end()) fail(d, "targets", "missing (expected an array, possibly empty)");
  if (!ts->is_array()) fail(d, "targets", "expected an array");
  for (size_t i = 0; i < ts->size(); ++i) {
    const ordered_json& t = (*ts)[i];
    std::string where = "targets[" + std::to_string(i) + "].";
    if (!t.is_object()) fail(d, "targets[" + std::to_string(i) + "]", "expected an object");
    in.only(t, where,
            {"name", "metric", "dtype", "shape", "variant", "target", "roofline_fraction",
             "tolerance", "board_spread", "note"});
    TargetEntry e;
    e.name = in.string(t, "name", where, nullptr);
    e.metric = in.string(t, "metric", where, nullptr);
    e.dtype = in.string(t, "dtype", where, nullptr);
    e.shape = in.string(t, "shape", where, "");
    e.variant = in.string(t, "variant", where, "");
    e.note = in.string(t, "note", where, "");
    e.target = get_number(t, "target", d, where);
    e.roofline_fraction = get_number(t, "roofline_fraction", d, where);
    if (e.target.has_value() == e.roofline_fraction.has_value())
      fail(d, where + "target", "give exactly one of 'target' or 'roofline_fraction'");
    if (e.roofline_fraction && *e.roofline_fraction > 1.0)
      fail(d, where + "roofline_fraction", "expected a fraction in (0, 1]");
    e.tolerance = get_tolerance(t, d, where).value_or(default_tol);
    e.board_spread = get_number(t, "board_spread", d, where);
    if (e.board_spread && *e.board_spread >= 1)
      fail(d, where + "board_spread", "expected a fraction in (0, 1)");
    refuse_same_rows(f.targets, e, d);
    f.targets.push_back(std::move(e));
  }
  return f;
}

TargetFile load_target_file(const std::string& path) {
  const auto text = read_whole_file(path);
  if (!text) throw TargetError(path + ": cannot read target file");
  return parse_target_file(*text, path);
}

std::vector<TargetFile> load_target_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw TargetError(dir + ": not a directory of target files");
  std::vector<std::string> paths;
  for (const auto& ent : fs::directory_iterator(dir, ec))
    if (ent.path().extension() == ".json") paths.push_back(ent.path().string());
  if (ec) throw TargetError(dir + ": cannot list: " + ec.message());
  std::sort(paths.begin(), paths.end());
  std::vector<TargetFile> files;
  for (const auto& p : paths) files.push_back(load_target_file(p));
  return files;
}

const TargetFile* match_gpu(const std::vector<TargetFile>& files, const std::string& gpu_name) {
  const TargetFile* found = nullptr;
  std::string found_why;
  for (const auto& f : files) {
    std::string why;
    if (!file_matches(f, gpu_name, &why)) continue;
    // Two files for one GPU: which one holds its targets would depend on
    // how the files sort, and the other's targets would never be checked.
    if (found)
      throw TargetError("GPU '" + gpu_name + "' matches two target files: " + found->path + " (" +
                        found_why + ") and " + f.path + " (" + why +
                        "): keep one file per GPU model, or make the match lists tell them apart");
    found = &f;
    found_why = why;
  }
  return found;
}

std::string gpu_slug(const std::string& gpu_name) {
  std::string s;
  for (char ch : gpu_name_key(gpu_name)) {
    if (std::isalnum(static_cast<unsigned char>(ch)))
      s += ch;
    else if (!s.empty() && s.back() != '-')
      s += '-';
  }
  while (!s.empty() && s.back() == '-') s.pop_back();
  return s.empty() ? "unknown-gpu" : s;
}

std::string target_file_line(const std::vector<TargetFile>& files, const std::string& gpu_name) {
  if (const TargetFile* f = match_gpu(files, gpu_name)) return "target file: " + f->path;
  return "target file: none (new: " + gpu_slug(gpu_name) + ".json)";
}

std::string set_ladder(const std::string& text, const std::string& path, const SpeedOfLight& sol,
                       const std::string& date, const std::string& driver) {
  for (const Ladder* l : {&sol.read, &sol.copy})
    if (std::string why = ladder_problem(*l); !why.empty())
      throw TargetError(path + ": measured.ladder: " + why);
  JsonDoc d;
  if (std::string error; !parse_json_file(text, path, &d, &error)) throw TargetError(error);
  ordered_json& doc = d.value;
  if (!doc.is_object()) fail(d, "", "expected an object at the top level");
  if (!doc.contains("measured") || doc["measured"].is_null())
    doc["measured"] = ordered_json::object();
  if (!doc["measured"].is_object()) fail(d, "measured", "expected an object");
  doc["measured"]["ladder"] = {
      {"read", rungs_json(sol.read)},
      {"copy", rungs_json(sol.copy)},
      {"launch_extra_us", std::round(sol.launch_extra_us * 1000) / 1000},
      {"graph_node_extra_us", std::round(sol.graph_node_extra_us * 1000) / 1000},
      {"launch_extra_by_link", extras_json(sol.launch_extra_by_link)},
      {"graph_node_extra_by_link", extras_json(sol.graph_node_extra_by_link)},
      {"date", date},
      {"driver", driver},
      {"source",
       "kbench probe: the ideal kernels (suite/ideal_kernels.h) timed cold as experiments are, "
       "the fastest median per byte count [bytes, us]; copy bytes = read + written; extra: "
       "chains of 8 ideal reads, the smallest, and by the bytes of one link"}};
  const std::string out = layout(doc, "", "") + "\n";
  parse_target_file(out, path);  // what was written must read back
  return out;
}

std::string probe_write_refusal(const std::string& text, const std::string& path,
                                const std::string& gpu_name) {
  JsonDoc d;
  if (std::string error; !parse_json_file(text, path, &d, &error)) throw TargetError(error);
  if (!d.value.is_object()) fail(d, "", "expected an object at the top level");
  const JsonFields<TargetError> in{path, &d.lines};
  TargetFile f;
  f.path = path;
  f.gpu = in.string(d.value, "gpu", "", "");
  f.match = in.strings(d.value, "match", "");
  if (match_gpu({f}, gpu_name)) return "";
  return path + " is the target file of '" + f.gpu + "', not of this GPU ('" + gpu_name +
         "'): its ladder would join that GPU's name, peaks and measured values. Give --write "
         "this GPU's file or a new one; nothing was measured or written";
}

ProbedFile merge_probed_ladder(const std::string& text, const std::string& path,
                               const std::string& gpu_name, bool replace,
                               const SpeedOfLight& probed, const std::string& date,
                               const std::string& driver) {
  if (std::string why = probe_write_refusal(text, path, gpu_name); !why.empty())
    throw TargetError(why);
  ProbedFile out;
  SpeedOfLight sol = probed;
  if (!replace) {
    const TargetFile before = parse_target_file(text, path);
    if (before.measured.ladder.present()) {
      sol = faster_of(before.measured.ladder, probed, &out.kept);
      out.merged = true;
    }
  }
  out.text = set_ladder(text, path, sol, date, driver);
  return out;
}

std::string layout_target_file(const std::string& text, const std::string& path) {
  ordered_json doc;
  try {
    doc = ordered_json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw TargetError(path + ": not valid JSON: " + e.what());
  }
  if (!doc.is_object()) throw TargetError(path + ": (top level): expected an object");
  return layout(doc, "", "") + "\n";
}

SpeedOfLight faster_of(const SpeedOfLight& before, const SpeedOfLight& now, int* kept) {
  int k = 0;
  SpeedOfLight out = now;
  auto rungs = [&](const Ladder& b, Ladder& o) {
    if (b.rungs.size() != o.rungs.size()) return;
    for (size_t i = 0; i < b.rungs.size(); ++i)
      if (b.rungs[i].first != o.rungs[i].first) return;
    for (size_t i = 0; i < b.rungs.size(); ++i)
      if (b.rungs[i].second < o.rungs[i].second) o.rungs[i].second = b.rungs[i].second, ++k;
  };
  rungs(before.read, out.read);
  rungs(before.copy, out.copy);
  if (kept) *kept = k;
  return out;
}

std::optional<double> resolve_target(const TargetEntry& e, std::optional<double> roofline,
                                     bool lower_is_better) {
  if (e.target) return e.target;
  if (e.roofline_fraction && roofline)
    return lower_is_better ? *roofline / *e.roofline_fraction : *e.roofline_fraction * *roofline;
  return std::nullopt;
}

double target_miss(double actual, double target, bool lower_is_better) {
  // A time is judged as its rate: 4077 us against 3881 misses by the 4.8%
  // its tokens/s row misses by, not by 5.1%.
  return lower_is_better ? 1 - target / actual : 1 - actual / target;
}

bool below_target(double actual, double target, double tolerance, bool lower_is_better) {
  return target_miss(actual, target, lower_is_better) > tolerance;
}

std::optional<double> target_on_host(double target, double value, double t_now_us, double rise_us,
                                     bool lower_is_better) {
  if (!(rise_us > 0) || !(t_now_us > 0) || !(value > 0) || !(target > 0)) return std::nullopt;
  // The time per call at the target (a rate is inversely proportional).
  const double t_target = lower_is_better ? t_now_us * target / value : t_now_us * value / target;
  const double scale = (t_target + rise_us) / t_target;
  return lower_is_better ? target * scale : target / scale;
}

}  // namespace kb
