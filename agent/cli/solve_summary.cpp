#include "cli/solve_summary.h"

#include "common/json_optional.h"

#include <fmt/format.h>

namespace kagent::cli {

namespace {

struct Totals {
  int turns = 0, correct = 0, finished = 0, interrupted = 0;
  traj::TokenCounts tokens;
};

Totals totals_of(const loop::SolveOutcome& out) {
  Totals t;
  for (const auto& s : out.samples) {
    t.turns += static_cast<int>(s.trajectory.turns.size());
    for (const auto& turn : s.trajectory.turns) t.correct += turn.correct() ? 1 : 0;
    t.tokens += s.trajectory.total_tokens();
    (s.recorded ? t.finished : t.interrupted)++;
  }
  return t;
}

std::string speedups(const traj::BestKernel& b) {
  std::string s = b.speedup_eager ? fmt::format("{:.2f}x over eager", *b.speedup_eager) : "no eager time";
  if (b.speedup_compiled) s += fmt::format(", {:.2f}x over torch.compile", *b.speedup_compiled);
  return s;
}

}  // namespace

std::string render_solve_summary(const traj::RunStore& store, const loop::SolveOutcome& out, double seconds) {
  Totals t = totals_of(out);
  std::string s;
  if (auto b = store.best()) {
    s += fmt::format("best      sample {} turn {}: {}\n", b->sample, b->turn + 1, speedups(*b));
    s += fmt::format("kernel    {}\n", (store.dir() / b->file).string());
  } else {
    s += "best      no correct kernel\n";
  }
  s += fmt::format("samples   {} finished, {} interrupted; {} turns, {} correct\n", t.finished, t.interrupted, t.turns,
                   t.correct);
  s += fmt::format("tokens    {} (prompt {}, completion {}, reasoning {})\n", t.tokens.total(), t.tokens.prompt,
                   t.tokens.completion, t.tokens.reasoning);
  s += fmt::format("time      {:.1f} s\n", seconds);
  s += fmt::format("run       {}\n", store.dir().string());
  if (out.aborted) s += fmt::format("stopped   {}\n", out.aborted->what());
  if (t.interrupted > 0) s += fmt::format("resume    kagent solve --resume {}\n", store.dir().string());
  return s;
}

nlohmann::json solve_summary_json(const traj::RunStore& store, const loop::SolveOutcome& out, double seconds,
                                  int exit_status) {
  Totals t = totals_of(out);
  nlohmann::json j = {{"run", store.dir().string()},
                      {"exit_status", exit_status},
                      {"seconds", seconds},
                      {"turns", t.turns},
                      {"correct_turns", t.correct},
                      {"samples_finished", t.finished},
                      {"samples_interrupted", t.interrupted},
                      {"tokens", t.tokens},
                      {"best", nullptr},
                      {"aborted", out.aborted ? nlohmann::json(out.aborted->what()) : nlohmann::json(nullptr)}};
  if (auto b = store.best()) {
    j["best"] = *b;
    j["best"]["path"] = (store.dir() / b->file).string();
  }
  nlohmann::json samples = nlohmann::json::array();
  for (const auto& s : out.samples) {
    nlohmann::json cells = nlohmann::json::array();
    for (const auto& turn : s.trajectory.turns)
      cells.push_back({{"turn", turn.index + 1},
                       {"status", turn.eval ? to_string(turn.eval->status) : (turn.error ? turn.error->kind : "")},
                       {"correct", turn.correct()},
                       {"speedup_eager", json_or_null(turn.speedup_eager())}});
    samples.push_back({{"sample", s.trajectory.sample},
                       {"recorded", s.recorded},
                       {"stop_reason", to_string(s.trajectory.stop_reason)},
                       {"interrupted", s.interrupted},
                       {"turns", cells}});
  }
  j["samples"] = samples;
  return j;
}

}  // namespace kagent::cli
