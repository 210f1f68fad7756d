#include "suite/exit_status.h"

#include <filesystem>
#include <new>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/csv_writer.h"
#include "core/datasheets.h"
#include "core/suspects.h"
#include "core/targets.h"
#include "core/tuning.h"
#include "suite/cli.h"

namespace kb {

CommandFailure describe_failure(const std::exception_ptr& e, const std::string& command) {
  const std::string who = "kbench" + (command.empty() ? std::string() : " " + command);
  try {
    std::rethrow_exception(e);
  } catch (const TargetError& x) {
    return {kExitUsage, "kbench: bad target file: " + std::string(x.what())};
  } catch (const TuningError& x) {
    const char* hint =
        command == "tune" ? "\nFix or remove it; nothing was measured or written." : "";
    return {kExitUsage, "kbench: bad tuning file: " + std::string(x.what()) + hint};
  } catch (const DatasheetError& x) {
    return {kExitUsage, "kbench: bad datasheet table: " + std::string(x.what())};
  } catch (const SuspectsError& x) {
    return {kExitUsage, "kbench: " + std::string(x.what()) + "\nNothing was measured or appended."};
  } catch (const CsvError& x) {
    return {kExitUsage, "kbench: " + std::string(x.what())};
  } catch (const nlohmann::json::exception& x) {
    return {kExitUsage, who + ": a JSON input could not be read: " + x.what()};
  } catch (const std::filesystem::filesystem_error& x) {
    return {kExitUsage, who + ": " + x.what()};
  } catch (const std::bad_alloc&) {
    return {kExitNoDevice, who + ": out of memory on the host; the machine, not a row"};
  } catch (const std::logic_error& x) {
    // Bad values (invalid_argument, out_of_range: a number that does not
    // parse, a shard that does not exist, a point the build lacks).
    return {kExitUsage, who + ": " + x.what()};
  } catch (const std::exception& x) {
    return {kExitNoDevice, who + " failed: " + x.what() + " (the machine, not a row)"};
  } catch (...) {
    return {kExitNoDevice, who + " failed: an exception that is not a std::exception"};
  }
}

}  // namespace kb
