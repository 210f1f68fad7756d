#include "core/csv_writer.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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

// The schema of the last header line in the file (a line that is exactly
// the v1 or v2 header), scanning back from the end in chunks; `first` when
// the first line is the only one.
size_t last_header_columns(int fd, off_t size, size_t first, const std::string& path) {
  const std::string v1 = "\n" + csv_header_v1() + "\n", v2 = "\n" + csv_header() + "\n";
  const size_t overlap = v2.size();
  const off_t chunk = off_t(1) << 22;
  std::string buf;
  for (off_t end = size; end > 0;) {
    const off_t begin = end > chunk ? end - chunk : 0;
    const size_t n = static_cast<size_t>(end - begin);
    buf.resize(n);
    ssize_t got = ::pread(fd, buf.data(), n, begin);
    if (got != static_cast<ssize_t>(n)) throw CsvError(path + ": cannot read: " + errno_text());
    // The header's own line ends at the chunk's end only at end of file.
    if (end == size && (buf.empty() || buf.back() != '\n')) buf += '\n';
    const size_t a = buf.rfind(v1), b = buf.rfind(v2);
    if (a != std::string::npos || b != std::string::npos) {
      if (a == std::string::npos) return csv_columns().size();
      if (b == std::string::npos) return csv_columns_v1();
      return a > b ? csv_columns_v1() : csv_columns().size();
    }
    if (begin == 0) break;
    end = begin + static_cast<off_t>(std::min<size_t>(overlap, n));
    if (end >= size) break;
  }
  return first;
}

// The columns the rows appended to a non-empty file take; CsvError where
// its header is not kbench's.
size_t existing_columns(int fd, off_t size, const std::string& path) {
  const std::string header = csv_header();
  std::string first(header.size() + 4, '\0');
  ssize_t n = ::pread(fd, first.data(), first.size(), 0);
  if (n < 0) throw CsvError(path + ": cannot read its header: " + errno_text());
  first.resize(static_cast<size_t>(n));
  const size_t eol = first.find('\n');
  size_t columns = eol == std::string::npos ? 0 : schema_columns(first.substr(0, eol));
  // Files concatenated (a v1 history, then v2 shard files with their
  // headers): the rows at the end take the columns of the last header.
  if (columns != 0) columns = last_header_columns(fd, size, columns, path);
  if (columns == 0) {
    throw CsvError(path +
                   ": its header is not kbench's CSV schema (v2, or v1 before it); the file was "
                   "left untouched. Write to another file with --csv FILE (expected header: " +
                   header + ")");
  }
  return columns;
}

}  // namespace

void check_csv_appendable(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty()) throw CsvError("the results CSV's name is empty: give --csv FILE or --no-csv");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) throw CsvError(path + ": cannot append to it: " + errno_text());
    // A new file: append_csv creates it and its missing folders under the
    // nearest folder that is there, which must be a folder we may write in.
    std::error_code ec;
    fs::path dir = fs::absolute(path, ec).parent_path();
    while (::stat(dir.c_str(), &st) != 0) {
      if (errno != ENOENT || dir == dir.parent_path())
        throw CsvError(path + ": cannot be created: " + dir.string() + ": " + errno_text());
      dir = dir.parent_path();
    }
    if (!S_ISDIR(st.st_mode))
      throw CsvError(path + ": cannot be created: " + dir.string() + " is not a folder");
    if (::access(dir.c_str(), W_OK | X_OK) != 0)
      throw CsvError(path + ": cannot be created in " + dir.string() + ": " + errno_text());
    return;
  }
  // Not opened unless a regular file: opening a FIFO for reading blocks.
  if (!S_ISREG(st.st_mode))
    throw CsvError(path + ": not a regular file: the results CSV must be a file to append to");
  Fd f;
  f.fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CLOEXEC);
  if (f.fd < 0) throw CsvError(path + ": cannot open for appending: " + errno_text());
  if (::fstat(f.fd, &st) != 0) throw CsvError(path + ": cannot stat: " + errno_text());
  if (st.st_size != 0) existing_columns(f.fd, st.st_size, path);
}

size_t schema_columns(std::string line) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
  if (line == csv_header()) return csv_columns().size();
  if (line == csv_header_v1()) return csv_columns_v1();
  return 0;
}

size_t append_csv(const std::string& path, const std::vector<Record>& rows) {
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
  size_t columns = csv_columns().size();
  if (st.st_size == 0) {
    out = header + "\n";
  } else {
    columns = existing_columns(f.fd, st.st_size, path);
    // A file cut short by a crash must not glue our first row onto its last.
    char last = '\n';
    if (::pread(f.fd, &last, 1, st.st_size - 1) == 1 && last != '\n') out += '\n';
  }
  for (const auto& r : rows) out += csv_line(record_fields(r, columns)) + "\n";
  // One append under the lock: no torn or interleaved rows. A write cut
  // short (a full disk) is undone, so that no reader sees half a run.
  try {
    write_all(f.fd, out, path);
    if (::fsync(f.fd) != 0) throw CsvError(path + ": fsync failed: " + errno_text());
  } catch (const CsvError& e) {
    if (::ftruncate(f.fd, st.st_size) != 0)
      throw CsvError(std::string(e.what()) + "; and it could not be cut back to its " +
                     std::to_string(st.st_size) + " bytes: " + errno_text());
    throw CsvError(std::string(e.what()) + " (nothing appended: the file is as it was)");
  }
  return columns;
}

}  // namespace kb
