// Splits CSV text (RFC 4180: a byte order mark, LF, CRLF or CR, quoted fields
// with commas, quotes and line breaks) into records. It never throws: what
// is odd about a record is reported with it, and the caller decides. A
// record over kMaxRecordBytes or a NUL byte (not CSV text: /dev/zero) stops
// it: next() returns false and error() says why.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kb {

class CsvReader {
 public:
  // Our rows are under 1 KiB: a longer record is not a result row.
  static constexpr size_t kMaxRecordBytes = 64 * 1024;
  enum class Error { none, record_too_long, nul_byte };

  // `text` must outlive the reader and the fields it hands out.
  explicit CsvReader(std::string_view text);

  // The next record's fields (views valid until the next call), empty lines
  // skipped. False at the end or at an error (error()).
  bool next(std::vector<std::string_view>& fields);

  Error error() const { return error_; }
  static const char* describe(Error e);  // for messages

  // Line (1-based) on which the last record began.
  size_t line() const { return record_line_; }
  // Byte offset in the text at which the last record began.
  size_t offset() const { return record_offset_; }
  // The last record ended inside a quoted field, or without a line end: a
  // file cut off mid-write.
  bool unterminated_quote() const { return unterminated_; }
  bool no_line_end() const { return no_line_end_; }
  bool had_bom() const { return had_bom_; }  // a UTF-8 byte order mark, skipped

 private:
  std::string_view text_;
  size_t pos_ = 0;
  size_t line_ = 1;
  size_t record_line_ = 0;
  size_t record_offset_ = 0;
  bool unterminated_ = false;
  bool no_line_end_ = false;
  bool had_bom_ = false;
  Error error_ = Error::none;
  // Unescaped quoted fields; `spans_` says where each field lives until the
  // record is complete (appending to `scratch_` may move it).
  std::string scratch_;
  struct Span {
    bool in_scratch;
    size_t begin, size;
  };
  std::vector<Span> spans_;
};

}  // namespace kb
