// choose_worker: the evaluation pool's rule for handing a free worker to a waiting request.
#include "evaluation/worker_choice.h"

#include <doctest/doctest.h>

using kagent::choose_worker;

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
