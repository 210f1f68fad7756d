#include <algorithm>
#include <string_view>
#include <vector>

#include "reports/format.h"
#include "reports/gate_result.h"

namespace kb {

namespace {

bool alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

void put_html(std::string& o, std::string_view s) {
  o += escape_markup(std::string(s), Markup::html);
}

// A line's text: backslash escapes, `code`, **bold** and [text](url).
std::string inline_html(std::string_view s) {
  std::string o;
  bool bold = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const size_t close = s[i] == '`' ? s.find('`', i + 1) : std::string_view::npos;
    const size_t mid = s[i] == '[' ? s.find("](", i) : std::string_view::npos;
    const size_t end = mid == std::string_view::npos ? mid : s.find(')', mid);
    if (s[i] == '\\' && i + 1 < s.size()) {
      put_html(o, s.substr(++i, 1));
    } else if (close != std::string_view::npos) {
      o += "<code>";
      put_html(o, s.substr(i + 1, close - i - 1));
      o += "</code>";
      i = close;
    } else if (s.substr(i, 2) == "**") {
      o += bold ? "</b>" : "<b>";
      bold = !bold;
      ++i;
    } else if (end != std::string_view::npos) {
      o += "<a href=\"";
      put_html(o, s.substr(mid + 2, end - mid - 2));
      o += "\">" + inline_html(s.substr(i + 1, mid - i - 1)) + "</a>";
      i = end;
    } else if (s.substr(i, 4) == "&lt;" || s.substr(i, 4) == "&gt;") {  // markdown_text's
      o += s.substr(i, 4);
      i += 3;
    } else {
      put_html(o, s.substr(i, 1));
    }
  }
  return bold ? o + "</b>" : o;
}

// The cells of a table row "| a | b \| c |".
std::vector<std::string_view> row_cells(std::string_view line) {
  std::vector<std::string_view> cells;
  for (size_t i = 1, start = 1; i < line.size(); ++i) {
    if (line[i] == '\\')
      ++i;
    else if (line[i] == '|') {
      std::string_view c = line.substr(start, i - start);
      while (!c.empty() && c.front() == ' ') c.remove_prefix(1);
      while (!c.empty() && c.back() == ' ') c.remove_suffix(1);
      cells.push_back(c);
      start = i + 1;
    }
  }
  return cells;
}

}  // namespace

std::string markdown_html(const std::string& md) {
  std::vector<std::string_view> lines;
  for (size_t p = 0, q; p < md.size(); p = q + 1) {
    q = std::min(md.find('\n', p), md.size());
    lines.push_back(std::string_view(md).substr(p, q - p));
  }
  std::string o, para;
  std::vector<bool> right;  // per table column: right-aligned (a number)
  enum { none, list, table } open = none;
  auto end_block = [&] {
    if (!para.empty()) o += "<p>" + para + "</p>\n";
    o += open == list ? "</ul>\n" : open == table ? "</tbody></table>\n" : "";
    para.clear();
    open = none;
  };
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string_view l = lines[i];
    if (l.substr(0, 3) == "```") {
      end_block();
      const std::string_view fence = l.substr(0, l.find_first_not_of('`'));
      o += "<pre>";
      while (++i < lines.size() && lines[i] != fence) put_html(o, std::string(lines[i]) + "\n");
      o += "</pre>\n";
    } else if (l.empty() || l[0] == '#' || l[0] == '<') {
      end_block();
      const std::string h = std::to_string(l.find(' '));
      if (!l.empty() && l[0] == '#')  // a heading
        o += "<h" + h + ">" + inline_html(l.substr(l.find(' ') + 1)) + "</h" + h + ">\n";
      else if (!l.empty())  // the report's own markup (<details>), never data
        o += std::string(l) + "\n";
    } else if (l.substr(0, 2) == "- ") {
      if (open != list) end_block();
      o += open != list ? "<ul>\n" : "";
      open = list;
      o += "<li>" + inline_html(l.substr(2)) + "</li>\n";
    } else if (l[0] == '|' && (open == table || i + 1 < lines.size())) {
      const bool head = open != table;
      if (head) {
        end_block();
        right.clear();
        for (std::string_view c : row_cells(lines[++i])) right.push_back(c.back() == ':');
        o += "<table>\n<thead>";
      }
      std::string row = "<tr>";
      const auto cells = row_cells(l);
      for (size_t c = 0; c < cells.size(); ++c)
        row += std::string(head                           ? "<th>"
                           : c < right.size() && right[c] ? "<td class=\"n\">"
                                                          : "<td>") +
               inline_html(cells[c]) + (head ? "</th>" : "</td>");
      o += row + (head ? "</tr></thead>\n<tbody>\n" : "</tr>\n");
      open = table;
    } else {
      para += (para.empty() ? "" : " ") + inline_html(l);
    }
  }
  end_block();
  return o;
}

std::string html_page(const std::string& title, const std::string& css, const std::string& body) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
         escape_markup(title, Markup::html) +
         "</title>\n<style>\nbody { font: 14px/1.45 system-ui, sans-serif; margin: 1.5em auto; "
         "max-width: 1400px; padding: 0 1em; color: #1d1d1f; }\n"
         "table { border-collapse: collapse; margin: .6em 0 1.4em; font-size: 13px; }\n"
         "th, td { padding: 3px 7px; border: 1px solid #ddd; text-align: left; }\n"
         "th { background: #f3f3f3; position: sticky; top: 0; }\n"
         "td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }\n"
         "pre { background: #f6f8fa; padding: .8em; overflow: auto; font-size: 12px; }\n" +
         css + "</style></head>\n<body>\n" + body + "</body></html>\n";
}

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

std::string markdown_with_code(const std::string& s) {
  std::string o;
  size_t i = 0, open;
  while ((open = s.find('`', i)) != std::string::npos) {
    const size_t close = s.find('`', open + 1);
    if (close == std::string::npos) break;
    o += markdown_text(s.substr(i, open - i)) + s.substr(open, close - open + 1);
    i = close + 1;
  }
  return o + markdown_text(s.substr(i));
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

std::string markdown_table(const std::vector<std::string>& head, const std::string& align,
                           const std::vector<std::vector<std::string>>& rows) {
  const auto line = [](const std::vector<std::string>& cells) {
    std::string s = "|";
    for (const auto& c : cells) s += " " + c + " |";
    return s + "\n";
  };
  std::vector<std::string> rule;
  for (size_t i = 0; i < head.size(); ++i)
    rule.push_back(i < align.size() && align[i] == 'r' ? "---:" : "---");
  std::string out = line(head) + line(rule);
  for (const auto& r : rows) out += line(r);
  return out;
}

}  // namespace kb
