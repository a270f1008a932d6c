// The exit statuses of `kagent eval`, documented in the README; scripts rely on them.
#pragma once

#include "result/eval_result.h"

namespace kagent::exit_status {

inline constexpr int kCorrect = 0;
inline constexpr int kWrong = 1;
inline constexpr int kUsage = 2;
inline constexpr int kFileNotFound = 3;
inline constexpr int kProblemLoad = 4;
inline constexpr int kProblemIncomplete = 5;
inline constexpr int kMissingForward = 6;
inline constexpr int kSignatureMismatch = 7;
inline constexpr int kOutputCount = 8;
inline constexpr int kCompileError = 9;
inline constexpr int kRuntimeError = 10;
inline constexpr int kTimeout = 11;
inline constexpr int kCrash = 12;
inline constexpr int kInvalidCandidate = 13;
inline constexpr int kInternal = 14;
inline constexpr int kNoGpu = 15;
inline constexpr int kRejected = 16;  // a reward-hack guard caught a cheat
inline constexpr int kSandboxUnmet = 17;  // a required sandbox property has no mechanism here (KAGENT_SANDBOX_REQUIRE)

int for_result(const EvalResult& r);

}  // namespace kagent::exit_status
