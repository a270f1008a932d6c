// The record of truth every training-data row carries about its turn (`kagent rollout`'s samples,
// `kagent curate`'s rows): the problem's own name, the answer format, the status and the policy it
// is under, and the verdict of each policy with its reason. One place, so that the commands
// cannot disagree on what a turn was.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "dataset/run_source.h"

namespace kagent::dataset {

// "error:<kind>" for a turn that failed before a verdict (format, llm, eval, cancelled), the
// verdict's status otherwise ("none" when there is neither).
std::string turn_status(const traj::Turn& turn);

// The policy `turn_status` is the verdict of: the run's ruling policy ("strict" in records
// written before policies); null for a turn without a verdict.
nlohmann::json status_policy(const traj::Turn& turn);

// {"kernelbench": {"status", "reason"}, "strict": {"status", "reason"}}: each policy's verdict
// and its reason code ("" when it has none). A turn without a verdict has turn_status under both,
// and the error's message as the reason.
nlohmann::json turn_verdicts(const traj::Turn& turn);

// {"problem", "format", "status", "status_policy", "verdicts"} of one turn of `src`.
nlohmann::json turn_record(const SourceTrajectory& src, const traj::Turn& turn);

}  // namespace kagent::dataset
