// The paths a worker is given leave the client absolute (worker/client/request_paths.h): the
// worker runs in its scratch folder, where a relative path would name another file.
#include <doctest/doctest.h>

#include <filesystem>

#include "worker/client/request_paths.h"

using namespace kagent;
namespace fs = std::filesystem;

TEST_CASE("relative paths of a request are made absolute against the caller's working directory") {
  const fs::path here = fs::current_path();
  CHECK(absolute_path("problem.py") == (here / "problem.py").string());
  CHECK(absolute_path("./answers/../answers/a.py") == (here / "answers/a.py").string());
  CHECK(absolute_path("/abs/problem.py") == "/abs/problem.py");
  CHECK(absolute_path("") == "");  // no file: nothing to resolve

  CandidateRef kb{"kernelbench", "", "", "answers/l1_p24.py"};
  kb.extensions.push_back({"key", "cache/ext/lib.so", "ns", {"forward"}, "cache/binding.so"});
  kb.extensions.push_back({"key2", "/abs/lib.so", "ns2", {"forward"}, ""});
  const CandidateRef kb_abs = with_absolute_paths(kb);
  CHECK(kb_abs.path == (here / "answers/l1_p24.py").string());
  CHECK(kb_abs.artifact.empty());
  CHECK(kb_abs.extensions[0].library == (here / "cache/ext/lib.so").string());
  CHECK(kb_abs.extensions[0].binding == (here / "cache/binding.so").string());
  CHECK(kb_abs.extensions[1].library == "/abs/lib.so");
  CHECK(kb_abs.extensions[1].binding.empty());
  CHECK(kb_abs.extensions[0].op_namespace == "ns");  // what is no path stays

  const CandidateRef native = with_absolute_paths(CandidateRef{"cuda", "build/cand.so", "kagent::forward", ""});
  CHECK(native.artifact == (here / "build/cand.so").string());
  CHECK(native.op_name == "kagent::forward");

  EvalOptions o;
  o.cache_dir = "cache";
  CHECK(with_absolute_paths(o).cache_dir == (here / "cache").string());
  o.cache_dir.clear();
  CHECK(with_absolute_paths(o).cache_dir.empty());  // no cache stays no cache
}
