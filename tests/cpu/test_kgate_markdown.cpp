// The Markdown kgate writes (check, compare, noise, siblings, bring-up)
// quotes names from the data as text (reports/markdown.h): a key or GPU
// named with `|` or `*` neither splits a table row nor opens emphasis.
#include <gtest/gtest.h>

#include "kgate_test_util.h"
#include "reports/bringup_report.h"
#include "reports/compare_result.h"
#include "reports/format.h"
#include "reports/gate_result.h"
#include "tools/kgate/compare.h"
#include "tools/kgate/gate.h"
#include "tools/kgate/history.h"
#include "tools/kgate/noise.h"
#include "tools/kgate/siblings.h"

namespace {

using namespace kgt;

const char* kName = "a|b*c*";
const char* kQuoted = "a\\|b\\*c\\*";

kb::History history_of(const std::vector<kb::Record>& rows, const std::string& path) {
  kb::History h;
  h.add_text(csv(rows), path);
  h.finish();
  return h;
}

// Each table row of `md` (a line starting with '|') has `cells` cells.
void expect_cells(const std::string& md, size_t cells) {
  size_t start = 0;
  while (start < md.size()) {
    size_t end = md.find('\n', start);
    if (end == std::string::npos) end = md.size();
    const std::string line = md.substr(start, end - start);
    if (!line.empty() && line[0] == '|') {
      size_t bars = 0;
      for (size_t i = 0; i < line.size(); ++i)
        if (line[i] == '|' && (i == 0 || line[i - 1] != '\\')) ++bars;
      EXPECT_EQ(bars, cells + 1) << line;
    }
    start = end + 1;
  }
}

TEST(KgateMarkdown, TextIsQuotedNotMarkup) {
  EXPECT_EQ(kb::markdown_text("a|b*c"), "a\\|b\\*c");
  EXPECT_EQ(kb::markdown_text("layer_norm _x_ `c` <b> [l](u) \\ ~s~\nn"),
            "layer_norm \\_x\\_ \\`c\\` &lt;b&gt; [l]\\(u) \\\\ \\~s\\~ n");
  EXPECT_EQ(kb::markdown_code_block("x ```` y\n", "json"), "`````json\nx ```` y\n`````\n");
}

TEST(KgateMarkdown, CheckQuotesNames) {
  const auto h = history_of(series(kName, steady(20, 1000, 800)), "h.csv");
  const std::string md = kb::gate_markdown(kb::run_gate(h, kb::GateOptions{}));
  EXPECT_TRUE(contains(md, kQuoted)) << md;
  EXPECT_FALSE(contains(md, "b*c")) << md;
  expect_cells(md, 6);
}

TEST(KgateMarkdown, CompareQuotesNames) {
  const auto base = history_of(series(kName, steady(5, 1000, 1000)), "base|*.csv");
  const auto next = history_of(series(kName, steady(5, 800, 800)), "new.csv");
  const std::string md = kb::compare_markdown(kb::compare_runs(base, next, kb::CompareOptions{}));
  EXPECT_TRUE(contains(md, kQuoted)) << md;
  EXPECT_TRUE(contains(md, "base\\|\\*.csv")) << md;
  EXPECT_FALSE(contains(md, "b*c")) << md;
  expect_cells(md, 7);
}

TEST(KgateMarkdown, NoiseQuotesNames) {
  auto rows = series(kName, steady(12, 1000, 1000), "GPU *x*");
  const std::string md = kb::noise_markdown(kb::noise_report(history_of(rows, "h.csv")));
  EXPECT_TRUE(contains(md, kQuoted)) << md;
  EXPECT_TRUE(contains(md, "GPU \\*x\\*")) << md;
  EXPECT_FALSE(contains(md, "b*c")) << md;
  expect_cells(md, 10);
}

TEST(KgateMarkdown, SiblingsQuoteNames) {
  kb::SiblingReport r;
  r.arch = "GPU *x*";
  r.run = "run|1";
  r.siblings = 2;
  kb::SiblingGpu g;
  g.gpu = kName;
  g.named = true;
  g.why = "behind on *gemv*";
  r.gpus = {g, g};
  const std::string md = kb::sibling_text({r}, true);
  EXPECT_TRUE(contains(md, "### GPU \\*x\\*, run run\\|1")) << md;
  EXPECT_TRUE(contains(md, "| " + std::string(kQuoted) + " |")) << md;
  EXPECT_TRUE(contains(md, "- **" + std::string(kQuoted) + "**: behind on \\*gemv\\*")) << md;
  expect_cells(md, 6);
}

TEST(KgateMarkdown, BringupQuotesNames) {
  kb::BringupReport r;
  r.gpu = "GPU *x*";
  r.reference_gpu = "ref|*";
  kb::BringupRow row;
  row.name = kName;
  row.metric = "latency(us)";
  row.dtype = "int8";
  row.shape = "N=1";
  r.rows = {row};
  r.draft_json = "{\"gpu\": \"```\"}\n";
  const std::string md = kb::bringup_markdown(r);
  EXPECT_TRUE(contains(md, "# Bring-up report: GPU \\*x\\*")) << md;
  EXPECT_TRUE(contains(md, "## Every row against the ref\\|\\*")) << md;
  EXPECT_TRUE(contains(md, "| " + std::string(kQuoted) + " |")) << md;
  EXPECT_TRUE(contains(md, "````json\n{\"gpu\": \"```\"}\n````\n")) << md;
  expect_cells(md, 10);
}

}  // namespace
