# The profiler on a real GPU (profiler_gpu_test.cpp) and profiler_probe, the program
# scripts/ncu_check.sh runs under Nsight Compute; both launch the kernels of
# profiler_kernels.cu (sm_80 and sm_90 code, PTX for newer GPUs). Included from CMakeLists.txt.
add_library(kagent_profiler_test_kernels STATIC ${CMAKE_CURRENT_LIST_DIR}/profiler_kernels.cu)
# CMake 3.25 knows no C++20 flag for nvcc 13; the kernels need C++17 only.
set_target_properties(kagent_profiler_test_kernels PROPERTIES CUDA_ARCHITECTURES "80-real;90" CUDA_STANDARD 17)
target_include_directories(kagent_profiler_test_kernels PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_compile_options(kagent_profiler_test_kernels PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>
                       $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<BOOL:${KAGENT_WERROR}>>:-Xcompiler=-Werror>)
target_link_libraries(kagent_profiler_test_kernels PUBLIC CUDA::cudart)

kagent_add_test(kagent_profiler_gpu_tests
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/profiler_gpu_test.cpp
  DEPS kagent_profiler kagent_profiler_test_kernels kagent_timer
  GPU)
set_target_properties(kagent_profiler_gpu_tests PROPERTIES BUILD_RPATH "${TORCH_INSTALL_PREFIX}/lib")
# The busy-counters case runs profiler_probe --hold-counters as the other process.
target_compile_definitions(kagent_profiler_gpu_tests PRIVATE KAGENT_PROFILER_PROBE="$<TARGET_FILE:profiler_probe>")
add_dependencies(kagent_profiler_gpu_tests profiler_probe)

add_executable(profiler_probe ${CMAKE_CURRENT_LIST_DIR}/profiler_probe.cpp)
target_compile_options(profiler_probe PRIVATE ${KAGENT_WARNINGS})
target_link_libraries(profiler_probe PRIVATE kagent_profiler kagent_profiler_test_kernels kagent_timer)
set_target_properties(profiler_probe PROPERTIES BUILD_RPATH "${TORCH_INSTALL_PREFIX}/lib")
set_target_properties(profiler_probe PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
