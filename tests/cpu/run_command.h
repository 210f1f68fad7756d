// Runs a program as a real process, for the command-line tests.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace kb::test {

struct CommandResult {
  int code = -1;    // exit status, -1 if it did not exit normally (or did not start)
  std::string out;  // stdout and stderr together
};

// `exe args` through the shell, with stderr folded into stdout.
inline CommandResult run_command(const std::string& exe, const std::string& args) {
  CommandResult r;
  const std::string cmd = exe + " " + args + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int st = ::pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

}  // namespace kb::test
