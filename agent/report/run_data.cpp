#include "report/run_data.h"

#include <algorithm>

#include "common/files.h"
#include "common/json_optional.h"
#include "trajectory/rewards.h"

namespace kagent::report {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Compiler output beyond the short error digest is cut to this many bytes on the page.
constexpr size_t kCompileLogBytes = 16 * 1024;

json eval_json(const EvalResult& r) {
  json e = r;
  e.erase("device");  // the same for every turn: shown once for the run
  if (e.contains("compile") && e["compile"].is_object()) {
    json& c = e["compile"];
    c.erase("artifact");
    if (c.contains("log") && c["log"].is_string() && c["log"].get_ref<const std::string&>().size() > kCompileLogBytes)
      c["log"] = c["log"].get<std::string>().substr(0, kCompileLogBytes) + "\n[cut at 16 KiB]";
  }
  return e;
}

// A compact turn's message is cut to this many bytes (a verdict line, not a log).
constexpr size_t kCompactMessageBytes = 300;

std::string turn_message(const traj::Turn& t) {
  if (t.error) return t.error->message;
  return t.eval ? t.eval->message : std::string();
}

// Every turn carries the numbers the grid, the chart and the problem tables read; a full turn
// adds its evaluation whole and its text.
json turn_json(const traj::Turn& t, Detail detail) {
  std::string message = turn_message(t);
  if (detail == Detail::Compact && message.size() > kCompactMessageBytes)
    message = message.substr(0, kCompactMessageBytes) + "...";
  json j = {{"index", t.index},
            {"verdict", turn_verdict(t)},
            {"message", std::move(message)},
            {"tokens", t.tokens.total()},
            {"gpu_seconds", t.eval ? t.eval->eval_seconds : 0.0}};
  put_optional(j, "speedup_eager", t.speedup_eager());
  put_optional(j, "speedup_compiled", t.speedup_compiled());
  if (t.eval && t.eval->timing && t.eval->timing->candidate) {
    j["candidate_ms"] = t.eval->timing->candidate->median_ms;
    j["noise"] = t.eval->timing->candidate->rel_stdev;
  }
  if (detail == Detail::Compact) return j;
  j["token_counts"] = t.tokens;
  j["llm_seconds"] = t.llm_seconds;
  j["eval_seconds"] = t.eval_seconds;
  put_optional(j, "reward", t.reward);
  j["eval"] = t.eval ? eval_json(*t.eval) : json(nullptr);
  j["error"] = t.error ? json(*t.error) : json(nullptr);
  j["code"] = t.code;
  j["reasoning"] = t.reasoning;
  j["feedback"] = t.feedback;
  return j;
}

json sample_json(const traj::Trajectory& t, Detail detail) {
  json turns = json::array();
  for (const auto& turn : t.turns) turns.push_back(turn_json(turn, detail));
  json j = {{"sample", t.sample},
            {"status", traj::to_string(t.status)},
            {"stop_reason", traj::to_string(t.stop_reason)},
            {"error", t.error},
            {"tokens", t.total_tokens()},
            {"turns", std::move(turns)}};
  put_optional(j, "best_turn", t.best_turn);
  return j;
}

// The run's best turn: the highest score among the samples' best turns, ties to the lower sample.
json best_json(const fs::path& dir, const std::vector<traj::Trajectory>& samples) {
  const traj::Turn* best = nullptr;
  int best_sample = 0;
  double best_score = 0;
  for (const auto& s : samples) {
    if (!s.best_turn || *s.best_turn < 0 || *s.best_turn >= static_cast<int>(s.turns.size())) continue;
    const traj::Turn& turn = s.turns[static_cast<size_t>(*s.best_turn)];
    const double score = turn.reward.value_or(traj::turn_score(turn));
    if (!best || score > best_score) {
      best = &turn;
      best_sample = s.sample;
      best_score = score;
    }
  }
  if (!best) return nullptr;
  json b = {{"sample", best_sample}, {"turn", best->index}, {"score", best_score}};
  put_optional(b, "speedup_eager", best->speedup_eager());
  put_optional(b, "speedup_compiled", best->speedup_compiled());
  for (const char* name : {"best.cu", "best.py"}) {
    if (!fs::is_regular_file(dir / name)) continue;
    b["file"] = name;
    try {
      b["code"] = read_file(dir / name);
    } catch (const std::exception&) {
      // The page still names the file; its text is missing.
    }
  }
  return b;
}

// Eager and torch.compile times, as the latest timed turn measured them.
json baselines_json(const std::vector<traj::Trajectory>& samples) {
  json out = nullptr;
  std::string at;
  for (const auto& s : samples)
    for (const auto& t : s.turns) {
      if (!t.eval || !t.eval->timing || (!t.eval->timing->eager && !t.eval->timing->compiled)) continue;
      if (!out.is_null() && t.finished_at <= at) continue;
      at = t.finished_at;
      out = json::object();
      if (t.eval->timing->eager) out["eager"] = *t.eval->timing->eager;
      if (t.eval->timing->compiled) out["compiled"] = *t.eval->timing->compiled;
    }
  return out;
}

json device_json(const std::vector<traj::Trajectory>& samples) {
  for (const auto& s : samples)
    for (const auto& t : s.turns)
      if (t.eval && t.eval->device.available) return t.eval->device;
  return nullptr;
}

// The system prompt and the task as the first turn of the lowest sample was sent them.
json prompt_json(const std::vector<traj::Trajectory>& samples) {
  json p = json::object();
  for (const auto& s : samples) {
    if (s.turns.empty()) continue;
    for (const auto& m : s.turns.front().messages) {
      if (m.role == "system" && !p.contains("system")) p["system"] = m.content;
      if (m.role == "user" && !p.contains("task")) p["task"] = m.content;
    }
    break;
  }
  return p;
}

}  // namespace

std::string turn_verdict(const traj::Turn& turn) {
  if (turn.error) return turn.error->kind.empty() ? "error" : turn.error->kind;
  if (!turn.eval) return "unknown";
  if (turn.eval->reason == reason::kNoGpu) return "no_gpu";
  return to_string(turn.eval->status);
}

json run_page_data(const fs::path& dir, const RunRecords& rec, Detail detail) {
  const int expected = get_or<int>(rec.config, "samples", 0);
  int finished = 0, running = 0;
  traj::TokenCounts tokens;
  double llm_s = 0, eval_s = 0;
  json samples = json::array();
  for (const auto& s : rec.samples) {
    (s.done() ? finished : running) += 1;
    tokens += s.total_tokens();
    for (const auto& t : s.turns) {
      llm_s += t.llm_seconds;
      eval_s += t.eval_seconds;
    }
    samples.push_back(sample_json(s, detail));
  }
  const traj::Trajectory* first = rec.samples.empty() ? nullptr : &rec.samples.front();
  json problem = first ? json(first->problem) : json::object();
  if (!problem.contains("name") || problem["name"].get<std::string>().empty())
    problem["name"] = fs::path(get_or<std::string>(rec.config, "problem", dir.filename().string())).stem().string();

  json d = {{"id", fs::absolute(dir).lexically_normal().filename().string()},
            {"dir", fs::absolute(dir).lexically_normal().string()},
            {"problem", problem},
            {"config", rec.config},
            {"model", first ? json{{"provider", first->model.provider}, {"model", first->model.model}}
                            : rec.config.value("llm", json::object())},
            {"versions", first ? json(first->versions) : json(nullptr)},
            {"device", device_json(rec.samples)},
            {"samples_expected", std::max(expected, static_cast<int>(rec.samples.size()))},
            {"samples_finished", finished},
            {"samples_running", running},
            {"finished", running == 0 && finished >= expected},
            {"tokens", tokens},
            {"llm_seconds", llm_s},
            {"eval_seconds", eval_s},
            {"baselines", baselines_json(rec.samples)},
            {"best", best_json(dir, rec.samples)},
            {"warnings", rec.warnings},
            {"samples", std::move(samples)}};
  if (detail == Detail::Full) {
    d["prompt"] = prompt_json(rec.samples);
  } else {
    // A collection page shows the suite's settings once; per problem only the shape of the run.
    d["config"] = {{"samples", expected}, {"turns", get_or<int>(rec.config, "turns", 0)}};
    d.erase("device");
    d.erase("versions");
  }
  return d;
}

}  // namespace kagent::report
