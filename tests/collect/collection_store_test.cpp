// The collection folder: index lines are never doubled, a torn last line is cut on open,
// problem errors are kept, a folder without a collection's manifest is refused, and charges
// (candidates blamed afterwards) are appended.
#include <doctest/doctest.h>

#include <fstream>

#include "collect/charges_file.h"
#include "collection_builder.h"
#include "common/files.h"
#include "common/utf8.h"
#include "temp_dir.h"

using namespace kagent;
using namespace kagent::collect;
using namespace kagent::collect::testing;
using kagent::testing::TempDir;

TEST_CASE("index: one line per (problem, sample), torn tail cut, problem errors") {
  TempDir dir;
  {
    auto store = CollectionStore::create(dir.path(), test_manifest({{"a", 1, {}, ""}}, 2, 1));
    const auto t = trajectory("a", 1, 0, {{Status::Correct, 1.5, 1.2}});
    CHECK(store->record_sample("a", t));
    CHECK_FALSE(store->record_sample("a", t));  // never twice
    CHECK(store->record_problem_error("b", "problem_load_error: x"));
    CHECK_FALSE(store->record_problem_error("b", "again"));
    CHECK_THROWS_AS(CollectionStore::create(dir.path(), store->manifest()), std::runtime_error);
  }
  std::ofstream(dir.path() / kIndexFile, std::ios::app) << "{\"problem\": \"a\", \"sam";  // a kill mid-line
  auto store = CollectionStore::open(dir.path());
  CHECK(store->has_sample("a", 0));
  CHECK_FALSE(store->has_sample("a", 1));
  CHECK(store->problem_error("b") == "problem_load_error: x");
  const std::string index = read_file(dir.path() / kIndexFile);
  CHECK(index.back() == '\n');
  CHECK(std::count(index.begin(), index.end(), '\n') == 2);
  const IndexState st = read_index(dir.path() / kIndexFile);
  REQUIRE(st.samples.count({"a", 0}));
  const auto& line = st.samples.at({"a", 0});
  CHECK(line["correct"] == true);
  CHECK(line["speedup_eager"] == 1.5);
  CHECK(line["turns"] == 1);
  CHECK(line["tokens"] == 150);
}

TEST_CASE("a folder without a collection is refused") {
  TempDir dir;
  CHECK_THROWS_AS(CollectionStore::open(dir.path()), NotACollection);
  dir.write("manifest.json", "{\"kind\": \"something-else\"}");
  CHECK_THROWS_AS(CollectionStore::open(dir.path()), NotACollection);
}

TEST_CASE("charges.jsonl: candidates blamed afterwards, appended one line each") {
  TempDir dir;
  append_charges(dir.path(), {});
  CHECK_FALSE(std::filesystem::exists(dir.path() / kChargesFile));  // nobody charged: no file
  WorkerCharge c{"a/candidates/s0_t1.cu", "/suite/a.py", "b/candidates/s0_t1.cu", "/suite/b.py", "problem_error",
                 "problem_load_error", "Model(...) failed: Offset increment outside graph capture"};
  append_charges(dir.path(), {c});
  append_charges(dir.path(), {c, c});
  std::ifstream in(dir.path() / kChargesFile);
  int lines = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    const auto j = nlohmann::json::parse(line);
    CHECK(j.get<WorkerCharge>().candidate == "a/candidates/s0_t1.cu");
    CHECK(j.contains("at"));
  }
  CHECK(lines == 3);
}

// A candidate's bytes reach the records: compiler output quoting a .cu of random bytes, an
// exception message, the worker's output. nlohmann refuses to write text that is not UTF-8
// (type_error.316, which aborted `kagent eval` of such a file); the records replace those bytes.
TEST_CASE("text that is not UTF-8 in a result, a charge and an index line is written, the bytes replaced") {
  const std::string bad = "garbage \xff\xfe\xc3\x28 end";
  CHECK_FALSE(kagent::is_valid_utf8(bad));
  CHECK(kagent::valid_utf8(bad) == "garbage \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD( end");
  CHECK(kagent::valid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80") == "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  CHECK_FALSE(kagent::is_valid_utf8("\xed\xa0\x80"));  // a surrogate
  CHECK_FALSE(kagent::is_valid_utf8("\xc0\xaf"));      // an overlong '/'

  EvalResult r;
  r.status = Status::CompileError;
  r.message = bad;
  r.worker_log_tail = bad;
  CompileInfo c;
  c.errors = bad;
  c.log = bad;
  r.compile = c;
  std::string text;
  CHECK_NOTHROW(text = nlohmann::json(r).dump());  // plain dump: the result itself is UTF-8 now
  const EvalResult back = nlohmann::json::parse(text).get<EvalResult>();
  CHECK(back.compile->log == kagent::valid_utf8(bad));

  TempDir dir;
  WorkerCharge charge{"a.cu", "/suite/a.py", "b.cu", "/suite/b.py", "runtime_error", "", bad};
  CHECK_NOTHROW(append_charges(dir.path(), {charge}));
  CHECK(kagent::is_valid_utf8(read_file(dir.path() / kChargesFile)));

  auto store = CollectionStore::create(dir.path() / "c", test_manifest({{"a", 1, {}, ""}}, 1, 1));
  auto t = trajectory("a", 1, 0, {{Status::CompileError}});
  t.turns[0].answer = bad;
  t.turns[0].eval->message = bad;
  CHECK(store->record_sample("a", t));
  CHECK(kagent::is_valid_utf8(read_file(dir.path() / "c" / kIndexFile)));
}
