// The preprocessor's prefix (compiler/prefix_preprocess.h) on the real nvcc, gcc and torch
// headers (no GPU needed): for real model answers of ../shared/realworld, both of nvcc's
// preprocessor runs of the CUDA part give the same tokens on the same lines of the same files,
// with the same system-header marks, as the whole run; and where the scheme cannot vouch for
// the result (a warning, a prefix file included again by its full path, a file without the
// implicit headers) it declines, so the caller runs the whole command.
// KAGENT_PREFIX_PREPROCESS_ALL=1 checks every answer (about 5 minutes on 2 cores).
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include <doctest/doctest.h>

#include "common/files.h"
#include "common/subprocess.h"
#include "build_info.h"
#include "compiler/build_steps.h"
#include "compiler/host_pch.h"
#include "compiler/inline_call_reader.h"
#include "compiler/inline_extension_compiler.h"
#include "compiler/nvcc_split.h"
#include "compiler/prefix_preprocess.h"
#include "compile_cache_for_tests.h"
#include "temp_dir.h"

using namespace kagent;
namespace fs = std::filesystem;

namespace {

const kagent::testing::TempDir kDir("kagent-prefix-preprocess-test");

fs::path realworld_answers() {
  const char* env = std::getenv("KAGENT_REALWORLD_DIR");
  const fs::path root = env && *env ? fs::path(env) : fs::path(KAGENT_SOURCE_DIR) / ".." / "shared" / "realworld";
  return root / "kb_leaderboard" / "answers";
}

CompileLimits limits() {
  CompileLimits l;
  l.timeout = std::chrono::seconds(600);
  l.deadline = std::chrono::steady_clock::now() + l.timeout;
  return l;
}

// (file, line, system-header flags, text) of every line that holds tokens: what the front ends
// read, whatever blank lines and line markers say it.
std::vector<std::tuple<std::string, long, std::string, std::string>> tokens_by_line(const std::string& text) {
  std::vector<std::tuple<std::string, long, std::string, std::string>> out;
  std::string file, flags;
  long line = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string l = text.substr(pos, end - pos);
    pos = end + 1;
    if (l.rfind("# ", 0) == 0 && l.size() > 2 && std::isdigit(static_cast<unsigned char>(l[2]))) {
      const size_t q1 = l.find('"'), q2 = l.rfind('"');
      line = std::stol(l.substr(2));
      file = l.substr(q1 + 1, q2 - q1 - 1);
      flags.clear();
      for (char c : l.substr(q2 + 1))
        if (c == '3' || c == '4') flags += c;
      continue;
    }
    if (l.find_first_not_of(" \t") != std::string::npos) out.emplace_back(file, line, flags, l);
    ++line;
    if (end == text.size()) break;
  }
  return out;
}

struct Case {
  CompileCache cache{kDir.path() / "cache"};
  NvccSetup setup;
  Case() { setup = setup_for_tier(base_setup(kagent::testing::compile_options(kDir)), ShimTier::Slim, cache, true); }

  // nvcc's plan for the CUDA part of `call` in `dir` (cuda.cu written there).
  NvccSteps plan(const InlineCall& call, const fs::path& dir, const std::string& text) {
    fs::create_directories(dir);
    write_text_file(dir / "cuda.cu", text);
    SpawnOptions so;
    so.argv = inline_cuda_argv(setup, call, "cuda.cu", "cuda.o");
    so.argv.insert(so.argv.end(), {"-dryrun", "--keep", "--keep-dir", (dir / "nvcc").string()});
    so.cwd = dir.string();
    const RunResult r = limits().run(so);
    REQUIRE(r.succeeded());
    auto steps = parse_nvcc_dryrun(r.output);
    REQUIRE(steps);
    fs::create_directories(dir / "nvcc");
    return *steps;
  }

  PrefixPreprocessRequest request(const std::string& command, const NvccSteps& s, const std::string& text) {
    PrefixPreprocessRequest r;
    r.cache = &cache;
    r.command = command;
    r.environment = s.environment;
    r.source_text = text;
    r.toolchain = nvcc_identity(setup.nvcc) + "|" + build::kTorchVersion;
    r.limits = limits();
    r.prefix_limits = limits();
    return r;
  }

  // The whole run's output and the prefix's, for one preprocessor line; the latter nullopt
  // when the scheme declined.
  std::pair<std::string, std::optional<std::string>> both(const std::string& command, const NvccSteps& s,
                                                          const fs::path& dir, const std::string& text) {
    const auto words = dryrun_words(command);
    const auto o = std::find(words.begin(), words.end(), "-o");
    REQUIRE(o != words.end());
    const fs::path out = *std::next(o);
    SpawnOptions so;
    so.argv = {"/bin/sh", "-c", command};
    so.cwd = dir.string();
    so.env_set = s.environment;
    const RunResult whole = limits().run(so);
    REQUIRE(whole.succeeded());
    const std::string expected = read_file(out);
    fs::remove(out);
    const auto r = preprocess_after_prefix(request(command, s, text));
    if (!r) return {expected, std::nullopt};
    CHECK(r->output.empty());
    return {expected, read_file(out)};
  }
};

InlineCall plain_call(const std::string& name, const std::string& cuda) {
  InlineCall c;
  c.name = name;
  c.functions = {"f"};
  c.cuda_sources = {cuda};
  return c;
}

}  // namespace

TEST_CASE("both preprocessor runs of real answers give the whole run's tokens, lines and files") {
  const fs::path answers = realworld_answers();
  if (!fs::exists(answers)) {
    MESSAGE("skipped: no real answers at " << answers.string());
    return;
  }
  // TORCH_CHECK (a system header's macro), <cmath> (include_next into a guarded prefix file),
  // extra_cuda_cflags (-O3: a prefix of its own), two extensions in one answer, ATen/ATen.h.
  std::vector<std::string> names = {"l1_p18_gpto1", "l1_p22_gpt4o", "l2_p14_gpt4o", "l2_p10_deepseekcoder",
                                    "l3_p5_deepseekcoder", "l1_p97_llama31405b"};
  const char* all = std::getenv("KAGENT_PREFIX_PREPROCESS_ALL");
  if (all && std::string(all) == "1") {
    names.clear();
    for (const auto& e : fs::directory_iterator(answers))
      if (e.path().extension() == ".py") names.push_back(e.path().stem().string());
    std::sort(names.begin(), names.end());
  }
  Case c;
  int runs = 0, served = 0;
  for (const auto& name : names) {
    const auto scan = read_inline_calls(answers / (name + ".py"));
    for (const auto& rec : scan.calls) {
      if (!rec.ok) continue;
      const std::string text = inline_cuda_text(rec.call);
      if (text.rfind(kCudaImplicitHeaders, 0) != 0) continue;
      const fs::path dir = kDir.path() / "answers" / (name + "_" + rec.call.name);
      const NvccSteps s = c.plan(rec.call, dir, text);
      for (const auto& command : {s.host.front(), s.device.front()}) {
        INFO(name << " " << rec.call.name << ": " << command.substr(0, 60));
        const auto [whole, prefix] = c.both(command, s, dir, text);
        ++runs;
        REQUIRE(prefix);
        ++served;
        const bool same = tokens_by_line(*prefix) == tokens_by_line(whole);
        CHECK(same);
        if (std::getenv("KAGENT_PREFIX_PREPROCESS_KEEP")) {  // both outputs, to look at
          write_text_file(fs::path(std::getenv("KAGENT_PREFIX_PREPROCESS_KEEP")) / (name + ".whole.ii"), whole);
          write_text_file(fs::path(std::getenv("KAGENT_PREFIX_PREPROCESS_KEEP")) / (name + ".prefix.ii"), *prefix);
        }
      }
    }
  }
  MESSAGE(served << " of " << runs << " preprocessor runs served from the prefix");
  CHECK(runs >= 2 * static_cast<int>(names.size()));
}

TEST_CASE("the prefix declines what it cannot vouch for, and the caller runs the whole command") {
  Case c;
  const std::string body = "#include <torch/extension.h>\n__global__ void k(float* x) { x[0] = 1; }\n";
  SUBCASE("a file without the implicit headers") {
    const auto call = plain_call("nohead", body);
    const fs::path dir = kDir.path() / "nohead";
    const NvccSteps s = c.plan(call, dir, body);
    CHECK_FALSE(preprocess_after_prefix(c.request(s.host.front(), s, body)));
  }
  SUBCASE("a warning is the whole run's to print") {
    const auto call = plain_call("warns", "#warning kagent test\n" + body);
    const std::string text = inline_cuda_text(call);
    const fs::path dir = kDir.path() / "warns";
    const NvccSteps s = c.plan(call, dir, text);
    CHECK_FALSE(preprocess_after_prefix(c.request(s.host.front(), s, text)));
  }
  SUBCASE("a #pragma once file of the prefix included again by its full path") {
    // GCC skips it (it was seen); the rest alone would expand it a second time.
    const std::string tensor = (c.setup.torch_prefix / "include" / "ATen" / "core" / "Tensor.h").string();
    const auto call = plain_call("again", "#include \"" + tensor + "\"\n" + body);
    const std::string text = inline_cuda_text(call);
    const fs::path dir = kDir.path() / "again";
    const NvccSteps s = c.plan(call, dir, text);
    const auto [whole, prefix] = c.both(s.host.front(), s, dir, text);
    CHECK_FALSE(prefix);
  }
  SUBCASE("a prefix's include guard undone: the header is entered again, as GCC does") {
    const auto call = plain_call("guard", "#undef __CUDA_RUNTIME_H__\n#include <cuda_runtime.h>\n" + body);
    const std::string text = inline_cuda_text(call);
    const fs::path dir = kDir.path() / "guard";
    const NvccSteps s = c.plan(call, dir, text);
    const auto [whole, prefix] = c.both(s.host.front(), s, dir, text);
    if (prefix) CHECK(tokens_by_line(*prefix) == tokens_by_line(whole));
  }
}
