// Splits CSV text (RFC 4180) into records of fields, for readers of result
// files. It takes what real files contain: a UTF-8 byte order mark, LF or
// CRLF line ends, quoted fields holding commas, doubled quotes and line
// breaks (our `message` column has them), and a last line without a line
// end. It never throws: what is odd about a record is reported with it, and
// the caller decides whether that is damage.
//
// It is bounded: a record longer than kMaxRecordBytes, or a NUL byte (no
// CSV text has one: a binary file, a block of zeros left by a crash, or
// /dev/zero), stops it before it reads further; next() returns false and
// error() says why. A caller that stops at false must check error().
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kb {

class CsvReader {
 public:
  // A record (one row, with the line breaks of its quoted fields) may be up
  // to 64 KiB: our rows are under 1 KiB; a longer one is not a result row.
  static constexpr size_t kMaxRecordBytes = 64 * 1024;
  enum class Error { none, record_too_long, nul_byte };

  // `text` must outlive the reader and the fields it hands out.
  explicit CsvReader(std::string_view text);

  // Reads the next record into `fields`: views into the text, or into the
  // reader's own buffer for quoted fields that had doubled quotes or CRs
  // (valid until the next call). Skips empty lines. False at the end, or
  // at an error (error()).
  bool next(std::vector<std::string_view>& fields);

  // Why next() stopped early (none at the end of the text); line() is the
  // line of the record it stopped in.
  Error error() const { return error_; }
  // What an error means, for messages ("a NUL byte: not CSV text ...").
  static const char* describe(Error e);

  // Line (1-based) on which the last record began.
  size_t line() const { return record_line_; }
  // The last record ran into the end of the text inside a quoted field (a
  // file cut off mid-write): its last field is incomplete.
  bool unterminated_quote() const { return unterminated_; }
  // The last record ended at the end of the text without a line end: the
  // last line of a file that may have been cut off.
  bool no_line_end() const { return no_line_end_; }
  // The text began with a UTF-8 byte order mark (skipped).
  bool had_bom() const { return had_bom_; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  size_t line_ = 1;
  size_t record_line_ = 0;
  bool unterminated_ = false;
  bool no_line_end_ = false;
  bool had_bom_ = false;
  Error error_ = Error::none;
  // Unescaped quoted fields of the current record; `spans_` says where each
  // field lives (in the text or in `scratch_`) until the record is complete,
  // because appending to `scratch_` may move it.
  std::string scratch_;
  struct Span {
    bool in_scratch;
    size_t begin, size;
  };
  std::vector<Span> spans_;
};

}  // namespace kb
