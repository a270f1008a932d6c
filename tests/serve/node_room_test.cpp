// NodeRoom: the jobs a cluster node holds beyond those on its workers. All its compile slots until
// it has seen a job through; then the builds that keep its workers fed plus one answer ready per
// worker, between its workers and its compile slots.
#include <doctest/doctest.h>

#include "serve/queue/node_room.h"

using kagent::serve::NodeRoom;

TEST_CASE("a node holds what keeps its workers fed, between its workers and its compile slots") {
  NodeRoom room(4, 12);
  // Nothing seen yet: one job per compile slot beyond the workers, as the consumers took before.
  CHECK(room.most_ahead() == 12);
  CHECK(room.has_room(15, 4));
  CHECK_FALSE(room.has_room(16, 4));
  // Lock-bound: 4 workers at 4 s an answer use up one a second; builds of 2 s: 2 building and 4
  // ready.
  for (int i = 0; i < 30; ++i) room.finished(2.0, 4.0);
  CHECK(room.most_ahead() == 6);
  CHECK(room.has_room(9, 4));
  CHECK_FALSE(room.has_room(10, 4));
  CHECK_FALSE(room.has_room(6, 0));  // six ahead and none on a worker yet: no more
  // Quick evaluations and slow builds: as many as the compile slots, no more.
  for (int i = 0; i < 30; ++i) room.finished(8.0, 1.0);
  CHECK(room.most_ahead() == 12);
  // Cached builds: one ready per worker.
  for (int i = 0; i < 60; ++i) room.finished(0.0, 3.0);
  CHECK(room.most_ahead() == 4);
  // An evaluation that did not run (a compile error) says nothing of the workers' pace.
  room.finished(5.0, 0.0);
  CHECK(room.most_ahead() == 4);
}

TEST_CASE("a node's room follows a change of load within a few jobs") {
  NodeRoom room(4, 12);
  for (int i = 0; i < 30; ++i) room.finished(2.0, 4.0);
  REQUIRE(room.most_ahead() == 6);
  for (int i = 0; i < 10; ++i) room.finished(2.0, 1.0);  // the workers became four times as quick
  CHECK(room.most_ahead() >= 10);
}
