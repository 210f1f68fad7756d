#include "reports/gate_writers.h"

namespace kb {

namespace {

std::string xml(const std::string& s) { return escape_markup(s, Markup::xml); }

// The testcase name: the key without its experiment name (that is the class).
std::string case_name(const GateKeyResult& k) {
  std::string label = key_label(k);
  return label.substr(k.name.size() + 1);
}

}  // namespace

std::string gate_junit(const GateReport& r) {
  size_t failures = r.count(GateStatus::fail);
  size_t skipped = r.count(GateStatus::skipped);
  size_t inconclusive = r.count(GateStatus::inconclusive);
  if (r.strict)
    failures += inconclusive;
  else
    skipped += inconclusive;
  std::string counts = " tests=\"" + std::to_string(r.keys.size()) + "\" failures=\"" +
                       std::to_string(failures) + "\" errors=\"0\" skipped=\"" +
                       std::to_string(skipped) + "\"";
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites name=\"kgate\"" + counts + ">\n";
  out += "  <testsuite name=\"kgate\"" + counts + " time=\"0\">\n";
  for (const auto& k : r.keys) {
    out += "    <testcase classname=\"kgate." + xml(k.name) + "\" name=\"" + xml(case_name(k)) +
           "\" time=\"0\"";
    bool as_failure =
        k.status == GateStatus::fail || (r.strict && k.status == GateStatus::inconclusive);
    // A note (a changed variant, an injected slowdown) goes with the case.
    std::string note =
        k.note.empty() ? "" : "      <system-out>note: " + xml(k.note) + "</system-out>\n";
    if (as_failure) {
      std::string type = k.status == GateStatus::fail ? k.rule : "inconclusive";
      out += ">\n      <failure message=\"" + xml(k.why) + "\" type=\"" + xml(type) + "\">" +
             xml(gate_line(k)) + "</failure>\n" + note + "    </testcase>\n";
    } else if (k.status == GateStatus::inconclusive || k.status == GateStatus::skipped) {
      std::string what = k.status == GateStatus::inconclusive ? "inconclusive: " : "skipped: ";
      out += ">\n      <skipped message=\"" + xml(what + k.why) + "\"/>\n" + note +
             "    </testcase>\n";
    } else if (!note.empty()) {
      out += ">\n" + note + "    </testcase>\n";
    } else {
      out += "/>\n";
    }
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
    const unsigned char c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      case '\'':
        if (m == Markup::xml) {
          o += "&apos;";
          break;
        }
        o += ch;
        break;
      default:
        if (m == Markup::xml && c < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') break;
        o += ch;
    }
  }
  return o;
}

}  // namespace kb
