#include "curate/dataset_card.h"

#include <fmt/format.h>

#include "trajectory/trajectory.h"

namespace kagent::curate {

namespace {

std::string version(const nlohmann::json& v, const char* key) {
  if (!v.is_object() || !v.contains(key) || !v[key].is_string() || v[key].get<std::string>().empty()) return "unknown";
  return v[key].get<std::string>();
}

}  // namespace

std::string dataset_card(const CardInputs& in) {
  const auto& c = in.counts;
  std::string s = "---\nlicense: mit\ntask_categories:\n- text-generation\ntags:\n- cuda\n- kernels\n- kagent\n---\n\n";
  s += "# kagent curated kernels\n\n";
  s += "Supervised fine-tuning data selected by `kagent curate` from kagent trajectories (ConCuR's criteria).\n";
  s += "One row of `train.jsonl` per selected turn; `messages` holds OpenAI roles, the reasoning ";
  s += in.reasoning_style == "think" ? "as a `<think>` block in the assistant turn.\n\n"
                                     : "in the assistant turn's `reasoning_content`.\n\n";
  s += "## Counts\n\n| | rows |\n|---|---|\n";
  s += fmt::format("| turns read | {} |\n| correct with speedup >= {} | {} |\n| dropped: a guard rejected or flagged | {} |\n",
                   c.turns, in.criteria.min_speedup, c.correct_fast, c.guarded);
  s += fmt::format("| dropped: near-duplicate kernel | {} |\n| dropped: over {} per task | {} |\n| dropped: balance | {} |\n",
                   c.duplicates, in.criteria.per_task, c.over_task_limit, c.balance_dropped);
  s += fmt::format("| **selected** | **{}** ({} single-operator, {} fused; {} tasks) |\n\n", c.selected, c.single_op, c.fused,
                   in.tasks);
  s += "## Criteria\n\n";
  s += fmt::format("- correct, with a speedup over PyTorch eager of at least {}\n", in.criteria.min_speedup);
  s += "- no reward-hack guard rejected or flagged the kernel\n";
  s += in.criteria.dedupe ? "- near-duplicates dropped (SHA-256 of the code without comments and whitespace runs)\n" : "";
  s += fmt::format("- per task, the {} with the shortest reasoning (characters)\n", in.criteria.per_task);
  s += in.criteria.single_per_fused
           ? fmt::format("- balanced to {} single-operator rows (level 1) per fused row (levels 2, 3)\n", *in.criteria.single_per_fused)
           : "- no balancing of single-operator against fused tasks\n";
  s += "\n## Sources\n\n";
  for (const auto& src : in.sources) s += "- `" + src + "`\n";
  s += "\n## Versions\n\n";
  s += fmt::format("kagent {}, torch {}, CUDA {}, GPU {}\n\n", version(in.versions, "kagent"), version(in.versions, "torch"),
                   version(in.versions, "cuda"), version(in.versions, "gpu"));
  s += "## License\n\n";
  s += fmt::format("The problems in the prompts: {}. The model's answers: as the model's terms allow.\n", kProblemLicense);
  return s;
}

}  // namespace kagent::curate
