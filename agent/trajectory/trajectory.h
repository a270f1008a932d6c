// Trajectory: the record of one sample of one problem — every turn the model took, what
// it was sent and answered, the verdict on its code, tokens, latency and reward. One
// finished trajectory is one JSON line of runs/<run>/trajectories.jsonl (docs/solve.md,
// "The run folder"); curate and rollout read these lines back.
// Plain data with JSON in and out; no torch, no CUDA, no LLM client types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "problem/problem_spec.h"
#include "result/eval_result.h"
#include "result/policy.h"

namespace kagent::traj {

// Bumped when a field changes meaning; readers accept lower versions.
inline constexpr int kSchemaVersion = 1;

// Op types: ConCuR balances single-op and fused tasks.
inline constexpr const char* kOpSingle = "single-op";
inline constexpr const char* kOpFused = "fused";
inline constexpr const char* kOpModel = "model";      // KernelBench level 3: whole architectures
inline constexpr const char* kOpUnknown = "unknown";

struct ProblemInfo {
  std::string name;            // file stem, e.g. "19_ReLU"
  std::string path;
  std::string sha256;          // of the problem file's bytes
  std::optional<int> level;
  std::string op_type = kOpUnknown;
};

// Level 1 -> single-op, 2 -> fused, 3 -> model; otherwise a heuristic over the code of forward()
// (its docstring, comments and string literals left out): one operation call is single-op.
std::string op_type_for(std::optional<int> level, const std::string& source);
ProblemInfo problem_info_from_spec(const ProblemSpec& spec);

struct Sampling {
  std::optional<double> temperature;
  std::optional<double> top_p;
  std::optional<int> top_k;
  std::optional<int> max_tokens;
  std::optional<std::string> reasoning_effort;
  std::optional<int64_t> seed;
  nlohmann::json extra = nlohmann::json::object();  // provider-specific knobs, passed through
};

struct ModelInfo {
  std::string provider;        // "openai", "anthropic", "replay", ...
  std::string model;
  std::string base_url;
  Sampling sampling;
};

struct Versions {
  std::string kagent, torch, cuda, gpu;
  // kagent, torch and CUDA from the build; gpu stays empty (the worker knows it).
  static Versions from_build();
};

struct Message {
  std::string role;            // "system" | "user" | "assistant"
  std::string content;
};

struct TokenCounts {
  int64_t prompt = 0;
  int64_t completion = 0;      // as the provider counts it (often includes reasoning)
  int64_t reasoning = 0;
  int64_t total() const { return prompt + completion; }
  TokenCounts& operator+=(const TokenCounts& o) {
    prompt += o.prompt; completion += o.completion; reasoning += o.reasoning;
    return *this;
  }
};

// Why a turn produced no verdict. kind is one of the constants below.
namespace turn_error {
inline constexpr const char* kFormat = "format";      // no code block / unusable answer
inline constexpr const char* kLlm = "llm";            // the LLM call failed after retries
inline constexpr const char* kEval = "eval";          // kagent could not evaluate the code
inline constexpr const char* kCancelled = "cancelled";
}  // namespace turn_error

struct TurnError {
  std::string kind;
  std::string message;
};

struct Turn {
  int index = 0;                          // 0-based position in the trajectory
  std::vector<Message> messages;          // exactly what was sent for this turn
  std::string reasoning;                  // the model's reasoning / <think> text
  std::string answer;                     // the answer text
  std::string code;                       // extracted code; empty on a format error
  std::optional<EvalResult> eval;         // the verdict; absent when the turn failed earlier
  std::string feedback;                   // what the model is told about this turn (the next user message)
  TokenCounts tokens;
  double llm_seconds = 0;                 // latency of the LLM call (retries included)
  double eval_seconds = 0;                // compile + evaluation, end to end
  std::optional<double> reward;           // per-turn score (rewards.h)
  std::optional<double> return_;          // discounted return from this turn on ("return" in JSON)
  std::optional<TurnError> error;
  std::string started_at, finished_at;    // ISO 8601 UTC
  nlohmann::json extra;                   // token ids, logprobs, ... passed through; null when none

  bool correct() const;                   // no error and eval says Correct
  bool correct_under(Policy policy) const;  // the same under `policy` (result/policy.h)
  std::optional<double> speedup_eager() const;
  std::optional<double> speedup_compiled() const;
};

enum class SampleStatus { Running, Finished, Failed, Stopped };
// Why a sample ended. None while running.
enum class StopReason { None, TurnLimit, TargetSpeedup, Budget, Cancelled, Error };

std::string to_string(SampleStatus s);
SampleStatus sample_status_from_string(const std::string& s);
std::string to_string(StopReason r);
StopReason stop_reason_from_string(const std::string& s);

struct Trajectory {
  int schema_version = kSchemaVersion;
  std::string run_id;                     // the run folder's name
  ProblemInfo problem;
  ModelInfo model;
  int sample = 0;                         // sample index within the run
  int max_turns = 0;                      // the turn limit it ran under (0: unknown)
  std::vector<Turn> turns;
  std::optional<int> best_turn;           // highest-scoring correct turn (rewards.h)
  Versions versions;
  std::string started_at, updated_at, finished_at;
  SampleStatus status = SampleStatus::Running;
  StopReason stop_reason = StopReason::None;
  std::string error;                      // why it failed, when status == Failed

  // The next turn to run on resume: turns already recorded are never repeated.
  int next_turn() const { return static_cast<int>(turns.size()); }
  bool done() const { return status != SampleStatus::Running; }
  TokenCounts total_tokens() const;
};

// ISO 8601 UTC with milliseconds, e.g. "2026-11-21T07:34:15.123Z".
std::string now_iso8601();

void to_json(nlohmann::json& j, const ProblemInfo& p);
void from_json(const nlohmann::json& j, ProblemInfo& p);
void to_json(nlohmann::json& j, const Sampling& s);
void from_json(const nlohmann::json& j, Sampling& s);
void to_json(nlohmann::json& j, const ModelInfo& m);
void from_json(const nlohmann::json& j, ModelInfo& m);
void to_json(nlohmann::json& j, const Versions& v);
void from_json(const nlohmann::json& j, Versions& v);
void to_json(nlohmann::json& j, const Message& m);
void from_json(const nlohmann::json& j, Message& m);
void to_json(nlohmann::json& j, const TokenCounts& t);
void from_json(const nlohmann::json& j, TokenCounts& t);
void to_json(nlohmann::json& j, const TurnError& e);
void from_json(const nlohmann::json& j, TurnError& e);
void to_json(nlohmann::json& j, const Turn& t);
void from_json(const nlohmann::json& j, Turn& t);
void to_json(nlohmann::json& j, const Trajectory& t);
void from_json(const nlohmann::json& j, Trajectory& t);

}  // namespace kagent::traj
