#include "core/json_file.h"

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

namespace kb {

using nlohmann::ordered_json;

size_t JsonLines::line_of(std::string field) const {
  for (;;) {
    auto it = lines_.find(field);
    if (it != lines_.end()) return it->second;
    if (field.empty()) return 0;
    const size_t cut = field.find_last_of(".[");
    field.resize(cut == std::string::npos ? 0 : cut);
  }
}

std::string json_message(const std::string& path, const JsonLines* lines, const std::string& field,
                         const std::string& what) {
  const size_t line = lines ? lines->line_of(field) : 0;
  return path + (line ? ":" + std::to_string(line) : std::string()) + ": " +
         (field.empty() ? std::string() : field + ": ") + what;
}

namespace {

// Edits (insert, delete, replace, swap two neighbours) from `a` to `b`, ASCII case ignored.
size_t edits(const std::string& a, const std::string& b) {
  auto low = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1,
                          d[i - 1][j - 1] + (low(a[i - 1]) == low(b[j - 1]) ? 0 : 1)});
      if (i > 1 && j > 1 && low(a[i - 1]) == low(b[j - 2]) && low(a[i - 2]) == low(b[j - 1]))
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

}  // namespace

std::optional<UnknownKey> unknown_key(const ordered_json& obj,
                                      const std::vector<std::string>& known) {
  if (!obj.is_object()) return std::nullopt;
  for (const auto& [key, value] : obj.items()) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    const std::string* near = nullptr;
    size_t best = 3;  // at most two edits away: a typo
    for (const auto& k : known)
      if (const size_t e = edits(key, k); e < best && e < k.size()) best = e, near = &k;
    std::string what = "unknown field";
    if (near) return UnknownKey{key, what + ": did you mean \"" + *near + "\"?"};
    what += " (the fields here: ";
    for (size_t i = 0; i < known.size(); ++i) what += (i ? ", " : "") + known[i];
    return UnknownKey{key, what + ")"};
  }
  return std::nullopt;
}

namespace {

// A character iterator that publishes how far the parser has read, so that
// the SAX events below know their line (nlohmann tells a handler where it is
// only on an error).
struct Tracked {
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;
  const char* p = nullptr;
  const char** seen = nullptr;
  reference operator*() const { return *p; }
  Tracked& operator++() {
    *seen = ++p;
    return *this;
  }
  Tracked operator++(int) {
    Tracked t = *this;
    ++*this;
    return t;
  }
  bool operator==(const Tracked& o) const { return p == o.p; }
  bool operator!=(const Tracked& o) const { return p != o.p; }
};

// Builds the document as nlohmann's own DOM parser does, recording each
// field's line and refusing a key given twice.
class Builder {
 public:
  using number_integer_t = ordered_json::number_integer_t;
  using number_unsigned_t = ordered_json::number_unsigned_t;
  using number_float_t = ordered_json::number_float_t;
  using string_t = ordered_json::string_t;
  using binary_t = ordered_json::binary_t;

  Builder(const std::string& text, const char* const* seen, JsonDoc* doc)
      : text_(text), seen_(seen), doc_(doc) {}

  bool null() { return place(nullptr) != nullptr; }
  bool boolean(bool v) { return place(v) != nullptr; }
  bool number_integer(number_integer_t v) { return place(v) != nullptr; }
  bool number_unsigned(number_unsigned_t v) { return place(v) != nullptr; }
  bool number_float(number_float_t v, const string_t&) { return place(v) != nullptr; }
  bool string(string_t& v) { return place(std::move(v)) != nullptr; }
  bool binary(binary_t&) { return false; }  // not in JSON text
  bool start_object(std::size_t) { return open(ordered_json::object()); }
  bool start_array(std::size_t) { return open(ordered_json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(string_t& k) {
    Frame& f = stack_.back();
    key_field_ = f.field.empty() ? k : f.field + "." + k;
    if (f.value->contains(k)) {
      error_ = doc_->path + ":" + std::to_string(line_at(read_so_far())) + ": " + key_field_ +
               ": given twice in one object (the other at line " +
               std::to_string(doc_->lines.line_of(key_field_)) + "): keep one";
      return false;
    }
    doc_->lines.set(key_field_, line_at(read_so_far()));
    pending_ = &(*f.value)[k];
    return true;
  }

  bool parse_error(std::size_t position, const std::string& token,
                   const nlohmann::json::exception& ex) {
    // The character it stopped at; a number too large: where the number starts.
    size_t at = position > 0 ? position - 1 : 0;
    if (ex.id == 406 && token.size() <= position) at = position - token.size();
    const size_t line = line_at(position);
    const size_t start = text_.rfind('\n', at == 0 ? 0 : at - 1);
    const size_t column = start == std::string::npos || at == 0 ? at + 1 : at - start;
    std::string what;
    if (ex.id == 406) {
      what = "number out of range (" + token + "): the largest a double holds is about 1.8e308";
    } else {
      // nlohmann's text after its own "... at line L, column C: ".
      what = ex.what();
      const size_t c = what.find(", column ");
      const size_t colon = c == std::string::npos ? c : what.find(": ", c);
      if (colon != std::string::npos) what = what.substr(colon + 2);
      what = "not valid JSON: " + what;
    }
    const std::string field = field_here();
    error_ = doc_->path + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " +
             (field.empty() ? std::string() : field + ": ") + what;
    return false;
  }

  const std::string& error() const { return error_; }

 private:
  struct Frame {
    ordered_json* value;
    std::string field;
  };

  size_t read_so_far() const { return static_cast<size_t>(*seen_ - text_.data()); }

  // The line of the last character read (the parser reads one past a number,
  // which may be the line's end: it belongs to the line it ends).
  size_t line_at(size_t consumed) {
    const size_t at = consumed > 0 ? consumed - 1 : 0;
    if (at < counted_to_) counted_to_ = 0, line_ = 1;  // an error's position, behind the reads
    for (; counted_to_ < at && counted_to_ < text_.size(); ++counted_to_)
      if (text_[counted_to_] == '\n') ++line_;
    return line_;
  }

  // The field the next value fills.
  std::string field_here() const {
    if (stack_.empty()) return "";
    const Frame& f = stack_.back();
    if (f.value->is_array()) return f.field + "[" + std::to_string(f.value->size()) + "]";
    return pending_ ? key_field_ : f.field;
  }

  ordered_json* place(ordered_json v) {
    const std::string field = field_here();
    doc_->lines.set(field, line_at(read_so_far()));  // a member's line is its key's, set first
    ordered_json* at;
    if (stack_.empty()) {
      doc_->value = std::move(v);
      at = &doc_->value;
    } else if (stack_.back().value->is_array()) {
      stack_.back().value->push_back(std::move(v));
      at = &stack_.back().value->back();
    } else {
      *pending_ = std::move(v);
      at = pending_;
    }
    pending_ = nullptr;
    placed_field_ = field;
    return at;
  }

  bool open(ordered_json v) {
    ordered_json* at = place(std::move(v));
    stack_.push_back({at, placed_field_});
    return true;
  }

  bool close() {
    stack_.pop_back();
    return true;
  }

  const std::string& text_;
  const char* const* seen_;
  JsonDoc* doc_;
  std::vector<Frame> stack_;
  ordered_json* pending_ = nullptr;  // the member a key made, until its value comes
  std::string key_field_, placed_field_, error_;
  size_t counted_to_ = 0, line_ = 1;
};

}  // namespace

bool parse_json_file(const std::string& text, const std::string& path, JsonDoc* doc,
                     std::string* error) {
  *doc = JsonDoc{};
  doc->path = path;
  const char* seen = text.data();
  Builder b(text, &seen, doc);
  Tracked first{text.data(), &seen}, last{text.data() + text.size(), &seen};
  const bool ok = ordered_json::sax_parse(first, last, &b);
  if (ok) return true;
  *error = b.error().empty() ? path + ": not valid JSON" : b.error();
  return false;
}

}  // namespace kb
