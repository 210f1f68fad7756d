// Appends records to a results CSV that several processes may share, locked,
// in the file's schema (v2 for a new file); another header is never touched.
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

// RFC 4180 quoting where a field needs it.
std::string csv_quote(const std::string& field);
// One line (no newline) of quoted fields.
std::string csv_line(const std::vector<std::string>& fields);

// The columns a header line's rows take (v2 or v1), 0 when it is neither
// (a CR at its end and a byte order mark are not part of it).
size_t schema_columns(std::string header_line);

// Appends `rows` to `path` (created, with its folder, if missing). Throws
// CsvError, the file unchanged, for another header or a failed write.
// Returns the columns written.
size_t append_csv(const std::string& path, const std::vector<Record>& rows);

// What append_csv would refuse, found before anything is measured, nothing
// written: an empty name, a path that is not a regular file (a folder, a
// FIFO or device: never opened), a file that cannot be opened for
// appending, another header, or a new file whose nearest existing folder
// is not a folder we may write in. Throws CsvError.
void check_csv_appendable(const std::string& path);

}  // namespace kb
