#include "reports/markdown.h"

#include <algorithm>

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
    switch (c) {
      case '\\':
      case '|':
      case '*':
      case '`':
      case '~':
        o += '\\';
        o += c;
        break;
      case '_':
        // Between two letters or digits an underscore opens no emphasis
        // (layer_norm stays readable in the raw file); elsewhere it may.
        if (i > 0 && i + 1 < s.size() && alnum(s[i - 1]) && alnum(s[i + 1]))
          o += c;
        else
          o += "\\_";
        break;
      case '(':
        if (i > 0 && s[i - 1] == ']') o += '\\';  // "[text](url)" is a link
        o += c;
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '\n':
      case '\r':
        o += ' ';
        break;
      default:
        o += c;
    }
  }
  return o;
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
