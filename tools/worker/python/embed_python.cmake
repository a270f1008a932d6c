# Turns the kagent_worker package (its .py files) into a C++ header, so the worker binary
# needs no file at run time: one {module name, file name, source} entry per module.
# Usage: cmake -DPACKAGE_DIR=... -DOUTPUT=... -P embed_python.cmake
file(GLOB files RELATIVE ${PACKAGE_DIR} ${PACKAGE_DIR}/*.py)
list(SORT files)
set(entries "")
foreach(f IN LISTS files)
  file(READ ${PACKAGE_DIR}/${f} content)
  string(REGEX REPLACE "\\.py$" "" stem ${f})
  if(stem STREQUAL "__init__")
    set(module "kagent_worker")
  else()
    set(module "kagent_worker.${stem}")
  endif()
  string(APPEND entries "    {\"${module}\", \"kagent_worker/${f}\", R\"KAGENT_PY(${content})KAGENT_PY\"},\n")
endforeach()
file(WRITE ${OUTPUT}.tmp "// Generated from tools/worker/python/kagent_worker/*.py by embed_python.cmake\n#pragma once\n\nnamespace kagent::worker {\nstruct EmbeddedModule {\n  const char* name;\n  const char* file;\n  const char* source;\n};\ninline constexpr EmbeddedModule kKagentWorkerModules[] = {\n${entries}};\n}  // namespace kagent::worker\n")
# Unchanged content keeps the header's timestamp, so nothing recompiles needlessly.
file(COPY_FILE ${OUTPUT}.tmp ${OUTPUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUTPUT}.tmp)
