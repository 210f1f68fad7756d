#include "core/result_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/attempts.h"
#include "core/csv_reader.h"
#include "core/metrics.h"
#include "core/record.h"

namespace kb {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Shown in messages: a field as the user would see it, cut short if long.
std::string shown(std::string_view s) {
  if (s.size() > 40) return "'" + std::string(s.substr(0, 37)) + "...'";
  return "'" + std::string(s) + "'";
}

enum class Num { empty, ok, not_a_number, nan, infinite };

Num parse_number(std::string_view s, double& out) {
  s = trim(s);
  if (s.empty()) return Num::empty;
  const char* b = s.data();
  const char* e = b + s.size();
  if (*b == '+') ++b;  // some writers put a sign on positive numbers
  auto res = std::from_chars(b, e, out);
  if (res.ec != std::errc() || res.ptr != e) {
    // from_chars does not take every spelling of these; name them anyway.
    std::string low;
    for (char c : s) low += static_cast<char>(c | 0x20);
    if (low == "nan" || low == "-nan") return Num::nan;
    if (low == "inf" || low == "-inf" || low == "infinity" || low == "-infinity")
      return Num::infinite;
    return Num::not_a_number;
  }
  if (std::isnan(out)) return Num::nan;
  if (std::isinf(out)) return Num::infinite;
  return Num::ok;
}

const char* num_problem(Num n) {
  static const char* const problems[] = {"", "", "is not a number", "is NaN", "is infinite"};
  return problems[static_cast<int>(n)];
}

bool known_status(std::string_view s) {
  for (const char* k : {status::ok, status::below_target, status::incorrect, status::failed,
                        status::skipped, status::throttled})
    if (s == k) return true;
  return false;
}

// Statuses whose rows carry a measurement.
bool measured_status(std::string_view s) {
  return s == status::ok || s == status::below_target || s == status::throttled;
}

// Column slots the reader fills; -1 = the file has no such column.
struct Columns {
  int name = -1, metric = -1, target = -1, actual = -1, dtype = -1, device = -1, arch = -1,
      is_model = -1, shape = -1, variant = -1, status = -1, samples = -1, noise_rel = -1,
      roofline = -1, roofline_fraction = -1, run_id = -1, timestamp = -1, message = -1, min_us = -1,
      max_us = -1, median_us = -1, git_sha = -1, driver = -1, cuda = -1, suite_version = -1,
      gpu_index = -1, gpu_uuid = -1, gpu_bus_id = -1, host = -1;
};

// Each column's name, slot and, for a text column taken as it is, its field
// of the row; spelled once so that they cannot differ.
struct Slot {
  const char* name;
  int Columns::*col;
  std::string_view ResultRow::*text;
};
#define KB_TEXT(c) \
  { #c, &Columns::c, &ResultRow::c }
#define KB_OTHER(c) \
  { #c, &Columns::c, nullptr }
const Slot kSlots[] = {KB_TEXT(name),          KB_TEXT(metric),    KB_OTHER(target),
                       KB_OTHER(actual),       KB_TEXT(dtype),     KB_TEXT(device),
                       KB_TEXT(arch),          KB_OTHER(is_model), KB_OTHER(shape),
                       KB_TEXT(variant),       KB_OTHER(status),   KB_OTHER(samples),
                       KB_OTHER(noise_rel),    KB_OTHER(roofline), KB_OTHER(roofline_fraction),
                       KB_TEXT(run_id),        KB_TEXT(timestamp), KB_TEXT(message),
                       KB_OTHER(min_us),       KB_OTHER(max_us),   KB_OTHER(median_us),
                       KB_TEXT(git_sha),       KB_TEXT(driver),    KB_TEXT(cuda),
                       KB_TEXT(suite_version), KB_TEXT(gpu_index), KB_TEXT(gpu_uuid),
                       KB_TEXT(gpu_bus_id),    KB_TEXT(host)};
#undef KB_TEXT
#undef KB_OTHER

struct Header {
  std::vector<std::string> names;  // as written
  Columns col;
  ResultFormat format = ResultFormat::kbench;
};

[[noreturn]] void file_error(const std::string& path, size_t line, const std::string& what) {
  // "path:line: what", as compilers write it: editors and CI logs link it.
  throw ResultFileError(path + (line ? ":" + std::to_string(line) : std::string()) + ": " + what);
}

Header parse_header(const std::vector<std::string_view>& fields, const std::string& path,
                    size_t line, const WarningCallback& warn) {
  Header h;
  for (auto f : fields) h.names.emplace_back(trim(f));
  auto slot = [&](const std::string& c) -> int* {
    for (const Slot& s : kSlots)
      if (c == s.name) return &(h.col.*s.col);
    return nullptr;
  };
  const auto& schema = csv_columns();
  bool looks_like_header = false;
  for (const auto& n : h.names)
    if (n == "name" || n == "metric") looks_like_header = true;
  if (!looks_like_header)
    file_error(path, line,
               "the first line is not a header (expected one naming the columns, e.g. "
               "name,metric,target,actual,dtype,device,arch,is_model; found " +
                   shown(fields.empty() ? std::string_view() : fields[0]) + "...)");
  for (size_t i = 0; i < h.names.size(); ++i) {
    const std::string& n = h.names[i];
    if (int* s = slot(n)) {
      if (*s >= 0) file_error(path, line, "column '" + n + "' appears twice in the header");
      *s = static_cast<int>(i);
    } else if (std::find(schema.begin(), schema.end(), n) == schema.end()) {
      warn(line, "unknown column " + shown(n) + " in the header: ignored");
    }
  }
  // Ours by any column gpt_fast does not write (its eight come first in our
  // schema): a kbench header that lost `status` must not pass as gpt_fast's,
  // whose rows are all `ok` and whose shapes are all `mean`.
  bool ours = false;
  for (const auto& n : h.names)
    ours = ours || std::find(schema.begin() + 8, schema.end(), n) != schema.end();
  h.format = ours              ? ResultFormat::kbench
             : h.col.arch >= 0 ? ResultFormat::gpt_fast
                               : ResultFormat::gpt_fast_old;
  std::vector<const char*> required = {"name", "metric", "target", "actual", "dtype", "device"};
  if (h.format == ResultFormat::kbench)
    for (const char* c : {"arch", "is_model", "shape", "variant", "status"}) required.push_back(c);
  std::string missing;
  for (const char* c : required)
    if (*slot(c) < 0) missing += (missing.empty() ? "" : ", ") + std::string(c);
  if (!missing.empty())
    file_error(path, line,
               "the header lacks column(s) " + missing +
                   (h.format == ResultFormat::kbench
                        ? " (a kbench results file has the columns of docs/csv-schema.md)"
                        : " (a gpt_fast file has name,metric,target,actual,dtype,device[,arch]"
                          "[,is_model])"));
  return h;
}

std::string_view field(const std::vector<std::string_view>& f, int col) {
  return col >= 0 ? f[static_cast<size_t>(col)] : std::string_view();
}

bool digits(std::string_view s, size_t at, size_t n, int lo, int hi) {
  int v = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  return v >= lo && v <= hi;
}

// ISO-8601 UTC as kbench writes it: "2026-11-25T03:00:00Z" (no other zone,
// no fraction: a run's time is read, never compared across zones).
bool utc_timestamp(std::string_view t) {
  return t.size() == 20 && digits(t, 0, 4, 0, 9999) && t[4] == '-' && digits(t, 5, 2, 1, 12) &&
         t[7] == '-' && digits(t, 8, 2, 1, 31) && t[10] == 'T' && digits(t, 11, 2, 0, 23) &&
         t[13] == ':' && digits(t, 14, 2, 0, 59) && t[16] == ':' && digits(t, 17, 2, 0, 60) &&
         t[19] == 'Z';
}

// The row's text fields, as they are (views into `f`).
void take_texts(const std::vector<std::string_view>& f, const Columns& c, ResultRow& row) {
  for (const Slot& s : kSlots)
    if (s.text) row.*s.text = field(f, c.*s.col);
}

// What identifies the row and its run: "" when it can be trusted.
std::string check_identity(const std::vector<std::string_view>& f, const Header& h,
                           ResultRow& row) {
  const Columns& c = h.col;
  if (row.name.empty() || row.metric.empty())
    return std::string(row.name.empty() ? "name" : "metric") + " is empty";
  if (!metric_direction(std::string(row.metric)))
    return "unknown metric " + shown(row.metric) +
           " (kgate cannot tell whether higher or lower is better; docs/metrics.md lists the "
           "metrics)";
  // Python's spelling, exactly: a row that says `yes` or `1` was not written
  // by kbench or gpt_fast.
  std::string_view im = field(f, c.is_model);
  if (im == "True")
    row.is_model = true;
  else if (c.is_model >= 0 && im != "False")
    return "is_model is " + shown(im) + " (expected True or False)";
  if (h.format != ResultFormat::kbench) {
    row.status = status::ok;
    row.shape = row.is_model ? std::string_view() : std::string_view("mean");
  } else {
    row.status = field(f, c.status);
    row.shape = field(f, c.shape);
    if (!known_status(row.status))
      return "status " + shown(row.status) +
             " is not one of ok, below_target, incorrect, failed, skipped, throttled";
  }
  if (c.run_id >= 0 && !well_formed_run_id(row.run_id))
    return "run_id " + shown(row.run_id) +
           " is not a run id kbench writes (1 to 128 of A-Z a-z 0-9 - _ . : +, then /N for a "
           "re-measurement)";
  if (!row.timestamp.empty() && !utc_timestamp(row.timestamp))
    return "timestamp " + shown(row.timestamp) +
           " is not ISO-8601 UTC as kbench writes it (2026-11-25T03:00:00Z)";
  return "";
}

// The row's numbers: "" when each is empty or finite and in its range.
std::string check_numbers(const std::vector<std::string_view>& f, const Columns& c,
                          ResultRow& row) {
  struct NumCol {
    const char* name;
    int col;
    std::optional<double>* out;
    bool non_negative;
  };
  const NumCol nums[] = {{"target", c.target, &row.target, false},
                         {"actual", c.actual, &row.actual, false},
                         {"roofline", c.roofline, &row.roofline, true},
                         {"roofline_fraction", c.roofline_fraction, &row.roofline_fraction, true},
                         {"noise_rel", c.noise_rel, &row.noise_rel, true}};
  for (const NumCol& nc : nums) {
    double v = 0;
    std::string_view text_v = field(f, nc.col);
    Num r = parse_number(text_v, v);
    if (r == Num::empty) continue;
    if (r != Num::ok)
      return std::string(nc.name) + " " + shown(trim(text_v)) + " " + num_problem(r);
    if (std::fabs(v) > kMaxRowValue)
      return std::string(nc.name) + " " + shown(trim(text_v)) + " is beyond 1e12 (no metric " +
             "reaches it)";
    if (nc.non_negative && v < 0)
      return std::string(nc.name) + " " + shown(trim(text_v)) + " is negative";
    *nc.out = v;
  }
  // The times only inform `kgate noise` and the dashboard's error bars:
  // never a reason to skip a row.
  if (double m = 0; parse_number(field(f, c.min_us), m) == Num::ok && m > 0) row.min_us = m;
  if (double m = 0; parse_number(field(f, c.max_us), m) == Num::ok && m > 0) row.max_us = m;
  if (double m = 0; parse_number(field(f, c.median_us), m) == Num::ok && m > 0) row.median_us = m;
  if (row.target && *row.target <= 0) row.target.reset();  // gpt_fast writes 0 for "none"
  if (measured_status(row.status)) {
    if (!row.actual) return "actual is empty on a row with status " + std::string(row.status);
    if (*row.actual <= 0) return "actual " + shown(trim(field(f, c.actual))) + " is not > 0";
  }
  if (std::string_view sm = trim(field(f, c.samples)); !sm.empty()) {
    auto res = std::from_chars(sm.data(), sm.data() + sm.size(), row.samples);
    if (res.ec != std::errc() || res.ptr != sm.data() + sm.size() || row.samples < 0)
      return "samples " + shown(sm) + " is not a count";
  }
  return "";
}

bool same_header(const std::vector<std::string_view>& f, const Header& h) {
  bool same = f.size() == h.names.size();
  for (size_t i = 0; same && i < f.size(); ++i) same = trim(f[i]) == h.names[i];
  return same;
}

// Another header in the middle of a file: our schema v1 and v2 files
// concatenated (a history begun before v2, then a v2 file) go on with its
// columns; anything else is files of different formats.
Header next_header(const std::vector<std::string_view>& f, const Header& h, const std::string& path,
                   size_t header_line, size_t line, const WarningCallback& warn) {
  bool ours = false;
  for (auto x : f) ours = ours || trim(x) == "status";
  if (h.format == ResultFormat::kbench && ours) {
    Header next = parse_header(f, path, line, warn);
    if (next.format == ResultFormat::kbench) return next;
  }
  file_error(path, line,
             "a second header, different from line " + std::to_string(header_line) +
                 "'s (files of different formats concatenated?): give them as separate files");
}

// A mapped file up to this size is read in at once (MAP_POPULATE).
constexpr size_t kPopulateBytes = size_t{1} << 30;

// Where read_all is in the text: its line (ended as the CSV reader ends
// one: LF, CRLF or a lone CR), the bytes since that line began, and whether
// the last byte was a CR (a LF after it ends no further line).
struct ScanState {
  size_t line = 1, run = 0;
  bool after_cr = false;
};

// Stops the reading at what CSV text never has: a NUL byte, a line over the
// CSV reader's bound. `at` carries over from chunk to chunk.
void check_chunk(const std::string& path, std::string_view chunk, ScanState& at) {
  for (char ch : chunk) {
    if (ch == '\0') file_error(path, at.line, CsvReader::describe(CsvReader::Error::nul_byte));
    if (ch == '\n' || ch == '\r') {
      if (!(ch == '\n' && at.after_cr)) ++at.line;
      at.run = 0;
    } else if (++at.run > CsvReader::kMaxRecordBytes) {
      file_error(path, at.line, CsvReader::describe(CsvReader::Error::record_too_long));
    }
    at.after_cr = ch == '\r';
  }
}

// An open descriptor of `path`, with its stat; ResultFileError for a path
// that cannot be read or is a folder.
int open_results(const std::string& path, struct stat& st) {
  if (::stat(path.c_str(), &st) != 0)
    throw ResultFileError(path + ": cannot read: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode))
    throw ResultFileError(path + ": is a directory, expected a results CSV file");
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw ResultFileError(path + ": cannot read: " + std::strerror(errno));
  return fd;
}

// The text behind `fd` (closed after), checked chunk by chunk.
std::string read_all(const std::string& path, int fd, const struct stat& st) {
  std::string text;  // a large one grows as read, and stops at what is not CSV
  if (S_ISREG(st.st_mode) && static_cast<size_t>(st.st_size) <= kPopulateBytes)
    text.reserve(static_cast<size_t>(st.st_size));
  ScanState at;
  char buf[1 << 16];
  try {
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n == 0) break;
      if (n < 0) {
        if (errno == EINTR) continue;
        file_error(path, 0, std::string("read failed: ") + std::strerror(errno));
      }
      check_chunk(path, std::string_view(buf, static_cast<size_t>(n)), at);
      text.append(buf, static_cast<size_t>(n));
    }
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return text;
}

}  // namespace

std::string read_file_text(const std::string& path) {
  struct stat st {};
  const int fd = open_results(path, st);
  return read_all(path, fd, st);
}

FileText::FileText(const std::string& path) {
  struct stat st {};
  const int fd = open_results(path, st);
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    const size_t size = static_cast<size_t>(st.st_size);
    // Beyond kPopulateBytes, pages come as the reader reaches them, so that
    // a file that is not CSV costs only the pages read.
    const int populate = size <= kPopulateBytes ? MAP_POPULATE : 0;
    void* m = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | populate, fd, 0);
    if (m != MAP_FAILED) {
      ::close(fd);
      ::madvise(m, size, MADV_SEQUENTIAL);
      map_ = m;
      size_ = size;
      return;
    }
  }
  text_ = read_all(path, fd, st);  // not mappable: read it
}

void FileText::release_pages() const {
  if (map_) ::madvise(map_, size_, MADV_DONTNEED);
}

FileText::~FileText() {
  if (map_) ::munmap(map_, size_);
}

ResultFileInfo parse_results(std::string_view text, const std::string& path,
                             const RowCallback& on_row, const WarningCallback& on_warning,
                             const BadRowCallback& on_bad_row) {
  CsvReader csv(text);
  std::vector<std::string_view> f;
  if (!csv.next(f)) {
    if (csv.error() != CsvReader::Error::none)
      file_error(path, csv.line(), CsvReader::describe(csv.error()));
    file_error(path, 0, "empty file (expected a header line, then rows)");
  }
  size_t header_line = csv.line();
  Header h = parse_header(f, path, header_line, on_warning);
  ResultFileInfo info;
  info.format = h.format;

  ResultRow row;
  size_t last_line = 0;
  auto bad = [&](const std::string& what) {
    ++info.skipped;
    // Where the row has the field (v1 rows under a v2 header still do).
    std::string_view run_id;
    if (h.col.run_id >= 0 && f.size() > static_cast<size_t>(h.col.run_id))
      run_id = f[static_cast<size_t>(h.col.run_id)];
    if (on_bad_row)
      on_bad_row({last_line, what, run_id});
    else
      on_warning(last_line, what + "; row skipped");
  };
  while (csv.next(f)) {
    last_line = csv.line();
    if (csv.unterminated_quote()) {
      bad("a quoted field is not closed before the end of the file (file cut off?)");
      continue;
    }
    // A header again: files concatenated with `cat` (next_header).
    const Columns& c = h.col;
    if (f.size() > static_cast<size_t>(std::max(c.name, c.metric)) && trim(f[c.name]) == "name" &&
        trim(f[c.metric]) == "metric") {
      if (!same_header(f, h)) {
        h = next_header(f, h, path, header_line, last_line, on_warning);
        header_line = last_line;
        continue;
      }
      ++info.skipped;
      on_warning(last_line, "a second header (files concatenated?): line skipped");
      continue;
    }
    if (f.size() != h.names.size()) {
      std::string what = std::to_string(f.size()) + " field(s) where the header has " +
                         std::to_string(h.names.size());
      if (csv.no_line_end()) what += " (the last line, without a line end: file cut off?)";
      bad(what);
      continue;
    }
    row = ResultRow();
    row.line = last_line;
    take_texts(f, c, row);
    std::string why = check_identity(f, h, row);
    if (why.empty()) why = check_numbers(f, c, row);
    // kbench ends every row with a line end: a last line without one was cut off.
    if (why.empty() && csv.no_line_end())
      why = "the last line has no line end: the file was cut off mid-row";
    if (!why.empty()) {
      bad(why);
      continue;
    }
    ++info.rows;
    on_row(row);
  }
  if (csv.error() != CsvReader::Error::none)
    file_error(path, csv.line(), CsvReader::describe(csv.error()));
  if (info.rows == 0) {
    if (info.skipped == 0) file_error(path, 0, "header only, no result rows");
    file_error(path, 0,
               "no readable rows: all " + std::to_string(info.skipped) +
                   " were skipped (see the warnings above)");
  }
  return info;
}

}  // namespace kb
