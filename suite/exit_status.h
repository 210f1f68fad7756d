// What kbench says and returns when a command ends in an exception: 2 for
// bad usage or input, 3 for the machine; never 1, a failed row's
// (docs/kbench-help.txt "Exit codes"). CUDA-free.
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
