# Warnings applied per target, so third-party code is never affected.
# -Wno-missing-field-initializers: an option table (cli_opt) leaves its
# trailing short letter out of most rows, zero meaning none.
# -Werror=implicit-function-declaration: C99 removed the implicit int
# function; a file that lost its header's include must not build (a
# pointer return would be cut to an int).
function(rf_target_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes
      -Wmissing-prototypes -Wformat=2 -Wvla -Wno-unused-parameter
      -Wno-missing-field-initializers -Werror=implicit-function-declaration>)
endfunction()
