#include "reports/gate_result.h"

namespace kb {

namespace {

std::string xml(const std::string& s) { return escape_markup(s, Markup::xml); }

// The testcase name: the key without its experiment name (that is the class).
std::string case_name(const GateKeyResult& k) {
  std::string label = key_label(k);
  return label.substr(k.name.size() + 1);
}

// JUnit's timestamp is an xs:dateTime without a zone: "YYYY-MM-DDThh:mm:ss".
std::string junit_time(std::string t) {
  if (!t.empty() && t.back() == 'Z') t.pop_back();
  return t;
}

std::string property(const std::string& name, const std::string& value) {
  return "      <property name=\"" + xml(name) + "\" value=\"" + xml(value) + "\"/>\n";
}

}  // namespace

std::string gate_junit(const GateReport& r) {
  size_t failures = r.input_failures.size(), errors = 0, skipped = 0;
  for (const auto& k : r.keys) {
    if (k.status == GateStatus::fail)
      (k.rule == "failed" ? errors : failures) += 1;
    else if (k.status == GateStatus::inconclusive && r.strict)
      ++failures;
    else if (k.status == GateStatus::skipped ||
             (k.status == GateStatus::inconclusive && !(r.folded(k) && k.target)))
      ++skipped;
  }
  const size_t tests = r.keys.size() + r.input_failures.size();
  std::string counts = " tests=\"" + std::to_string(tests) + "\" failures=\"" +
                       std::to_string(failures) + "\" errors=\"" + std::to_string(errors) +
                       "\" skipped=\"" + std::to_string(skipped) + "\"";
  // The suite's time: the gated run's start where known, else when kgate ran.
  std::string when = r.generated_at;
  if (!r.gated_runs.empty() && !r.gated_runs.front().context.timestamp.empty())
    when = r.gated_runs.front().context.timestamp;
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites name=\"kgate\"" + counts + ">\n";
  out += "  <testsuite name=\"kgate\"" + counts + " time=\"0\"";
  if (!when.empty()) out += " timestamp=\"" + xml(junit_time(when)) + "\"";
  if (!r.host.empty()) out += " hostname=\"" + xml(r.host) + "\"";
  out += ">\n";
  if (!r.gated_runs.empty()) {
    out += "    <properties>\n";
    for (const auto& g : r.gated_runs) {
      out += property("gated_run", g.describe());
      const RunContext& c = g.context;
      if (!c.git_sha.empty()) out += property("git_sha", c.git_sha);
      if (!c.driver.empty()) out += property("driver", c.driver);
      if (!c.cuda.empty()) out += property("cuda", c.cuda);
    }
    if (!r.host.empty()) out += property("kgate_host", r.host);
    for (const auto& f : findings(r)) out += property("finding", f);
    out += "    </properties>\n";
  }
  // Input that fails the night: one case each, named by its place.
  for (const auto& f : r.input_failures)
    out += "    <testcase classname=\"kgate.input\" name=\"" + xml(f.where) +
           "\" time=\"0\">\n      <failure message=\"" + xml(f.why) + "\" type=\"" + xml(f.rule) +
           "\">" + xml(f.text()) + "</failure>\n    </testcase>\n";
  for (const auto& k : r.keys) {
    out += "    <testcase classname=\"kgate." + xml(k.name) + "\" name=\"" + xml(case_name(k)) +
           "\" time=\"0\"";
    bool as_failure =
        k.status == GateStatus::fail || (r.strict && k.status == GateStatus::inconclusive);
    const std::string why = why_with_history(k), link = chart_link(r, k);
    // Besides its verdict, in one <system-out>: a throttled pass, a note.
    std::string said;
    if (k.throttled && k.status == GateStatus::pass && !r.folded(k))
      said = "throttled: the SM clock was low during the run; the value " +
             xml(show_value(k.value)) + " may be low";
    if (!k.note.empty()) said += (said.empty() ? "" : "\n") + xml("note: " + k.note);
    std::string inner;  // the verdict's element, if any, then the <system-out>
    if (as_failure) {
      // A row that crashed or errored is an error, not a slower kernel.
      const char* tag = k.status == GateStatus::fail && k.rule == "failed" ? "error" : "failure";
      std::string type = k.status == GateStatus::fail ? k.rule : "inconclusive";
      inner = "      <" + std::string(tag) + " message=\"" + xml(why) + "\" type=\"" + xml(type) +
              "\">" + xml(gate_line(k)) + (k.last_good ? "\n" + xml(last_good_text(k)) : "") +
              (link.empty() ? "" : "\nchart: " + xml(link)) + "</" + tag + ">\n";
    } else if ((k.status == GateStatus::inconclusive || k.status == GateStatus::skipped) &&
               !(r.folded(k) && k.target)) {  // a new key that meets its target passes
      std::string what = r.folded(k)                            ? "new, no target: "
                         : k.status == GateStatus::inconclusive ? "inconclusive: "
                                                                : "skipped: ";
      inner = "      <skipped message=\"" + xml(what + k.why) + "\"/>\n";
    }
    if (!said.empty()) inner += "      <system-out>" + said + "</system-out>\n";
    out += inner.empty() ? "/>\n" : ">\n" + inner + "    </testcase>\n";
  }
  if (!r.warnings.empty()) {
    out += "    <system-err>";
    for (const auto& w : r.warnings) out += xml(w) + "\n";
    out += "</system-err>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

std::string escape_markup(const std::string& s, Markup m) {
  std::string o;
  o.reserve(s.size());
  for (char ch : s) {
    const bool xml = m == Markup::xml;
    const char* esc = ch == '&'           ? "&amp;"
                      : ch == '<'         ? "&lt;"
                      : ch == '>'         ? "&gt;"
                      : ch == '"'         ? "&quot;"
                      : ch == '\'' && xml ? "&apos;"
                                          : nullptr;
    if (esc)
      o += esc;
    else if (!(xml && static_cast<unsigned char>(ch) < 0x20 && ch != '\t' && ch != '\n' &&
               ch != '\r'))
      o += ch;
  }
  return o;
}

}  // namespace kb
