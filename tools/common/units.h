// Byte counts as people read them: "1.5 GiB", "512 MiB", "48 KiB", "12 B".
#pragma once

#include <string>

namespace kagent {

std::string format_bytes(double bytes);

}  // namespace kagent
