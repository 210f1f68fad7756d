// A write cut short on purpose: `body` runs in a child process whose files
// may not grow past `bytes` (RLIMIT_FSIZE with SIGXFSZ ignored, so a write
// fails part-way with EFBIG as a full disk fails with ENOSPC).
#pragma once

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>

namespace kb::test {

// The child's exit status, which is body's return value; -1 where the child
// could not be started or did not exit normally.
inline int in_child_with_file_limit(rlim_t bytes, const std::function<int()>& body) {
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim {
      bytes, bytes
    };
    ::setrlimit(RLIMIT_FSIZE, &lim);
    ::_exit(body());
  }
  int st = 0;
  if (::waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) return -1;
  return WEXITSTATUS(st);
}

}  // namespace kb::test
