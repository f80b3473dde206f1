# roofline.pc: what a program built against the installed library needs.
#
# Every library is static, so a consumer links all of them and everything
# they link privately. The order is the link order of cli/CMakeLists.txt
# (each archive before the ones it calls): rf_cuda rf_measure rf_io
# rf_report rf_core; then the CUDA runtime when the real backend is built
# (libcudart_static with its rt, dl and pthread, and libstdc++ for nvcc's
# host stubs; cuBLASLt is opened with dlopen, never linked); then pthread
# and m. jansson (rf_io) and openblas (rf_measure) come through Requires,
# which pkg-config places after these.
#
# The prefix is written relative to the .pc file's own folder when the
# install folders are relative, so `cmake --install build --prefix DIR`
# gives a file that points into DIR, not into CMAKE_INSTALL_PREFIX.

set(RF_PC_CUDA_LIBS "")
get_target_property(rf_pc_cuda_sources rf_cuda SOURCES)
if(rf_pc_cuda_sources MATCHES "\\.cu(;|$)")
  # src/cuda found the toolkit already; its variables live in that folder.
  find_package(CUDAToolkit REQUIRED)
  set(RF_PC_CUDA_LIBS "-L${CUDAToolkit_LIBRARY_DIR} -lcudart_static")
  if(CUDAToolkit_rt_LIBRARY)
    string(APPEND RF_PC_CUDA_LIBS " -lrt")
  endif()
  foreach(lib ${CMAKE_DL_LIBS})
    string(APPEND RF_PC_CUDA_LIBS " -l${lib}")
  endforeach()
  string(APPEND RF_PC_CUDA_LIBS " -lstdc++")
endif()

if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(RF_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(RF_PC_LIBDIR "${CMAKE_INSTALL_FULL_LIBDIR}")
  set(RF_PC_INCLUDEDIR "${CMAKE_INSTALL_FULL_INCLUDEDIR}")
else()
  file(RELATIVE_PATH rf_pc_up "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
  string(REGEX REPLACE "/$" "" rf_pc_up "${rf_pc_up}")
  set(RF_PC_PREFIX "\${pcfiledir}/${rf_pc_up}")
  set(RF_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  set(RF_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()

configure_file(${CMAKE_CURRENT_LIST_DIR}/roofline.pc.in ${PROJECT_BINARY_DIR}/roofline.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/roofline.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
# roofline-cli.pc: the command line's library (cli/CMakeLists.txt)
configure_file(${CMAKE_CURRENT_LIST_DIR}/roofline-cli.pc.in ${PROJECT_BINARY_DIR}/roofline-cli.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/roofline-cli.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
