#include "compiler/inline_call_reader.h"

#include <cstdint>

#include <nlohmann/json.hpp>

#include "build_info.h"
#include "common/subprocess.h"
#include "inline_calls_py.h"

namespace kagent {

InlineCallScan read_inline_calls(const std::filesystem::path& answer, std::chrono::milliseconds timeout) {
  InlineCallScan scan;
  SpawnOptions so;
  so.argv = {build::kPythonExecutable, "-I", "-S", "-c", std::string(kInlineCallsPy), answer.string()};
  so.address_space_limit = std::uint64_t{2} << 30;  // parsing a file; the script sets the same itself
  RunResult r;
  try {
    r = run_command(so, timeout);
  } catch (const std::exception& e) {
    scan.error = std::string("cannot run Python to read the answer: ") + e.what();
    return scan;
  }
  if (!r.succeeded()) {
    scan.error = "reading the answer's load_inline calls failed (" +
                 (r.timed_out ? std::string("timed out") : r.exit.describe()) + ")";
    return scan;
  }
  const auto j = nlohmann::json::parse(r.output, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    scan.error = "the load_inline reader printed no JSON";
    return scan;
  }
  if (j.contains("error")) {
    scan.error = j["error"].get<std::string>();
    return scan;
  }
  for (const auto& c : j.value("calls", nlohmann::json::array())) {
    InlineCallRecord rec;
    rec.kind = c.value("kind", "");
    rec.line = c.value("line", 0);
    if (c.contains("name") && c["name"].is_string()) rec.name = c["name"].get<std::string>();
    rec.ok = c.value("ok", false);
    rec.reason = c.value("reason", "");
    rec.unknown_option = c.value("unknown_option", "");
    if (rec.ok) rec.call = c.get<InlineCall>();
    scan.calls.push_back(std::move(rec));
  }
  return scan;
}

}  // namespace kagent
