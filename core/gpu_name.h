// The one place GPU names are compared: target files' `gpu` and `match`, the
// datasheet table's names, tuning files' `gpu`, suspects' and rows' `arch`,
// and kgate's grouping of rows into one series per GPU model. The driver
// spells a model one way, but people write target files and CI tools rewrite
// names, so "nvidia h100 80gb hbm3" and "NVIDIA H100 80GB HBM3" are one GPU
// model everywhere: a history split by spelling would start a new series and
// pass a drop. Plain C++ (kgate uses it).
#pragma once

#include <string>
#include <string_view>

namespace kb {

// The form two names of one GPU model share: ASCII letters lower-cased,
// nothing else changed ("NVIDIA H100 80GB HBM3" -> "nvidia h100 80gb hbm3").
std::string gpu_name_key(std::string_view name);

// Whether `a` and `b` name the same GPU model.
bool same_gpu_name(std::string_view a, std::string_view b);

// Whether `part` (non-empty) occurs in `name`, both compared as gpu_name_key.
bool gpu_name_contains(std::string_view name, std::string_view part);

}  // namespace kb
