#include "curate/sft_rows.h"

#include "common/json_optional.h"
#include "dataset/turn_record.h"

namespace kagent::curate {

using nlohmann::json;

json sft_row(const Selected& s, ReasoningStyle style) {
  const auto& t = s.source->trajectory;
  const auto& turn = s.the_turn();
  json messages = json::array();
  for (const auto& m : turn.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
  json assistant = {{"role", "assistant"}};
  if (style == ReasoningStyle::ReasoningContent) {
    assistant["content"] = turn.answer;
    assistant["reasoning_content"] = turn.reasoning;
  } else {
    assistant["content"] = turn.reasoning.empty() ? turn.answer : "<think>\n" + turn.reasoning + "\n</think>\n\n" + turn.answer;
  }
  messages.push_back(std::move(assistant));
  json row = {{"messages", std::move(messages)},
              {"task", dataset::task_of(t)},
              {"level", json_or_null(t.problem.level)},
              {"op_type", t.problem.op_type},
              {"speedup_eager", s.speedup},
              {"reasoning_chars", s.reasoning_chars},
              {"source", {{"run", s.source->run}, {"sample", t.sample}, {"turn", s.turn}}}};
  row.update(dataset::turn_record(*s.source, turn));  // problem, format, status, status_policy, verdicts
  return row;
}

std::vector<json> sft_rows(const Selection& selection, ReasoningStyle style) {
  std::vector<json> rows;
  rows.reserve(selection.rows.size());
  for (const auto& s : selection.rows) rows.push_back(sft_row(s, style));
  return rows;
}

}  // namespace kagent::curate
