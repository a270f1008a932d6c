// A turn's SASS in the run folder: copied beside the candidate, named by the record relative to
// the run folder, and it opens after the record is read back; a copy that fails is a missing
// SASS with the reason, the verdict untouched.
#include <doctest/doctest.h>

#include "common/files.h"
#include "common/gzip_file.h"
#include "traj_test_util.h"
#include "trajectory/run_store.h"
#include "trajectory/sass_file.h"

using namespace kagent;
using namespace kagent::traj;
using namespace kagent::traj::testing;
namespace fs = std::filesystem;

namespace {

const char* kSass = "\tcode for sm_90a\n\t\tFunction : _Z4reluPKfPfl\n        /*0000*/  LDG.E.128 R4, desc[UR4][R2.64] ;\n";

Turn turn_with_sass(const std::string& file) {
  Turn t = make_turn(0, Status::Correct, 1.5);
  CompileInfo c;
  c.ok = true;
  SassInfo s;
  s.available = true;
  s.arch = "sm_90a";
  s.file = file;
  s.kernels.push_back({});
  s.kernels.back().kernel = "relu(float const*, float*, long)";
  c.sass = s;
  t.eval->compile = c;
  return t;
}

}  // namespace

TEST_CASE("SASS file: beside the candidate, referred to from the trajectory, and it opens") {
  TempDir tmp;
  const fs::path cached = tmp.path() / "cache" / "candidate.sass.gz";
  fs::create_directories(cached.parent_path());
  write_gzip_file(cached, kSass);
  RunStoreOptions o;
  o.durable = false;
  auto store = RunStore::create_at(tmp.path() / "run", {{"problem", "19_ReLU.py"}}, o);
  const fs::path candidate = store->dir() / "candidates" / "s0-t1.cu";
  fs::create_directories(candidate.parent_path());
  write_file_atomic(candidate, "__global__ void relu() {}");

  Turn turn = turn_with_sass(cached.string());
  keep_sass_beside(*turn.eval, candidate, store->dir());
  CHECK(turn.eval->compile->sass->file == "candidates/s0-t1.sass.gz");
  Trajectory t = make_trajectory(0);
  t.turns = {turn};
  t.status = SampleStatus::Finished;
  store->finish_sample(t);

  fs::remove_all(tmp.path() / "cache");  // the run keeps its own copy
  const ResumeState back = RunStore::scan(store->dir());
  REQUIRE(back.finished.count(0) == 1);
  const auto& sass = back.finished.at(0).turns.at(0).eval->compile->sass;
  REQUIRE(sass.has_value());
  CHECK(sass->available);
  CHECK(sass->kernels.at(0).kernel == "relu(float const*, float*, long)");
  CHECK(read_gzip_file(store->dir() / sass->file) == kSass);
}

TEST_CASE("SASS file: a copy that fails leaves the verdict and says why the SASS is missing") {
  TempDir tmp;
  Turn turn = turn_with_sass((tmp.path() / "gone.sass.gz").string());
  keep_sass_beside(*turn.eval, tmp.path() / "candidates" / "s0-t1.cu", tmp.path());
  CHECK(turn.eval->status == Status::Correct);
  const auto& sass = *turn.eval->compile->sass;
  CHECK_FALSE(sass.available);
  CHECK(sass.file.empty());
  CHECK(sass.missing_reason.find("gone.sass.gz") != std::string::npos);
  // Nothing to copy: untouched.
  Turn plain = make_turn(1, Status::CompileError);
  keep_sass_beside(*plain.eval, tmp.path() / "candidates" / "s0-t2.cu", tmp.path());
  CHECK_FALSE(plain.eval->compile.has_value());
}

TEST_CASE("read_gzip_file: a damaged or missing file is an error naming it") {
  TempDir tmp;
  write_file_atomic(tmp.path() / "bad.gz", std::string("\x1f\x8b\x08\x00garbage", 12));
  CHECK_THROWS_WITH_AS(read_gzip_file(tmp.path() / "bad.gz"), doctest::Contains("bad.gz"), std::runtime_error);
  CHECK_THROWS_WITH_AS(read_gzip_file(tmp.path() / "none.gz"), doctest::Contains("none.gz"), std::runtime_error);
}
