#include "core/csv_reader.h"

#include <cstring>

namespace kb {

namespace {

// Bytes that end an unquoted field: the delimiter, a line end, or a NUL
// (which ends the reading).
struct StopBytes {
  bool at[256] = {};
  StopBytes() { at[','] = at['\n'] = at['\r'] = at[0] = true; }
};
const StopBytes kStop;

bool stops(char c) { return kStop.at[static_cast<unsigned char>(c)]; }

}  // namespace

CsvReader::CsvReader(std::string_view text) : text_(text) {
  if (text_.size() >= 3 && std::memcmp(text_.data(), "\xEF\xBB\xBF", 3) == 0) {
    pos_ = 3;
    had_bom_ = true;
  }
}

const char* CsvReader::describe(Error e) {
  static const char* const what[] = {
      "",
      "a line longer than 65536 bytes (rows are read up to 64 KiB; a result row is under 1 KiB)",
      "a NUL byte: not CSV text (a binary file, or zeros left by a crash)"};
  return what[static_cast<int>(e)];
}

bool CsvReader::next(std::vector<std::string_view>& fields) {
  fields.clear();
  spans_.clear();
  scratch_.clear();
  unterminated_ = false;
  no_line_end_ = false;
  if (error_ != Error::none) return false;
  const char* s = text_.data();
  const size_t n = text_.size();

  // Empty lines carry no record (a trailing blank line is common).
  while (pos_ < n && (s[pos_] == '\n' || s[pos_] == '\r')) {
    if (s[pos_] == '\r' && pos_ + 1 < n && s[pos_ + 1] == '\n') ++pos_;
    ++pos_;
    ++line_;
  }
  if (pos_ >= n) return false;
  record_line_ = line_;
  record_offset_ = pos_;
  // No scan goes past `cap`: a record that reaches it is too long, however
  // long the text (a file of zeros, a line of gigabytes).
  const size_t cap = n - pos_ > kMaxRecordBytes ? pos_ + kMaxRecordBytes + 1 : n;
  auto stop = [&](Error e) {
    error_ = e;
    return false;
  };

  for (;;) {
    if (pos_ < cap && s[pos_] == '"') {
      // Quoted field: runs to the next quote not doubled. Stays a view into
      // the text unless it had doubled quotes or text after the closing quote.
      size_t begin = ++pos_;
      bool copied = false;
      size_t scratch_begin = scratch_.size();
      for (;;) {
        const void* q = pos_ < cap ? std::memchr(s + pos_, '"', cap - pos_) : nullptr;
        size_t end = q ? static_cast<size_t>(static_cast<const char*>(q) - s) : cap;
        for (size_t i = pos_; i < end; ++i) {
          if (s[i] == '\n') ++line_;
          if (s[i] == '\0') return stop(Error::nul_byte);
        }
        if (!q) {
          if (cap < n) return stop(Error::record_too_long);
          // The text ends inside the quotes.
          if (copied) scratch_.append(s + pos_, end - pos_);
          pos_ = n;
          unterminated_ = true;
          break;
        }
        if (end + 1 < n && s[end + 1] == '"') {  // a doubled quote stands for one
          if (!copied) {
            scratch_.append(s + begin, end - begin);
            copied = true;
          } else {
            scratch_.append(s + pos_, end - pos_);
          }
          scratch_ += '"';
          pos_ = end + 2;
          continue;
        }
        if (copied) scratch_.append(s + pos_, end - pos_);
        size_t close = end;
        pos_ = end + 1;
        // Lenient, as common CSV readers are: text between the closing quote
        // and the delimiter is kept as part of the field.
        size_t tail = pos_;
        while (pos_ < cap && !stops(s[pos_])) ++pos_;
        if (pos_ > tail) {
          if (!copied) {
            scratch_.append(s + begin, close - begin);
            copied = true;
          }
          scratch_.append(s + tail, pos_ - tail);
        }
        if (!copied) spans_.push_back({false, begin, close - begin});
        break;
      }
      if (copied)
        spans_.push_back({true, scratch_begin, scratch_.size() - scratch_begin});
      else if (unterminated_)
        spans_.push_back({false, begin, n - begin});
    } else {
      size_t begin = pos_;
      while (pos_ < cap && !stops(s[pos_])) ++pos_;
      spans_.push_back({false, begin, pos_ - begin});
    }

    if (pos_ < n && s[pos_] == '\0') return stop(Error::nul_byte);
    if (pos_ >= cap && cap < n) return stop(Error::record_too_long);
    if (pos_ >= n) {
      no_line_end_ = true;
      break;
    }
    if (s[pos_] == ',') {
      ++pos_;
      continue;
    }
    // A line end: LF, CRLF, or a lone CR.
    if (s[pos_] == '\r' && pos_ + 1 < n && s[pos_ + 1] == '\n') ++pos_;
    ++pos_;
    ++line_;
    break;
  }

  fields.reserve(spans_.size());
  for (const Span& sp : spans_)
    fields.emplace_back(sp.in_scratch ? std::string_view(scratch_).substr(sp.begin, sp.size)
                                      : text_.substr(sp.begin, sp.size));
  return true;
}

}  // namespace kb
