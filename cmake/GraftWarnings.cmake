# Warnings for graft's own targets; -Werror unless GRAFT_WERROR=OFF.
function(graft_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  if(GRAFT_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
