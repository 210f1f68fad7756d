// kbench_main: the command line parsed (suite/cli/args.cpp), handed to its
// command (one file each under suite/cli/), and every error turned into its
// message and exit code.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "git_sha.h"
#include "help_text.h"
#include "kernels/common/cuda_check.h"
#include "suite/cli.h"
#include "suite/cli/args.h"
#include "suite/cli/commands.h"
#include "suite/exit_status.h"
#include "suite/worker.h"

namespace kb {

namespace {

int dispatch(const cli::Args& a) {
  if (a.command == "help" || a.command == "--help" || a.command == "-h") {
    std::printf("%s", kKbenchHelp);
    return kExitOk;
  }
  if (a.command == "--version" || a.command == "version") {
    std::printf("kbench %s (%s)\n", KBENCH_VERSION, KBENCH_GIT_SHA);
    return kExitOk;
  }
  if (a.command == "list") return cli::cmd_list(a);
  if (a.command == "run") return cli::cmd_run(a);
  if (a.command == "probe") return cli::cmd_probe(a);
  if (a.command == "tune") return cli::cmd_tune(a);
  throw cli::UsageError("unknown command '" + a.command + "'");
}

}  // namespace

int kbench_main(int argc, char** argv) {
  // NVLink multicast (NVLS) stays off in every process the suite starts:
  // set here, before any NCCL call, and inherited by every worker. On the
  // shared hosts, a program that uses it can put GPUs out of service.
  ::setenv("NCCL_NVLS_ENABLE", "0", 1);
  if (argc > 1 && std::string(argv[1]) == "__worker") return worker_main(argc, argv);
  try {
    return dispatch(cli::parse(argc, argv));
  } catch (const cli::UsageError& e) {
    std::string command = argc > 1 ? argv[1] : "";
    std::fprintf(stderr, "kbench: %s\nusage: %s\nRun 'kbench --help' for every option.\n", e.what(),
                 cli::usage_line(command).c_str());
    return kExitUsage;
  } catch (const CudaError& e) {
    // Outside a row's worker: setting up a device, the CUDA runtime itself.
    std::fprintf(stderr, "kbench: CUDA error: %s (the GPU or its driver, not a row)\n", e.what());
    return kExitNoDevice;
  } catch (...) {
    const std::string command = argc > 1 ? argv[1] : "";
    const CommandFailure f = describe_failure(std::current_exception(), command);
    std::fprintf(stderr, "%s\n", f.message.c_str());
    return f.exit_code;
  }
}

}  // namespace kb
