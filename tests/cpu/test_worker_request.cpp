// The worker's command line (suite/worker_request.h): what the parent
// writes is what the worker reads, and anything else is refused.
#include <gtest/gtest.h>

#include <stdexcept>

#include "suite/worker_request.h"

namespace {

kb::WorkerRequest round_trip(const kb::WorkerRequest& r) {
  std::vector<std::string> args = kb::worker_argv("kbench", r);
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  return kb::parse_worker_request(static_cast<int>(argv.size()), argv.data());
}

TEST(WorkerRequest, ThePointsOfARunTravelWhole) {
  kb::WorkerRequest r;
  r.device = 3;
  r.targets_dir = "/t";
  r.info.device_label = "cuda:3";
  r.info.run_id = "run-1";
  r.info.timestamp = "2000-01-01T00:00:00Z";
  r.engine.max_noise = 0.0025;
  r.engine.max_time_s = 0.5;
  r.engine.seed = 12345678901ull;
  r.engine.max_buffer_sets = 7;
  r.engine.sampled_bytes_goal = (size_t(4096) << 20) / 3;  // a pass's share: whole MiB travel
  r.engine.check = false;
  r.engine.detail = true;
  r.engine.inject_slowdown = 0.05;
  r.experiment = "gemv";
  r.points = {2, 5, 11};
  r.probed = "3000,2900,2950,3.3,1.2,1e+09,0.6";
  r.out = "/tmp/x";
  const kb::WorkerRequest b = round_trip(r);
  EXPECT_EQ(b.device, 3);
  EXPECT_EQ(b.targets_dir, "/t");
  EXPECT_EQ(b.info.device_label, "cuda:3");
  EXPECT_EQ(b.info.run_id, "run-1");
  EXPECT_EQ(b.info.timestamp, r.info.timestamp);
  EXPECT_DOUBLE_EQ(b.engine.max_noise, 0.0025);
  EXPECT_DOUBLE_EQ(b.engine.max_time_s, 0.5);
  EXPECT_EQ(b.engine.seed, 12345678901ull);
  EXPECT_EQ(b.engine.max_buffer_sets, 7);
  EXPECT_EQ(b.engine.sampled_bytes_goal, size_t(1365) << 20);
  EXPECT_FALSE(b.engine.check);
  EXPECT_TRUE(b.engine.detail);
  EXPECT_FALSE(b.engine.quick);
  EXPECT_DOUBLE_EQ(b.engine.inject_slowdown, 0.05);
  EXPECT_EQ(b.experiment, "gemv");
  EXPECT_EQ(b.points, (std::vector<size_t>{2, 5, 11}));
  EXPECT_EQ(b.probed, r.probed);
  EXPECT_EQ(b.out, "/tmp/x");
  EXPECT_FALSE(b.probe);
  EXPECT_TRUE(b.devices.empty());
}

TEST(WorkerRequest, ProbeAndDevicesTravel) {
  kb::WorkerRequest r;
  r.probe = true;
  r.engine.quick = true;
  EXPECT_TRUE(round_trip(r).probe);
  EXPECT_TRUE(round_trip(r).engine.quick);
  r = {};
  r.experiment = "nccl_all_reduce";
  r.devices = {0, 1, 2, 3};
  EXPECT_EQ(round_trip(r).devices, (std::vector<int>{0, 1, 2, 3}));
}

TEST(WorkerRequest, AnythingElseIsRefused) {
  for (std::vector<std::string> args : {std::vector<std::string>{"kbench", "__worker", "--x", "y"},
                                        {"kbench", "__worker", "{\"device\": 1}"},
                                        {"kbench", "__worker", "not json"}}) {
    std::vector<char*> argv;
    for (auto& s : args) argv.push_back(s.data());
    EXPECT_THROW(kb::parse_worker_request(static_cast<int>(argv.size()), argv.data()),
                 std::invalid_argument);
  }
}

}  // namespace
