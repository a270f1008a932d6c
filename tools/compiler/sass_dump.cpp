#include "compiler/sass_dump.h"

#include <cstdint>
#include <cstdlib>
#include <exception>

#include <fmt/format.h>

#include "build_info.h"
#include "common/guarded_spawn.h"
#include "common/gzip_file.h"
#include "common/subprocess.h"
#include "compiler/build_steps.h"
#include "compiler/sass_summary.h"

namespace kagent {

namespace {

constexpr size_t kReasonBytes = 300;
constexpr std::uint64_t kMemoryLimitBytes = std::uint64_t{4} << 30;  // address space of cuobjdump

// The tool's complaint: its first non-empty line that says "fatal" or "info", else the first one.
std::string first_words(const std::string& output) {
  std::string first, best;
  size_t start = 0;
  while (start < output.size()) {
    size_t end = output.find('\n', start);
    if (end == std::string::npos) end = output.size();
    std::string line = output.substr(start, end - start);
    start = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (first.empty()) first = line;
    if (best.empty() && (line.find("fatal") != std::string::npos || line.find("does not contain") != std::string::npos))
      best = line;
  }
  std::string s = best.empty() ? first : best;
  if (s.size() > kReasonBytes) s = s.substr(0, kReasonBytes) + "...";
  return s;
}

SassInfo missing(std::string why, std::string_view arch) {
  SassInfo s;
  s.arch = arch;
  s.missing_reason = std::move(why);
  return s;
}

}  // namespace

std::string resolve_cuobjdump(std::string_view option) {
  if (!option.empty()) return std::string(option);
  if (const char* env = std::getenv("KAGENT_CUOBJDUMP"); env && *env) return env;
  return build::kCuobjdump;
}

std::string resolve_nvdisasm() {
  if (const char* env = std::getenv("KAGENT_NVDISASM"); env && *env) return env;
  return resolve_in_path(build::kNvdisasm);
}

SassInfo disassemble(const std::filesystem::path& object, const std::filesystem::path& gzip_file,
                     const std::string& cuobjdump, std::string_view arch, std::chrono::milliseconds timeout,
                     const std::vector<int>& cpus) {
  SpawnOptions so;
  so.argv = {cuobjdump, "-sass", "-res-usage", object.string()};
  so.address_space_limit = kMemoryLimitBytes;
  so.nice = kCompilerNice;  // beside the compiles, off the workers' cores
  so.idle_priority = true;
  so.cpus = cpus;
  const std::string nvdisasm = resolve_nvdisasm();
  const bool nvdisasm_found = std::filesystem::path(nvdisasm).has_parent_path();
  if (nvdisasm_found) {
    const char* path = std::getenv("PATH");
    so.env_set.push_back("PATH=" + std::filesystem::path(nvdisasm).parent_path().string() +
                         (path && *path ? std::string(":") + path : std::string()));
  }
  RunResult r;
  try {
    r = run_command(so, timeout);
  } catch (const std::exception& e) {
    return missing(fmt::format("cannot run {}: {}", cuobjdump, e.what()), arch);
  }
  if (r.timed_out) return missing(fmt::format("{} timed out after {} ms", cuobjdump, timeout.count()), arch);
  if (!r.exit.exited || r.exit.code != 0) {
    std::string why = fmt::format("{} failed ({}): {}", cuobjdump, r.exit.describe(), first_words(r.output));
    if (r.output.find("'nvdisasm'") != std::string::npos)
      why += nvdisasm_found ? fmt::format(" (nvdisasm: {})", nvdisasm)
                            : " (no nvdisasm found: scripts/setup.sh installs it, pip install nvidia-cuda-nvdisasm; or set KAGENT_NVDISASM)";
    return missing(std::move(why), arch);
  }
  SassInfo s;
  s.arch = arch;
  s.kernels = summarize_sass(r.output);
  if (s.kernels.empty()) return missing(fmt::format("no kernel in the compiled object ({} listed no function)", cuobjdump), arch);
  try {
    write_gzip_file(gzip_file, r.output);
  } catch (const std::exception& e) {
    return missing(e.what(), arch);
  }
  s.available = true;
  s.file = gzip_file.string();
  return s;
}

}  // namespace kagent
