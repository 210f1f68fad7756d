// The worker's side of process isolation (suite/runner.h): appends JSON
// lines to its `--out` file (rows, measurements, times, or its error).
#pragma once

#include <string>

#include "suite/probe.h"

namespace kb {

// Exit code of a worker whose context was lost after it wrote the rows of
// the faulting point: the parent restarts at the next point.
inline constexpr int kWorkerContextLost = 4;

// The probe's ceilings as one JSON text and back; parse_probed throws
// std::invalid_argument.
std::string probed_arg(const ProbeResult& p);
ProbeResult parse_probed(const std::string& s);

// `kbench __worker ...`; returns its exit code.
int worker_main(int argc, char** argv);

}  // namespace kb
