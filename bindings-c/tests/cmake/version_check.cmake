# Which requested versions the installed retrypolicyConfigVersion.cmake accepts (make -C bindings-c test-cmake):
#   cmake -DVERSION_FILE=<.../retrypolicyConfigVersion.cmake> -DVERSION=<installed version> -P version_check.cmake
# Expected: SameMinorVersion before 1.0, SameMajorVersion from 1.0 on (README, "ABI and SONAME").
string(REGEX MATCH "^([0-9]+)\\.([0-9]+)\\.([0-9]+)$" _ "${VERSION}")
set(major ${CMAKE_MATCH_1})
set(minor ${CMAKE_MATCH_2})
set(patch ${CMAKE_MATCH_3})
math(EXPR next_minor "${minor} + 1")
math(EXPR next_major "${major} + 1")
set(failures 0)

# Loads the version file as find_package would for a request of `requested` and checks its answer.
function(expect requested compatible)
  set(PACKAGE_FIND_VERSION "${requested}")
  if(requested MATCHES "^([0-9]+)\\.([0-9]+)")
    set(PACKAGE_FIND_VERSION_MAJOR "${CMAKE_MATCH_1}")
    set(PACKAGE_FIND_VERSION_MINOR "${CMAKE_MATCH_2}")
  endif()
  set(CMAKE_SIZEOF_VOID_P 8)
  unset(PACKAGE_VERSION_COMPATIBLE)
  include("${VERSION_FILE}")
  if(NOT PACKAGE_VERSION_COMPATIBLE STREQUAL compatible)
    message(SEND_ERROR "a request for '${requested}': compatible is '${PACKAGE_VERSION_COMPATIBLE}', expected ${compatible}")
  endif()
endfunction()

expect("" TRUE)
expect("${major}.${minor}" TRUE)
expect("${major}.${minor}.${patch}" TRUE)
expect("${major}.${next_minor}" FALSE)
expect("${next_major}.0" FALSE)
if(major STREQUAL "0" AND minor GREATER 0)
  math(EXPR previous_minor "${minor} - 1")
  expect("0.${previous_minor}" FALSE)   # 0.x: another minor is another API
elseif(NOT major STREQUAL "0")
  expect("${major}.0" TRUE)             # from 1.0: any older minor of the same major
endif()
message(STATUS "version_check: ${VERSION} accepts ${major}.${minor}, refuses ${major}.${next_minor} and ${next_major}.0")
