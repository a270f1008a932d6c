// `kagent collect --merge OUT RUN...`: joins collections (the shards of one suite, or runs of
// the same settings over different problems) into a new collection folder. Refuses runs whose
// settings differ in anything that changes what a sample means (samples, turns, format,
// history, stopping rules, prompts, model and sampling, evaluation settings, compile-only)
// or that ran on different GPU models or torch versions; GPUs, cache folders, server
// addresses, order and filters may differ. A (problem, sample) recorded by several runs is
// kept once (the first run's); the index, baselines and metrics are written afresh.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kagent::collect {

struct MergeError : std::runtime_error {
  MergeError(std::string kind_, const std::string& message) : std::runtime_error(message), kind(std::move(kind_)) {}
  std::string kind;  // "not_a_collection" | "mixed_config" | "out_exists"
};

struct MergeSummary {
  int problems = 0;
  int samples = 0;               // finished (problem, sample) pairs in the result
  int duplicates_dropped = 0;    // pairs recorded by more than one run
  int problem_errors = 0;
  std::vector<std::string> warnings;
};

// The part of a manifest that must agree for runs to be merged.
nlohmann::json merge_identity(const nlohmann::json& manifest);

// Throws MergeError; other failures (a full disk) as std::exception.
MergeSummary merge_collections(const std::filesystem::path& out, const std::vector<std::filesystem::path>& runs);

}  // namespace kagent::collect
