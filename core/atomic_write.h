// Every output file of kbench and kgate is replaced whole or not at all: the
// text goes to a temporary file in the destination's folder (a unique name,
// fsync'd) that is then renamed over the destination. A crash, a kill or a
// full disk leaves either the previous file or the new one, never a part;
// on any failure the temporary is removed and the previous file is untouched.
// A destination that is a symbolic link is resolved: the file it points to
// is replaced and the link stays.
//
// An output that is the same file as an input (or as another output) would
// destroy that input: output_clash() finds it, by device and inode where the
// file exists (which covers hard and symbolic links), by normalised path
// where it does not yet.
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

// A file being written: stream() writes into the temporary; commit()
// flushes, fsyncs and renames it into place. Destroyed without commit()
// (an exception, an early return), the temporary is removed.
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

// A file a command reads or writes, with what names it (an option, e.g.
// "--results").
struct NamedPath {
  std::string what, path;
};

// The first output that is the same file as an input or as an earlier
// output, as one message naming both ("" when there is none).
std::string output_clash(const std::vector<NamedPath>& inputs,
                         const std::vector<NamedPath>& outputs);

}  // namespace kb
