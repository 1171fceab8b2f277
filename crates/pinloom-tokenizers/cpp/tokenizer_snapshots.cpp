// Pinloom's C surface over quicktok, and vocabulary snapshots.
//
// Loading a vocabulary builds its tries and pair tables from the token list: 0.1-0.7 s for one
// encoding, on every process start. A command-line program pays that on each run, so after the
// first load the built tables are saved as one flat snapshot (see the Rust side for where), and
// later loads read them back instead of building them again (a few milliseconds).
//
// The release's quicktok.cpp is compiled as part of this file, unedited, so that the tables of a
// loaded tokenizer can be reached; its cabi.cpp is not compiled: the functions below are the
// whole surface the crate calls.
#include "quicktok.cpp"

#include <cstdlib>
#include <new>

#ifdef __linux__
#include <sys/mman.h>
#include <unistd.h>
#endif

extern "C" {
struct pinloom_quicktok_file {
    const char* name;
    const unsigned char* bytes;
    size_t length;
};
// embedded_files.cpp: which files the library's opens on this thread see while it loads.
void pinloom_quicktok_serve(const pinloom_quicktok_file* files, size_t count);
}

struct pinloom_tokenizer {
    quicktok::Tokenizer tok;
    explicit pinloom_tokenizer(quicktok::Tokenizer&& t) : tok(std::move(t)) {}
};

namespace {

using quicktok::detail::Vocab;

// A tokenizer keeps its tables behind a private pointer. Template arguments of an explicit
// instantiation may name private members ([temp.spec.general]), so this instantiation hands the
// pointer-to-member to a friend function: the standard-conforming way to reach the tables
// without editing the release.
auto& tables_of(quicktok::Tokenizer& tokenizer);
template <auto Member>
struct tables_access {
    friend auto& tables_of(quicktok::Tokenizer& tokenizer) { return (tokenizer.*Member)->V; }
};
template struct tables_access<&quicktok::Tokenizer::impl>;

// The snapshot's first bytes, and what must match between the build that wrote it and the build
// that reads it: the table layout depends on these compile-time sizes.
constexpr char MAGIC[8] = {'P', 'L', 'Q', 'T', 'S', 'N', 'P', '1'};
constexpr uint32_t ENDIAN_MARK = 0x01020304u;
constexpr uint32_t LAYOUT[] = {ENDIAN_MARK, (uint32_t)sizeof(size_t), IVBITS, IVBITS_W,
                               (uint32_t)sizeof(Vocab::root_child)};

// FNV-1a over 8-byte words: enough to tell a damaged file from a good one (the snapshot is a
// cache the program wrote itself, not input from elsewhere), and fast over tens of megabytes.
uint64_t checksum(const uint8_t* bytes, size_t length) {
    uint64_t hash = 0xcbf29ce484222325ull;
    size_t i = 0;
    for (; i + 8 <= length; i += 8) {
        uint64_t word;
        std::memcpy(&word, bytes + i, 8);
        hash = (hash ^ word) * 0x100000001b3ull;
    }
    for (; i < length; i++) hash = (hash ^ bytes[i]) * 0x100000001b3ull;
    return hash;
}

struct Writer {
    std::vector<uint8_t> out;
    void put(const void* bytes, size_t length) {
        const uint8_t* from = static_cast<const uint8_t*>(bytes);
        out.insert(out.end(), from, from + length);
    }
    template <class T>
    void value(T v) { put(&v, sizeof v); }
    template <class T>
    void list(const std::vector<T>& items) {
        value<uint64_t>(items.size());
        put(items.data(), items.size() * sizeof(T));
    }
};

struct Reader {
    const uint8_t* at;
    const uint8_t* end;
    bool ok = true;
    void take(void* into, size_t length) {
        if (!ok || (size_t)(end - at) < length) { ok = false; return; }
        std::memcpy(into, at, length);
        at += length;
    }
    template <class T>
    T value() { T v{}; take(&v, sizeof v); return v; }
    template <class T>
    void list(std::vector<T>& items) {
        uint64_t count = value<uint64_t>();
        if (!ok || count > (uint64_t)(end - at) / sizeof(T)) { ok = false; return; }
        items.resize((size_t)count);
        take(items.data(), (size_t)count * sizeof(T));
    }
};

void write_tables(Writer& w, const Vocab& V) {
    w.value(V.n);
    w.list(V.all);
    w.list(V.tstart);
    w.list(V.tlen);
    w.list(V.etab);
    w.value(V.emask);
    w.put(V.root_child, sizeof V.root_child);
    w.list(V.r2node);
    w.list(V.r2best);
    w.list(V.tnode_tok);
    w.list(V.npm);
    w.list(V.split);
    w.list(V.plk);
    w.value(V.plmask);
    w.value(V.ivmask);
    w.value<uint8_t>(V.wide_ids);
    // The pair memos are caches filled while counting: only their sizes are kept.
    w.value<uint64_t>(V.ivm.size());
    w.value<uint64_t>(V.ivmw.size());
    w.list(V.e2);
    w.value(V.e2mask);
    w.value(V.e2tb);
    w.list(V.otab);
    w.value(V.omask);
    w.list(V.r3node);
    w.list(V.r3best);
}

// Reads the tables back and checks that their sizes agree with each other, so that no index the
// encoder computes from them can leave a table. `b2id` (bytes to id) stays empty: only
// `Tokenizer::token_id` reads it, and Pinloom only counts.
bool read_tables(Reader& r, Vocab& V) {
    V.n = r.value<uint32_t>();
    r.list(V.all);
    r.list(V.tstart);
    r.list(V.tlen);
    r.list(V.etab);
    V.emask = r.value<uint32_t>();
    r.take(V.root_child, sizeof V.root_child);
    r.list(V.r2node);
    r.list(V.r2best);
    r.list(V.tnode_tok);
    r.list(V.npm);
    r.list(V.split);
    r.list(V.plk);
    V.plmask = r.value<uint32_t>();
    V.ivmask = r.value<uint32_t>();
    V.wide_ids = r.value<uint8_t>() != 0;
    uint64_t memo = r.value<uint64_t>(), wide_memo = r.value<uint64_t>();
    r.list(V.e2);
    V.e2mask = r.value<uint32_t>();
    V.e2tb = r.value<uint32_t>();
    r.list(V.otab);
    V.omask = r.value<uint32_t>();
    r.list(V.r3node);
    r.list(V.r3best);
    if (!r.ok || r.at != r.end) return false;
    const uint64_t n = V.n;
    bool sizes = n > 0 && n <= (1u << 18) && V.tstart.size() == n + 1 && V.tlen.size() == n &&
                 V.tstart[n] == V.all.size() && V.npm.size() == n && V.split.size() == n &&
                 V.etab.size() == (uint64_t)V.emask + 1 && V.plk.size() == (uint64_t)V.plmask + 1 &&
                 V.e2.size() == (uint64_t)V.e2mask + 1 && V.otab.size() == (uint64_t)V.omask + 1 &&
                 V.r2node.size() == 65536 && V.r2best.size() == 65536 &&
                 V.r3node.size() == 65536 && V.r3best.size() == 65536 && !V.tnode_tok.empty() &&
                 V.tnode_tok.size() < (1u << 20) &&
                 memo == (V.wide_ids ? 0 : (1u << IVBITS)) &&
                 wide_memo == (V.wide_ids ? (1u << IVBITS_W) : 0) &&
                 V.ivmask == (1u << IVBITS) - 1;
    if (!sizes) return false;
    V.ivm.assign((size_t)memo, 0);
    V.ivmw.assign((size_t)wide_memo, 0);
    return true;
}

// The pair memos are caches that start all zero and fill as text is counted (8 MB for o200k's,
// 2 MB for the others'), and zeroing them wrote every page. Their whole pages are given back to
// the system here: a page given back reads as zeros again, and a zero slot is an empty one, which
// the memo fills again on its next miss (a memo is only ever a cache), and the page comes back
// when counting first writes to it. A window that counts a few messages then holds the few pages
// they touched instead of all of them. On other systems the pages stay as they are.
template <class T>
void give_back_zero_pages(std::vector<T>& memo) {
#ifdef __linux__
    const long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || memo.empty()) return;
    const uintptr_t start = reinterpret_cast<uintptr_t>(memo.data());
    const uintptr_t end = start + memo.size() * sizeof(T);
    const uintptr_t first = (start + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    const uintptr_t last = end & ~((uintptr_t)page - 1);
    if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
#else
    (void)memo;
#endif
}

void give_back_memo_pages(Vocab& V) {
    give_back_zero_pages(V.ivm);
    give_back_zero_pages(V.ivmw);
}

// The smallest vocabulary the loader accepts (the 256 single bytes): a restore loads it, for the
// encoding's scanner tables and settings, then puts the snapshot's tables in its place.
const std::vector<uint8_t>& byte_vocabulary() {
    static const std::vector<uint8_t> bytes = [] {
        Writer w;
        w.value<uint32_t>(256);
        for (uint32_t b = 0; b < 256; b++) {
            w.value<uint16_t>(1);
            w.value<uint8_t>((uint8_t)b);
            w.value<uint32_t>(b);
        }
        return w.out;
    }();
    return bytes;
}

void put_error(char* into, size_t capacity, const char* message) {
    if (!into || capacity == 0) return;
    size_t length = std::strlen(message);
    if (length >= capacity) length = capacity - 1;
    std::memcpy(into, message, length);
    into[length] = 0;
}

pinloom_tokenizer* load_serving(const char* encoding, const pinloom_quicktok_file* files,
                                size_t count, char* error, size_t error_length) {
    pinloom_quicktok_serve(files, count);
    try {
        auto loaded = quicktok::Tokenizer::load_dir("pinloom-embedded", encoding);
        pinloom_quicktok_serve(nullptr, 0);
        return new pinloom_tokenizer(std::move(loaded));
    } catch (const std::exception& e) {
        pinloom_quicktok_serve(nullptr, 0);
        put_error(error, error_length, e.what());
    } catch (...) {
        pinloom_quicktok_serve(nullptr, 0);
        put_error(error, error_length, "quicktok: unknown error");
    }
    return nullptr;
}

}  // namespace

extern "C" {

// Loads `encoding` from its vocabulary files (the slow way).
pinloom_tokenizer* pinloom_quicktok_load(const char* encoding, const pinloom_quicktok_file* files,
                                         size_t count, char* error, size_t error_length) {
    pinloom_tokenizer* tokenizer = load_serving(encoding, files, count, error, error_length);
    // Whatever building the tables memoised is only a cache (see give_back_zero_pages).
    if (tokenizer) give_back_memo_pages(tables_of(tokenizer->tok));
    return tokenizer;
}

// The loaded tokenizer's tables as a snapshot, allocated with malloc (free with
// pinloom_quicktok_free_bytes). Returns 0 on success.
int pinloom_quicktok_save(pinloom_tokenizer* tokenizer, unsigned char** bytes, size_t* length) {
    if (!tokenizer || !bytes || !length) return 1;
    try {
        Writer w;
        w.put(MAGIC, sizeof MAGIC);
        for (uint32_t part : LAYOUT) w.value(part);
        write_tables(w, tables_of(tokenizer->tok));
        w.value(checksum(w.out.data(), w.out.size()));
        unsigned char* copy = static_cast<unsigned char*>(std::malloc(w.out.size()));
        if (!copy) return 1;
        std::memcpy(copy, w.out.data(), w.out.size());
        *bytes = copy;
        *length = w.out.size();
        return 0;
    } catch (...) {
        return 1;
    }
}

void pinloom_quicktok_free_bytes(unsigned char* bytes) { std::free(bytes); }

// Loads `encoding` with the tables of a snapshot `pinloom_quicktok_save` wrote. The encoding's
// other files (its Unicode tables) come from `files`; its vocabulary file is not read. Returns
// NULL with a reason when the snapshot is damaged or was written by a build with another layout.
pinloom_tokenizer* pinloom_quicktok_restore(const char* encoding,
                                            const pinloom_quicktok_file* files, size_t count,
                                            const unsigned char* bytes, size_t length,
                                            char* error, size_t error_length) {
    const size_t header = sizeof MAGIC + sizeof LAYOUT;
    if (!bytes || length < header + 8 || std::memcmp(bytes, MAGIC, sizeof MAGIC) != 0 ||
        std::memcmp(bytes + sizeof MAGIC, LAYOUT, sizeof LAYOUT) != 0) {
        put_error(error, error_length, "not a snapshot of this build's tables");
        return nullptr;
    }
    uint64_t stored;
    std::memcpy(&stored, bytes + length - 8, 8);
    if (checksum(bytes, length - 8) != stored) {
        put_error(error, error_length, "the snapshot is damaged (its checksum does not match)");
        return nullptr;
    }
    try {
        Vocab tables;
        Reader reader{bytes + header, bytes + length - 8};
        if (!read_tables(reader, tables)) {
            put_error(error, error_length, "the snapshot's tables do not fit together");
            return nullptr;
        }
        // The encoding's files, with its vocabulary replaced by the byte vocabulary.
        std::vector<pinloom_quicktok_file> served(files, files + count);
        const std::vector<uint8_t>& small = byte_vocabulary();
        for (auto& file : served) {
            size_t name = std::strlen(file.name);
            if (name > 6 && std::strcmp(file.name + name - 6, ".vocab") == 0) {
                file.bytes = small.data();
                file.length = small.size();
            }
        }
        pinloom_tokenizer* tokenizer =
            load_serving(encoding, served.data(), served.size(), error, error_length);
        if (!tokenizer) return nullptr;
        tables_of(tokenizer->tok) = std::move(tables);
        give_back_memo_pages(tables_of(tokenizer->tok));
        return tokenizer;
    } catch (const std::exception& e) {
        put_error(error, error_length, e.what());
    } catch (...) {
        put_error(error, error_length, "quicktok: unknown error");
    }
    return nullptr;
}

// The token count of `text`, or (size_t)-1 on error.
size_t pinloom_quicktok_count(const pinloom_tokenizer* tokenizer, const char* text, size_t length) {
    if (!tokenizer || (!text && length)) return (size_t)-1;
    try {
        return tokenizer->tok.count(std::string_view(text, length));
    } catch (...) {
        return (size_t)-1;
    }
}

}  // extern "C"
