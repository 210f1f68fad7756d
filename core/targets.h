// Target files: targets/<gpu-slug>.json, one per GPU model (DESIGN.md "The
// target file"): the GPU's names, datasheet peaks, measured ceilings and the
// targets of its rows. Plain C++ (the gate uses it too).
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/roofline.h"

namespace kb {

// A target file that cannot be read, or two for one GPU.
struct TargetError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct TargetEntry {
  std::string name, metric, dtype;
  std::string shape;  // "" or "*" = any shape; "mean" = the seed-mean row
  // "" = any variant; else `;`-separated fields that must all be among the
  // row variant's ("gemv" matches "gemv;bound=memory").
  std::string variant;
  std::optional<double> target;             // absolute
  std::optional<double> roofline_fraction;  // relative to the row's roofline
  double tolerance = 0.05;  // a row is below target when worse by more than this (relative)
  // What boards of this GPU model were measured to differ by on this key:
  // the largest gap between two boards' medians, relative to the better.
  std::optional<double> board_spread;
  std::string note;
};

struct TargetFile {
  std::string path;
  std::string gpu;                 // the reference GPU's name
  std::vector<std::string> match;  // substrings of the driver's GPU name (core/gpu_name.h)
  Ceilings peaks;                  // datasheet
  Ceilings measured;               // measured ceilings (zeros where not measured)
  std::string measured_date, measured_driver;
  std::vector<TargetEntry> targets;

  // The ceilings the roofline uses: measured where present, else datasheet.
  Ceilings ceilings() const;
  // The most specific entry for a row (exact shape beats wildcard; a
  // variant-specific entry beats a generic one); nullptr when none.
  const TargetEntry* find(const std::string& name, const std::string& metric,
                          const std::string& dtype, const std::string& shape,
                          const std::string& variant = "") const;
};

// Whether an entry's variant selects a row's (TargetEntry::variant).
bool variant_matches(const std::string& entry_variant, const std::string& row_variant);

TargetFile parse_target_file(const std::string& json_text, const std::string& path);
TargetFile load_target_file(const std::string& path);
// Every *.json in `dir`, sorted by name. A malformed file throws TargetError.
std::vector<TargetFile> load_target_dir(const std::string& dir);
// The file whose `match` list (or `gpu`) matches the driver's GPU name;
// nullptr when none. Throws TargetError naming both files when two match.
const TargetFile* match_gpu(const std::vector<TargetFile>& files, const std::string& gpu_name);
// "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3" (for a new file's name).
std::string gpu_slug(const std::string& gpu_name);
// "target file: PATH", or "target file: none (new: SLUG.json)": the line
// `kbench probe` prints for tools/bringup.sh.
std::string target_file_line(const std::vector<TargetFile>& files, const std::string& gpu_name);
// A target file's JSON laid out one key, measured field and target entry a
// line, so that a diff reads entry by entry. Throws TargetError.
std::string layout_target_file(const std::string& json_text, const std::string& path);

// `kbench probe --write`: the target file text with `measured.ladder` set
// to `sol`, everything else kept. Throws TargetError.
std::string set_ladder(const std::string& json_text, const std::string& path,
                       const SpeedOfLight& sol, const std::string& date, const std::string& driver);

// `kbench probe --write PATH` into an existing file (`text`): "" where it is
// the target file of the GPU the driver calls `gpu_name`, as target
// matching takes it (match_gpu); else why not, naming both GPUs: this GPU's
// ladder would join another GPU's name, peaks and measured values. Reads
// `gpu` and `match` alone (with --replace the rest may be what is broken);
// TargetError where those do not read.
std::string probe_write_refusal(const std::string& json_text, const std::string& path,
                                const std::string& gpu_name);

// An existing --write file with the probe's ladder `probed`: per rung the
// faster of the file's and `probed` (`kept` rungs from the file, `merged`
// where it had a ladder), or with `replace` `probed` alone. TargetError
// (probe_write_refusal) for another GPU's file.
struct ProbedFile {
  std::string text;
  int kept = 0;
  bool merged = false;
};
ProbedFile merge_probed_ladder(const std::string& json_text, const std::string& path,
                               const std::string& gpu_name, bool replace,
                               const SpeedOfLight& probed, const std::string& date,
                               const std::string& driver);

// Per rung the faster of two probes where both ladders have the same byte
// counts (else `now`); further-launch costs `now`'s (docs/decisions/0009).
// `*kept`: how many rungs came from `before`.
SpeedOfLight faster_of(const SpeedOfLight& before, const SpeedOfLight& now, int* kept = nullptr);

// The absolute target, or the roofline scaled by the fraction (divided for
// times); nullopt when relative without a roofline.
std::optional<double> resolve_target(const TargetEntry& e, std::optional<double> roofline,
                                     bool lower_is_better = false);
// How much of the target's rate `actual` misses (a time as the rate it
// times: 1 - target/actual), and whether that is more than the tolerance.
double target_miss(double actual, double target, bool lower_is_better);
bool below_target(double actual, double target, double tolerance, bool lower_is_better);
// A target on a host that launches `rise_us` slower per call than the
// target file's host (decisions/0055): the time per call at the target
// (`t_now_us` scaled from `value`) grows by the rise. nullopt where the
// rise, the time or a value is not positive.
std::optional<double> target_on_host(double target, double value, double t_now_us, double rise_us,
                                     bool lower_is_better);

}  // namespace kb
