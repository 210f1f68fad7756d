// The decode profiler's command line: "--key value" pairs.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace kb::tools {

// Calls on(key, value) for each "--key value" pair of argv, in order; a
// key without a value goes to usage("missing value after KEY"), which
// must not return.
template <typename On, typename Usage>
void for_each_option(int argc, char** argv, On on, Usage usage) {
  for (int i = 1; i < argc; ++i) {
    const std::string key = argv[i];
    if (i + 1 >= argc) usage("missing value after " + key);
    on(key, std::string(argv[++i]));
  }
}

// The items of a comma-separated value, in order; an empty item (a stray
// comma) is kept, so that the caller refuses it.
inline std::vector<std::string> comma_items(const std::string& value) {
  std::vector<std::string> out;
  for (size_t at = 0; at <= value.size();) {
    const size_t comma = std::min(value.find(',', at), value.size());
    out.push_back(value.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

// Prints `why`, then "usage: " and the usage line, to stderr and exits with
// status 2 (a profiler's bad command line).
[[noreturn]] inline void exit_with_usage(const std::string& why, const char* usage_line) {
  std::fprintf(stderr, "%s\nusage: %s\n", why.c_str(), usage_line);
  std::exit(2);
}

}  // namespace kb::tools
