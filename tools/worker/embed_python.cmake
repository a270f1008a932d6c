# Turns kagent_worker.py into a C++ header so the worker binary needs no file at run time.
file(READ ${INPUT} content)
file(WRITE ${OUTPUT} "// Generated from tools/worker/kagent_worker.py\n#pragma once\ninline constexpr const char* kKagentWorkerPy = R\"KAGENT_PY(${content})KAGENT_PY\";\n")
