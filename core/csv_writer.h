// Appends records to a results CSV that several processes may share: the
// file is locked while a run's rows are appended in one write, a new or
// empty file gets the header (schema v2) first, a file of schema v1 (a
// history begun before v2) gets v1 rows, and a file whose header is neither
// is never touched.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "core/record.h"

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

// The schema of a header line (BOM and CR already removed): the number of
// columns its rows take (csv_columns().size() for v2, csv_columns_v1() for
// v1), 0 when it is neither.
size_t schema_columns(const std::string& header_line);

// Appends `rows` to `path` under an exclusive lock (creating the file and its
// parent folder if missing), in the file's own schema (v2 for a new file;
// a v1 file gets v1 rows: the GPU identity columns are left out, `device`
// still names the GPU index). Throws CsvError, leaving the file unchanged,
// if its first line is neither header or the rows cannot be written whole
// (a failed write is cut back). Returns the columns written.
size_t append_csv(const std::string& path, const std::vector<Record>& rows);

}  // namespace kb
