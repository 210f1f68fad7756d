// Strict JSON for the files people edit by hand (target files, datasheets,
// tuning files): every error names the file, line and field
// ("measured.ladder.read[3]"), and a key given twice is an error (nlohmann
// alone keeps the last without a word, and forgets where a value was).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace kb {

// Where each field of a document starts (1-based lines).
class JsonLines {
 public:
  void set(const std::string& field, size_t line) { lines_.emplace(field, line); }
  // The field's line, else its nearest enclosing field's; 0 if none.
  size_t line_of(std::string field) const;

 private:
  std::unordered_map<std::string, size_t> lines_;
};

// "path:line: field: what" (line and field left out where unknown).
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

// What to say of the first key of `obj` that is not among `known` ("unknown
// field: did you mean \"tolerance\"?"), with the key; none when every key is
// known. A misspelt optional field would otherwise be ignored without a word.
struct UnknownKey {
  std::string key, what;
};
std::optional<UnknownKey> unknown_key(const nlohmann::ordered_json& obj,
                                      const std::vector<std::string>& known);

// Reads a parsed file's fields; every error an `Error` ("path:line: field: what").
template <class Error>
struct JsonFields {
  const std::string& path;
  const JsonLines* lines;  // null: lines unknown

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw Error(json_message(path, lines, field, what));
  }
  // obj[key] (the field `where` + key) as a string; `dflt` where absent (null: required).
  std::string string(const nlohmann::ordered_json& obj, const char* key, const std::string& where,
                     const char* dflt) const {
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (dflt) return dflt;
      fail(where + key, "missing (expected a string)");
    }
    if (!it->is_string()) fail(where + key, "expected a string");
    return it->get<std::string>();
  }
  // Every key of obj (the field `where`, "" or ending in ".") among `known`.
  void only(const nlohmann::ordered_json& obj, const std::string& where,
            const std::vector<std::string>& known) const {
    if (auto u = unknown_key(obj, known)) fail(where + u->key, u->what);
  }
  // obj[key] as non-empty strings; none where absent.
  std::vector<std::string> strings(const nlohmann::ordered_json& obj, const char* key,
                                   const std::string& where) const {
    std::vector<std::string> out;
    auto it = obj.find(key);
    if (it == obj.end()) return out;
    if (!it->is_array()) fail(where + key, "expected an array of strings");
    for (size_t i = 0; i < it->size(); ++i) {
      if (!(*it)[i].is_string() || (*it)[i].get<std::string>().empty())
        fail(where + key + "[" + std::to_string(i) + "]", "expected a non-empty string");
      out.push_back((*it)[i].get<std::string>());
    }
    return out;
  }
};

// False with `*error` naming file, line, column and field where `text` has
// a syntax error, a number out of range or a key given twice.
bool parse_json_file(const std::string& text, const std::string& path, JsonDoc* doc,
                     std::string* error);

}  // namespace kb
