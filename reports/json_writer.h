// Records as a JSON array of objects keyed by the CSV column names (empty
// fields as null); the file is replaced whole or not at all.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/record.h"

namespace kb {

nlohmann::json record_to_json(const Record& r);
// The inverse of record_to_json; throws nlohmann::json::exception on a
// malformed object.
Record record_from_json(const nlohmann::json& j);
// Throws WriteError (a std::runtime_error) naming the file when it cannot be
// written; the previous file is then untouched.
void write_json(const std::string& path, const std::vector<Record>& rows);

}  // namespace kb
