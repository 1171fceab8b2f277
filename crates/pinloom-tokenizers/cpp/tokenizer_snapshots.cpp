// Pinloom's C surface over quicktok, and vocabulary snapshots.
//
// Loading a vocabulary builds its tries and pair tables from the token list: 0.1-0.7 s for one
// encoding, on every process start. A command-line program pays that on each run, so after the
// first load the built tables are saved as one flat snapshot (see the Rust side for where), and
// later loads read them back instead of building them again, after checking every entry of
// them against the vocabulary (check_tables: 20-50 ms, the build 80-270 ms).
//
// The release's quicktok.cpp is compiled as part of this file, unedited, so that the tables of a
// loaded tokenizer can be reached; its cabi.cpp is not compiled: the functions below are the
// whole surface the crate calls.
#include "quicktok.cpp"

#include <cstdlib>
#include <new>

#include "pinloom_quicktok.h"

#ifdef __linux__
#include <sys/mman.h>
#include <unistd.h>
#endif

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

// What must match between the build that wrote a snapshot and the build that reads it, at the
// start of its body: the table layout depends on these compile-time sizes. (The file's framing,
// its kind and checksum, is the Rust side's: src/framing.rs.)
constexpr uint32_t ENDIAN_MARK = 0x01020304u;
constexpr uint32_t LAYOUT[] = {ENDIAN_MARK, (uint32_t)sizeof(size_t), IVBITS, IVBITS_W,
                               (uint32_t)sizeof(Vocab::root_child)};

// Writer and Reader offer the same verbs (`value`, `list`, `bytes`, and `flag` for a bool kept
// as one byte), so that one list of the tables (`each_table`, below) both writes and reads them.
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
    void bytes(const void* from, size_t length) { put(from, length); }
    void flag(bool v) { value<uint8_t>(v); }
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
    void value(T& into) { take(&into, sizeof into); }
    template <class T>
    void list(std::vector<T>& items) {
        uint64_t count = value<uint64_t>();
        if (!ok || count > (uint64_t)(end - at) / sizeof(T)) { ok = false; return; }
        items.resize((size_t)count);
        take(items.data(), (size_t)count * sizeof(T));
    }
    void bytes(void* into, size_t length) { take(into, length); }
    void flag(bool& into) { into = value<uint8_t>() != 0; }
};

// Every table of a snapshot, in its order: written by a Writer and read by a Reader through this
// one list, so the two can never disagree. The pair memos are caches filled while counting: only
// their sizes are kept (`memo`, `wide_memo`). src/snapshot_checks.rs names the same order for
// its crafted snapshots (FIELDS).
template <class Io>
void each_table(Io& io, Vocab& V, uint64_t& memo, uint64_t& wide_memo) {
    io.value(V.n);
    io.list(V.all);
    io.list(V.tstart);
    io.list(V.tlen);
    io.list(V.etab);
    io.value(V.emask);
    io.bytes(V.root_child, sizeof V.root_child);
    io.list(V.r2node);
    io.list(V.r2best);
    io.list(V.tnode_tok);
    io.list(V.npm);
    io.list(V.split);
    io.list(V.plk);
    io.value(V.plmask);
    io.value(V.ivmask);
    io.flag(V.wide_ids);
    io.value(memo);
    io.value(wide_memo);
    io.list(V.e2);
    io.value(V.e2mask);
    io.value(V.e2tb);
    io.list(V.otab);
    io.value(V.omask);
    io.list(V.r3node);
    io.list(V.r3best);
}

void write_tables(Writer& w, Vocab& V) {
    uint64_t memo = V.ivm.size(), wide_memo = V.ivmw.size();
    each_table(w, V, memo, wide_memo);
}

// Reads the tables back and checks that their sizes agree with each other; check_tables then
// checks what is in them. `b2id` (bytes to id) stays empty: only `Tokenizer::token_id` reads it,
// and Pinloom only counts.
bool read_tables(Reader& r, Vocab& V) {
    uint64_t memo = 0, wide_memo = 0;
    each_table(r, V, memo, wide_memo);
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

// How many slots of an open-addressing table are full, and its longest run of full slots going
// round its end: every probe ends within one run (it stops at an empty slot), so this bounds each
// probe's length. (Without branches: slots are full or empty at random.)
struct Occupancy {
    uint64_t full = 0, longest = 0;
};
Occupancy occupancy(const std::vector<uint64_t>& table) {
    Occupancy o;
    uint64_t run = 0, lead = 0;
    while (lead < table.size() && table[lead]) lead++;
    if (lead == table.size()) return {table.size(), table.size()};  // a miss would never end
    for (const uint64_t slot : table) {
        const uint64_t used = slot != 0;
        o.full += used;
        run = (run + 1) * used;
        o.longest = run > o.longest ? run : o.longest;
    }
    if (run + lead > o.longest) o.longest = run + lead;  // the run that goes round the end
    return o;
}

// The longest run of full slots a snapshot's edge, odd-token and pair tables may have. The build
// makes runs of at most 37 slots in them for the four vocabularies (13 to 37: the hash and the
// vocabularies are fixed), so this refuses none of its own; it keeps every probe, and the checks
// below (one probe per entry), from being made long by a crafted placement of slots.
constexpr uint64_t LONGEST_RUN = 128;

// Checks, entry by entry, that tables read from a snapshot are the very tables `Vocab::load`
// builds from the embedded vocabulary (or refuses them with the reason).
//
// The snapshot is a file in the user's cache folder, and whatever can write there can also
// recompute its checksum, so the checksum only tells a damaged file from a whole one. The encoder
// trusts its tables without a bound check anywhere: a token id indexes `tlen`, `npm` and `split`,
// a trie walk returns the token a table names, and every hash table is probed until an empty
// slot. So before a table is used, this shows:
//
//   - the tokens (`all`, `tstart`, `tlen`) are the embedded vocabulary's, id for id;
//   - the byte trie (`root_child`, `etab`, `tnode_tok`) is a tree of nodes inside `tnode_tok`,
//     each reached by exactly one edge that `edge()` finds, no deeper than 255 bytes, whose paths
//     spell exactly the tokens (every token ends at its own node, every leaf is a token's);
//   - every table derived from it is what the build derives: `r2`, `r3`, every `e2` and `otab`
//     slot (found by the encoder's own probe, with no slot besides), `npm`, `split` and `plk`
//     (each merge the first one the build would pick, re-run with the build's own validity test);
//   - every hash table is the size the build gives it (a power of two, so a probe visits each
//     slot at most once), and its runs of full slots are short (LONGEST_RUN; for `e2`, the bound
//     that keeps its tags unambiguous), so every probe, the encoder's and the checks', ends
//     within a few slots.
//
// A snapshot that passes is therefore the build's own tables: counts are exact, every index is
// inside its table and every loop ends. The check reads each table once plus one short probe per
// entry, and re-runs the build's choice of each merge (its cost is measured in the crate's
// README). Each check only relies on what the checks before it have shown.
const char* check_tables(const Vocab& V, const uint8_t* vocab, size_t vocab_length) {
    const uint32_t n = V.n;  // 0 < n <= 2^18, checked by read_tables
    if (V.wide_ids != (n > (1u << 17))) return "the snapshot's memo kind does not fit its vocabulary";

    // The tokens, and that they are the embedded vocabulary's (in its file format: a count, then
    // for each token its length, its bytes and its rank).
    if (V.tstart[0] != 0) return "the snapshot's token offsets do not start at 0";
    for (uint32_t id = 0; id < n; id++) {
        const uint32_t from = V.tstart[id], to = V.tstart[id + 1];
        if (to <= from || to - from > 255 || V.tlen[id] != to - from)
            return "a token's offsets or length in the snapshot are out of range";
    }
    {
        const uint8_t* at = vocab;
        const uint8_t* const end = vocab + vocab_length;
        auto take = [&](void* into, size_t length) {
            if ((size_t)(end - at) < length) return false;
            std::memcpy(into, at, length);
            at += length;
            return true;
        };
        uint32_t count = 0;
        if (!vocab || !take(&count, 4) || count != n) return "the snapshot is not of this vocabulary";
        std::vector<uint8_t> seen(n, 0);
        for (uint32_t k = 0; k < n; k++) {
            uint16_t length = 0;
            uint32_t rank = 0;
            if (!take(&length, 2) || (size_t)(end - at) < length) return "the vocabulary is cut short";
            const uint8_t* bytes = at;
            at += length;
            if (!take(&rank, 4) || rank >= n || seen[rank] || V.tlen[rank] != length ||
                std::memcmp(V.all.data() + V.tstart[rank], bytes, length) != 0)
                return "the snapshot's tokens are not the vocabulary's";
            seen[rank] = 1;
        }
        if (at != end) return "the vocabulary has trailing bytes";
    }

    // The byte trie: every node but the root has one parent, found by `edge()`.
    const uint32_t nodes = (uint32_t)V.tnode_tok.size();  // < 2^20, checked by read_tables
    if (nodes <= 256) return "the snapshot's trie is too small";
    std::vector<uint32_t> parent(nodes, RANK_MAX);
    std::vector<uint8_t> last_byte(nodes, 0);
    for (uint32_t b = 0; b < 256; b++) {
        const uint32_t child = V.root_child[b];
        if (child == 0 || child >= nodes || parent[child] != RANK_MAX)
            return "a root edge of the snapshot's trie is out of range";
        parent[child] = 0;
        last_byte[child] = (uint8_t)b;
    }
    {
        uint64_t built = 1;  // the sizes Vocab::load gives the edge table
        while (built < (uint64_t)V.all.size() * 2) built <<= 1;
        if (built < 1024) built = 1024;
        uint64_t packed = 1024;
        while ((double)nodes / packed > (EDGE_LOAD)) packed <<= 1;
        if (V.etab.size() != (packed < built ? packed : built))
            return "the snapshot's edge table is not the size it is built at";
    }
    if (occupancy(V.etab).longest > LONGEST_RUN) return "the snapshot's edge table has too long a run";
    uint64_t edges = 0;
    for (uint32_t at = 0; at <= V.emask; at++) {
        const uint64_t slot = V.etab[at];
        if (!slot) continue;
        const uint32_t key_plus_one = Vocab::es_kp1(slot), child = Vocab::es_child(slot);
        if (key_plus_one == 0) return "an edge of the snapshot's trie has no key";
        const uint64_t key = key_plus_one - 1;
        const uint32_t node = (uint32_t)(key >> 8);
        if (node == 0 || node >= nodes || child == 0 || child >= nodes || parent[child] != RANK_MAX)
            return "an edge of the snapshot's trie is out of range";
        // `edge()` finds it: from the key's home slot to this one, no slot is empty or holds the
        // same key (so no two edges leave a node on one byte).
        for (uint32_t i = (uint32_t)(key * 0x9E3779B97F4A7C15ull >> 40) & V.emask; i != at;
             i = (i + 1) & V.emask)
            if (!V.etab[i] || Vocab::es_kp1(V.etab[i]) == key_plus_one)
                return "an edge of the snapshot's trie is not where a lookup finds it";
        parent[child] = node;
        last_byte[child] = (uint8_t)key;
        edges++;
    }
    // With 256 root edges and distinct children, every node but the root has its one parent.
    if (edges != nodes - 257) return "the snapshot's trie does not reach every node once";

    // Depths, following parents to the root: a loop or a path past 255 bytes is refused.
    std::vector<uint8_t> depth(nodes, 0), known(nodes, 0), has_child(nodes, 0);
    known[0] = 1;
    for (uint32_t node = 1; node < nodes; node++) {
        uint32_t path[256];
        uint32_t up = 0, at = node;
        while (!known[at]) {
            if (up == 255) return "the snapshot's trie loops or is too deep";
            path[up++] = at;
            at = parent[at];
        }
        uint32_t d = depth[at];
        while (up > 0) {
            at = path[--up];
            if (++d > 255) return "the snapshot's trie is too deep";
            depth[at] = (uint8_t)d;
            known[at] = 1;
        }
    }
    for (uint32_t node = 1; node < nodes; node++) has_child[parent[node]] = 1;

    // Each token ends at its own node, at its length's depth, and the path there spells it; every
    // leaf ends a token.
    std::vector<uint32_t> node_of(n, RANK_MAX);
    if (V.tnode_tok[0] != RANK_MAX) return "the snapshot's trie root holds a token";
    for (uint32_t node = 1; node < nodes; node++) {
        const uint32_t token = V.tnode_tok[node];
        if (token == RANK_MAX) {
            if (!has_child[node]) return "the snapshot's trie has a leaf without a token";
            continue;
        }
        if (token >= n || node_of[token] != RANK_MAX || V.tlen[token] != depth[node])
            return "a node of the snapshot's trie names a token out of range";
        node_of[token] = node;
    }
    for (uint32_t id = 0; id < n; id++) {
        uint32_t node = node_of[id];
        if (node == RANK_MAX) return "a token is missing from the snapshot's trie";
        const uint8_t* spelling = V.all.data() + V.tstart[id];
        for (uint32_t d = V.tlen[id]; d-- > 0; node = parent[node])
            if (last_byte[node] != spelling[d]) return "the snapshot's trie misspells a token";
    }
    for (uint32_t b = 0; b < 256; b++)
        if (V.tnode_tok[V.root_child[b]] == RANK_MAX) return "a byte is not a token of the snapshot";

    // The first two (r2) and three (r3) bytes' tables, exactly as Vocab::load makes them.
    for (uint32_t b0 = 0; b0 < 256; b0++) {
        const uint32_t first = V.root_child[b0], first_token = V.tnode_tok[first];
        for (uint32_t b1 = 0; b1 < 256; b1++) {
            const uint32_t index = (b0 << 8) | b1, second = V.edge(first, (uint8_t)b1);
            const uint32_t best =
                second && V.tnode_tok[second] != RANK_MAX ? V.tnode_tok[second] : first_token;
            if (V.r2node[index] != second || V.r2best[index] != best)
                return "the snapshot's two-byte table is not the trie's";
        }
    }
    for (uint32_t b0 = 0xE0; b0 <= 0xEF; b0++)
        for (uint32_t b1 = 0x80; b1 <= 0xBF; b1++) {
            const uint32_t index2 = (b0 << 8) | b1, second = V.r2node[index2];
            for (uint32_t b2 = 0x80; b2 <= 0xBF; b2++) {
                const uint32_t index3 = ((b0 & 0xF) << 12) | ((b1 & 0x3F) << 6) | (b2 & 0x3F);
                uint32_t best = V.r2best[index2];
                if (second) {
                    const uint32_t third = V.edge(second, (uint8_t)b2);
                    if (third && V.tnode_tok[third] != RANK_MAX) best = V.tnode_tok[third];
                }
                if (V.r3node[index3] != second || V.r3best[index3] != best)
                    return "the snapshot's three-byte table is not the trie's";
            }
        }

    // The two-byte steps (e2): one slot for each node at an even depth of 4 or more, keyed by its
    // grandparent and its last two bytes, found by the encoder's own probe (next_match).
    {
        const uint64_t slots = V.e2.size();
        uint32_t bits = 0;
        while (bits < 63 && (1ull << bits) < slots) bits++;
        if ((1ull << bits) != slots || bits < 17 || bits > 28 || V.e2tb != 36 - bits)
            return "the snapshot's two-byte step table has a wrong size";
        uint64_t steps = 0;
        for (uint32_t node = 1; node < nodes; node++)
            if (depth[node] >= 4 && depth[node] % 2 == 0) steps++;
        uint64_t least = 1u << 17;
        while ((double)steps / least > (E2_LOAD)) least <<= 1;
        if (slots < least || slots > (least << 4))
            return "the snapshot's two-byte step table is not the size it is built at";
        // Vocab::load's bound on runs of full slots, which keeps two keys with one tag apart
        // (and every probe short).
        const Occupancy o = occupancy(V.e2);
        if (o.full != steps || o.longest >= (1ull << (bits - 11)))
            return "the snapshot's two-byte step table does not hold its steps";
        for (uint32_t node = 1; node < nodes; node++) {
            if (depth[node] < 4 || depth[node] % 2 != 0) continue;
            const uint32_t middle = parent[node], from = parent[middle];
            const uint64_t key =
                ((uint64_t)from << 16) | ((uint32_t)last_byte[middle] << 8) | last_byte[node];
            const uint64_t mixed = quicktok::detail::mix36(key);
            const uint64_t want = ((mixed & Vocab::E2_TAGMASK) << 38) | Vocab::E2_USED;
            uint64_t found = 0;
            for (uint32_t h = (uint32_t)(mixed >> V.e2tb); V.e2[h] != 0; h = (h + 1) & V.e2mask)
                if ((V.e2[h] & Vocab::E2_CMP) == want) {
                    found = V.e2[h];
                    break;
                }
            const uint32_t token = V.tnode_tok[node] != RANK_MAX ? V.tnode_tok[node]
                                                                 : V.tnode_tok[middle];
            const uint64_t best = token == RANK_MAX ? Vocab::E2BEST_NONE : token;
            if (found != (want | ((uint64_t)node << 18) | best))
                return "a step of the snapshot's two-byte table is wrong";
        }
    }

    // The odd-depth side table (otab): one slot for each token of odd length 3 or more, keyed by
    // its parent and last byte, with whether a deeper node follows.
    {
        uint64_t odd = 0;
        for (uint32_t id = 0; id < n; id++)
            if (V.tlen[id] >= 3 && (V.tlen[id] & 1)) odd++;
        uint64_t size = 1024;
        while ((double)odd / size > 0.45) size <<= 1;
        if (V.otab.size() != size) return "the snapshot's odd-token table is not the size it is built at";
        const Occupancy o = occupancy(V.otab);
        if (o.full != odd || o.longest > LONGEST_RUN)
            return "the snapshot's odd-token table does not hold its tokens";
        for (uint32_t id = 0; id < n; id++) {
            if (V.tlen[id] < 3 || !(V.tlen[id] & 1)) continue;
            const uint32_t node = node_of[id];
            const uint32_t want =
                (has_child[node] ? (uint32_t)quicktok::detail::OTAB_DEEPBIT : 0u) | id;
            if (V.odd_lookup(parent[node], last_byte[node]) != want)
                return "an entry of the snapshot's odd-token table is wrong";
        }
    }

    // next_prefix: each token's longest proper prefix that is a token.
    for (uint32_t id = 0; id < n; id++) {
        uint32_t prefix = RANK_MAX;
        for (uint32_t node = parent[node_of[id]]; node != 0; node = parent[node])
            if (V.tnode_tok[node] != RANK_MAX) {
                prefix = V.tnode_tok[node];
                break;
            }
        if (V.npm[id] != prefix) return "the snapshot's prefix table is wrong";
    }

    // The merges (split) and the pair table (plk): a merged token's two parts are earlier tokens
    // that spell it, and the pair table holds exactly those pairs.
    {
        uint64_t size = 1;
        while (size < (uint64_t)n * 2) size <<= 1;
        if (V.plk.size() != size) return "the snapshot's pair table is not the size it is built at";
        const Occupancy o = occupancy(V.plk);
        if (o.longest > LONGEST_RUN) return "the snapshot's pair table has too long a run";
        uint64_t merged = 0;
        for (uint32_t id = 0; id < n; id++) {
            const auto [left, right] = V.split[id];
            if (left == id && right == id) continue;
            const uint8_t* spelling = V.all.data() + V.tstart[id];
            if (left >= id || right >= id || V.tlen[left] + V.tlen[right] != V.tlen[id] ||
                std::memcmp(V.all.data() + V.tstart[left], spelling, V.tlen[left]) != 0 ||
                std::memcmp(V.all.data() + V.tstart[right], spelling + V.tlen[left],
                            V.tlen[right]) != 0)
                return "a merge of the snapshot does not spell its token";
            if (V.pl_get(((uint64_t)left << 18) | right) != id)
                return "the snapshot's pair table misses a merge";
            merged++;
        }
        if (o.full != merged) return "the snapshot's pair table holds pairs that merge nothing";
    }
    // And each merge is the one Vocab::load picks: the longest prefix token whose rest is a token,
    // both earlier, that is a valid pair as the tables stood when the token was added (that is,
    // with the pairs of earlier tokens only: `ivtp_slow` with later ranks left out). Every split
    // now names two shorter tokens, so each step below descends, at most 2 x 255 times. Tokens
    // are checked in rank order, so the merges a check walks through are already known to be
    // the build's: it costs what the build's own choice cost.
    {
        // The token `bytes` spell, if any (found through the checked two-byte table, then edges).
        auto token_spelled = [&](const uint8_t* bytes, uint32_t length) {
            if (length == 1) return V.tnode_tok[V.root_child[bytes[0]]];
            uint32_t node = V.r2node[((uint32_t)bytes[0] << 8) | bytes[1]];
            for (uint32_t i = 2; i < length && node; i++) node = V.edge(node, bytes[i]);
            return node ? V.tnode_tok[node] : RANK_MAX;
        };
        auto valid_when_built = [&](uint32_t t1, uint32_t t2, uint32_t id) {
            uint32_t limit = RANK_MAX;
            for (;;) {
                const uint32_t c = V.pl_get(((uint64_t)t1 << 18) | t2);
                if (c != RANK_MAX && c < limit && c < id) return false;
                if (t1 > t2) {
                    limit = t1;
                    t1 = V.split[t1].second;
                    if (t1 == limit) {
                        limit = t2 + 1;
                        t2 = V.split[t2].first;
                        if (t2 + 1 == limit) return true;
                    }
                } else {
                    limit = t2 + 1;
                    t2 = V.split[t2].first;
                    if (t2 + 1 == limit) {
                        limit = t1;
                        t1 = V.split[t1].second;
                        if (t1 == limit) return true;
                    }
                }
            }
        };
        for (uint32_t id = 0; id < n; id++) {
            const uint8_t* spelling = V.all.data() + V.tstart[id];
            std::pair<uint32_t, uint32_t> picked{id, id};
            for (uint32_t left = V.npm[id]; left != RANK_MAX; left = V.npm[left]) {
                const uint32_t length = V.tlen[left];
                // The recorded merge's right part is already known to spell the rest.
                const uint32_t right = left == V.split[id].first && left != id
                                           ? V.split[id].second
                                           : token_spelled(spelling + length, V.tlen[id] - length);
                if (right != RANK_MAX && left < id && right < id &&
                    valid_when_built(left, right, id)) {
                    picked = {left, right};
                    break;
                }
            }
            if (V.split[id] != picked) return "a merge of the snapshot is not the one the build picks";
        }
    }
    return nullptr;
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

// The functions pinloom_quicktok.h declares.

pinloom_tokenizer* pinloom_quicktok_load(const char* encoding, const pinloom_quicktok_file* files,
                                         size_t count, char* error, size_t error_length) {
    pinloom_tokenizer* tokenizer = load_serving(encoding, files, count, error, error_length);
    // Whatever building the tables memoised is only a cache (see give_back_zero_pages).
    if (tokenizer) give_back_memo_pages(tables_of(tokenizer->tok));
    return tokenizer;
}

// The loaded tokenizer's tables as a snapshot's body: the layout, then the tables.
int pinloom_quicktok_save(pinloom_tokenizer* tokenizer, unsigned char** bytes, size_t* length) {
    if (!tokenizer || !bytes || !length) return 1;
    try {
        Writer w;
        for (uint32_t part : LAYOUT) w.value(part);
        write_tables(w, tables_of(tokenizer->tok));
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

// Loads `encoding` with the tables of a snapshot body `pinloom_quicktok_save` made (the Rust side
// has checked the file's framing). The encoding's other files (its Unicode tables) come from
// `files`; its vocabulary file is not built from, only compared with the snapshot's tokens.
// Returns NULL with a reason when the body was written by a build with another layout, or holds
// any table other than the one this build makes from the vocabulary (check_tables), before any
// of its tables is used.
pinloom_tokenizer* pinloom_quicktok_restore(const char* encoding,
                                            const pinloom_quicktok_file* files, size_t count,
                                            const unsigned char* bytes, size_t length,
                                            char* error, size_t error_length) {
    if (!bytes || length < sizeof LAYOUT || std::memcmp(bytes, LAYOUT, sizeof LAYOUT) != 0) {
        put_error(error, error_length, "not a snapshot of this build's tables");
        return nullptr;
    }
    try {
        Vocab tables;
        Reader reader{bytes + sizeof LAYOUT, bytes + length};
        if (!read_tables(reader, tables)) {
            put_error(error, error_length, "the snapshot's tables do not fit together");
            return nullptr;
        }
        // The encoding's files, with its vocabulary replaced by the byte vocabulary; the
        // snapshot's tables are checked against that vocabulary first.
        std::vector<pinloom_quicktok_file> served(files, files + count);
        const std::vector<uint8_t>& small = byte_vocabulary();
        const unsigned char* vocabulary = nullptr;
        size_t vocabulary_length = 0;
        for (auto& file : served) {
            size_t name = std::strlen(file.name);
            if (name > 6 && std::strcmp(file.name + name - 6, ".vocab") == 0) {
                vocabulary = file.bytes;
                vocabulary_length = file.length;
                file.bytes = small.data();
                file.length = small.size();
            }
        }
        if (const char* wrong = check_tables(tables, vocabulary, vocabulary_length)) {
            put_error(error, error_length, wrong);
            return nullptr;
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
