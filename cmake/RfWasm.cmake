# The interactive explorer of `roofline report`: the command line compiled
# to WebAssembly by emscripten (wasm/CMakeLists.txt, a build of its own
# under <build>/wasm), then embedded in the binary with the page's script
# and style (wasm/embed.c writes them as C arrays) for src/report/explorer.c.
#
# RF_WASM (default ON) builds it when emcc and emcmake are found; without
# them the report is the static page it was before and says so in a note.
# Debian's emscripten runs its tools with a Node.js that does not search
# Debian's module folder, hence NODE_PATH=/usr/share/nodejs on every call
# (the configure here, each compile and the link through the sub-build's
# launchers; the build itself runs in make's job server, -j as the parent).
option(RF_WASM "Build the WebAssembly explorer into roofline report when emcc is found" ON)
set(RF_EXPLORER_BUILT 0)
if(RF_WASM)
  find_program(RF_EMCMAKE emcmake)
  find_program(RF_EMCC emcc)
  # the command line's analytic sources as cli/CMakeLists.txt lists them
  # (less the lab in cli/lab/: measure, bench and profile, which time the
  # machine)
  get_property(cli_sources GLOBAL PROPERTY RF_CLI_ANALYTIC_SOURCES)
  # jansson compiled from Debian's source package (scripts/deps.sh
  # fetches it into .deps/jansson), the same library the native build links
  set(RF_JANSSON_SOURCE_DIR ${PROJECT_SOURCE_DIR}/.deps/jansson CACHE PATH
    "jansson's source tree for the WebAssembly build (apt-get source jansson)")
  if(RF_EMCMAKE AND RF_EMCC AND cli_sources AND NOT EXISTS ${RF_JANSSON_SOURCE_DIR}/src/dump.c)
    message(STATUS "roofline: no jansson source in ${RF_JANSSON_SOURCE_DIR} "
                   "(scripts/deps.sh fetches it with apt-get source jansson); "
                   "roofline report writes a static page")
  elseif(RF_EMCMAKE AND RF_EMCC AND cli_sources)
    set(RF_EXPLORER_BUILT 1)
  elseif(RF_EMCMAKE AND RF_EMCC)
    message(STATUS "roofline: cli/CMakeLists.txt publishes no RF_CLI_ANALYTIC_SOURCES; "
                   "roofline report writes a static page")
  else()
    message(STATUS "roofline: emcc not found; roofline report writes a static page "
                   "(Debian: apt-get install emscripten)")
  endif()
endif()

set(rf_explorer_sources ${PROJECT_SOURCE_DIR}/src/report/explorer.c)
if(RF_EXPLORER_BUILT)
  include(ExternalProject)
  # The sources: the layers' own lists (what the native build compiles),
  # the command line's analytic commands (the native `roofline` binary's).
  set(wasm_sources "")
  foreach(lib rf_core rf_io rf_report rf_view)
    get_target_property(srcs ${lib} SOURCES)
    get_target_property(dir ${lib} SOURCE_DIR)
    list(TRANSFORM srcs PREPEND ${dir}/ REGEX "^[^/]") # generated sources are absolute
    list(APPEND wasm_sources ${srcs})
  endforeach()
  list(APPEND wasm_sources ${cli_sources} ${PROJECT_SOURCE_DIR}/src/report/explorer.c)
  set(wasm_bin ${CMAKE_BINARY_DIR}/wasm)
  set(wasm_list ${CMAKE_BINARY_DIR}/wasm-sources.cmake)
  file(WRITE ${wasm_list}.new
    "set(RF_WASM_SOURCES \"${wasm_sources}\")\n"
    "set(RF_WASM_INCLUDES \"${PROJECT_SOURCE_DIR}/include;${PROJECT_SOURCE_DIR}/cli\")\n"
    "set(RF_JANSSON_SOURCE_DIR \"${RF_JANSSON_SOURCE_DIR}\")\n"
    "set(RF_VERSION \"${PROJECT_VERSION}\")\n"
    "set(RF_GPU_DATA_SRC \"${PROJECT_SOURCE_DIR}/data/gpu\")\n")
  file(COPY_FILE ${wasm_list}.new ${wasm_list} ONLY_IF_DIFFERENT)
  # emcc is a script that runs ${EMSDK_PYTHON:-python3}: where python3 on the
  # PATH is a version manager's shim (pyenv here: a bash script that forks
  # a dozen more), that costs 0.3 s of each of the ~170 calls; Debian's
  # emscripten depends on Debian's /usr/bin/python3, which starts at once.
  # A user's own EMSDK_PYTHON wins.
  set(emsdk_python "$ENV{EMSDK_PYTHON}")
  if(NOT emsdk_python AND EXISTS /usr/bin/python3)
    set(emsdk_python /usr/bin/python3)
  endif()
  set(node_env ${CMAKE_COMMAND} -E env "NODE_PATH=/usr/share/nodejs$ENV{NODE_PATH}")
  if(emsdk_python)
    list(APPEND node_env "EMSDK_PYTHON=${emsdk_python}")
  endif()
  ExternalProject_Add(rf_wasm
    SOURCE_DIR ${PROJECT_SOURCE_DIR}/wasm
    BINARY_DIR ${wasm_bin}
    CONFIGURE_COMMAND ${node_env} ${RF_EMCMAKE} ${CMAKE_COMMAND} -S <SOURCE_DIR> -B <BINARY_DIR>
      -DCMAKE_BUILD_TYPE=MinSizeRel -DRF_WASM_SOURCES_FILE=${wasm_list}
      "-DRF_NODE_PATH=/usr/share/nodejs$ENV{NODE_PATH}" "-DRF_EMSDK_PYTHON=${emsdk_python}"
    INSTALL_COMMAND ""
    BUILD_ALWAYS ON
    BUILD_BYPRODUCTS ${wasm_bin}/roofline.js)
  ExternalProject_Add_StepDependencies(rf_wasm configure ${wasm_list})

  add_executable(rf_embed ${PROJECT_SOURCE_DIR}/wasm/embed.c)
  rf_target_warnings(rf_embed)
  set(assets ${CMAKE_BINARY_DIR}/explorer_assets.c)
  add_custom_command(OUTPUT ${assets}
    COMMAND rf_embed ${assets} rf__explorer_module ${wasm_bin}/roofline.js
            rf__explorer_script ${PROJECT_SOURCE_DIR}/web/explorer.js
            rf__explorer_style ${PROJECT_SOURCE_DIR}/web/explorer.css
    DEPENDS rf_embed rf_wasm ${wasm_bin}/roofline.js ${PROJECT_SOURCE_DIR}/web/explorer.js
            ${PROJECT_SOURCE_DIR}/web/explorer.css
    COMMENT "Embedding the WebAssembly explorer")
  list(APPEND rf_explorer_sources ${assets})
  # the texts are string literals of up to a megabyte (wasm/embed.c):
  # longer than ISO C's minimum of 4095, which -Wpedantic warns of, and
  # which GCC and Clang read whatever their length
  set_source_files_properties(${assets} PROPERTIES COMPILE_OPTIONS -Wno-overlength-strings)
endif()

add_library(rf_explorer STATIC ${rf_explorer_sources})
target_link_libraries(rf_explorer PUBLIC rf_report)
target_include_directories(rf_explorer PRIVATE ${PROJECT_SOURCE_DIR}/src/report)
target_compile_definitions(rf_explorer PRIVATE RF_EXPLORER_BUILT=${RF_EXPLORER_BUILT})
rf_target_warnings(rf_explorer)
install(TARGETS rf_explorer ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
