// Builders for trajectory tests.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>

#include "temp_dir.h"
#include "trajectory/trajectory.h"

namespace kagent::traj::testing {

using kagent::testing::TempDir;

// A turn whose eval says `status` with the given eager speedup (timed when correct).
inline Turn make_turn(int index, Status status, std::optional<double> speedup = std::nullopt,
                      std::string code = "__global__ void k() {}") {
  Turn t;
  t.index = index;
  t.messages = {{"system", "You write CUDA."}, {"user", "Make it fast, turn " + std::to_string(index)}};
  t.reasoning = "thinking about turn " + std::to_string(index);
  t.answer = "```cuda\n" + code + "\n```";
  t.code = std::move(code);
  EvalResult r;
  r.status = status;
  r.format = "cuda";
  r.message = to_string(status);
  if (speedup) {
    Timing tm;
    tm.speedup_eager = speedup;
    tm.speedup_compiled = *speedup / 2;
    TimingStats cand;
    cand.median_ms = 1.0 / *speedup;
    cand.iterations = 100;
    tm.candidate = cand;
    r.timing = tm;
  }
  t.eval = r;
  t.tokens = {100 + index, 50 + index, 20};
  t.llm_seconds = 1.5;
  t.eval_seconds = 2.25;
  t.started_at = "2026-01-01T00:00:00.000Z";
  t.finished_at = "2026-01-01T00:00:03.750Z";
  return t;
}

inline Turn make_format_error_turn(int index) {
  Turn t;
  t.index = index;
  t.messages = {{"user", "again"}};
  t.answer = "I cannot";
  t.error = TurnError{turn_error::kFormat, "no code block in the answer"};
  t.tokens = {10, 5, 0};
  return t;
}

inline Trajectory make_trajectory(int sample) {
  Trajectory t;
  t.problem = {"19_ReLU", "/kb/level1/19_ReLU.py", "abc123", 1, kOpSingle};
  t.model.provider = "openai";
  t.model.model = "test-model";
  t.model.base_url = "http://localhost:8000/v1";
  t.model.sampling.temperature = 0.7;
  t.model.sampling.max_tokens = 4096;
  t.sample = sample;
  t.max_turns = 4;
  t.versions = {"0.1.0", "2.5.0", "12.4", "NVIDIA H200"};
  t.started_at = now_iso8601();
  return t;
}

}  // namespace kagent::traj::testing
