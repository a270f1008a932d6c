#include <doctest/doctest.h>

#include <unistd.h>

#include "common/json_lines.h"
#include "common/subprocess.h"

using namespace kagent;
using namespace std::chrono_literals;

TEST_CASE("messages cross a pipe whole, split across writes or several in one") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  Fd r(fds[0]), w(fds[1]);
  JsonLineReader reader(r.get());
  write_json_line(w.get(), {{"a", 1}});
  write_json_line(w.get(), {{"b", "two\nlines"}});
  auto m1 = reader.read(1s);
  REQUIRE(m1.state == JsonLineReader::State::Message);
  CHECK(m1.message["a"] == 1);
  auto m2 = reader.read(1s);
  CHECK(m2.message["b"] == "two\nlines");
  CHECK(reader.read(50ms).state == JsonLineReader::State::Timeout);
  REQUIRE(::write(w.get(), "{\"c\":", 5) == 5);
  CHECK(reader.read(50ms).state == JsonLineReader::State::Timeout);
  REQUIRE(::write(w.get(), "3}\n", 3) == 3);
  CHECK(reader.read(1s).message["c"] == 3);
  REQUIRE(::write(w.get(), "not json\n", 9) == 9);
  CHECK_THROWS_AS(reader.read(1s), std::runtime_error);
  w.reset();
  CHECK(reader.read(1s).state == JsonLineReader::State::Closed);
}

TEST_CASE("a timeout of 0 looks once: a message already in the pipe is read, none is a timeout") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  Fd r(fds[0]), w(fds[1]);
  JsonLineReader reader(r.get());
  CHECK(reader.read(0ms).state == JsonLineReader::State::Timeout);
  write_json_line(w.get(), {{"a", 1}});
  auto m = reader.read(0ms);
  REQUIRE(m.state == JsonLineReader::State::Message);
  CHECK(m.message["a"] == 1);
}
