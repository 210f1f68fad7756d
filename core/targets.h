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

// A target file that cannot be read or is malformed; what() names the file,
// the line and the field ("targets/x.json:12: targets[2].target: expected a
// number > 0"). Also: two target files for one GPU (match_gpu).
struct TargetError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct TargetEntry {
  std::string name, metric, dtype;
  std::string shape;  // "" or "*" = any shape; "mean" = the seed-mean row
  // "" = any variant; else `;`-separated fields that must all be among the
  // row variant's fields ("gemv" matches "gemv;bound=memory"), since rows
  // carry the case's detail and the roofline's limiter after the point's own.
  std::string variant;
  std::optional<double> target;             // absolute
  std::optional<double> roofline_fraction;  // relative to the row's roofline
  double tolerance = 0.05;  // a row is below target when worse by more than this (relative)
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
// The file whose `match` list (or `gpu`) matches the driver's GPU name,
// compared as core/gpu_name.h does; nullptr when none. Throws TargetError
// naming both files when two match.
const TargetFile* match_gpu(const std::vector<TargetFile>& files, const std::string& gpu_name);
// "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3" (for a new file's name).
std::string gpu_slug(const std::string& gpu_name);
// The line `kbench probe` prints so that a script (tools/bringup.sh) learns
// which target file is the GPU's without matching names itself:
// "target file: PATH" (match_gpu's file), or "target file: none (new:
// SLUG.json)" with the name gpu_slug gives a new one.
std::string target_file_line(const std::vector<TargetFile>& files, const std::string& gpu_name);
// A target file's JSON text laid out as `kbench probe --write` writes it:
// top-level keys one a line, `measured` one field a line, `targets` one entry
// a line, so that a drafted file's diff reads entry by entry. Throws
// TargetError (naming `path`) when the text is not a JSON object.
std::string layout_target_file(const std::string& json_text, const std::string& path);

// `kbench probe --write`: the target file text `json_text` (an existing
// file, or a draft) with `measured.ladder` set to `sol` (times in us, with
// the date and driver of the measurement), everything else kept, laid out
// one target entry per line. Throws TargetError (naming `path`) when the text
// is not a target file or the ladder is not usable.
std::string set_ladder(const std::string& json_text, const std::string& path,
                       const SpeedOfLight& sol, const std::string& date, const std::string& driver);

// The faster of two measurements of one GPU model's speed of light: per
// rung the smaller time where both ladders have the same byte counts (else
// `now` alone): a bound must hold for every probe, and launch-bound rungs
// move 2-4% from process to process and board to board (H100).
// The further-launch tables and scalars are `now`'s alone (each a median
// over worker processes; the fastest over probes was a lucky process that
// rows did not attain: H100, docs/decisions/0009-chains-probed-in-worker-processes.md).
// `*kept` (optional): how many rungs came from `before`.
SpeedOfLight faster_of(const SpeedOfLight& before, const SpeedOfLight& now, int* kept = nullptr);

// The target value of a row: the absolute target, or the roofline scaled by
// the fraction (x fraction for rates, / fraction for times); nullopt when the
// entry is relative and no roofline is known.
std::optional<double> resolve_target(const TargetEntry& e, std::optional<double> roofline,
                                     bool lower_is_better = false);
// True when `actual` misses `target` by more than the tolerance, in the
// metric's direction.
bool below_target(double actual, double target, double tolerance, bool lower_is_better);

}  // namespace kb
