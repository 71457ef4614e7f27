# Concatenates the OpenCL kernel files (FILES, in order) into one C char array, written to OUT.
# Each file is preceded by a #line directive so that driver build logs name the right file.
string(REPLACE "|" ";" FILES "${FILES}")
set(text "")
foreach(f IN LISTS FILES)
  file(READ "${f}" body)
  get_filename_component(name "${f}" NAME)
  string(APPEND text "#line 1 \"${name}\"\n${body}\n")
endforeach()
# a char array, not a string literal: C11 caps string literals at 4095 characters
string(HEX "${text}" hex)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x..,){32})" "\\1\n" bytes "${bytes}")
file(WRITE "${OUT}" "/* generated from the .cl files of kernels/ by kernels/embed.cmake: do not edit */
#include <stddef.h>
const char dem_kernel_source[] = {
${bytes}0x00};
const size_t dem_kernel_source_len = sizeof(dem_kernel_source) - 1;
")
