// The one place GPU names are compared (target, datasheet and tuning files,
// rows' `arch`, kgate's series): ASCII case ignored, since a history split
// by spelling would start a new series and pass a drop.
#pragma once

#include <string>
#include <string_view>

namespace kb {

// ASCII letters lower-cased, nothing else changed.
std::string gpu_name_key(std::string_view name);

// Whether `a` and `b` name the same GPU model.
bool same_gpu_name(std::string_view a, std::string_view b);

// Whether `part` (non-empty) occurs in `name`, both compared as gpu_name_key.
bool gpu_name_contains(std::string_view name, std::string_view part);

}  // namespace kb
