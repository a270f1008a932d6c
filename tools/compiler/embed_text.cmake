# A text file as a C++ string constant, so a binary needs no file at run time.
# Usage: cmake -DINPUT=... -DOUTPUT=... -DNAME=kSomething -P embed_text.cmake
file(READ ${INPUT} content)
file(WRITE ${OUTPUT}.tmp "// Generated from ${INPUT} by embed_text.cmake\n#pragma once\n\n#include <string_view>\n\nnamespace kagent {\ninline constexpr std::string_view ${NAME} = R\"KAGENT_TEXT(${content})KAGENT_TEXT\";\n}  // namespace kagent\n")
file(COPY_FILE ${OUTPUT}.tmp ${OUTPUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUTPUT}.tmp)
