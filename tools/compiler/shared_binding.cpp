#include "compiler/shared_binding.h"

#include <sstream>

#include <fmt/format.h>

#include "common/files.h"
#include "common/sha256.h"
#include "compiler/nvcc_command.h"

namespace fs = std::filesystem;

namespace kagent {

namespace {

constexpr std::string_view kVersion = "kagent-shared-binding-2";
constexpr std::string_view kSuffixesFile = "suffixes.txt";

std::optional<SharedBinding> from_entry(const CompileInfo& info, const std::string& key, bool built_now) {
  if (!info.ok) return std::nullopt;
  SharedBinding b{info.artifact, {}, key, built_now};
  std::istringstream lines(read_file_or_empty(fs::path(info.artifact).parent_path() / kSuffixesFile));
  for (std::string line; std::getline(lines, line);) b.suffixes.push_back(line);
  return b;
}

std::string binding_key(const SharedBindingRequest& request) {
  Sha256 h;
  h.update(kVersion)
      .update(request.source)
      .update(shell_join(request.compile("<src>", "<obj>")))
      .update(shell_join(request.link("<obj>", "<so>")))
      .update(request.toolchain);
  return h.hex_digest();
}

}  // namespace

std::string mangled_function(const std::string& name, const std::string& suffix) {
  return fmt::format("_Z{}{}{}", name.size(), name, suffix);
}

std::optional<std::vector<std::pair<std::string, char>>> object_symbols(const fs::path& object,
                                                                        const CompileLimits& limits) {
  SpawnOptions so;
  so.argv = {"nm", "-P", object.string()};
  const RunResult r = limits.run(so);
  if (!r.succeeded()) return std::nullopt;
  std::vector<std::pair<std::string, char>> out;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) {
    const size_t space = line.find(' ');
    if (space == std::string::npos || space + 1 >= line.size()) continue;
    out.emplace_back(line.substr(0, space), line[space + 1]);
  }
  return out;
}

std::string first_undefined(const std::vector<std::pair<std::string, char>>& symbols,
                            const std::vector<std::string>& names, const std::vector<std::string>& suffixes) {
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string want = i < suffixes.size() ? mangled_function(names[i], suffixes[i]) : std::string();
    bool defined = false;
    for (const auto& [symbol, type] : symbols)
      if (symbol == want && (type == 'T' || type == 'W')) defined = true;  // global, in this object
    if (!defined) return names[i];
  }
  return {};
}

std::optional<std::optional<SharedBinding>> lookup_shared_binding(const CompileCache& cache,
                                                                  const SharedBindingRequest& request) {
  const std::string key = binding_key(request);
  if (auto hit = cache.lookup(key)) return from_entry(*hit, key, false);
  return std::nullopt;
}

std::optional<SharedBinding> ensure_shared_binding(const CompileCache& cache, const SharedBindingRequest& request,
                                                   const CompileLimits& limits, std::vector<CompileStep>* steps) {
  const std::string key = binding_key(request);
  if (auto hit = cache.lookup(key)) return from_entry(*hit, key, false);
  auto lock = cache.lock(key);
  if (auto hit = cache.lookup(key)) return from_entry(*hit, key, false);

  TempDir staging = cache.make_staging(key);
  const fs::path src = staging.path() / "main.cpp", obj = staging.path() / "main.o",
                 so = staging.path() / "binding.so";
  write_text_file(src, request.source);
  CompileInfo info;
  auto run = [&](std::vector<std::string> argv, const std::string& step) {
    SpawnOptions spawn;
    spawn.argv = std::move(argv);
    spawn.env_set = {"TMPDIR=" + staging.path().string()};
    RunResult r = limits.run(spawn);
    if (steps) steps->push_back(step_of(step, r));
    info.log += "$ " + shell_join(spawn.argv) + "\n" + r.output;
    return r;
  };
  auto argv = request.compile(src, obj);
  if (request.speedups) {
    const auto more = request.speedups();
    argv.insert(argv.end(), more.begin(), more.end());
  }
  const RunResult compiled = run(std::move(argv), "shared binding main.cpp");
  if (!limits.hit(compiled).empty()) return std::nullopt;
  info.ok = compiled.succeeded();
  std::vector<std::string> suffixes;
  if (info.ok) {
    // Each slot's symbol, as the weak probes made the object name it.
    const auto symbols = object_symbols(obj, limits);
    info.ok = symbols.has_value();
    for (size_t i = 0; info.ok && i < request.slots; ++i) {
      const std::string prefix = mangled_function(fmt::format("kagent_f{}", i), "");
      std::string suffix;
      for (const auto& [symbol, type] : *symbols)
        if (symbol.rfind(prefix, 0) == 0 && (type == 'w' || type == 'U')) suffix = symbol.substr(prefix.size());
      info.ok = !suffix.empty();
      if (!info.ok) info.errors = fmt::format("no mangled symbol for slot {} (not a plain global function)", i);
      suffixes.push_back(suffix);
    }
  } else {
    info.errors = "the shared binding did not compile";
  }
  if (info.ok) {
    const RunResult linked = run(request.link(obj, so), "shared binding link");
    if (!limits.hit(linked).empty()) return std::nullopt;
    info.ok = linked.succeeded();
    if (!info.ok) info.errors = "the shared binding did not link";
  }
  if (info.ok) {
    info.artifact = so.string();
    std::string lines;
    for (const auto& s : suffixes) lines += s + "\n";
    write_text_file(staging.path() / kSuffixesFile, lines);
  }
  fs::remove(obj);
  return from_entry(cache.publish(key, staging, std::move(info)), key, true);
}

}  // namespace kagent
