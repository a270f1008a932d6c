// History policies: what the next request carries of earlier turns.
#include <doctest/doctest.h>

#include "loop/history.h"

using namespace kagent;
using namespace kagent::loop;

namespace {

traj::Turn turn(int i, std::string code, std::string feedback, std::string reasoning = "long thoughts",
                std::string answer = "") {
  traj::Turn t;
  t.index = i;
  t.code = std::move(code);
  t.feedback = std::move(feedback);
  t.reasoning = std::move(reasoning);
  t.answer = answer.empty() ? "Some prose.\n```cuda\n" + t.code + "```\nMore prose." : answer;
  return t;
}

std::vector<traj::Turn> three_turns() {
  return {turn(0, "// code 0\n", "feedback 0"), turn(1, "// code 1\n", "feedback 1"), turn(2, "// code 2\n", "feedback 2")};
}

const prompt::TemplateSet& templates() {
  static prompt::TemplateSet t;
  return t;
}

}  // namespace

TEST_CASE("first turn: only the task") {
  History h = build_history("sys", "TASK", {}, prompt::AnswerFormat::Cuda, {}, templates());
  REQUIRE(h.messages.size() == 1);
  CHECK(h.messages[0].role == "user");
  CHECK(h.messages[0].content == "TASK");
  CHECK(h.omitted_turns == 0);
}

TEST_CASE("kernels (default): code and feedback of every turn, no reasoning, no prose") {
  History h = build_history("sys", "TASK", three_turns(), prompt::AnswerFormat::Cuda, {}, templates());
  REQUIRE(h.messages.size() == 7);
  CHECK(h.messages[1].role == "assistant");
  CHECK(h.messages[1].content == "```cuda\n// code 0\n```");
  CHECK(h.messages[2].content == "feedback 0");
  CHECK(h.messages[6].content == "feedback 2");
  for (const auto& m : h.messages) {
    CHECK(m.content.find("long thoughts") == std::string::npos);
    CHECK(m.content.find("prose") == std::string::npos);
  }
}

TEST_CASE("kernelbench format replays python blocks") {
  History h = build_history("sys", "TASK", three_turns(), prompt::AnswerFormat::KernelBench, {}, templates());
  CHECK(h.messages[1].content.rfind("```python\n", 0) == 0);
}

TEST_CASE("full: answers whole, reasoning as <think>") {
  HistoryOptions o;
  o.policy = HistoryPolicy::Full;
  History h = build_history("sys", "TASK", three_turns(), prompt::AnswerFormat::Cuda, o, templates());
  REQUIRE(h.messages.size() == 7);
  CHECK(h.messages[1].content.rfind("<think>\nlong thoughts\n</think>\n\nSome prose.", 0) == 0);
  CHECK(h.messages[1].content.find("More prose.") != std::string::npos);
}

TEST_CASE("last: only the latest turn, and the task says how many were left out") {
  HistoryOptions o;
  o.policy = HistoryPolicy::Last;
  History h = build_history("sys", "TASK", three_turns(), prompt::AnswerFormat::Cuda, o, templates());
  REQUIRE(h.messages.size() == 3);
  CHECK(h.omitted_turns == 2);
  CHECK(h.messages[0].content.find("TASK") == 0);
  CHECK(h.messages[0].content.find("2 earlier attempt(s) are not shown") != std::string::npos);
  CHECK(h.messages[1].content == "```cuda\n// code 2\n```");
  CHECK(h.messages[2].content == "feedback 2");
}

TEST_CASE("a token budget drops the oldest turns first and always keeps the latest") {
  std::vector<traj::Turn> turns;
  for (int i = 0; i < 6; ++i) turns.push_back(turn(i, std::string(400, 'a' + static_cast<char>(i)) + "\n", "fb " + std::to_string(i)));
  HistoryOptions o;
  o.max_tokens = 350;  // ~100 tokens a turn, ~30 for the rest: room for 3 turns
  History h = build_history("sys", "TASK", turns, prompt::AnswerFormat::Cuda, o, templates());
  CHECK(h.omitted_turns == 3);
  REQUIRE(h.messages.size() == 7);
  CHECK(h.messages[1].content.find(std::string(10, 'd')) != std::string::npos);
  CHECK(h.messages.back().content == "fb 5");

  o.max_tokens = 1;  // nothing fits: the latest turn still goes
  h = build_history("sys", "TASK", turns, prompt::AnswerFormat::Cuda, o, templates());
  CHECK(h.omitted_turns == 5);
  CHECK(h.messages.size() == 3);
  CHECK(h.messages.back().content == "fb 5");
}

TEST_CASE("an earlier answer without code is shown cut, so a 1 MB answer cannot flood the next request") {
  std::vector<traj::Turn> turns = {turn(0, "", "no code block", "", std::string(1 << 20, 'x'))};
  History h = build_history("sys", "TASK", turns, prompt::AnswerFormat::Cuda, {}, templates());
  REQUIRE(h.messages.size() == 3);
  CHECK(h.messages[1].content.size() < 4200);
  CHECK(h.messages[1].content.find("cut") != std::string::npos);
}

TEST_CASE("policy names") {
  CHECK(history_policy_from_string("full") == HistoryPolicy::Full);
  CHECK(history_policy_from_string("kernels") == HistoryPolicy::Kernels);
  CHECK(history_policy_from_string("last") == HistoryPolicy::Last);
  CHECK_THROWS_AS(history_policy_from_string("most"), std::invalid_argument);
  CHECK(to_string(HistoryPolicy::Last) == "last");
}
