// The console table printed at the end of `kbench run`: one line per row
// (name, shape, dtype, metric, actual, target, roofline fraction, status).
#pragma once

#include <string>
#include <vector>

#include "reports/record.h"

namespace kb {

std::string console_table(const std::vector<Record>& rows);

}  // namespace kb
