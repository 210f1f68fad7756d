// kbench's last resort (suite/exit_status.h): an exception that ends a
// command is exit 2 (input) or 3 (the machine), never 1 (a row failed).
#include <gtest/gtest.h>

#include <new>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/targets.h"
#include "core/tuning.h"
#include "suite/cli.h"
#include "suite/exit_status.h"

namespace {

TEST(KbenchExitStatus, InputIsTwoTheMachineIsThreeNeverOne) {
  auto code = [](std::exception_ptr e) { return kb::describe_failure(e, "run").exit_code; };
  // What a bad target file gave before: nlohmann's exception, no file named.
  try {
    (void)nlohmann::json::parse("1e400");
  } catch (...) {
    EXPECT_EQ(code(std::current_exception()), kb::kExitUsage);
  }
  EXPECT_EQ(code(std::make_exception_ptr(kb::TargetError("t.json:3: x: y"))), kb::kExitUsage);
  EXPECT_EQ(code(std::make_exception_ptr(kb::TuningError("u.json:1: x"))), kb::kExitUsage);
  EXPECT_EQ(code(std::make_exception_ptr(std::invalid_argument("bad --measure"))), kb::kExitUsage);
  EXPECT_EQ(code(std::make_exception_ptr(std::bad_alloc())), kb::kExitNoDevice);
  EXPECT_EQ(code(std::make_exception_ptr(std::runtime_error("fork failed"))), kb::kExitNoDevice);
  EXPECT_EQ(code(std::make_exception_ptr(42)), kb::kExitNoDevice);
  const auto f =
      kb::describe_failure(std::make_exception_ptr(std::runtime_error("fork failed")), "run");
  EXPECT_EQ(f.message, "kbench run failed: fork failed (the machine, not a row)");
}

TEST(KbenchExitStatus, ABrokenTuningFileTellsTuneWhatToDo) {
  const auto e = std::make_exception_ptr(kb::TuningError("u.json:1: x: y"));
  EXPECT_EQ(kb::describe_failure(e, "tune").message,
            "kbench: bad tuning file: u.json:1: x: y\n"
            "Fix or remove it; nothing was measured or written.");
  EXPECT_EQ(kb::describe_failure(e, "run").message, "kbench: bad tuning file: u.json:1: x: y");
}

}  // namespace
