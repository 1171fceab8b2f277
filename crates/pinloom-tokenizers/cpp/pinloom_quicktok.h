// Pinloom's C surface over quicktok, declared once: `tokenizer_snapshots.cpp` and
// `embedded_files.cpp` include this file, and `src/lib.rs` (module `foreign`) declares the same
// functions and struct on the Rust side, field for field.
#ifndef PINLOOM_QUICKTOK_H
#define PINLOOM_QUICKTOK_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// One vocabulary file, served from memory while an encoding loads.
struct pinloom_quicktok_file {
    const char* name;
    const unsigned char* bytes;
    size_t length;
};

// A loaded tokenizer.
struct pinloom_tokenizer;

// embedded_files.cpp: which files the library's opens on this thread see while it loads (none
// after a call with no files).
void pinloom_quicktok_serve(const struct pinloom_quicktok_file* files, size_t count);

// Loads `encoding` from its vocabulary files (the slow way), or returns NULL with a reason.
struct pinloom_tokenizer* pinloom_quicktok_load(const char* encoding,
                                                const struct pinloom_quicktok_file* files,
                                                size_t count, char* error, size_t error_length);

// The loaded tokenizer's tables as a snapshot's body (its framing is the Rust side's),
// allocated with malloc: free it with pinloom_quicktok_free_bytes. Returns 0 on success.
int pinloom_quicktok_save(struct pinloom_tokenizer* tokenizer, unsigned char** bytes,
                          size_t* length);

void pinloom_quicktok_free_bytes(unsigned char* bytes);

// Loads `encoding` with the tables of a snapshot body pinloom_quicktok_save made, after checking
// its layout and every table against the vocabulary; NULL with a reason otherwise.
struct pinloom_tokenizer* pinloom_quicktok_restore(const char* encoding,
                                                   const struct pinloom_quicktok_file* files,
                                                   size_t count, const unsigned char* bytes,
                                                   size_t length, char* error,
                                                   size_t error_length);

// The token count of `text`, or (size_t)-1 on error.
size_t pinloom_quicktok_count(const struct pinloom_tokenizer* tokenizer, const char* text,
                              size_t length);

#ifdef __cplusplus
}
#endif

#endif
