// Included before each of quicktok's own source files (build.rs passes it with -include): the
// library opens its vocabularies by path with fopen, and Pinloom embeds them in the program, so
// the library's fopen is this one, which serves the embedded bytes (embedded_files.cpp).
#pragma once
#include <cstdio>

extern "C" FILE* pinloom_quicktok_fopen(const char* path, const char* mode);

#define fopen pinloom_quicktok_fopen
