#pragma once

#include "cli/command.h"
#include "llm/llm_error.h"

namespace kagent::cli {

// kagent solve PROBLEM: samples x refinement turns against an LLM; the run folder keeps everything.
Command add_solve_command(CLI::App& app);

// The exit statuses of `kagent solve` (README).
namespace solve_exit {
inline constexpr int kFound = 0;           // a correct kernel was found
inline constexpr int kNoneCorrect = 1;     // the run ended without a correct kernel
inline constexpr int kUsage = 2;
inline constexpr int kFileNotFound = 3;    // the problem file (or --resume folder) does not exist
inline constexpr int kProblemLoad = 4;     // the problem does not load (syntax error, no get_inputs, ...)
inline constexpr int kLlmConfig = 5;       // no API key, bad config file, unreadable replay file, no model
inline constexpr int kLlmFailed = 6;       // the model failed (unreachable, key rejected, gave up, replay ran out)
inline constexpr int kNotARun = 7;         // --resume FOLDER holds no kagent run
inline constexpr int kInternal = 14;
inline constexpr int kNoGpu = 15;          // no CUDA device: answers were compiled, not run
inline constexpr int kInterrupted = 130;
}  // namespace solve_exit

// The exit status of an LLM failure that ends a run: kLlmConfig, kInterrupted or kLlmFailed
// (`kagent collect` uses the same numbers).
int llm_error_exit(llm::ErrorKind kind);

}  // namespace kagent::cli
