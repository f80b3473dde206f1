# Build type "Asan": AddressSanitizer + UndefinedBehaviorSanitizer, with
# UBSan errors fatal so a test fails instead of printing and passing.
set(RF_SAN_FLAGS "-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all")
set(CMAKE_C_FLAGS_ASAN "${RF_SAN_FLAGS}" CACHE STRING "C flags for the Asan build" FORCE)
set(CMAKE_EXE_LINKER_FLAGS_ASAN "-fsanitize=address,undefined" CACHE STRING "" FORCE)
set(CMAKE_SHARED_LINKER_FLAGS_ASAN "-fsanitize=address,undefined" CACHE STRING "" FORCE)
