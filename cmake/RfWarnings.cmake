# Warnings applied per target, so third-party code is never affected.
function(rf_target_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes
      -Wmissing-prototypes -Wformat=2 -Wvla -Wno-unused-parameter>)
endfunction()
