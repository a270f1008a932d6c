// compile_answers: KernelBench-format answers through kagent's compile path exactly as an
// evaluation runs it (evaluation/answer_extensions.h: the load_inline calls read statically,
// each built with kagent's nvcc pipeline), without a worker or a GPU. One JSON line per answer:
// what was built, the errors, the fallbacks to torch's load_inline with their reasons, and the
// time (wall, and each compiler step's wall and CPU seconds). check_build_equivalence.py
// compares two such files (before and after a change to the pipeline); bench/realworld reads
// the times.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "evaluation/answer_extensions.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json compile_one(const fs::path& answer, const kagent::CompileOptions& options) {
  kagent::CandidateRef cand{"kernelbench", {}, {}, answer.string(), {}};
  const auto t0 = std::chrono::steady_clock::now();
  const kagent::AnswerExtensions ext = kagent::build_answer_extensions(answer.string(), options, cand);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  json j{{"answer", answer.stem().string()}, {"wall_seconds", wall}, {"extensions", cand.extensions.size()}};
  std::string status = "ok";
  if (cand.extension_reasons.count("*")) status = "unreadable";
  else if (!ext.compile && cand.extension_reasons.empty()) status = "no_calls";
  else if (ext.compile && !ext.compile->ok) status = "compile_error";
  else if (!cand.extension_reasons.empty()) status = cand.extensions.empty() ? "fallback" : "partial_fallback";
  j["status"] = status;
  j["fallbacks"] = cand.extension_reasons;
  if (ext.compile) {
    const kagent::CompileInfo& c = *ext.compile;
    j["errors"] = c.errors;
    j["limit"] = c.limit;
    j["cache_hit"] = c.cache_hit;
    j["peak_rss_mb"] = c.peak_rss_mb;
    j["compile"] = c;
  }
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Compile KernelBench-format answers with kagent's pipeline (no GPU needed); one JSON line each."};
  std::vector<std::string> inputs;
  std::string out, cache, arch = "sm_90a";
  unsigned jobs = 1;
  bool no_cache = false;
  app.add_option("answers", inputs, "answer files or folders of them (*.py)")->required();
  app.add_option("--out", out, "JSON lines file (default: stdout)");
  app.add_option("--cache-dir", cache, "compile cache folder (default: kagent's)");
  app.add_option("--arch", arch, "nvcc target");
  app.add_option("--jobs", jobs, "answers compiled at once")->check(CLI::Range(1u, 256u));
  app.add_flag("--no-cache", no_cache, "compile even when the cache holds the answer (the result is still stored)");
  CLI11_PARSE(app, argc, argv);

  std::vector<fs::path> answers;
  for (const auto& in : inputs) {
    if (fs::is_directory(in)) {
      for (const auto& e : fs::directory_iterator(in))
        if (e.path().extension() == ".py") answers.push_back(e.path());
    } else if (fs::is_regular_file(in)) {
      answers.emplace_back(in);
    } else {
      std::cerr << "compile_answers: error: no such file or folder " << in << "\n";
      return 3;
    }
  }
  std::sort(answers.begin(), answers.end());

  kagent::CompileOptions options;
  options.arch = arch;
  options.cache_dir = cache;
  options.use_cache = !no_cache;
  std::ofstream file;
  if (!out.empty()) {
    file.open(out, std::ios::trunc);
    if (!file) {
      std::cerr << "compile_answers: error: cannot write " << out << "\n";
      return 3;
    }
  }
  std::ostream& os = out.empty() ? std::cout : file;
  std::mutex mu;
  std::atomic<size_t> next{0};
  size_t done = 0;
  auto work = [&] {
    for (size_t i = next++; i < answers.size(); i = next++) {
      json j = compile_one(answers[i], options);
      std::lock_guard lock(mu);
      os << j.dump() << "\n" << std::flush;
      ++done;
      std::cerr << fmt::format("[{}/{}] {} {} {:.1f} s\n", done, answers.size(), j["answer"].get<std::string>(),
                               j["status"].get<std::string>(), j["wall_seconds"].get<double>());
    }
  };
  std::vector<std::jthread> threads;
  for (unsigned t = 1; t < std::min<size_t>(jobs, answers.size()); ++t) threads.emplace_back(work);
  work();
  return 0;
}
