#include "cli/rollout_command.h"

#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/dataset_exit.h"
#include "cli/errors.h"
#include "cli/flag_checks.h"
#include "common/files.h"
#include "dataset/jsonl_writer.h"
#include "rollout/reward_signal.h"
#include "rollout/rollout_rows.h"

namespace kagent::cli {

namespace fs = std::filesystem;

namespace {

struct RolloutArgs {
  std::vector<std::string> runs;
  std::string out, reward = "kevin", reward_config;
  double gamma = 0.4;
  bool group_norm = false, allow_constant = false, quiet = false;
};

// --reward-config: a JSON object inline or a file holding one; its "name" defaults to --reward.
// Throws std::invalid_argument with what is wrong, in words (no library prefix).
rollout::RewardPreset preset_from(const RolloutArgs& a) {
  if (a.reward_config.empty()) return rollout::reward_preset(a.reward);
  const bool inline_json = a.reward_config.find_first_not_of(" \t\n") != std::string::npos &&
                           a.reward_config[a.reward_config.find_first_not_of(" \t\n")] == '{';
  std::string text = a.reward_config;
  if (!inline_json) {
    if (!fs::is_regular_file(a.reward_config))
      throw std::invalid_argument(fmt::format("'{}' is neither a JSON object nor a file holding one", a.reward_config));
    text = read_file(a.reward_config);
  }
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded())
    throw std::invalid_argument(fmt::format("{} is not valid JSON", inline_json ? "'" + a.reward_config + "'" : a.reward_config));
  if (j.is_object() && !j.contains("name")) j["name"] = a.reward;
  return j.get<rollout::RewardPreset>();
}

int run_rollout(const RolloutArgs& a) {
  rollout::RolloutOptions opts;
  try {
    opts.preset = preset_from(a);
  } catch (const std::exception& e) {
    print_error("rollout", std::string("--reward-config: ") + e.what());
    return dataset_exit::kUsage;
  }
  dataset::SourceRuns src;
  try {
    src = dataset::read_runs(std::vector<fs::path>(a.runs.begin(), a.runs.end()));
  } catch (const report::ReportError& e) {
    print_error("rollout", e.what());
    return e.exit_status();
  }
  for (const auto& w : src.warnings)
    if (!a.quiet) print_warning("rollout", w);
  opts.gamma = a.gamma;
  opts.group_normalise = a.group_norm;
  const auto samples = rollout::sample_rows(src.trajectories, opts);
  const auto prompts = rollout::prompt_rows(src.trajectories, opts);
  std::vector<double> rewards;
  for (const auto& row : samples) rewards.push_back(row["reward"].get<double>());
  auto signal = rollout::check_reward_signal(src.trajectories, opts.preset, rewards);
  if (signal.refusal && !a.allow_constant) {
    print_error("rollout", *signal.refusal + "; nothing written (--allow-constant writes it anyway)");
    return dataset_exit::kNoSignal;
  }
  if (signal.refusal) signal.warnings.insert(signal.warnings.begin(), *signal.refusal);
  for (const auto& w : signal.warnings)
    if (!a.quiet) print_warning("rollout", w);
  try {
    fs::create_directories(a.out);
    dataset::write_jsonl(fs::path(a.out) / "samples.jsonl", samples);
    dataset::write_jsonl(fs::path(a.out) / "prompts.jsonl", prompts);
    nlohmann::json info = {{"reward", opts.preset}, {"gamma", opts.gamma}, {"group_normalise", opts.group_normalise},
                           {"samples", samples.size()}, {"prompts", prompts.size()}, {"sources", src.sources},
                           {"versions", src.versions}, {"warnings", signal.warnings}};
    write_file_atomic(fs::path(a.out) / "rollout.json", info.dump(2) + "\n", true);
  } catch (const std::exception& e) {
    print_error("rollout", "cannot write " + a.out + ": " + e.what());
    return dataset_exit::kCannotWrite;
  }
  if (!a.quiet)
    std::cout << fmt::format("{} turn samples, {} prompts ({} reward, gamma {}) -> {}\n", samples.size(), prompts.size(),
                             opts.preset.name, opts.gamma, a.out);
  return dataset_exit::kWritten;
}

}  // namespace

Command add_rollout_command(CLI::App& app) {
  auto a = std::make_shared<RolloutArgs>();
  CLI::App* sub = app.add_subcommand("rollout", "Per-turn RL samples with rewards and returns, and RL prompt rows");
  sub->add_option("runs", a->runs, "solve run folders and collection folders")->required();
  sub->add_option("-o,--out", a->out, "output folder (samples.jsonl, prompts.jsonl, rollout.json)")->required();
  sub->add_option("--reward", a->reward, "reward preset")->capture_default_str()->check(one_of(rollout::reward_preset_names()));
  sub->add_option("--reward-config", a->reward_config, "the preset's settings: a JSON object, inline or in a file");
  sub->add_option("--gamma", a->gamma, "discount of the returns sum_k gamma^k r(t+k)")->capture_default_str()->check(number_in(0.0, 1.0));
  sub->add_flag("--group-norm", a->group_norm, "add each return normalised within its task (\"advantage\")");
  sub->add_flag("--allow-constant", a->allow_constant,
                "write the rows even when the reward cannot tell correct turns apart on this data (else exit 7)");
  sub->add_flag("-q,--quiet", a->quiet, "no summary line, no warnings");
  return Command{sub, [a] {
                   try {
                     return run_rollout(*a);
                   } catch (const std::exception& e) {
                     print_error("rollout", std::string("internal: ") + e.what());
                     return dataset_exit::kInternal;
                   }
                 }};
}

}  // namespace kagent::cli
