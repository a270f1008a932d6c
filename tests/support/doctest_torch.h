// Include last in a doctest suite that includes torch's headers: c10's logging defines CHECK
// over doctest's (quietly: torch's headers are system headers), and a failing c10 CHECK
// aborts the whole test program instead of being reported and counted.
#pragma once

#include <doctest/doctest.h>

#ifdef CHECK
#undef CHECK
#endif
#define CHECK DOCTEST_CHECK
