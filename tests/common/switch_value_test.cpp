// Environment switches and numbers as every kagent setting reads them.
#include <cstdlib>

#include <doctest/doctest.h>

#include "common/switch_value.h"

using kagent::environment_number;
using kagent::environment_switch;

namespace {
constexpr const char* kVar = "KAGENT_TEST_SWITCH_VALUE";
struct Unset {
  ~Unset() { unsetenv(kVar); }
};
}  // namespace

TEST_CASE("environment_switch: on/off words, the fallback when unset, empty or unknown") {
  Unset unset;
  unsetenv(kVar);
  CHECK(environment_switch(kVar, true));
  setenv(kVar, "", 1);
  CHECK_FALSE(environment_switch(kVar, false));
  setenv(kVar, "off", 1);
  CHECK_FALSE(environment_switch(kVar, true));
  setenv(kVar, "1", 1);
  CHECK(environment_switch(kVar, false));
  setenv(kVar, "maybe", 1);
  CHECK(environment_switch(kVar, true));
}

TEST_CASE("environment_number: a whole number in range, else the fallback") {
  Unset unset;
  unsetenv(kVar);
  CHECK(environment_number(kVar, 32, 0, 4096) == 32);
  setenv(kVar, "", 1);
  CHECK(environment_number(kVar, 32, 0, 4096) == 32);
  setenv(kVar, "0", 1);
  CHECK(environment_number(kVar, 32, 0, 4096) == 0);
  setenv(kVar, "4096", 1);
  CHECK(environment_number(kVar, 32, 0, 4096) == 4096);
  for (const char* bad : {"4097", "-1", "2x", "x2", " 2", "1.5"}) {
    setenv(kVar, bad, 1);
    CHECK_MESSAGE(environment_number(kVar, 32, 0, 4096) == 32, bad);
  }
}
