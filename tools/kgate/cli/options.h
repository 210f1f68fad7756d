// What every kgate command shares: the usage error, the output error, and
// the helpers that read options and write outputs.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/atomic_write.h"
#include "core/targets.h"
#include "tools/kgate/gate.h"
#include "tools/kgate/history.h"

namespace kb::kgate_cli {

// Bad usage: exit 2 with the message and the command's usage line.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// An output file that cannot be written: the verdict would be lost.
struct OutputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using Args = std::vector<std::string>;

// `--opt=value` as `--opt value`; a flag that takes no value refuses one.
Args expand_equals(const Args& in, const std::vector<const char*>& no_value);

// Reads the value after a flag; `i` is left on it.
const std::string& value_of(const Args& a, size_t& i);

double parse_double(const std::string& flag, const std::string& v, double lo, double hi,
                    bool hi_open = false);
long parse_int(const std::string& flag, const std::string& v, long lo, long hi);

// A command's options: per flag, what reads it at a[i] (leaving i on the
// last value it takes).
using Reader = std::function<void(const Args& a, size_t& i)>;
struct Option {
  const char* flag;
  Reader read;
  bool takes_value = true;
};
using Options = std::vector<Option>;

// Reads args[1..] (`--opt=value` as `--opt value`; args[0] is the command)
// by `options`; an argument that looks like a file gets a hint to put it
// after `file_flag`.
void parse_options(const Args& args, const Options& options, const char* file_flag);
Reader text(std::string& s);
Reader files(std::vector<std::string>& v);        // `--results FILE...`
Reader target_files(std::vector<TargetFile>& v);  // `--targets DIR`, loaded
Reader number(double& x, double lo, double hi, bool hi_open = false);
template <class T>
Reader whole(T& x, long lo, long hi) {
  return [&x, lo, hi](const Args& a, size_t& i) {
    const std::string& f = a[i];
    x = static_cast<T>(parse_int(f, value_of(a, i), lo, hi));
  };
}
Option flag(const char* name, bool& b);

// The gate's options that check and dashboard share, and their check.
Options gate_options(GateOptions& opt);
void check_gate_options(const GateOptions& opt);

// Before anything is written: no output may be an input or another output.
void refuse_clashes(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs);

// The files behind --results and the target files loaded, as inputs.
std::vector<NamedPath> inputs_of(const std::vector<std::string>& results,
                                 const std::vector<TargetFile>& targets);

// The folder `path`, made if need be (OutputError when it cannot be).
void make_folder(const std::string& path);

void print_warnings(const std::vector<std::string>& warnings);

// For the commands that do not gate: every damaged row is a warning.
void print_history_warnings(const History& h);

// Reads every results file; a refused file's warnings are printed first,
// and with `warn` (a command that does not gate) those of the rest.
void read_history(History& h, const std::vector<std::string>& files, bool warn = false);

}  // namespace kb::kgate_cli
