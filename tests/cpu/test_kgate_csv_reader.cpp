// The CSV tokenizer the gate reads with: what real files contain (BOM, CRLF,
// quoted commas, doubled quotes and line breaks, a missing last line end, a
// file cut inside a quoted field).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/csv_reader.h"
#include "core/csv_writer.h"

namespace {

using Records = std::vector<std::vector<std::string>>;

struct Read {
  Records records;
  std::vector<size_t> lines, offsets;
  bool bom = false, unterminated = false, no_line_end = false;
  kb::CsvReader::Error error = kb::CsvReader::Error::none;
  size_t error_line = 0;
};

Read read_all(const std::string& text) {
  Read r;
  kb::CsvReader csv(text);
  std::vector<std::string_view> f;
  while (csv.next(f)) {
    r.records.emplace_back(f.begin(), f.end());
    r.lines.push_back(csv.line());
    r.offsets.push_back(csv.offset());
    r.unterminated = csv.unterminated_quote();
    r.no_line_end = csv.no_line_end();
  }
  r.bom = csv.had_bom();
  r.error = csv.error();
  r.error_line = csv.line();
  return r;
}

TEST(KgateCsvReader, PlainLinesAndEmptyFields) {
  Read r = read_all("a,b,c\n1,,3\n,,\n");
  ASSERT_EQ(r.records.size(), 3u);
  EXPECT_EQ(r.records[0], (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(r.records[1], (std::vector<std::string>{"1", "", "3"}));
  EXPECT_EQ(r.records[2], (std::vector<std::string>{"", "", ""}));
  EXPECT_EQ(r.lines, (std::vector<size_t>{1, 2, 3}));
  EXPECT_FALSE(r.no_line_end);
}

TEST(KgateCsvReader, CrlfAndBomAreTransparent) {
  Read r = read_all("\xEF\xBB\xBFname,metric\r\nx,y\r\n");
  EXPECT_TRUE(r.bom);
  ASSERT_EQ(r.records.size(), 2u);
  EXPECT_EQ(r.records[0], (std::vector<std::string>{"name", "metric"}));  // no BOM in "name"
  EXPECT_EQ(r.records[1], (std::vector<std::string>{"x", "y"}));          // no CR in "y"
}

// Where each record begins, whatever ends the lines (selftest-table cuts
// a file into nights there).
TEST(KgateCsvReader, RecordOffsetsWithEveryLineEnd) {
  EXPECT_EQ(read_all("a,b\n\nc\n").offsets, (std::vector<size_t>{0, 5}));
  EXPECT_EQ(read_all("a,b\r\n\r\nc\r\n").offsets, (std::vector<size_t>{0, 7}));
  EXPECT_EQ(read_all("a,b\r\rc\r").offsets, (std::vector<size_t>{0, 5}));
  const Read cr = read_all(
      "\xEF\xBB\xBF"
      "a\r\"x\ny\"\rc");
  EXPECT_EQ(cr.offsets, (std::vector<size_t>{3, 5, 11}));
  EXPECT_EQ(cr.lines, (std::vector<size_t>{1, 2, 4}));
}

TEST(KgateCsvReader, QuotedCommasQuotesAndLineBreaks) {
  Read r = read_all("k,msg\n1,\"a, \"\"quoted\"\"\nmessage\"\n2,\"plain\"\n");
  ASSERT_EQ(r.records.size(), 3u);
  EXPECT_EQ(r.records[1][1], "a, \"quoted\"\nmessage");
  EXPECT_EQ(r.records[2][1], "plain");
  // The record after a quoted line break starts on the right line.
  EXPECT_EQ(r.lines, (std::vector<size_t>{1, 2, 4}));
}

TEST(KgateCsvReader, RoundTripsWhatTheWriterWrites) {
  std::vector<std::string> fields = {"x", "a,b", "say \"hi\"", "line1\nline2", "", "\r"};
  std::string text = kb::csv_line(fields) + "\n";
  Read r = read_all(text);
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_EQ(r.records[0], fields);
}

TEST(KgateCsvReader, LastLineWithoutLineEnd) {
  Read r = read_all("a,b\n1,2");
  ASSERT_EQ(r.records.size(), 2u);
  EXPECT_EQ(r.records[1], (std::vector<std::string>{"1", "2"}));
  EXPECT_TRUE(r.no_line_end);
}

TEST(KgateCsvReader, FileCutInsideQuotes) {
  Read r = read_all("a,b\n1,\"never closed\n");
  ASSERT_EQ(r.records.size(), 2u);
  EXPECT_TRUE(r.unterminated);
  EXPECT_EQ(r.records[1][0], "1");
}

TEST(KgateCsvReader, BlankLinesCarryNoRecord) {
  Read r = read_all("\n\na\r\n\r\nb\n\n");
  ASSERT_EQ(r.records.size(), 2u);
  EXPECT_EQ(r.lines, (std::vector<size_t>{3, 5}));
}

// Bounded: a record over 64 KiB, quoted or not, or a NUL byte stops the
// reader there, with the line it stopped on; a record of exactly 64 KiB is
// read.
TEST(KgateCsvReader, ARecordOverTheBoundStopsIt) {
  const size_t max = kb::CsvReader::kMaxRecordBytes;
  const std::string at_max = std::string(max - 2, 'x') + ",y";
  Read fits = read_all("a,b\n" + at_max + "\nc,d\n");
  EXPECT_EQ(fits.records.size(), 3u);
  EXPECT_EQ(fits.error, kb::CsvReader::Error::none);
  for (const std::string& longer : {std::string(max + 1, 'x'), "\"" + std::string(max, 'x') + "\"",
                                    "1,\"" + std::string(3 * max, '\n') + "\""}) {
    Read r = read_all("a,b\n1,2\n" + longer + "\nc,d\n");
    EXPECT_EQ(r.records.size(), 2u);
    EXPECT_EQ(r.error, kb::CsvReader::Error::record_too_long);
    EXPECT_EQ(r.error_line, 3u);
  }
}

TEST(KgateCsvReader, ANulByteStopsIt) {
  const char plain[] = "a,b\n1,2\n3,\0\n5,6\n";
  const char quoted[] = "a,b\n1,2\n3,\"x\0\"\n";
  for (const std::string& text :
       {std::string(plain, sizeof plain - 1), std::string(quoted, sizeof quoted - 1)}) {
    Read r = read_all(text);
    EXPECT_EQ(r.records.size(), 2u);
    EXPECT_EQ(r.error, kb::CsvReader::Error::nul_byte);
    EXPECT_EQ(r.error_line, 3u);
  }
  Read zeros = read_all(std::string(1 << 20, '\0'));
  EXPECT_TRUE(zeros.records.empty());
  EXPECT_EQ(zeros.error, kb::CsvReader::Error::nul_byte);
}

TEST(KgateCsvReader, EmptyText) {
  Read r = read_all("");
  EXPECT_TRUE(r.records.empty());
  Read bom_only = read_all("\xEF\xBB\xBF");
  EXPECT_TRUE(bom_only.records.empty());
}

}  // namespace
