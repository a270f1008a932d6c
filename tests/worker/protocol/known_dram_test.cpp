// The DRAM bandwidth a worker takes instead of measuring: only its own GPU's, only a number.
#include <doctest/doctest.h>

#include "worker/protocol/known_dram.h"

using namespace kagent;

TEST_CASE("a known DRAM bandwidth: for its GPU's UUID only") {
  const std::string uuid = "GPU-1b2c3d4e-aaaa-bbbb-cccc-0123456789ab";
  const std::string line = known_dram_env(uuid, 3979.6);
  REQUIRE(line.rfind(std::string(kKnownDramEnv) + "=", 0) == 0);
  const std::string value = line.substr(std::string(kKnownDramEnv).size() + 1);
  CHECK(known_dram_gbps(value.c_str(), uuid) == doctest::Approx(3979.6));
  CHECK_FALSE(known_dram_gbps(value.c_str(), "GPU-another"));
  CHECK_FALSE(known_dram_gbps(value.c_str(), uuid.substr(0, 10)));
  CHECK_FALSE(known_dram_gbps(nullptr, uuid));
  CHECK_FALSE(known_dram_gbps(value.c_str(), ""));
  for (const char* bad : {"", "=12", "GPU-1b2c3d4e-aaaa-bbbb-cccc-0123456789ab=", "GPU-1b2c3d4e-aaaa-bbbb-cccc-0123456789ab=fast",
                          "GPU-1b2c3d4e-aaaa-bbbb-cccc-0123456789ab=-5", "GPU-1b2c3d4e-aaaa-bbbb-cccc-0123456789ab=nan",
                          "GPU-1b2c3d4e-aaaa-bbbb-cccc-0123456789ab=12x"})
    CHECK_FALSE(known_dram_gbps(bad, uuid));
}
