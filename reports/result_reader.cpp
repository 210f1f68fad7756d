#include "reports/result_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <vector>

#include "reports/csv_reader.h"
#include "reports/metrics.h"
#include "reports/record.h"

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
  switch (n) {
    case Num::not_a_number:
      return "is not a number";
    case Num::nan:
      return "is NaN";
    case Num::infinite:
      return "is infinite";
    default:
      return "";
  }
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
      median_us = -1, git_sha = -1, driver = -1, cuda = -1, suite_version = -1, gpu_index = -1,
      gpu_uuid = -1, gpu_bus_id = -1, host = -1;
};

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
    Columns& k = h.col;
    static const std::array<std::pair<const char*, int Columns::*>, 28> map = {{
        {"name", &Columns::name},
        {"metric", &Columns::metric},
        {"target", &Columns::target},
        {"actual", &Columns::actual},
        {"dtype", &Columns::dtype},
        {"device", &Columns::device},
        {"arch", &Columns::arch},
        {"is_model", &Columns::is_model},
        {"shape", &Columns::shape},
        {"variant", &Columns::variant},
        {"status", &Columns::status},
        {"samples", &Columns::samples},
        {"noise_rel", &Columns::noise_rel},
        {"roofline", &Columns::roofline},
        {"roofline_fraction", &Columns::roofline_fraction},
        {"run_id", &Columns::run_id},
        {"timestamp", &Columns::timestamp},
        {"message", &Columns::message},
        {"min_us", &Columns::min_us},
        {"median_us", &Columns::median_us},
        {"git_sha", &Columns::git_sha},
        {"driver", &Columns::driver},
        {"cuda", &Columns::cuda},
        {"suite_version", &Columns::suite_version},
        {"gpu_index", &Columns::gpu_index},
        {"gpu_uuid", &Columns::gpu_uuid},
        {"gpu_bus_id", &Columns::gpu_bus_id},
        {"host", &Columns::host},
    }};
    for (const auto& [n, member] : map)
      if (c == n) return &(k.*member);
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
  h.format = h.col.status >= 0 ? ResultFormat::kbench
             : h.col.arch >= 0 ? ResultFormat::gpt_fast
                               : ResultFormat::gpt_fast_old;
  std::vector<const char*> required = {"name", "metric", "target", "actual", "dtype", "device"};
  if (h.format == ResultFormat::kbench)
    for (const char* c : {"arch", "is_model", "shape", "variant"}) required.push_back(c);
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

}  // namespace

std::string read_file_text(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw ResultFileError(path + ": cannot read: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode))
    throw ResultFileError(path + ": is a directory, expected a results CSV file");
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw ResultFileError(path + ": cannot read: " + std::strerror(errno));
  std::string text;
  if (S_ISREG(st.st_mode)) text.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      throw ResultFileError(path + ": read failed: " + std::strerror(err));
    }
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

FileText::FileText(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw ResultFileError(path + ": cannot read: " + std::strerror(errno));
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw ResultFileError(path + ": cannot read: " + std::strerror(errno));
    void* m = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ,
                     MAP_PRIVATE | MAP_POPULATE, fd, 0);
    ::close(fd);
    if (m != MAP_FAILED) {
      ::madvise(m, static_cast<size_t>(st.st_size), MADV_SEQUENTIAL);
      map_ = m;
      size_ = static_cast<size_t>(st.st_size);
      return;
    }
  }
  text_ = read_file_text(path);  // not mappable: read it (also gives the errors)
}

void FileText::release_pages() const {
  if (map_) ::madvise(map_, size_, MADV_DONTNEED);
}

FileText::~FileText() {
  if (map_) ::munmap(map_, size_);
}

ResultFileInfo read_results(const std::string& path, std::string& text, const RowCallback& on_row,
                            const WarningCallback& on_warning) {
  text = read_file_text(path);
  return parse_results(text, path, on_row, on_warning);
}

ResultFileInfo parse_results(std::string_view text, const std::string& path,
                             const RowCallback& on_row, const WarningCallback& on_warning) {
  CsvReader csv(text);
  std::vector<std::string_view> f;
  if (!csv.next(f)) file_error(path, 0, "empty file (expected a header line, then rows)");
  size_t header_line = csv.line();
  Header h = parse_header(f, path, header_line, on_warning);
  const Columns& c = h.col;
  ResultFileInfo info;
  info.format = h.format;
  const bool gpt_fast = h.format != ResultFormat::kbench;

  ResultRow row;
  size_t last_line = 0;
  auto skip = [&](const std::string& what) {
    ++info.skipped;
    on_warning(last_line, what + "; row skipped");
  };
  while (csv.next(f)) {
    last_line = csv.line();
    if (csv.unterminated_quote()) {
      skip("a quoted field is not closed before the end of the file (file cut off?)");
      continue;
    }
    // A header again: files concatenated with `cat`. The same header is
    // harmless; another one means the rows below have other columns.
    if (f.size() > static_cast<size_t>(std::max(c.name, c.metric)) && trim(f[c.name]) == "name" &&
        trim(f[c.metric]) == "metric") {
      bool same = f.size() == h.names.size();
      for (size_t i = 0; same && i < f.size(); ++i) same = trim(f[i]) == h.names[i];
      if (!same) {
        // Our schema v1 and v2 files concatenated (a history begun before
        // v2, then a v2 file): the rows below are read with its columns.
        bool ours = false;
        for (auto x : f) ours = ours || trim(x) == "status";
        if (h.format == ResultFormat::kbench && ours) {
          Header next = parse_header(f, path, last_line, on_warning);
          if (next.format == ResultFormat::kbench) {
            h = std::move(next);
            header_line = last_line;
            continue;
          }
        }
        file_error(path, last_line,
                   "a second header, different from line " + std::to_string(header_line) +
                       "'s (files of different formats concatenated?): give them as separate "
                       "files");
      }
      ++info.skipped;
      on_warning(last_line, "a second header (files concatenated?): line skipped");
      continue;
    }
    if (f.size() != h.names.size()) {
      std::string what = std::to_string(f.size()) + " field(s) where the header has " +
                         std::to_string(h.names.size());
      if (csv.no_line_end()) what += " (the last line, without a line end: file cut off?)";
      skip(what);
      continue;
    }

    row = ResultRow();
    row.line = last_line;
    row.name = field(f, c.name);
    row.metric = field(f, c.metric);
    row.dtype = field(f, c.dtype);
    row.device = field(f, c.device);
    row.arch = field(f, c.arch);
    row.variant = field(f, c.variant);
    row.run_id = field(f, c.run_id);
    row.timestamp = field(f, c.timestamp);
    row.message = field(f, c.message);
    row.git_sha = field(f, c.git_sha);
    row.driver = field(f, c.driver);
    row.cuda = field(f, c.cuda);
    row.suite_version = field(f, c.suite_version);
    row.gpu_index = field(f, c.gpu_index);
    row.gpu_uuid = field(f, c.gpu_uuid);
    row.gpu_bus_id = field(f, c.gpu_bus_id);
    row.host = field(f, c.host);
    if (row.name.empty() || row.metric.empty()) {
      skip(std::string(row.name.empty() ? "name" : "metric") + " is empty");
      continue;
    }
    if (!metric_direction(std::string(row.metric))) {
      skip("unknown metric " + shown(row.metric) +
           " (kgate cannot tell whether higher or lower is better; docs/metrics.md lists the "
           "metrics)");
      continue;
    }
    std::string_view im = trim(field(f, c.is_model));
    if (im == "True" || im == "true" || im == "1") {
      row.is_model = true;
    } else if (!(im.empty() || im == "False" || im == "false" || im == "0")) {
      skip("is_model is " + shown(im) + " (expected True or False)");
      continue;
    }
    if (gpt_fast) {
      row.status = status::ok;
      row.shape = row.is_model ? std::string_view() : std::string_view("mean");
    } else {
      row.status = trim(field(f, c.status));
      row.shape = field(f, c.shape);
      if (!known_status(row.status)) {
        skip("status " + shown(row.status) +
             " is not one of ok, below_target, incorrect, failed, skipped, throttled");
        continue;
      }
    }

    // Every number the gate reads must be empty or finite.
    struct NumCol {
      const char* name;
      int col;
      std::optional<double>* out;
    };
    const NumCol nums[] = {{"target", c.target, &row.target},
                           {"actual", c.actual, &row.actual},
                           {"roofline", c.roofline, &row.roofline},
                           {"roofline_fraction", c.roofline_fraction, &row.roofline_fraction},
                           {"noise_rel", c.noise_rel, &row.noise_rel}};
    bool bad = false;
    for (const NumCol& nc : nums) {
      double v = 0;
      std::string_view text_v = field(f, nc.col);
      Num r = parse_number(text_v, v);
      if (r == Num::ok) {
        *nc.out = v;
      } else if (r != Num::empty) {
        skip(std::string(nc.name) + " " + shown(trim(text_v)) + " " + num_problem(r));
        bad = true;
        break;
      }
    }
    if (bad) continue;
    // min_us and median_us only inform `kgate noise` (modes; the timed work
    // that picks a key's noise bar): never a reason to skip a row.
    if (double m = 0; parse_number(field(f, c.min_us), m) == Num::ok && m > 0) row.min_us = m;
    if (double m = 0; parse_number(field(f, c.median_us), m) == Num::ok && m > 0) row.median_us = m;
    if (row.target && *row.target <= 0) row.target.reset();  // gpt_fast writes 0 for "none"
    if (measured_status(row.status)) {
      if (!row.actual) {
        skip("actual is empty on a row with status " + std::string(row.status));
        continue;
      }
      if (*row.actual <= 0) {
        skip("actual " + shown(trim(field(f, c.actual))) + " is not > 0");
        continue;
      }
    }
    if (std::string_view sm = trim(field(f, c.samples)); !sm.empty()) {
      auto res = std::from_chars(sm.data(), sm.data() + sm.size(), row.samples);
      if (res.ec != std::errc() || res.ptr != sm.data() + sm.size() || row.samples < 0) {
        skip("samples " + shown(sm) + " is not a count");
        continue;
      }
    }
    ++info.rows;
    on_row(row);
  }
  if (info.rows == 0) {
    if (info.skipped == 0) file_error(path, 0, "header only, no result rows");
    file_error(path, 0,
               "no readable rows: all " + std::to_string(info.skipped) +
                   " were skipped (see the warnings above)");
  }
  return info;
}

}  // namespace kb
