// The bring-up report as Markdown, from a list of sections (title,
// paragraphs, a table), and as one self-contained HTML page rendered from
// that Markdown, so that the two say the same thing.
#include <cmath>
#include <optional>

#include "reports/bringup_report.h"
#include "reports/format.h"

namespace kb {

namespace {

struct Table {
  std::vector<std::string> head;
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> marked;  // rows shown as tuning candidates (rows past its end: not)
};

struct Section {
  std::string title;
  std::vector<std::string> paragraphs;
  std::vector<std::string> bullets;
  Table table;
  std::string code;  // a preformatted block (the drafted target file)
};

std::string show(std::optional<double> v) {
  if (!v) return "—";
  const double a = std::fabs(*v);
  return format_double(a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : a >= 0.1 ? "%.2f" : "%.3g", *v);
}

std::string frac(std::optional<double> v) { return v ? format_double("%.2f", *v) : "—"; }

Section run_section(const BringupReport& r) {
  Section s;
  s.paragraphs.push_back("Run " + r.run_id + " (" + (r.git_sha.empty() ? "?" : r.git_sha) +
                         ", driver " + (r.driver.empty() ? "?" : r.driver) + ", " +
                         (r.timestamp.empty() ? "no timestamp" : r.timestamp) + ").");
  s.bullets.push_back("Datasheet: " +
                      (r.datasheet_gpu.empty()
                           ? std::string("not in the table (") + r.datasheet_path + ")"
                           : r.datasheet_gpu + " — " + r.datasheet_source));
  s.bullets.push_back("Target file: " + (r.target_file.empty()
                                             ? std::string("none (roofline-relative targets)")
                                             : r.target_file));
  s.bullets.push_back("Reference: " + (r.reference_gpu.empty()
                                           ? std::string("none (see the problems below)")
                                           : r.reference_gpu + ", run " + r.reference_run +
                                                 " (from " + r.reference_from + ")"));
  return s;
}

Section list_section(const std::string& title, const std::vector<std::string>& items) {
  Section s;
  s.title = title;
  s.bullets = items;
  return s;
}

Section ceilings_section(const BringupReport& r, const std::string& ref) {
  Section s;
  s.title = "Ceilings against the datasheet";
  s.paragraphs.push_back(
      "What the probe at the start of the run and the suite's fastest GEMMs reached, as a "
      "share of the datasheet figure (bandwidths: of the HBM figure; copy counts bytes read "
      "and written), beside the same for the " +
      ref + ".");
  s.table.head = {"ceiling",         "here",      "datasheet", "share",
                  ref + " measured", "datasheet", "share",     "how"};
  for (const auto& c : r.ceilings) {
    s.table.rows.push_back({c.name, show(c.measured), show(c.datasheet), frac(c.share),
                            show(c.ref_measured), show(c.ref_datasheet), frac(c.ref_share),
                            c.note});
  }
  return s;
}

Section rows_section(const BringupReport& r, const std::string& ref) {
  Section s;
  s.title = "Every row against the " + ref;
  if (r.reference_gpu.empty()) {
    s.paragraphs.push_back("No reference run: this GPU's roofline fractions alone.");
  } else {
    s.paragraphs.push_back(
        "Each point's roofline fraction here and on the " + ref +
        " (the metrics of one point share one time, so each point is shown once). A point " +
        percent(r.threshold, 0) + " or more behind the reference (here / there <= " +
        frac(1 - r.threshold) + ") uses this GPU less well than our kernels use the " + ref +
        ": a tuning candidate, listed first. " + std::to_string(r.candidates) + " of " +
        std::to_string(r.rows.size()) + " points are.");
  }
  s.bullets = r.tuning;
  s.table.head = {"experiment", "dtype", "shape",    "metric",       "here",
                  "fraction",   ref,     "fraction", "here / there", "tune"};
  for (const auto& row : r.rows) {
    s.table.rows.push_back({row.name, row.dtype, row.shape, row.metric, show(row.actual),
                            frac(row.here), show(row.ref_actual), frac(row.there), frac(row.ratio),
                            row.candidate && !row.note.empty() ? row.tuning + " (" + row.note + ")"
                            : row.candidate                    ? row.tuning
                                                               : row.note});
    s.table.marked.push_back(row.candidate);
  }
  return s;
}

Section a100_section(const BringupReport& r) {
  Section s;
  s.title = "Against the A100 (the seed's targets)";
  if (r.a100_file.empty()) {
    s.paragraphs.push_back("Left out: no A100 target file (see the problems above).");
    return s;
  }
  s.paragraphs.push_back(
      "Each row the seed (PyTorch gpt_fast) measured on an A100-40GB, from " + r.a100_file +
      ": this GPU's value beside the seed's A100 target. Measured ratio: here / A100 "
      "target (for times: target / here). Spec ratio: this GPU's datasheet / the A100's (" +
      r.a100_datasheet +
      ") for the row's limiter; a measured ratio below the spec ratio "
      "means this GPU delivers less of its promise than the seed's A100 did.");
  s.bullets = r.a100_notes;
  s.table.head = {"experiment",    "metric",        "dtype",          "shape",
                  "here",          "A100 target",   "measured ratio", "spec ratio",
                  "roofline here", "fraction here", "A100 roofline",  "A100 target / roofline",
                  "note"};
  for (const auto& a : r.a100) {
    s.table.rows.push_back(
        {a.name, a.metric, a.dtype, a.shape, show(a.actual), show(a.a100_target),
         frac(a.measured_ratio), a.spec_ratio ? frac(a.spec_ratio) + " (" + a.bound + ")" : "—",
         show(a.roofline), frac(a.fraction), show(a.a100_roofline), frac(a.a100_fraction), a.note});
  }
  return s;
}

Section draft_section(const BringupReport& r) {
  Section s;
  s.title = "Drafted target file";
  s.paragraphs.push_back(
      (r.draft_path.empty() ? std::string("Not written.") : "Written to " + r.draft_path + ".") +
      " Datasheet peaks in `peaks`; in `measured` the probe's ceilings and ladder (or the "
      "run's probe rows); per rate row of the run a target at the roofline fraction it "
      "reached, rounded down to 0.01, its note giving the measurement, and per experiment, "
      "metric and dtype a `*` target at the lowest of them. Review it and commit it under "
      "targets/ (docs/bringup.md).");
  s.code = r.draft_json;
  return s;
}

std::vector<Section> sections(const BringupReport& r) {
  const std::string ref = r.reference_gpu.empty() ? "reference" : r.reference_gpu;
  std::vector<Section> out = {run_section(r)};
  if (!r.problems.empty()) out.push_back(list_section("Problems with the input", r.problems));
  if (!r.notes.empty()) out.push_back(list_section("Notes", r.notes));
  out.push_back(ceilings_section(r, ref));
  out.push_back(rows_section(r, ref));
  out.push_back(a100_section(r));
  out.push_back(draft_section(r));
  return out;
}

}  // namespace

std::string bringup_markdown(const BringupReport& r) {
  std::string o = "# Bring-up report: " + markdown_with_code(r.gpu) + "\n\n";
  for (const auto& s : sections(r)) {
    if (!s.title.empty()) o += "## " + markdown_with_code(s.title) + "\n\n";
    for (const auto& p : s.paragraphs) o += markdown_with_code(p) + "\n\n";
    for (const auto& b : s.bullets) o += "- " + markdown_with_code(b) + "\n";
    if (!s.bullets.empty()) o += "\n";
    if (!s.table.head.empty() && !s.table.rows.empty()) {
      auto md = [](std::vector<std::string> cells) {
        for (auto& c : cells) c = markdown_with_code(c);
        return cells;
      };
      std::vector<std::vector<std::string>> rows;
      for (size_t i = 0; i < s.table.rows.size(); ++i) {
        rows.push_back(md(s.table.rows[i]));
        if (i < s.table.marked.size() && s.table.marked[i] && !rows.back().empty())
          rows.back()[0] = "**" + rows.back()[0] + "**";
      }
      o += markdown_table(md(s.table.head), "", rows) + "\n";
    }
    if (!s.code.empty()) o += markdown_code_block(s.code, "json") + "\n";
  }
  return o;
}

std::string bringup_html(const BringupReport& r) {
  // A tuning candidate is the row whose first cell is bold.
  return html_page("Bring-up report: " + r.gpu,
                   "tr:has(> td:first-child > b) td { background: #fff3cd; }\n",
                   markdown_html(bringup_markdown(r)));
}

}  // namespace kb
