#include "loop/history.h"

#include "common/enum_names.h"
#include "prompt/feedback.h"

namespace kagent::loop {

namespace {
constexpr EnumNames<HistoryPolicy, 3> kPolicyNames{{
    {HistoryPolicy::Full, "full"},
    {HistoryPolicy::Kernels, "kernels"},
    {HistoryPolicy::Last, "last"},
}};
}  // namespace

std::string to_string(HistoryPolicy p) { return enum_name(kPolicyNames, p, "kernels"); }

HistoryPolicy history_policy_from_string(const std::string& s) {
  return enum_value(kPolicyNames, s, "history policy (expected full, kernels or last)");
}

int64_t estimate_tokens(const std::string& text) { return static_cast<int64_t>(text.size() + 3) / 4; }

namespace {

// How an earlier answer is shown again.
std::string replayed_answer(const traj::Turn& t, prompt::AnswerFormat format, const HistoryOptions& o) {
  if (o.policy == HistoryPolicy::Full) {
    if (t.reasoning.empty()) return t.answer;
    return "<think>\n" + t.reasoning + "\n</think>\n\n" + t.answer;
  }
  if (!t.code.empty()) {
    const char* lang = format == prompt::AnswerFormat::Cuda ? "cuda" : "python";
    return std::string("```") + lang + "\n" + t.code + (t.code.ends_with('\n') ? "" : "\n") + "```";
  }
  // No code (a format error): the model must see what it wrote to fix it, within reason.
  return prompt::cut_text(t.answer, 0, o.max_prose_bytes);
}

}  // namespace

History build_history(const std::string& system_prompt, const std::string& task_prompt,
                      const std::vector<traj::Turn>& turns, prompt::AnswerFormat format, const HistoryOptions& options,
                      const prompt::TemplateSet& templates) {
  const size_t n = turns.size();
  size_t first = options.policy == HistoryPolicy::Last && n > 0 ? n - 1 : 0;

  std::vector<std::pair<std::string, std::string>> pairs;  // (assistant, feedback) per kept turn
  for (size_t i = first; i < n; ++i) pairs.emplace_back(replayed_answer(turns[i], format, options), turns[i].feedback);

  auto note = [&](size_t omitted) {
    return omitted == 0 ? std::string()
                        : templates.render("history_cut", {{"omitted", omitted}, {"policy", to_string(options.policy)}});
  };
  // The budget drops the oldest kept turns first; the latest one always stays.
  size_t drop = 0;
  if (options.max_tokens) {
    int64_t fixed = estimate_tokens(system_prompt) + estimate_tokens(task_prompt) + estimate_tokens(note(n));
    std::vector<int64_t> cost;
    int64_t total = fixed;
    for (const auto& [a, f] : pairs) {
      cost.push_back(estimate_tokens(a) + estimate_tokens(f));
      total += cost.back();
    }
    while (total > *options.max_tokens && drop + 1 < pairs.size()) total -= cost[drop++];
  }
  History h;
  h.omitted_turns = static_cast<int>(first + drop);
  std::string task = task_prompt;
  if (h.omitted_turns > 0) task += "\n\n" + note(static_cast<size_t>(h.omitted_turns));
  h.messages.push_back({"user", task});
  for (size_t i = drop; i < pairs.size(); ++i) {
    h.messages.push_back({"assistant", pairs[i].first});
    h.messages.push_back({"user", pairs[i].second});
  }
  return h;
}

}  // namespace kagent::loop
