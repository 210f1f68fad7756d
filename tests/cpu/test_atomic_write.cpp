// core/atomic_write.h: an output replaced whole or not at all, and the
// output that is an input found by device and inode.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/atomic_write.h"
#include "tests/cpu/file_size_limit.h"
#include "tests/cpu/temp_root.h"

namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  fs::path d = kb::test::process_temp_root("atomic_write_") / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void put(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

size_t entries(const fs::path& d) {
  return static_cast<size_t>(std::distance(fs::directory_iterator(d), fs::directory_iterator()));
}

TEST(AtomicWrite, ReplacesTheFileAndKeepsItsMode) {
  fs::path d = fresh_dir("replace");
  put(d / "out.md", "old");
  ::chmod((d / "out.md").c_str(), 0640);
  kb::atomic_write((d / "out.md").string(), "new text");
  EXPECT_EQ(slurp(d / "out.md"), "new text");
  struct stat st {};
  ASSERT_EQ(::stat((d / "out.md").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  EXPECT_EQ(entries(d), 1u);  // no temporary left
  kb::atomic_write((d / "new.md").string(), "");
  EXPECT_TRUE(fs::exists(d / "new.md"));
  EXPECT_EQ(entries(d), 2u);
}

TEST(AtomicWrite, SymbolicLinkStaysAndItsFileIsReplaced) {
  fs::path d = fresh_dir("link");
  fs::create_directories(d / "real");
  put(d / "real" / "report.html", "old");
  fs::create_symlink("real/report.html", d / "report.html");
  kb::atomic_write((d / "report.html").string(), "new");
  EXPECT_TRUE(fs::is_symlink(d / "report.html"));
  EXPECT_EQ(slurp(d / "real" / "report.html"), "new");
  EXPECT_EQ(entries(d / "real"), 1u);
}

TEST(AtomicWrite, FolderOrMissingFolderIsAnError) {
  fs::path d = fresh_dir("folder");
  try {
    kb::atomic_write(d.string(), "x");
    FAIL() << "a folder was written";
  } catch (const kb::WriteError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot write " + d.string() + ": a folder");
  }
  EXPECT_THROW(kb::atomic_write((d / "no" / "such" / "x.md").string(), "x"), kb::WriteError);
}

// A write cut short: in a child process, a file size limit makes the write
// fail (EFBIG, as a full disk gives ENOSPC) part-way through.
TEST(AtomicWrite, FailedWriteLeavesThePreviousFileAndNoTemporary) {
  fs::path d = fresh_dir("short");
  const std::string previous = "the previous report\n";
  put(d / "out.csv", previous);
  const int status = kb::test::in_child_with_file_limit(8192, [&] {
    try {
      kb::atomic_write((d / "out.csv").string(), std::string(1 << 20, 'x'));
    } catch (const kb::WriteError& e) {
      const std::string what = e.what();
      return what.find("cannot write " + (d / "out.csv").string() + ": File too large") == 0 ? 0
                                                                                             : 3;
    }
    return 4;  // written although it could not be
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(slurp(d / "out.csv"), previous);
  EXPECT_EQ(entries(d), 1u);
}

TEST(AtomicWrite, UncommittedFileLeavesNothing) {
  fs::path d = fresh_dir("uncommitted");
  put(d / "h.csv", "history");
  {
    kb::AtomicFile f((d / "h.csv").string());
    std::fputs("half", f.stream());
  }
  EXPECT_EQ(slurp(d / "h.csv"), "history");
  EXPECT_EQ(entries(d), 1u);
}

// A pipe (or /dev/stdout, a device) is written in place: a rename over it
// would leave a plain file where it was.
TEST(AtomicWrite, APipeIsWrittenInPlaceAndStaysAPipe) {
  const fs::path d = fresh_dir("fifo");
  const fs::path fifo = d / "report.md";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int rd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(rd, 0);
  kb::atomic_write(fifo.string(), "# tonight\n");
  char buf[64] = {};
  const ssize_t n = ::read(rd, buf, sizeof buf);
  ::close(rd);
  EXPECT_EQ(std::string(buf, n > 0 ? n : 0), "# tonight\n");
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(entries(d), 1u);
}

// A device that refuses the bytes is an error, and stays the device.
TEST(AtomicWrite, AFullDeviceIsAnErrorAndStaysADevice) {
  struct stat st {};
  if (::stat("/dev/full", &st) != 0 || !S_ISCHR(st.st_mode)) GTEST_SKIP() << "no /dev/full";
  EXPECT_THROW(kb::atomic_write("/dev/full", std::string(1 << 16, 'x')), kb::WriteError);
  ASSERT_EQ(::stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(OutputClash, SameFileByNameLinkOrHardLink) {
  fs::path d = fresh_dir("clash");
  put(d / "h.csv", "history");
  fs::create_symlink("h.csv", d / "sym.csv");
  fs::create_hard_link(d / "h.csv", d / "hard.csv");
  const std::vector<kb::NamedPath> in = {{"--results", (d / "h.csv").string()}};
  for (const char* name : {"h.csv", "sym.csv", "hard.csv", "./h.csv"}) {
    const std::string out = (d / name).string();
    EXPECT_EQ(kb::output_clash(in, {{"--csv", out}}),
              "output --csv " + out + " is the same file as input --results " +
                  (d / "h.csv").string() +
                  ": writing it would destroy that file; nothing was written");
  }
  EXPECT_EQ(kb::output_clash(in, {{"--csv", (d / "other.csv").string()}}), "");
  // Two outputs of one file that does not exist yet.
  const std::string o = (d / "o.md").string(), o2 = (d / "." / "o.md").string();
  EXPECT_NE(kb::output_clash(in, {{"--markdown", o}, {"--junit", o2}}).find("as output --markdown"),
            std::string::npos);
  EXPECT_EQ(kb::output_clash(in, {{"--markdown", o}, {"--junit", ""}}), "");  // not given
}

}  // namespace
