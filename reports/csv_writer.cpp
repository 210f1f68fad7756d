#include "reports/csv_writer.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace kb {

std::string csv_quote(const std::string& f) {
  if (f.find_first_of(",\"\r\n") == std::string::npos) return f;
  std::string q = "\"";
  for (char c : f) {
    if (c == '"') q += '"';
    q += c;
  }
  q += '"';
  return q;
}

std::string csv_line(const std::vector<std::string>& fields) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i) line += ',';
    line += csv_quote(fields[i]);
  }
  return line;
}

namespace {

// Closes the descriptor (and so drops the lock) on every path out.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string errno_text() { return std::strerror(errno); }

void write_all(int fd, const std::string& data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw CsvError(path + ": write failed: " + errno_text());
    }
    done += static_cast<size_t>(n);
  }
}

}  // namespace

void append_csv(const std::string& path, const std::vector<Record>& rows) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);  // an error shows at open()

  Fd f;
  f.fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (f.fd < 0) throw CsvError(path + ": cannot open for appending: " + errno_text());
  struct stat st {};
  if (::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode))
    throw CsvError(path + ": not a regular file");
  while (::flock(f.fd, LOCK_EX) != 0) {
    if (errno != EINTR) throw CsvError(path + ": cannot lock: " + errno_text());
  }

  // Under the lock: read what is there now (another process may have just
  // written the header).
  if (::fstat(f.fd, &st) != 0) throw CsvError(path + ": cannot stat: " + errno_text());
  const std::string header = csv_header();
  std::string out;
  if (st.st_size == 0) {
    out = header + "\n";
  } else {
    std::string first(header.size() + 4, '\0');
    ssize_t n = ::pread(f.fd, first.data(), first.size(), 0);
    if (n < 0) throw CsvError(path + ": cannot read its header: " + errno_text());
    first.resize(static_cast<size_t>(n));
    size_t eol = first.find('\n');
    std::string line = first.substr(0, eol);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
    if (eol == std::string::npos || line != header) {
      throw CsvError(path +
                     ": its header is not kbench's CSV schema v1; the file was left untouched. "
                     "Write to another file with --csv FILE (expected header: " +
                     header + ")");
    }
    // A file cut short by a crash must not glue our first row onto its last.
    char last = '\n';
    if (::pread(f.fd, &last, 1, st.st_size - 1) == 1 && last != '\n') out += '\n';
  }
  for (const auto& r : rows) out += csv_line(record_fields(r)) + "\n";
  write_all(f.fd, out, path);  // one append under the lock: no torn or interleaved rows
  if (::fsync(f.fd) != 0) throw CsvError(path + ": fsync failed: " + errno_text());
}

}  // namespace kb
