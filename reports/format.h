// Numbers and names as text in reports and kgate's messages.
#pragma once

#include <cstdio>
#include <string>

namespace kb {

// `v` through printf's `format`, which converts one double ("%.2f").
inline std::string format_double(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// A relative value as a percentage: 0.034 -> "3.4%" (`decimals` after the
// point).
inline std::string percent(double rel, int decimals = 1) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f%%", decimals, rel * 100);
  return buf;
}

// The items of `v` joined by `sep`.
template <class C>
std::string join(const C& v, const char* sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

// `s` as literal text in a Markdown table cell or paragraph: a name from the
// data is never markup (`|`, line breaks, `*`, `_`, backticks, `<`, `](`).
std::string markdown_text(const std::string& s);

// Escaped HTML text with its Markdown code spans (`x`) as <code>x</code>.
std::string html_code_spans(const std::string& escaped);

// A fenced code block holding `code` (ending in a newline or not), with a
// fence longer than any run of backticks in it.
std::string markdown_code_block(const std::string& code, const std::string& language);

}  // namespace kb
