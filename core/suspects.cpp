#include "core/suspects.h"

#include <array>
#include <cstdlib>
#include <map>

#include "core/atomic_write.h"
#include "core/csv_reader.h"

namespace kb {

namespace {
// Suspect's fields in the order of suspects_columns().
const std::array<std::string Suspect::*, 8> kFields = {
    &Suspect::run_id,  &Suspect::name,   &Suspect::dtype, &Suspect::shape,
    &Suspect::variant, &Suspect::metric, &Suspect::arch,  &Suspect::reason};
}  // namespace

const std::vector<std::string>& suspects_columns() {
  static const std::vector<std::string> cols = {"run_id",  "name",   "dtype", "shape",
                                                "variant", "metric", "arch",  "reason"};
  return cols;
}

std::vector<Suspect> parse_suspects(const std::string& text, const std::string& path) {
  CsvReader reader(text);
  std::vector<std::string_view> fields;
  // The CSV reader stops at a NUL byte or a line over 64 KiB: not a suspects file.
  auto refuse_damage = [&] {
    if (reader.error() != CsvReader::Error::none)
      throw SuspectsError(path + ":" + std::to_string(reader.line()) + ": " +
                          CsvReader::describe(reader.error()));
  };
  // kgate ends every line with a line end, as kbench ends every row (the
  // results reader): a last line without one was cut off mid-write.
  auto refuse_cut = [&] {
    if (reader.no_line_end())
      throw SuspectsError(path + ":" + std::to_string(reader.line()) +
                          ": the last line has no line end: the file was cut off mid-row");
  };
  if (!reader.next(fields)) refuse_damage();
  if (fields.empty())
    throw SuspectsError(path + ": empty: a suspects file starts with the header " +
                        "run_id,name,dtype,shape,variant,metric,arch,reason");
  refuse_cut();
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < fields.size(); ++i) col[std::string(fields[i])] = i;
  for (const auto& c : suspects_columns())
    if (!col.count(c))
      throw SuspectsError(path + ":" + std::to_string(reader.line()) + ": the header has no '" + c +
                          "' column (is this a kgate --suspects file?)");
  const size_t width = fields.size();
  std::vector<Suspect> out;
  while (reader.next(fields)) {
    const size_t line = reader.line();
    if (reader.unterminated_quote())
      throw SuspectsError(
          path + ":" + std::to_string(line) +
          ": a quoted field is not closed before the end of the file (file cut off?)");
    refuse_cut();
    // A row cut short would read its missing fields as empty (an empty
    // variant matches any point's), a longer one is no row of this header.
    if (fields.size() != width)
      throw SuspectsError(path + ":" + std::to_string(line) + ": " + std::to_string(fields.size()) +
                          " field(s) where the header has " + std::to_string(width));
    Suspect s;
    s.line = line;
    for (size_t k = 0; k < kFields.size(); ++k) {
      s.*kFields[k] = std::string(fields[col.at(suspects_columns()[k])]);
      if (k < 4 && (s.*kFields[k]).empty())  // run_id, name, dtype, shape
        throw SuspectsError(path + ":" + std::to_string(line) + ": empty " + suspects_columns()[k]);
    }
    out.push_back(std::move(s));
  }
  refuse_damage();
  return out;
}

std::vector<Suspect> read_suspects(const std::string& path) {
  const auto text = read_whole_file(path);
  if (!text) throw SuspectsError(path + ": cannot read the suspects file");
  return parse_suspects(*text, path);
}

int next_attempt(const std::string& text, const std::string& base) {
  int next = 2;
  const std::string prefix = base + "/";
  for (size_t pos = text.find(prefix); pos != std::string::npos; pos = text.find(prefix, pos + 1)) {
    const char* p = text.c_str() + pos + prefix.size();
    char* end = nullptr;
    const long n = std::strtol(p, &end, 10);
    // As split_attempt (core/attempts.h): above 1,000,000 is no attempt.
    if (end != p && n >= next && n <= 1000000) next = static_cast<int>(n) + 1;
  }
  return next;
}

std::string attempt_run_id(const std::string& base, int attempt) {
  return base + "/" + std::to_string(attempt);
}

}  // namespace kb
