// Exit statuses of the training-data commands (`kagent curate`, `kagent rollout`), in
// docs/curate.md: the same as `kagent report`'s for the same inputs (report/report_error.h).
#pragma once

#include "report/report_error.h"

namespace kagent::cli::dataset_exit {

inline constexpr int kWritten = 0;
inline constexpr int kUsage = 2;                                   // a flag refused (--reward-config's too)
inline constexpr int kNotFound = report::report_exit::kNotFound;       // 3: a path does not exist
inline constexpr int kNotARun = report::report_exit::kNotARun;         // 4: neither a run nor a collection
inline constexpr int kUnreadable = report::report_exit::kUnreadable;   // 5: a run's config.json or manifest.json
inline constexpr int kCannotWrite = report::report_exit::kWriteFailed; // 6: the output folder cannot be written
// 7: the output would carry nothing, so nothing is written: curate's selection is empty, or
// rollout's reward gives every correct turn the same value (its speed term reads a speedup no
// turn has). --allow-empty / --allow-constant write it anyway, with a warning.
inline constexpr int kNoSignal = 7;
inline constexpr int kInternal = 14;

}  // namespace kagent::cli::dataset_exit
