// kgate_simulate: the simulation behind the gate's defaults, as the tables
// of docs/gate.md and docs/decisions/0015 to 0017 (tests/support/simulate.h).
//
//   kgate_simulate [--noise REL] [--nights N] [--trials N] [--horizon N] [--table]
//                  [rule and noise-model options: see parse_simulate]
#include <cstdio>
#include <string>
#include <vector>

#include "tests/support/simulate.h"
#include "tools/kgate/cli/options.h"

namespace kb::kgate_cli {

namespace {

struct SimulatePlan {
  SimulationOptions opt;
  int nights = 1000, trials = 1000, horizon = 8;
  std::vector<double> drops = {0.05, 0.10};
  bool table = false;
};

SimulatePlan parse_simulate(const Args& args) {
  const Args a = expand_equals(args, {});
  SimulatePlan p;
  SimulationOptions& opt = p.opt;
  for (size_t i = 1; i < a.size(); ++i) {
    const std::string& f = a[i];
    if (f == "--noise")
      opt.noise = parse_double(f, value_of(a, i), 0, 0.5);
    else if (f == "--nights")
      p.nights = static_cast<int>(parse_int(f, value_of(a, i), 1, 100000000));
    else if (f == "--trials")
      p.trials = static_cast<int>(parse_int(f, value_of(a, i), 1, 10000000));
    else if (f == "--horizon")
      p.horizon = static_cast<int>(parse_int(f, value_of(a, i), 1, 100));
    else if (f == "--seed")
      opt.seed = static_cast<uint64_t>(parse_int(f, value_of(a, i), 0, 1L << 62));
    else if (f == "--window")
      opt.rule.window = static_cast<int>(parse_int(f, value_of(a, i), 3, 500));
    else if (f == "--min-gap")
      opt.rule.min_gap = parse_double(f, value_of(a, i), 0, 1, true);
    else if (f == "--confirmed-gap")
      opt.rule.confirmed_gap = parse_double(f, value_of(a, i), 0, 1, true);
    else if (f == "--min-history")
      opt.rule.min_history = static_cast<int>(parse_int(f, value_of(a, i), 3, 500));
    else if (f == "--z")
      opt.rule.z = parse_double(f, value_of(a, i), 0.5, 20);
    else if (f == "--max-recent")
      opt.rule.max_recent = static_cast<int>(parse_int(f, value_of(a, i), 1, 50));
    else if (f == "--drop")
      p.drops = {parse_double(f, value_of(a, i), 0, 1, true)};
    else if (f == "--bad-nights")
      opt.bad_nights = parse_double(f, value_of(a, i), 0, 1, true);
    else if (f == "--confirm")
      opt.confirm = static_cast<int>(parse_int(f, value_of(a, i), 0, 20));
    else if (f == "--suspect-z")
      opt.rule.suspect_z = parse_double(f, value_of(a, i), 0, 20);
    else if (f == "--confirm-z")
      opt.rule.confirm_z = parse_double(f, value_of(a, i), 0.5, 20);
    else if (f == "--rule-shared")
      opt.rule.shared_noise = parse_double(f, value_of(a, i), 0, 1);
    else if (f == "--shared")
      opt.shared = parse_double(f, value_of(a, i), 0, 1);
    else if (f == "--tails")
      opt.tails_dof = static_cast<double>(parse_int(f, value_of(a, i), 0, 100));
    else if (f == "--mode-rate")
      opt.mode_rate = parse_double(f, value_of(a, i), 0, 1);
    else if (f == "--mode-size")
      opt.mode_size = parse_double(f, value_of(a, i), 0, 1, true);
    else if (f == "--mode-stick")
      opt.mode_stick = parse_double(f, value_of(a, i), 0, 1);
    else if (f == "--table")
      p.table = true;
    else
      throw UsageError("simulate: unknown option '" + f + "'");
  }
  opt.rule.max_noise = 1;  // the simulation asks about the rule, not about the noise cap
  if (opt.rule.min_history > opt.rule.window) opt.rule.min_history = opt.rule.window;
  return p;
}

void print_simulate_settings(const SimulationOptions& opt) {
  std::printf(
      "kgate_simulate: noise %.2f%% (relative s.d. of a night), bad nights %.1f%%, "
      "window %d, min gap %.1f%%, z %.2f, max recent %d, seed %llu\n",
      opt.noise * 100, opt.bad_nights * 100, opt.rule.window, opt.rule.min_gap * 100, opt.rule.z,
      opt.rule.max_recent, static_cast<unsigned long long>(opt.seed));
  if (opt.confirm > 0 || opt.shared < 1 || opt.tails_dof > 0 || opt.mode_rate > 0)
    std::printf(
        "  attempts: confirm %d, suspect z %.2f, confirm z %.2f, rule's shared share %.2f; "
        "noise model: shared %.2f, tails %s, slow mode %.1f%% of attempts %.1f%% slow (sticks "
        "%.0f%%)\n",
        opt.confirm, opt.rule.suspect_z, opt.rule.confirm_z, opt.rule.shared_noise, opt.shared,
        opt.tails_dof > 0 ? ("t" + std::to_string(static_cast<int>(opt.tails_dof))).c_str()
                          : "normal",
        opt.mode_rate * 100, opt.mode_size * 100, opt.mode_stick * 100);
}

// The table of docs/decisions/0017: one row per noise level.
void print_noise_table(const SimulatePlan& p) {
  std::printf(
      "\n| noise | false failures per 1000 key-nights | suspects per 100 key-nights | "
      "3%% caught, 1st night | 5%% | 10%% |\n| --- | --- | --- | --- | --- | --- |\n");
  for (double noise : {0.003, 0.005, 0.01, 0.015, 0.02, 0.03, 0.05}) {
    SimulationOptions o = p.opt;
    o.noise = noise;
    FalseFailureResult ff = simulate_false_failures(o, p.nights);
    std::printf("| %.1f%% | %.3f | %.2f |", noise * 100, 1000.0 * ff.failures / ff.nights,
                100.0 * ff.suspects / ff.nights);
    for (double drop : {0.03, 0.05, 0.10})
      std::printf(" %.1f%% |", 100 * simulate_detection(o, drop, p.trials, 1)[0]);
    std::printf("\n");
  }
}

// False failures at the plan's noise, then the share of drops caught by night.
void print_simulation(const SimulatePlan& p) {
  const SimulationOptions& opt = p.opt;
  FalseFailureResult ff = simulate_false_failures(opt, p.nights);
  std::printf("false failures: %d in %d nights (%.3f per 1000); inconclusive %d (%.1f%%)\n",
              ff.failures, ff.nights, 1000.0 * ff.failures / ff.nights, ff.inconclusive,
              100.0 * ff.inconclusive / ff.nights);
  if (opt.confirm > 0)
    std::printf(
        "first stage: %d suspect nights (%.2f%%), %d would have failed without "
        "confirmation (%.3f per 1000)\n",
        ff.suspects, 100.0 * ff.suspects / ff.nights, ff.first_stage_failures,
        1000.0 * ff.first_stage_failures / ff.nights);
  std::printf("caught by night (of %d trials):\n  drop ", p.trials);
  for (int j = 1; j <= p.horizon; ++j) std::printf(" %7d", j);
  std::printf("\n");
  for (double d : p.drops) {
    std::vector<double> c = simulate_detection(opt, d, p.trials, p.horizon);
    std::printf("  %4.1f%%", d * 100);
    for (double x : c) std::printf(" %7.4f", x);
    std::printf("\n");
  }
}

int simulate(const Args& args) {
  const SimulatePlan p = parse_simulate(args);
  print_simulate_settings(p.opt);
  if (p.table)
    print_noise_table(p);
  else
    print_simulation(p);
  return 0;
}

}  // namespace
}  // namespace kb::kgate_cli

int main(int argc, char** argv) {
  const kb::kgate_cli::Args a(argv, argv + argc);
  try {
    return kb::kgate_cli::simulate(a);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kgate_simulate: %s\n", e.what());
    return 2;
  }
}
