#include "evaluation/answer_extensions.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <vector>

#include <fmt/format.h>

#include "compiler/inline_binding.h"
#include "compiler/inline_call_reader.h"
#include "compiler/inline_extension_compiler.h"

namespace kagent {

namespace {

// Every extension's compile as one: ok when all are, errors of the failed ones, the logs
// and resources of all; seconds is the wall time of them together (set by the caller).
CompileInfo merge(const std::vector<std::pair<std::string, InlineBuild>>& builds) {
  CompileInfo m;
  m.ok = true;
  m.cache_hit = true;
  for (const auto& [name, b] : builds) {
    const CompileInfo& c = b.info;
    m.ok = m.ok && c.ok;
    m.cache_hit = m.cache_hit && c.cache_hit;
    if (!c.ok) m.errors += (m.errors.empty() ? "" : "\n") + c.errors;
    m.log += fmt::format("{}== load_inline extension {}{}\n{}", m.log.empty() ? "" : "\n", name,
                         c.cache_hit ? " (cached)" : "", c.log);
    m.command += (m.command.empty() ? "" : " ; ") + c.command;
    if (m.artifact.empty()) m.artifact = c.artifact;
    m.resources.insert(m.resources.end(), c.resources.begin(), c.resources.end());
    for (const auto& st : c.steps)
      m.steps.push_back({builds.size() > 1 ? name + ": " + st.name : st.name, st.seconds, st.cpu_seconds});
    if (m.limit.empty()) m.limit = c.limit;
    m.peak_rss_mb = std::max(m.peak_rss_mb, c.peak_rss_mb);
  }
  return m;
}

}  // namespace

AnswerExtensions build_answer_extensions(const std::string& path, const CompileOptions& options, CandidateRef& cand) {
  const auto t0 = std::chrono::steady_clock::now();
  AnswerExtensions out;
  const InlineCallScan scan = read_inline_calls(path);
  if (!scan.error.empty()) {
    // The worker will meet the same problem when it runs the file (a syntax error is its
    // verdict); kagent only builds nothing.
    cand.extension_reasons["*"] = "kagent could not read the file: " + scan.error;
    return out;
  }
  // Every call kagent can build compiles at once (each one's C++ and CUDA parts in parallel too).
  std::vector<std::pair<const InlineCallRecord*, std::future<InlineBuild>>> running;
  for (const auto& c : scan.calls) {
    if (!c.ok) {
      if (!c.name.empty()) cand.extension_reasons[c.name] = c.reason;
      continue;
    }
    running.emplace_back(&c, std::async(std::launch::async,
                                        [&options, &call = c.call] { return compile_inline_extension(call, options); }));
  }
  std::vector<std::pair<std::string, InlineBuild>> built;
  for (auto& [record, future] : running) {
    const InlineCall* call = &record->call;
    InlineBuild b = future.get();
    if (!b.fallback.empty()) {
      cand.extension_reasons[call->name] = b.fallback;
      continue;
    }
    // A load() of a file the answer writes is built here only to be faster than torch: where its
    // own code fails (l2_p75 of CUDA-L1 writes CUDA into a .cpp), the answer still meets a build
    // error at run time and its own except runs, so the verdict is the one it always had. The
    // worker raises it at the call (build_error) instead of torch's build, which fails the same
    // way after 15-20 s of a worker's time (the H200, l2_p75).
    if (!b.info.ok && record->kind == "load") {
      const std::string first = b.info.errors.substr(0, b.info.errors.find('\n'));
      cand.extension_reasons[call->name] = "kagent's build of the file it writes failed in its own code (" + first +
                                           "): the answer meets that build error when it runs";
      cand.extensions.push_back(PrebuiltExtension{call->key, "", "", {}, "", first.empty() ? "the build failed" : first});
      continue;
    }
    if (b.info.ok) {
      PrebuiltExtension e{call->key, b.info.artifact, b.info.op_name, {}, b.binding};
      for (const auto& f : call->functions) e.functions.push_back(inline_op_name(f));
      cand.extensions.push_back(std::move(e));
    }
    built.emplace_back(call->name, std::move(b));
  }
  if (!built.empty()) out.compile = merge(built);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (out.compile) out.compile->seconds = out.seconds;
  return out;
}

}  // namespace kagent
