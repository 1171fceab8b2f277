//! Crafted snapshots, as a program that can write the cache folder could make them: a real
//! snapshot this crate wrote, with indexes changed inside its tables and the checksum computed
//! again. Each is refused before any of its tables is used, the encoding is built from its
//! vocabulary instead, its counts are exact, and the file is written anew. And what lies at a
//! snapshot's path must be a regular file: a FIFO or a link there is refused without waiting.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::tests::MIXED;
use super::{Encoding, LoadedFrom, foreign, snapshots};

/// The encoding the attacks are made on (the quickest to build); o200k, whose ids need the wide
/// memo, gets one of them too.
const ENCODING: Encoding = Encoding::Cl100k;

fn scratch_folder(name: &str) -> PathBuf {
    let folder = std::env::temp_dir()
        .join(format!("pinloom-tokenizer-crafted-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&folder);
    folder
}

/// What a table of a snapshot holds, and where: `each_table` in `cpp/tokenizer_snapshots.cpp`
/// writes each list as its length (8 bytes) and then its items, and each value as it is.
#[derive(Clone, Copy)]
enum Field {
    /// One value of this many bytes.
    Value(usize),
    /// Items of this many bytes each, after their number.
    List(usize),
    /// This many items of four bytes, without their number (`root_child`).
    Fixed(usize),
}

/// The snapshot's fields in the order `each_table` writes them.
const FIELDS: [(&str, Field); 25] = [
    ("n", Field::Value(4)),
    ("all", Field::List(1)),
    ("tstart", Field::List(4)),
    ("tlen", Field::List(1)),
    ("etab", Field::List(8)),
    ("emask", Field::Value(4)),
    ("root_child", Field::Fixed(256)),
    ("r2node", Field::List(4)),
    ("r2best", Field::List(4)),
    ("tnode_tok", Field::List(4)),
    ("npm", Field::List(4)),
    ("split", Field::List(8)),
    ("plk", Field::List(8)),
    ("plmask", Field::Value(4)),
    ("ivmask", Field::Value(4)),
    ("wide_ids", Field::Value(1)),
    ("memo", Field::Value(8)),
    ("wide_memo", Field::Value(8)),
    ("e2", Field::List(8)),
    ("e2mask", Field::Value(4)),
    ("e2tb", Field::Value(4)),
    ("otab", Field::List(8)),
    ("omask", Field::Value(4)),
    ("r3node", Field::List(4)),
    ("r3best", Field::List(4)),
];

/// The magic (8 bytes) and the layout (five 4-byte words) before the tables.
const HEADER: usize = 8 + 5 * 4;

/// A snapshot's bytes and where each of its tables is (its first item's offset, the size of an
/// item, and how many there are), to change as an attacker would.
#[derive(Clone)]
struct Crafted {
    bytes: Vec<u8>,
    tables: HashMap<&'static str, (usize, usize, usize)>,
}

impl Crafted {
    fn new(bytes: &[u8]) -> Crafted {
        let word = |at: usize| {
            u64::from_le_bytes(bytes[at..at + 8].try_into().expect("eight bytes")) as usize
        };
        let mut tables = HashMap::new();
        let mut at = HEADER;
        for (name, field) in FIELDS {
            let (size, count) = match field {
                Field::Value(size) => (size, 1),
                Field::List(size) => {
                    let count = word(at);
                    at += 8;
                    (size, count)
                }
                Field::Fixed(count) => (4, count),
            };
            tables.insert(name, (at, size, count));
            at += size * count;
        }
        assert_eq!(at + 8, bytes.len(), "the layout is each_table's");
        Crafted { bytes: bytes.to_vec(), tables }
    }

    fn len(&self, table: &str) -> usize {
        self.tables[table].2
    }

    fn at(&self, table: &str, index: usize) -> usize {
        let (at, size, count) = self.tables[table];
        assert!(index < count, "{table}[{index}] is in the table");
        at + index * size
    }

    fn u32(&self, table: &str, index: usize) -> u32 {
        let at = self.at(table, index);
        u32::from_le_bytes(self.bytes[at..at + 4].try_into().expect("four bytes"))
    }

    fn set_u32(&mut self, table: &str, index: usize, value: u32) {
        let at = self.at(table, index);
        self.bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
    }

    /// The two parts of token `id`'s merge (`split`, pairs of ids).
    fn split(&self, id: usize) -> (u32, u32) {
        let at = self.at("split", id);
        let word = |at: usize| u32::from_le_bytes(self.bytes[at..at + 4].try_into().expect("4"));
        (word(at), word(at + 4))
    }

    fn set_split(&mut self, id: usize, (left, right): (u32, u32)) {
        let at = self.at("split", id);
        self.bytes[at..at + 4].copy_from_slice(&left.to_le_bytes());
        self.bytes[at + 4..at + 8].copy_from_slice(&right.to_le_bytes());
    }

    fn u64(&self, table: &str, index: usize) -> u64 {
        let at = self.at(table, index);
        u64::from_le_bytes(self.bytes[at..at + 8].try_into().expect("eight bytes"))
    }

    fn set_u64(&mut self, table: &str, index: usize, value: u64) {
        let at = self.at(table, index);
        self.bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
    }

    /// The checksum computed again over the changed bytes, as the crate's framing does
    /// (`crate::framing`): anyone can.
    fn sealed(mut self) -> Vec<u8> {
        let end = self.bytes.len() - 8;
        let sum = crate::framing::checksum(&self.bytes[..end]);
        self.bytes[end..].copy_from_slice(&sum.to_le_bytes());
        self.bytes
    }
}

/// A change made to a real snapshot.
type Change = Box<dyn Fn(&mut Crafted)>;

/// What fills the `i`th empty slot of a hash table.
type Filler = fn(u64) -> u64;

/// The index of the first two bytes of `pair` in the two-byte tables.
fn r2(pair: &[u8; 2]) -> usize {
    (usize::from(pair[0]) << 8) | usize::from(pair[1])
}

/// A real snapshot of `encoding`, written by loading it through `folder`, its file, and the
/// count of [`MIXED`] built from the vocabulary.
fn real_snapshot(encoding: Encoding, folder: &Path) -> (Vec<u8>, PathBuf, Option<usize>) {
    let (built, from) = encoding.load_through(Some(folder)).expect("loads");
    assert_eq!(from, LoadedFrom::Vocabulary);
    let file = snapshots::file(folder, encoding.quicktok_name());
    let good = std::fs::read(&file).expect("a snapshot was saved");
    let (_, from) = encoding.load_through(Some(folder)).expect("loads");
    assert_eq!(from, LoadedFrom::Snapshot, "the real snapshot is believed");
    (good, file, built.count(MIXED))
}

/// Runs `work` on another thread, failing (not hanging) if it takes longer than a minute.
fn without_hanging<T: Send + 'static>(what: &str, work: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || sender.send(work()));
    receiver.recv_timeout(Duration::from_secs(60)).unwrap_or_else(|_| panic!("{what}: hangs"))
}

/// `crafted` is refused (by the C side, before use), and a load through the folder with it in
/// place builds the encoding from its vocabulary, counts exactly, and writes the snapshot anew.
fn assert_refused(
    encoding: Encoding,
    what: &str,
    crafted: Vec<u8>,
    file: &Path,
    good: &[u8],
    exact: Option<usize>,
) {
    let bytes = crafted.clone();
    let refused = without_hanging(what, move || {
        foreign::Tokenizer::restore(encoding.quicktok_name(), encoding.files(), &bytes).err()
    });
    let reason = refused.unwrap_or_else(|| panic!("{what}: the crafted snapshot is believed"));
    assert!(reason.contains("snapshot"), "{what}: refused, saying why ({reason})");
    std::fs::write(file, &crafted).expect("writes");
    let folder = file.parent().expect("a folder").to_owned();
    let (tokenizer, from) =
        without_hanging(what, move || encoding.load_through(Some(&folder)).expect("still loads"));
    assert_eq!(from, LoadedFrom::Vocabulary, "{what}: built from the vocabulary");
    assert_eq!(tokenizer.count(MIXED), exact, "{what}: the count is exact");
    assert_eq!(std::fs::read(file).expect("rewritten"), good, "{what}: written anew");
}

#[test]
fn a_snapshot_with_an_index_out_of_bounds_is_refused_and_counts_stay_exact() {
    let folder = scratch_folder("out-of-bounds");
    let (good, file, exact) = real_snapshot(ENCODING, &folder);
    let real = Crafted::new(&good);
    let n = real.u32("n", 0);
    let nodes = real.len("tnode_tok") as u32;
    let all = real.len("all") as u32;
    // The first occupied slot of the two-byte step table, and its node field (bits 18 to 37).
    let step = (0..real.len("e2")).find(|i| real.u64("e2", *i) != 0).expect("a step");
    let merged = (0..n as usize).find(|id| real.split(*id).0 != *id as u32).expect("a merge");
    let changes: Vec<(&str, Change)> = vec![
        (
            "a two-byte entry names a token past the vocabulary",
            Box::new(move |c: &mut Crafted| {
                c.set_u32("r2best", r2(b"Ri"), n + 1000);
            }),
        ),
        (
            "a three-byte entry names a token past the vocabulary",
            Box::new(move |c: &mut Crafted| {
                c.set_u32("r3best", 0x6cb3, n + 3);
            }),
        ),
        (
            "a token's longest prefix is past the vocabulary",
            Box::new(move |c: &mut Crafted| {
                c.set_u32("npm", 500, u32::MAX - 5);
            }),
        ),
        (
            "every prefix index flipped past the vocabulary",
            Box::new(move |c: &mut Crafted| {
                for id in 0..n as usize {
                    let prefix = c.u32("npm", id);
                    c.set_u32("npm", id, prefix ^ 0x0004_0000);
                }
            }),
        ),
        (
            "a merge names tokens past the vocabulary",
            Box::new(move |c: &mut Crafted| {
                c.set_split(merged, (0xFFFF_FFF0, 3));
            }),
        ),
        (
            "a root edge leads past the trie",
            Box::new(move |c: &mut Crafted| {
                c.set_u32("root_child", usize::from(b'a'), nodes + 100);
            }),
        ),
        (
            "a trie node names a token past the vocabulary",
            Box::new(move |c: &mut Crafted| {
                let node = c.u32("root_child", usize::from(b'a')) as usize;
                c.set_u32("tnode_tok", node, n + 1);
            }),
        ),
        (
            "a token's offset points past the token bytes",
            Box::new(move |c: &mut Crafted| {
                c.set_u32("tstart", 10, all + 4096);
            }),
        ),
        (
            "a two-byte step leads past the trie",
            Box::new(move |c: &mut Crafted| {
                let slot = c.u64("e2", step);
                c.set_u64("e2", step, slot | (0xF_FFFF << 18));
            }),
        ),
        (
            "the pair table's mask does not fit its size",
            Box::new(move |c: &mut Crafted| {
                let mask = c.u32("plmask", 0);
                c.set_u32("plmask", 0, mask - 1);
            }),
        ),
    ];
    for (what, change) in changes {
        let mut crafted = real.clone();
        change(&mut crafted);
        assert_refused(ENCODING, what, crafted.sealed(), &file, &good, exact);
    }
    let _ = std::fs::remove_dir_all(&folder);
}

#[test]
fn a_snapshot_of_tables_in_bounds_but_not_the_vocabularys_is_refused() {
    let folder = scratch_folder("in-bounds");
    let (good, file, exact) = real_snapshot(ENCODING, &folder);
    let real = Crafted::new(&good);
    let n = real.u32("n", 0) as usize;
    // Every index stays inside its table, yet each would change counts.
    let mut swapped = real.clone();
    let (ri, ve) = (real.u32("r2best", r2(b"Ri")), real.u32("r2best", r2(b"ve")));
    swapped.set_u32("r2best", r2(b"Ri"), ve);
    swapped.set_u32("r2best", r2(b"ve"), ri);
    assert_refused(ENCODING, "two two-byte entries swapped", swapped.sealed(), &file, &good, exact);
    // A merge undone: the token marked as one of the vocabulary's bytes, its pair taken out.
    let merged = (0..n).rev().find(|id| real.split(*id).0 != *id as u32).expect("a merge");
    let mut undone = real.clone();
    undone.set_split(merged, (merged as u32, merged as u32));
    let slot = (0..real.len("plk"))
        .find(|i| real.u64("plk", *i) & 0x7FFFF == merged as u64)
        .expect("the merge's pair");
    undone.set_u64("plk", slot, 0);
    assert_refused(ENCODING, "a merge undone", undone.sealed(), &file, &good, exact);
    // A token's bytes changed: not the vocabulary built into the program.
    let mut changed = real.clone();
    let token = real.u32("tstart", 300) as usize;
    let byte = changed.at("all", token);
    changed.bytes[byte] ^= 0x20;
    assert_refused(ENCODING, "a token's bytes changed", changed.sealed(), &file, &good, exact);
    let _ = std::fs::remove_dir_all(&folder);
}

#[test]
fn a_snapshot_whose_probes_would_never_end_is_refused_without_hanging() {
    let folder = scratch_folder("endless");
    let (good, file, exact) = real_snapshot(ENCODING, &folder);
    let real = Crafted::new(&good);
    // Every empty slot of a hash table filled with a key nothing looks up (ids past 2^18): a
    // lookup of a missing key probed the table round and round. The real tables' slots stay.
    let fillers: [(&str, Filler); 4] = [
        ("the pair table", |i| (((0x3_FFFF << 18) | (i & 0x3_FFFF)) + 1) << 19),
        ("the odd-token table", |i| (((0xF_FFFF << 8) | (i & 0xFF)) + 1) << 19),
        ("the two-byte step table", |i| (1 << 63) | (i & 0x3_FFFF)),
        ("the edge table", |i| ((0xFFFF_FF00 | (i & 0xFF)) << 32) | 1),
    ];
    for ((what, filler), table) in fillers.into_iter().zip(["plk", "otab", "e2", "etab"]) {
        let mut full = real.clone();
        for i in 0..real.len(table) {
            if real.u64(table, i) == 0 {
                full.set_u64(table, i, filler(i as u64));
            }
        }
        assert_refused(ENCODING, &format!("{what} full"), full.sealed(), &file, &good, exact);
    }
    // The real pairs moved together into one run at the table's start: every probe still ends,
    // but a lookup could walk the whole run; the bound on runs of full slots refuses it.
    let mut packed = real.clone();
    let slots = real.len("plk");
    let (kept, mut at) = ((0..slots).filter(|i| real.u64("plk", *i) != 0).count(), 0);
    for i in 0..slots {
        packed.set_u64("plk", i, 0);
    }
    for i in 0..slots {
        let slot = real.u64("plk", i);
        if slot != 0 {
            packed.set_u64("plk", at, slot);
            at += 1;
        }
    }
    assert_eq!(at, kept);
    assert_refused(ENCODING, "the pair table one long run", packed.sealed(), &file, &good, exact);
    let _ = std::fs::remove_dir_all(&folder);
}

#[test]
fn a_crafted_o200k_snapshot_is_refused_too() {
    // o200k's ids pass 2^17, so its memo is the wide one; an out-of-range merge there.
    let folder = scratch_folder("o200k");
    let (good, file, exact) = real_snapshot(Encoding::O200k, &folder);
    let mut crafted = Crafted::new(&good);
    let n = crafted.u32("n", 0);
    let (_, right) = crafted.split(150_000);
    crafted.set_split(150_000, (n + 77, right));
    let what = "a merge past the vocabulary";
    assert_refused(Encoding::O200k, what, crafted.sealed(), &file, &good, exact);
    let _ = std::fs::remove_dir_all(&folder);
}

#[cfg(unix)]
#[test]
fn a_fifo_or_a_link_in_place_of_a_snapshot_is_refused_without_hanging() {
    let folder = scratch_folder("special");
    let (good, file, exact) = real_snapshot(ENCODING, &folder);
    let load = |what: &str| {
        let folder = folder.clone();
        let (tokenizer, from) =
            without_hanging(what, move || ENCODING.load_through(Some(&folder)).expect("loads"));
        assert_eq!(from, LoadedFrom::Vocabulary, "{what}: built from the vocabulary");
        assert_eq!(tokenizer.count(MIXED), exact, "{what}: the count is exact");
        let kind = std::fs::symlink_metadata(&file).expect("there").file_type();
        assert!(kind.is_file(), "{what}: replaced by a regular file");
        assert_eq!(std::fs::read(&file).expect("reads"), good, "{what}: written anew");
    };
    // A FIFO: reading it would wait for a writer that never comes.
    std::fs::remove_file(&file).expect("removed");
    let made = std::process::Command::new("mkfifo").arg(&file).status().expect("mkfifo runs");
    assert!(made.success(), "mkfifo made the FIFO");
    load("a FIFO");
    // A link, even to the real snapshot, is not followed (nor written through).
    let elsewhere = folder.join("elsewhere.tables");
    std::fs::rename(&file, &elsewhere).expect("moved");
    std::os::unix::fs::symlink(&elsewhere, &file).expect("linked");
    load("a link to a real snapshot");
    assert_eq!(std::fs::read(&elsewhere).expect("reads"), good, "the link's target is untouched");
    // A link to a device, and a file larger than any snapshot (not read: sparse, 64 MB and one).
    std::fs::remove_file(&file).expect("removed");
    std::os::unix::fs::symlink("/dev/zero", &file).expect("linked");
    load("a link to a device");
    std::fs::remove_file(&file).expect("removed");
    std::fs::File::create(&file).and_then(|f| f.set_len((64 << 20) + 1)).expect("made");
    load("a file too large");
    let _ = std::fs::remove_dir_all(&folder);
}

/// Load times with and without a snapshot, medians of `PINLOOM_LOAD_RUNS` runs (7 by default;
/// each run keeps its two tokenizers, which are never freed, so a run holds about 100 MB):
/// `cargo test -p pinloom-tokenizers --lib -- --ignored --nocapture load_times`.
/// The C++ is built with -O3 in every profile. "read" is the snapshot file's read, "restore" the
/// C side's parse, checks (`check_tables`) and set-up, "build" the tables built from the
/// vocabulary instead.
#[test]
#[ignore = "a measurement, not a test: run it by name"]
fn load_times() {
    let runs: usize =
        std::env::var("PINLOOM_LOAD_RUNS").ok().and_then(|runs| runs.parse().ok()).unwrap_or(7);
    let folder = scratch_folder("times");
    let median = |mut times: Vec<Duration>| {
        times.sort();
        times[times.len() / 2].as_secs_f64() * 1000.0
    };
    for encoding in Encoding::ALL {
        let (_, file, _) = real_snapshot(encoding, &folder);
        let (mut read, mut restore, mut build) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..runs {
            let start = Instant::now();
            let snapshot = snapshots::read(&file).expect("reads");
            read.push(start.elapsed());
            let start = Instant::now();
            let restored =
                foreign::Tokenizer::restore(encoding.quicktok_name(), encoding.files(), &snapshot);
            restore.push(start.elapsed());
            assert!(restored.is_ok(), "{encoding:?}: the real snapshot is believed");
            let start = Instant::now();
            let built = foreign::Tokenizer::load(encoding.quicktok_name(), encoding.files());
            build.push(start.elapsed());
            assert!(built.is_ok());
        }
        println!(
            "{encoding:?}: read {:.1} ms, restore {:.1} ms (snapshot {:.1} MB); build {:.1} ms",
            median(read),
            median(restore),
            std::fs::metadata(&file).map_or(0.0, |m| m.len() as f64 / 1e6),
            median(build),
        );
    }
    let _ = std::fs::remove_dir_all(&folder);
}
