// Numbers and names as text in reports and kgate's messages.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "core/record.h"  // format_double

namespace kb {

// 0.034 -> "3.4%" (`decimals` after the point).
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
// The same, but for its code spans (`x`), kept.
std::string markdown_with_code(const std::string& s);

// The Markdown the reports write (headings, paragraphs, lists, tables, code,
// **bold**, links, lines of their own HTML such as <details>) as HTML.
std::string markdown_html(const std::string& md);

// A self-contained HTML page: `title`, the reports' style and `css` inline, `body`.
std::string html_page(const std::string& title, const std::string& css, const std::string& body);

// A fenced code block holding `code` (ending in a newline or not), with a
// fence longer than any run of backticks in it.
std::string markdown_code_block(const std::string& code, const std::string& language);

// A Markdown table of cells taken as written (escape data with markdown_text);
// `align` has an 'r' for each right-aligned column (a number), else 'l'.
std::string markdown_table(const std::vector<std::string>& head, const std::string& align,
                           const std::vector<std::vector<std::string>>& rows);

}  // namespace kb
