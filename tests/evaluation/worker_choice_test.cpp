// choose_worker: the evaluation pool's rule for handing a free worker to a waiting request.
#include "evaluation/worker_choice.h"

#include <doctest/doctest.h>

#include "support/temp_dir.h"

using kagent::choose_worker;
using kagent::problem_affinity_key;

namespace {

struct Case {
  std::vector<std::set<std::string>> workers;  // what each free worker holds, free longest first
  std::vector<std::string> queue;              // each request's problem, oldest first
  kagent::WorkerChoice choose(bool overdue = false) const {
    std::vector<const std::set<std::string>*> w;
    for (const auto& s : workers) w.push_back(&s);
    std::vector<const std::string*> q;
    for (const auto& p : queue) q.push_back(&p);
    return choose_worker(w, q, overdue);
  }
};

}  // namespace

TEST_CASE("without a worker that holds a waiting problem, the oldest request takes the worker free longest") {
  const Case c{{{"a"}, {"b"}}, {"c", "d"}};
  const auto got = c.choose();
  CHECK(got.request == 0);
  CHECK(got.worker == 0);
}

TEST_CASE("a free worker goes to the oldest request whose problem it holds") {
  const Case c{{{"a"}, {"b", "x"}}, {"c", "x", "b"}};
  const auto got = c.choose();
  CHECK(got.request == 1);  // "x": held by the second free worker; "c" is held by none
  CHECK(got.worker == 1);
}

TEST_CASE("of two free workers that hold the problem, the one free longest") {
  const Case c{{{"x"}, {"x"}}, {"x"}};
  CHECK(c.choose().worker == 0);
}

TEST_CASE("a request passed over too often is served next, on the worker free longest") {
  const Case c{{{"a"}, {"x"}}, {"c", "x"}};
  const auto got = c.choose(/*front_overdue=*/true);
  CHECK(got.request == 0);
  CHECK(got.worker == 0);
}

TEST_CASE("a request for no problem in particular never matches a worker") {
  const Case c{{{"", "y"}}, {"", "y"}};
  CHECK(c.choose().request == 1);
}

TEST_CASE("a problem is held by its text: the same file under another name matches, another text does not") {
  // The leaderboard's answers each come with their problem under the answer's name: a worker that
  // drew l1_p37's trials for one answer is the one to take the next answer to l1_p37.
  const kagent::testing::TempDir dir("kagent-affinity-test");
  const std::string text = "import torch\nclass Model(torch.nn.Module):\n    pass\n";
  const std::string a = dir.write("l1_p37_gpt4o.py", text);
  const std::string b = dir.write("l1_p37_deepseekcoder.py", text);
  const std::string c = dir.write("l1_p38_gpt4o.py", text + "# another\n");
  CHECK(problem_affinity_key(a) == problem_affinity_key(b));
  CHECK(problem_affinity_key(a) != problem_affinity_key(c));
  CHECK(problem_affinity_key(a).rfind("text:", 0) == 0);
  const Case pick{{{"x"}, {problem_affinity_key(a)}}, {"y", problem_affinity_key(b)}};
  CHECK(pick.choose().request == 1);
  CHECK(pick.choose().worker == 1);
  // Unreadable: the path itself (the request then reports the file); no problem: nothing.
  const std::string missing = (dir.path() / "gone.py").string();
  CHECK(problem_affinity_key(missing) == missing);
  CHECK(problem_affinity_key("").empty());
}
