// The console table printed at the end of `kbench run`: one line per row
// (name, shape, dtype, metric, actual, target, roofline fraction, status).
#pragma once

#include <string>
#include <vector>

#include "core/record.h"

namespace kb {

std::string console_table(const std::vector<Record>& rows);

// The aligned text table the console reporters share: the header, a rule of
// dashes, one line per row; columns [first_right, last_right] right-aligned.
std::string text_table(const std::vector<std::string>& head,
                       const std::vector<std::vector<std::string>>& cells, size_t first_right,
                       size_t last_right);

}  // namespace kb
