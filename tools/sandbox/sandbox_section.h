// The `sandbox` section every result carries: for each property (network, filesystem,
// processes, host memory, file size, CPU time) the mechanism that held it in the worker that
// ran the candidate, or "none" and why; where writes were sent instead of refused; and what
// the sandbox refused or killed during this evaluation. Made from the worker's hello report
// (apply_sandbox.h) and the request's violations, on the orchestrator's side, so that a
// result of a worker that died still says what held it.
//
// Also the requirement check: KAGENT_SANDBOX_REQUIRE=processes,filesystem,network names the
// properties an evaluation needs; a worker whose report lacks one is refused before any
// candidate runs in it.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sandbox/sandbox_policy.h"
#include "sandbox/violation_monitor.h"

namespace kagent::sandbox {

// The properties, as the section and KAGENT_SANDBOX_REQUIRE spell them.
inline constexpr const char* kProperties[] = {"network", "filesystem", "processes", "host_memory", "file_size", "cpu_time"};

// `report`: the worker's hello report (WorkerClient::sandbox()); `violations`: what the
// monitor recorded during the request, when the worker answered.
nlohmann::json result_section(const nlohmann::json& report, const std::optional<Violations>& violations);

// Properties of `section` ("properties" of result_section) held by no mechanism.
std::vector<std::string> unheld_properties(const nlohmann::json& section);

// KAGENT_SANDBOX_REQUIRE: comma-separated property names ("" or unset: none). Throws
// std::invalid_argument naming the variable and the unknown name.
std::set<std::string, std::less<>> required_properties(const char* value);

// "" when every required property is held; else one line naming what is missing and why.
std::string unmet_requirement(const nlohmann::json& section, const std::set<std::string, std::less<>>& required);

}  // namespace kagent::sandbox
