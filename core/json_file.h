// Strict JSON for the files people edit by hand: target files, the datasheet
// table and tuning files. nlohmann's parser alone keeps the last of two
// equal keys without a word, reports a number out of range with neither file
// nor line, and its DOM forgets where a value was. Here every error names
// the file, the line and the field ("targets/x.json:12: targets[2].target:
// ..."), and a key given twice in one object is an error.
//
// Fields are named as the readers name them: object members joined by '.',
// array elements as [i] ("measured.ladder.read[3]"); "" is the document.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>

namespace kb {

// Where each field of a document starts (1-based lines).
class JsonLines {
 public:
  void set(const std::string& field, size_t line) { lines_.emplace(field, line); }
  // The field's line; for a field the document lacks, its nearest enclosing
  // field's ("targets[2].name" missing: the line of targets[2]); 0 if none.
  size_t line_of(std::string field) const;

 private:
  std::unordered_map<std::string, size_t> lines_;
};

// "path:line: field: what" (the line left out where `lines` is null or does
// not know the field, the field where it is "").
std::string json_message(const std::string& path, const JsonLines* lines, const std::string& field,
                         const std::string& what);

struct JsonDoc {
  std::string path;
  nlohmann::ordered_json value;
  JsonLines lines;
  std::string message(const std::string& field, const std::string& what) const {
    return json_message(path, &lines, field, what);
  }
};

// Parses `text` (read from `path`). Returns false and sets `*error` to one
// line naming the file, the line and column, the field and what is wrong:
// a syntax error, a number out of range (1e400), a key given twice.
bool parse_json_file(const std::string& text, const std::string& path, JsonDoc* doc,
                     std::string* error);

}  // namespace kb
