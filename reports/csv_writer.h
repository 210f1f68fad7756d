// Appends records to a results CSV (schema v1) that several processes may
// share: the file is locked while a run's rows are appended in one write, a
// new or empty file gets the header first, and a file whose header differs
// is never touched.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "reports/record.h"

namespace kb {

// Thrown when the file cannot be opened/locked/written or has another header.
struct CsvError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// RFC 4180 quoting: a field with a comma, quote, CR or LF is quoted and its
// quotes doubled; others are written as they are.
std::string csv_quote(const std::string& field);
// One line (no newline) of quoted fields.
std::string csv_line(const std::vector<std::string>& fields);

// Appends `rows` to `path` under an exclusive lock (creating the file and its
// parent folder if missing). Throws CsvError, leaving the file unchanged, if
// its first line is not exactly csv_header().
void append_csv(const std::string& path, const std::vector<Record>& rows);

}  // namespace kb
