// The page data of a `kagent collect` folder (docs/collection_format.md): the metrics table
// (metrics.json, or computed from the samples when it is absent; "metrics_source" says which),
// per-problem outcomes and speedups, each problem's run in compact detail, cost, baselines and
// versions; under "policies" every policy's outcomes and its verdict breakdown (turns by verdict,
// rejections by guard), and under "timed_turns" how many turns each baseline timed (the page
// says n/a for one that timed none).
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

namespace kagent::report {

// manifest.json exists (its kind is checked when it is read).
bool is_collection_folder(const std::filesystem::path& dir);

// manifest.json; throws ReportError (kUnreadable, or kNotARun when its kind is not a collection's).
nlohmann::json read_collection_manifest(const std::filesystem::path& dir);

// Throws ReportError when manifest.json is unreadable or not a collection's; every other
// file that is missing or unreadable becomes a warning on the page.
nlohmann::json collection_page_data(const std::filesystem::path& dir);

}  // namespace kagent::report
