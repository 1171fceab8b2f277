// Serves quicktok's vocabulary files from memory while one encoding loads.
//
// Loading is the only time the library opens files. `pinloom_quicktok_serve` makes the given
// files visible to this thread's opens while tokenizer_snapshots.cpp loads, and hides them again
// after; an open of any other name fails as a missing file would (quicktok treats a missing
// special-tokens file as none).
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "pinloom_quicktok.h"

namespace {

thread_local const pinloom_quicktok_file* files_being_loaded = nullptr;
thread_local size_t files_being_loaded_count = 0;

FILE* open_bytes(const unsigned char* bytes, size_t length) {
#ifdef _WIN32
    // Windows has no fmemopen: an anonymous temporary file, deleted when closed.
    FILE* file = std::tmpfile();
    if (!file) return nullptr;
    if (std::fwrite(bytes, 1, length, file) != length) {
        std::fclose(file);
        return nullptr;
    }
    std::rewind(file);
    return file;
#else
    // Opened for reading only, so the embedded bytes are never written.
    return fmemopen(const_cast<unsigned char*>(bytes), length, "r");
#endif
}

}  // namespace

extern "C" FILE* pinloom_quicktok_fopen(const char* path, const char* mode) {
    (void)mode;  // the library only reads
    const char* slash = std::strrchr(path, '/');
    const char* name = slash ? slash + 1 : path;
    for (size_t i = 0; i < files_being_loaded_count; i++) {
        if (std::strcmp(files_being_loaded[i].name, name) == 0) {
            return open_bytes(files_being_loaded[i].bytes, files_being_loaded[i].length);
        }
    }
    errno = ENOENT;
    return nullptr;
}

extern "C" void pinloom_quicktok_serve(const pinloom_quicktok_file* files, size_t count) {
    files_being_loaded = files;
    files_being_loaded_count = count;
}
