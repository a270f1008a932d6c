# The timer and checker on a real GPU; skipped, saying why, where there is none. Included from tests/gpu/CMakeLists.txt.
kagent_add_test(kagent_timer_gpu_tests
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/timer_gpu_test.cpp
  DEPS kagent_timer kagent_checker
  GPU)
set_target_properties(kagent_timer_gpu_tests PROPERTIES BUILD_RPATH "${TORCH_INSTALL_PREFIX}/lib")
