// Exit statuses of the training-data commands (`kagent curate`, `kagent rollout`), in the README.
#pragma once

namespace kagent::cli::dataset_exit {

inline constexpr int kWritten = 0;
inline constexpr int kUsage = 2;        // a flag CLI11 refused (main.cpp)
inline constexpr int kBadInput = 3;     // a path that is no run or collection, a bad reward config
inline constexpr int kCannotWrite = 4;  // the output folder cannot be written
inline constexpr int kInternal = 14;

}  // namespace kagent::cli::dataset_exit
