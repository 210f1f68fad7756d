#include "core/atomic_write.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace kb {

namespace fs = std::filesystem;

namespace {

// The file a write to `path` replaces: a symbolic link followed (a chain of
// them too, a dangling one to where it points), so that the link survives.
std::string resolve_links(const std::string& path) {
  fs::path p = path;
  for (int hop = 0; hop < 40; ++hop) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(p, ec))) return p.string();
    fs::path to = fs::read_symlink(p, ec);
    if (ec) return p.string();
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
  return p.string();
}

// The mode a new file gets from open(2): 0666 less the umask. An existing
// destination keeps its own.
mode_t new_file_mode(const std::string& target) {
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0) return st.st_mode & 07777;
  const mode_t mask = ::umask(0);  // read it: umask() can only be read by setting it
  ::umask(mask);
  return 0666 & ~mask;
}

// The rename is durable once the folder's entry is on disk; a folder that
// cannot be opened or synced (some network file systems) is not an error.
void sync_folder(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

std::string folder_of(const std::string& target) {
  fs::path parent = fs::path(target).parent_path();
  return parent.empty() ? "." : parent.string();
}

// What identifies a file: its device and inode where it exists (a hard or
// symbolic link to it is the same file), else its absolute normalised path.
std::string file_identity(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0)
    return "inode " + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return "path " + p.lexically_normal().string();
}

std::string named(const NamedPath& p) { return p.what + " " + p.path; }

}  // namespace

AtomicFile::AtomicFile(const std::string& path) : path_(path), target_(resolve_links(path)) {
  std::error_code ec;
  if (fs::is_directory(target_, ec)) throw WriteError("cannot write " + path_ + ": a folder");
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    // A pipe, a terminal or a device (/dev/stdout): written in place, since
    // a rename would put a plain file where it is.
    if (!(f_ = std::fopen(path_.c_str(), "wb")))
      throw WriteError("cannot write " + path_ + ": " + std::strerror(errno));
    return;
  }
  const std::string dir = folder_of(target_);
  std::string name =
      (fs::path(dir) / ("." + fs::path(target_).filename().string() + ".XXXXXX")).string();
  int fd = ::mkstemp(name.data());
  if (fd < 0) throw WriteError("cannot write " + path_ + ": " + std::strerror(errno));
  tmp_ = name;
  if (::fchmod(fd, new_file_mode(target_)) != 0 || !(f_ = ::fdopen(fd, "wb"))) {
    const int e = errno;
    if (!f_) ::close(fd);
    discard();
    throw WriteError("cannot write " + path_ + ": " + std::strerror(e));
  }
}

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::discard() {
  if (f_) std::fclose(f_);
  f_ = nullptr;
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
  tmp_.clear();
}

void AtomicFile::commit() {
  if (!f_) throw WriteError("cannot write " + path_ + ": already written");
  int e = 0;
  if (std::fflush(f_) != 0 || std::ferror(f_)) e = errno ? errno : EIO;
  const bool in_place = tmp_.empty();
  if (!e && !in_place && ::fsync(::fileno(f_)) != 0) e = errno;
  std::FILE* f = f_;
  f_ = nullptr;
  if (std::fclose(f) != 0 && !e) e = errno;
  if (in_place) {
    if (e) throw WriteError("cannot write " + path_ + ": " + std::strerror(e));
    return;
  }
  if (!e && ::rename(tmp_.c_str(), target_.c_str()) != 0) e = errno;
  if (e) {
    discard();
    throw WriteError("cannot write " + path_ + ": " + std::strerror(e) +
                     " (the previous file, if any, is untouched)");
  }
  tmp_.clear();
  sync_folder(folder_of(target_));
}

void atomic_write(const std::string& path, std::string_view text) {
  AtomicFile out(path);
  errno = 0;
  if (std::fwrite(text.data(), 1, text.size(), out.stream()) != text.size()) {
    const int e = errno ? errno : EIO;
    throw WriteError("cannot write " + path + ": " + std::strerror(e) +
                     " (the previous file, if any, is untouched)");
  }
  out.commit();
}

std::string output_clash(const std::vector<NamedPath>& inputs,
                         const std::vector<NamedPath>& outputs) {
  std::vector<std::pair<std::string, const NamedPath*>> seen;
  for (const auto& in : inputs)
    if (!in.path.empty()) seen.emplace_back(file_identity(in.path), &in);
  const size_t n_inputs = seen.size();
  for (const auto& out : outputs) {
    if (out.path.empty()) continue;
    const std::string id = file_identity(out.path);
    for (size_t i = 0; i < seen.size(); ++i) {
      if (seen[i].first != id) continue;
      return "output " + named(out) + " is the same file as " +
             (i < n_inputs ? "input " : "output ") + named(*seen[i].second) +
             ": writing it would destroy that file; nothing was written";
    }
    seen.emplace_back(id, &out);
  }
  return "";
}

std::optional<std::string> read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace kb
