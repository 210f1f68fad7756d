// What kbench says and which exit code it returns when a command ends in an
// exception rather than in rows (docs/kbench-help.txt "Exit codes"): 2 for
// bad usage or input, 3 for the machine (no memory, a failed fork, an
// unwritable disk). Never 1: that means a row failed, and a night that
// measured nothing must not read as one that measured a failure.
// CUDA-free (the CPU tests check it); suite/cli/dispatch.cpp handles CUDA's errors itself.
#pragma once

#include <exception>
#include <string>

namespace kb {

struct CommandFailure {
  int exit_code = 0;
  std::string message;  // one or two lines, without the final newline
};

// `e` ended the kbench command `command` ("run", "probe", ...).
CommandFailure describe_failure(const std::exception_ptr& e, const std::string& command);

}  // namespace kb
