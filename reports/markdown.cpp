#include <algorithm>
#include <string_view>

#include "reports/format.h"

namespace kb {

namespace {

bool alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

}  // namespace

std::string markdown_text(const std::string& s) {
  std::string o;
  o.reserve(s.size() + s.size() / 8);
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    // Between two letters or digits an underscore opens no emphasis
    // (layer_norm stays readable in the raw file); elsewhere it may.
    const bool in_word = i > 0 && i + 1 < s.size() && alnum(s[i - 1]) && alnum(s[i + 1]);
    if (std::string_view("\\|*`~").find(c) != std::string_view::npos || (c == '_' && !in_word) ||
        (c == '(' && i > 0 && s[i - 1] == ']'))  // "[text](url)" is a link
      o += '\\';
    if (c == '<' || c == '>')
      o += c == '<' ? "&lt;" : "&gt;";
    else
      o += c == '\n' || c == '\r' ? ' ' : c;
  }
  return o;
}

std::string html_code_spans(const std::string& escaped) {
  std::string o;
  size_t i = 0, open;
  while ((open = escaped.find('`', i)) != std::string::npos) {
    const size_t close = escaped.find('`', open + 1);
    if (close == std::string::npos) break;
    o += escaped.substr(i, open - i) + "<code>" + escaped.substr(open + 1, close - open - 1) +
         "</code>";
    i = close + 1;
  }
  return o + escaped.substr(i);
}

std::string markdown_code_block(const std::string& code, const std::string& language) {
  size_t longest = 0, run = 0;
  for (char c : code) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(std::max<size_t>(3, longest + 1), '`');
  const bool ends = !code.empty() && code.back() == '\n';
  return fence + language + "\n" + code + (ends ? "" : "\n") + fence + "\n";
}

}  // namespace kb
