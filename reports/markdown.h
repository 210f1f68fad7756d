// Text from the data (key names, GPU names, run ids, messages) in the
// Markdown that kgate writes: check's summary, compare, noise, siblings and
// the bring-up report. A name is data, never markup: a `|` would end a table
// cell, a line break the row, `*`, `_` and backticks would open emphasis or
// code, `<` an HTML tag (GitHub renders some), `](` a link.
#pragma once

#include <string>

namespace kb {

// `s` as literal text in a Markdown table cell or paragraph.
std::string markdown_text(const std::string& s);

// A fenced code block holding `code` (ending in a newline or not), with a
// fence longer than any run of backticks in it.
std::string markdown_code_block(const std::string& code, const std::string& language);

}  // namespace kb
