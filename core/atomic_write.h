// Every output file of kbench and kgate is replaced whole or not at all: a
// temporary in the destination's folder, fsync'd, renamed over it (through
// a symbolic link to the file it names); a pipe or a device (/dev/stdout) is
// written in place, its errors thrown all the same. output_clash() finds an
// output that is an input too, by device and inode, else by normalised path.
#pragma once

#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kb {

// Thrown when an output cannot be written; the message names the file.
struct WriteError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A file being written; destroyed without commit(), the temporary is removed.
class AtomicFile {
 public:
  explicit AtomicFile(const std::string& path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::FILE* stream() { return f_; }
  // Throws WriteError (the temporary removed, the destination untouched).
  void commit();

 private:
  void discard();
  std::string path_;    // as the caller named it (messages)
  std::string target_;  // the file replaced: path_ with a symbolic link resolved
  std::string tmp_;
  std::FILE* f_ = nullptr;
};

// `path` replaced by `text` as above; throws WriteError "cannot write PATH: why".
void atomic_write(const std::string& path, std::string_view text);

// The whole of `path` as bytes; nullopt when it cannot be opened.
std::optional<std::string> read_whole_file(const std::string& path);

// A file a command reads or writes, with what names it ("--results").
struct NamedPath {
  std::string what, path;
};

// A message naming the first output that is an input or an earlier output.
std::string output_clash(const std::vector<NamedPath>& inputs,
                         const std::vector<NamedPath>& outputs);

}  // namespace kb
