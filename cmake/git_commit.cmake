# SPDX-License-Identifier: Apache-2.0
# Writes OUT, a header defining WRITEPATH_GIT_COMMIT: the commit SRC is checked out at
# ("-dirty" with uncommitted changes), "unknown" outside a git checkout. Run at every build;
# the file is rewritten only when the commit changed, so nothing rebuilds needlessly.
execute_process(COMMAND git -C ${SRC} rev-parse --short=12 HEAD
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE failed ERROR_QUIET)
if(failed OR commit STREQUAL "")
  set(commit "unknown")
else()
  execute_process(COMMAND git -C ${SRC} diff --quiet HEAD RESULT_VARIABLE dirty ERROR_QUIET)
  if(dirty)
    set(commit "${commit}-dirty")
  endif()
endif()
set(text "#pragma once\n#define WRITEPATH_GIT_COMMIT \"${commit}\"\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUT} "${text}")
endif()
