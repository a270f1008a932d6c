// The metrics of a collection folder, read from its records: every finished trajectory of
// problems/<name>/ counted as metrics/sample_outcome.h says, each problem that cannot run (the
// index's problem_error lines) as failed samples. `kagent collect` writes them at the end and
// recomputes them with --metrics; the numbers are the ones `kagent report` shows.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "metrics/collection_metrics.h"
#include "metrics/sample_outcome.h"

namespace kagent::collect {

struct CollectionOutcomes {
  std::string policy;                 // the collection's (metrics::collection_policy)
  metrics::RowsByPolicy rows;         // every policy's samples
  std::vector<std::string> problem_error_levels;
  int samples_per_problem = 1;
  int turns = 1;
  std::vector<std::string> warnings;
};

// Throws NotACollection.
CollectionOutcomes read_collection_outcomes(const std::filesystem::path& dir);

// metrics.json's content (metrics/collection_metrics.h): the collection's policy's metrics, its
// name as "policy", and every policy's groups under "policies". `warnings`, when given, gets
// what was read past (a record that could not be read: its sample is not counted).
nlohmann::json collection_metrics(const std::filesystem::path& dir, const std::string& computed_by,
                                  std::vector<std::string>* warnings = nullptr);

// Writes metrics.json and metrics.csv into the collection; returns the metrics.
nlohmann::json write_collection_metrics(const std::filesystem::path& dir, const std::string& computed_by,
                                        std::vector<std::string>* warnings = nullptr);

}  // namespace kagent::collect
