// A test process's own folder under the temp dir ("<prefix><pid>"), made on
// first use and removed with all in it when the process exits, so that a
// test run leaves nothing behind (each ctest case is its own process).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <system_error>

namespace kb::test {

inline std::filesystem::path process_temp_root(const std::string& prefix) {
  struct Roots {
    std::map<std::string, std::filesystem::path> made;
    ~Roots() {
      for (const auto& [prefix, path] : made) {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
      }
    }
  };
  static Roots roots;
  auto [it, fresh] = roots.made.try_emplace(prefix);
  if (fresh)
    it->second = std::filesystem::temp_directory_path() / (prefix + std::to_string(::getpid()));
  return it->second;
}

}  // namespace kb::test
