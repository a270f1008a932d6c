// Per-phase budgets as the CLI, the client and the worker share them: the phase list, a flag
// value's parsing and its messages, the JSON a run records; and the phase line, strict about
// what it takes and tolerant of the lines beside it.
#include <doctest/doctest.h>

#include "worker/protocol/phase_budgets.h"
#include "worker/protocol/protocol.h"

using namespace kagent;

namespace {
std::string error_of(const std::string& spec) {
  try {
    (void)parse_phase_budget(spec);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("the phases in the worker's order, and the defaults only on phases that hold the GPU and run the candidate") {
  CHECK(phase_index("prefetch") == 0u);
  CHECK(phase_index("state_check") == kEvaluatePhases.size() - 1);
  CHECK(*phase_index("timing") < *phase_index("profile"));
  CHECK_FALSE(phase_index("compile"));
  const PhaseBudgets d = PhaseBudgets::defaults();
  CHECK(d.of("timing").gpu_s == 30.0);
  CHECK(d.of("guards_after_timing").gpu_s == 30.0);
  CHECK(d.of("profile").gpu_s == 60.0);
  CHECK(d.of("correctness").gpu_s == 60.0);  // shared holds: a sibling's timing waits for them
  CHECK(d.of("guards_before_timing").gpu_s == 60.0);
  CHECK_FALSE(d.of("prefetch").gpu_s);  // kagent's own CPU work, no lock
  CHECK_FALSE(d.of("baselines").gpu_s);  // kagent's own timing
  CHECK(d.listed(true) == "correctness=60,guards_before_timing=60,timing=30,guards_after_timing=30,profile=60");
  CHECK(d.listed(false) == "none");
  for (const auto phase : kEvaluatePhases) CHECK_FALSE(d.of(phase).wall_s);  // the request's timeout bounds them
  CHECK(d.of("load") == PhaseBudget{});
}

TEST_CASE("a flag value: PHASE=SECONDS, more than 0, or none; anything else says why in plain words") {
  CHECK(parse_phase_budget("timing=20") == std::pair<std::string, std::optional<double>>{"timing", 20.0});
  CHECK(parse_phase_budget("load=0.5").second == 0.5);
  CHECK_FALSE(parse_phase_budget("profile=none").second);
  CHECK(error_of("timing=abc") == "'timing=abc': 'abc' is not a number");
  CHECK(error_of("timing=-1") == "'timing=-1': '-1' is negative (seconds, more than 0)");
  CHECK(error_of("timing=0").find("must be more than 0") != std::string::npos);
  CHECK(error_of("timing=inf") == "'timing=inf': 'inf' is not a number");
  CHECK(error_of("timing=") == "'timing=': '' is not a number");
  CHECK(error_of("timing") == "'timing' is not PHASE=SECONDS");
  const std::string unknown = error_of("timng=5");
  CHECK(unknown.find("no phase 'timng'") != std::string::npos);
  CHECK(unknown.find("guards_after_timing") != std::string::npos);  // the list, to pick from
}

TEST_CASE("set lifts and adds; the JSON a run records reads back the same, and refuses nonsense") {
  PhaseBudgets b = PhaseBudgets::defaults();
  b.set("timing", true, std::nullopt);   // lifted: timing has no budget left
  b.set("load", false, 60.0);
  b.set("profile", false, 90.0);
  CHECK_FALSE(b.phases.contains("timing"));
  CHECK(b.of("profile") == PhaseBudget{90.0, 60.0});
  const nlohmann::json j = b;
  CHECK(j == nlohmann::json::parse(R"({"guards_after_timing": {"gpu": 30}, "load": {"wall": 60},
                                       "profile": {"wall": 90, "gpu": 60}, "correctness": {"gpu": 60},
                                       "guards_before_timing": {"gpu": 60}})"));
  CHECK(j.get<PhaseBudgets>() == b);
  CHECK(nlohmann::json::object().get<PhaseBudgets>().phases.empty());  // every default lifted stays lifted
  CHECK_THROWS_AS(nlohmann::json::parse(R"({"compile": {"wall": 5}})").get<PhaseBudgets>(), std::invalid_argument);
  CHECK_THROWS_AS(nlohmann::json::parse(R"({"load": {"wall": -5}})").get<PhaseBudgets>(), std::invalid_argument);
  CHECK_THROWS_AS(nlohmann::json::parse(R"({"load": {"gpu": "5"}})").get<PhaseBudgets>(), std::invalid_argument);
  CHECK_THROWS_AS(nlohmann::json::parse(R"([1])").get<PhaseBudgets>(), std::invalid_argument);
}

TEST_CASE("a phase line is its own kind of line: not a reply, not a lock line") {
  using namespace kagent::protocol;
  nlohmann::json line = phase_line("timing");
  line["id"] = 3;
  line["nonce"] = "n";
  CHECK(phase_of(line) == "timing");
  CHECK_FALSE(lock_event_of(line));
  CHECK(phase_of({{"phase", "newer_phase"}}) == "newer_phase");  // the client ignores what it does not know
  CHECK_FALSE(phase_of(lock_line({LockEvent::Kind::Held, LockMode::Exclusive, 0, ""})));
  CHECK_FALSE(phase_of({{"ok", true}, {"phase", "timing"}}));  // a reply, whatever else it holds
  CHECK_FALSE(phase_of({{"lock", "held"}, {"phase", "timing"}}));
  CHECK_FALSE(phase_of({{"phase", 4}}));
  CHECK_FALSE(phase_of({{"phase", ""}}));
  CHECK_FALSE(phase_of(nlohmann::json::array({"phase"})));
}
