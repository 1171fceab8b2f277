//! Packs in the folder (format 2): `packs/<device>/<pack id>.pack`, each written once by the
//! device whose folder it is in. A sync writes what it adds as a few packs, reads the packs it
//! does not know, converts what an older Pinloom wrote one file per record into packs, and now
//! and then folds its own small packs into one, which names them as replaced, and removes them.
//! Git's merge of two folders still only adds files (and takes removals of a device's own packs,
//! which no other device ever edits), so it never conflicts.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::sync::folder::{self, Arrived, ArrivedPack, FolderError, Taken};
use crate::sync::packs::{self, PackLine, Seal};
use crate::sync::signing::{Signers, Writer};

/// How many packs of its own a device keeps before folding the small ones together.
const COMPACT_AT: usize = 24;

/// A pack this small is folded into a bigger one by a compaction.
const SMALL_PACK_BYTES: u64 = 512 * 1024;

/// The largest pack file read (a pack's lines are cut at a few MB; one big message may pass that).
pub(in crate::sync) const MAX_PACK_FILE_BYTES: u64 = 96 * 1024 * 1024;

fn own_folder(device: &str) -> PathBuf {
    Path::new("packs").join(device)
}

/// The next pack ids of `device` in `folder`: `<ms as 12 hex digits>-<n>-<device>`, after every
/// pack the device has there (two syncs in one millisecond still name theirs apart).
fn pack_ids(folder: &Path, device: &str, now_ms: i64, count: usize) -> Vec<String> {
    let latest = fs::read_dir(folder.join(own_folder(device)))
        .into_iter()
        .flatten()
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().to_string_lossy().into_owned();
            i64::from_str_radix(name.get(..12)?, 16).ok()
        })
        .max()
        .unwrap_or(0);
    let ms = now_ms.max(latest + 1);
    (0..count).map(|n| format!("{ms:012x}-{n:03}-{device}")).collect()
}

/// Writes `lines` as packs of `writer`'s device, signed; returns them (each pack's id and its
/// lines' ids).
pub(in crate::sync) fn write_packs(
    folder: &Path,
    writer: &Writer,
    lines: &[PackLine],
    seal: &Seal,
    now_ms: i64,
) -> Result<Vec<ArrivedPack>, FolderError> {
    let cut = packs::cut(lines);
    let ids = pack_ids(folder, &writer.device, now_ms, cut.len());
    let work: Vec<(&String, &packs::CutPack<'_>)> = ids.iter().zip(&cut).collect();
    // Compressing and encrypting a first sync's packs is most of its time: on every core.
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 8);
    std::thread::scope(|scope| {
        let running: Vec<_> = work
            .chunks(work.len().div_ceil(workers).max(1))
            .map(|chunk| {
                scope.spawn(move || {
                    chunk.iter().try_for_each(|(id, pack)| {
                        write_pack(folder, writer, id, &pack.bodies, Vec::new(), seal)
                    })
                })
            })
            .collect();
        running
            .into_iter()
            .try_for_each(|worker| worker.join().unwrap_or_else(|_| Err(folder::stopped(folder))))
    })?;
    Ok(ids
        .into_iter()
        .zip(&cut)
        .map(|(id, pack)| ArrivedPack {
            id,
            lines: pack.ids.iter().map(|line| (*line).to_owned()).collect(),
            replaces: Vec::new(),
        })
        .collect())
}

fn write_pack(
    folder: &Path,
    writer: &Writer,
    id: &str,
    lines: &[Vec<u8>],
    replaces: Vec<String>,
    seal: &Seal,
) -> Result<(), FolderError> {
    let relative = own_folder(&writer.device).join(format!("{id}.pack"));
    let encoded = packs::encode(id, &writer.device, lines, replaces, seal, &writer.key);
    let bytes = encoded.map_err(|source| FolderError::Io {
        doing: "write",
        path: folder.join(&relative),
        source,
    })?;
    folder::write_once(folder, &relative, &bytes)
}

/// Reads every pack, record, operation and share file whose id is not in `known`. Only real
/// folders and regular files are read: a link anywhere in the layout is reported and never
/// followed, so a remote cannot make this sync read another folder's records, a device or a
/// secret. Format 1's files, which nobody signed, are read only from a folder that is still of
/// format 1 (`old_layout`), to be turned into packs.
pub(in crate::sync) fn read_new(
    folder: &Path,
    known: &HashSet<String>,
    seal: &Seal,
    old_layout: bool,
    signers: &mut Signers,
) -> Result<Arrived, FolderError> {
    let mut arrived = Arrived::default();
    let mut taken = Taken::default();
    if old_layout {
        folder::read_old_layout(folder, known, &mut arrived, &mut taken)?;
    } else {
        // Format 1's files in a folder of signed packs: nobody signed them, so nobody is
        // believed to have written them. Each is named once and left.
        let mut stray = Arrived::default();
        for file in folder::read_old_layout(folder, known, &mut stray, &mut taken)? {
            let why = "written one file per record as an earlier Pinloom did, unsigned, in a folder of signed packs; not read";
            arrived
                .damaged
                .push((folder::id_of(&file, ".json"), format!("{}: {why}", folder::shown(&file))));
        }
        arrived.damaged.extend(stray.damaged);
        arrived.unknown.extend(stray.unknown);
        arrived.not_followed.extend(stray.not_followed);
    }
    read_packs(folder, known, seal, signers, &mut arrived, &mut taken)?;
    Ok(arrived)
}

/// Reads every pack whose id is not in `known` into `arrived`: lines already held are passed
/// by, a pack that cannot be read is reported once as damaged. Shares (the person's own remote
/// only) go to `shares`.
fn read_packs(
    folder: &Path,
    known: &HashSet<String>,
    seal: &Seal,
    signers: &mut Signers,
    arrived: &mut Arrived,
    taken: &mut Taken,
) -> Result<(), FolderError> {
    for device in folder::folders_in(folder, Path::new("packs"), arrived)? {
        for file in folder::files_in(folder, &device, ".pack", known, arrived)? {
            let id = folder::id_of(&file, ".pack");
            if taken.full() {
                arrived.left_for_later += 1;
                continue;
            }
            let bytes = match folder::read_counted(folder, &file, MAX_PACK_FILE_BYTES, taken) {
                Ok(bytes) => bytes,
                Err(why) => {
                    arrived.damaged.push((id, format!("{}: {why}", folder::shown(&file))));
                    continue;
                }
            };
            let in_folder = device.file_name().map(|name| name.to_string_lossy().into_owned());
            let pack = packs::decode(&id, &bytes, seal).and_then(|pack| {
                if Some(&pack.header.device) != in_folder.as_ref() {
                    return Err("it names another device than the folder it is in".to_owned());
                }
                signers.admit(&pack.header.device, &pack.header.signer, &pack.header.pack)?;
                Ok(pack)
            });
            let pack = match pack {
                Ok(pack) => pack,
                Err(why) if signers.authored && why == packs::NOT_FOR_THIS_KEY => {
                    arrived.before_joining.push(id);
                    continue;
                }
                Err(why) => {
                    arrived.damaged.push((id, format!("{}: {why}", folder::shown(&file))));
                    continue;
                }
            };
            taken.bytes += pack.header.bytes;
            let mut read = ArrivedPack { id, replaces: pack.header.replaces, ..Default::default() };
            for line in pack.lines {
                match line {
                    // A change is its device's to sign: one in another device's pack is forged.
                    Ok(PackLine::Op(op)) if op.device != pack.header.device => {
                        if !known.contains(&op.id) {
                            let why = format!(
                                "{}: a change that claims device {}, in a pack device {} signed; not taken",
                                folder::shown(&file),
                                folder::shown(Path::new(&op.device)),
                                pack.header.device
                            );
                            read.lines.push(op.id.clone());
                            arrived.damaged.push((op.id, why));
                        }
                    }
                    Ok(line) => {
                        let line_id = line.id().to_owned();
                        if !known.contains(&line_id) {
                            read.lines.push(line_id);
                            match line {
                                PackLine::Record(record) => {
                                    if signers.authored {
                                        arrived.authors.insert(
                                            record.id().to_owned(),
                                            pack.header.device.clone(),
                                        );
                                    }
                                    arrived.records.push(record);
                                }
                                PackLine::Op(op) => arrived.ops.push(op),
                                PackLine::Share(share) => arrived.shares.push(share),
                            }
                        }
                    }
                    Err(why) => arrived.unknown.push(format!("{}: {why}", folder::shown(&file))),
                }
            }
            arrived.packs.push(read);
        }
    }
    Ok(())
}

/// Turns what an older Pinloom wrote one file per record (`records/`, `ops/`, `shares/`) into
/// packs of this device, and removes those files: every one that reads, whether held here or
/// not, so nothing a machine has not read yet is lost. Files that do not read stay for the
/// report. Returns the packs written, how many files they hold, and the changes this device
/// vouched for under its own name (held here already, as the files' own changes).
pub(in crate::sync) fn convert_old_layout(
    folder: &Path,
    writer: &Writer,
    seal: &Seal,
    now_ms: i64,
) -> Result<(Vec<ArrivedPack>, usize, Vec<String>), FolderError> {
    let mut old = Arrived::default();
    let files =
        folder::read_old_layout(folder, &HashSet::new(), &mut old, &mut Taken::unbounded())?;
    if files.is_empty() {
        return Ok((Vec::new(), 0, Vec::new()));
    }
    let mut lines: Vec<PackLine> = old.records.into_iter().map(PackLine::Record).collect();
    // A change is signed by its device: one that nobody signed is vouched for by the device that
    // converts it, at its own clock (the same value wins the same way; a machine that read the
    // file before holds both, alike).
    let mut seen = HashSet::new();
    for mut op in old.ops {
        op.device.clone_from(&writer.device);
        op.id = format!("{:016x}-{}", op.clock, writer.device);
        if seen.insert(op.id.clone()) {
            lines.push(PackLine::Op(op));
        }
    }
    lines.extend(old.shares.into_iter().map(PackLine::Share));
    let written = write_packs(folder, writer, &lines, seal, now_ms)?;
    for file in &files {
        folder::remove_file(&folder.join(file))?;
    }
    Ok((written, files.len(), seen.into_iter().collect()))
}

/// Folds this device's small packs into one when it has many ([`COMPACT_AT`]): a new pack with
/// their lines, naming them as replaced, then their files removed. Returns the new pack.
pub(in crate::sync) fn compact_own(
    folder: &Path,
    writer: &Writer,
    seal: &Seal,
    now_ms: i64,
) -> Result<Option<ArrivedPack>, FolderError> {
    let device = writer.device.as_str();
    let dir = folder.join(own_folder(device));
    let mut small = Vec::new();
    let mut count = 0;
    for entry in fs::read_dir(&dir).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(id) = name.strip_suffix(".pack") else { continue };
        count += 1;
        let meta = entry.metadata().map_err(|source| FolderError::Io {
            doing: "read",
            path: entry.path(),
            source,
        })?;
        if meta.file_type().is_file() && meta.len() < SMALL_PACK_BYTES {
            small.push(id.to_owned());
        }
    }
    if count < COMPACT_AT || small.len() < COMPACT_AT / 2 {
        return Ok(None);
    }
    small.sort();
    let mut lines = Vec::new();
    let mut replaces = Vec::new();
    for id in &small {
        let file = own_folder(device).join(format!("{id}.pack"));
        let read =
            folder::read_counted(folder, &file, MAX_PACK_FILE_BYTES, &mut Taken::unbounded())
                .ok()
                .and_then(|bytes| packs::decode(id, &bytes, seal).ok());
        // A pack of its own that does not read is left where it is, as it was.
        let Some(pack) = read else { continue };
        lines.extend(pack.lines.into_iter().flatten());
        replaces.push(id.clone());
        replaces.extend(pack.header.replaces);
    }
    let bodies: Vec<Vec<u8>> =
        lines.iter().map(|line| serde_json::to_vec(line).unwrap_or_default()).collect();
    let Some(id) = pack_ids(folder, device, now_ms, 1).pop() else { return Ok(None) };
    let removed: Vec<String> = small.into_iter().filter(|id| replaces.contains(id)).collect();
    write_pack(folder, writer, &id, &bodies, replaces.clone(), seal)?;
    for old in removed {
        folder::remove_file(&dir.join(format!("{old}.pack")))?;
    }
    let lines = lines.iter().map(|line| line.id().to_owned()).collect();
    Ok(Some(ArrivedPack { id, lines, replaces }))
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;
    use crate::sync::signing::DeviceKey;

    fn writer(device: &str) -> Writer {
        Writer { device: device.to_owned(), key: DeviceKey::from_seed(device.as_bytes()[15]) }
    }

    #[test]
    fn links_planted_where_files_go_are_replaced_never_written_or_read_through() {
        let root = tempfile::tempdir().unwrap();
        let folder = root.path().join("team-geo");
        let outside = root.path().join("outside");
        fs::create_dir_all(&folder).unwrap();
        fs::create_dir_all(&outside).unwrap();
        let victim = root.path().join("bashrc");
        fs::write(&victim, "precious").unwrap();
        // The packs' folder linked to a folder elsewhere: replaced by a real one, never written
        // through.
        symlink(&outside, folder.join("packs")).unwrap();
        let record = crate::sync::folder::tests::tree("0190aaaa-0000-7000-8000-000000000001");
        let lines = [PackLine::Record(record.clone())];
        let written =
            write_packs(&folder, &writer("0123456789abcdef"), &lines, &Seal::Plain, 5).unwrap();
        assert_eq!(fs::read_dir(&outside).unwrap().count(), 0);
        assert!(fs::symlink_metadata(folder.join("packs")).unwrap().is_dir());
        assert_eq!(written.len(), 1, "{written:?}");
        assert_eq!(written[0].lines, [record.id()]);
        let arrived =
            read_new(&folder, &HashSet::new(), &Seal::Plain, true, &mut Signers::default())
                .unwrap();
        assert_eq!(arrived.records, vec![record.clone()]);

        // Links named like packs or records, to the person's file, a device, or the terminal's
        // input: refused by name, never read.
        let other = folder.join("packs/fedcba9876543210");
        let fan = folder.join("records/trees/02");
        fs::create_dir_all(&other).unwrap();
        fs::create_dir_all(&fan).unwrap();
        for (n, target) in
            [(2, victim.as_path()), (3, Path::new("/dev/zero")), (4, Path::new("/dev/stdin"))]
        {
            symlink(target, other.join(format!("00000000000{n}-000-fedcba9876543210.pack")))
                .unwrap();
            symlink(target, fan.join(format!("0190aaaa-0000-7000-8000-00000000000{n}.json")))
                .unwrap();
        }
        let arrived =
            read_new(&folder, &HashSet::new(), &Seal::Plain, true, &mut Signers::default())
                .unwrap();
        assert_eq!(arrived.records, vec![record]);
        assert_eq!(arrived.damaged.len(), 6, "{:?}", arrived.damaged);
        assert!(arrived.damaged.iter().all(|(_, why)| why.contains("symbolic link")));
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
        // A linked device folder or kind of record is not listed at all.
        symlink(&outside, folder.join("packs/1111111111111111")).unwrap();
        symlink(&outside, folder.join("records/notes")).unwrap();
        let arrived =
            read_new(&folder, &HashSet::new(), &Seal::Plain, true, &mut Signers::default())
                .unwrap();
        assert_eq!(arrived.not_followed, ["records/notes", "packs/1111111111111111"]);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(24),
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Three devices write batches into one folder, sealed or not, compacting their own
        /// small packs as they go, while a reader reads now and then and marks what it holds as
        /// a sync does: every line written is read, none is lost to a compaction, and once the
        /// reader holds everything a reading brings nothing.
        #[test]
        fn every_line_written_is_read_whatever_the_compactions(
            batches in proptest::collection::vec((0..3_usize, 1..6_usize, proptest::bool::ANY), 1..90),
            sealed in proptest::bool::ANY,
        ) {
            let root = tempfile::tempdir().unwrap();
            let folder = root.path();
            let seal = if sealed {
                Seal::folder_key(age::x25519::Identity::generate())
            } else {
                Seal::Plain
            };
            let devices = ["0000000000000001", "0000000000000002", "0000000000000003"];
            let writers = devices.map(writer);
            let mut signers = Signers::default();
            let mut written = HashSet::new();
            let mut known: HashSet<String> = HashSet::new();
            let mut read = HashSet::new();
            let mut read_now = |known: &mut HashSet<String>, read: &mut HashSet<String>| {
                let arrived = read_new(folder, known, &seal, false, &mut signers).unwrap();
                proptest::prop_assert!(arrived.damaged.is_empty(), "{:?}", arrived.damaged);
                for record in &arrived.records {
                    read.insert(record.id().to_owned());
                    known.insert(record.id().to_owned());
                }
                for pack in &arrived.packs {
                    known.extend(pack.done(known).unwrap_or_default());
                }
                Ok(())
            };
            for (n, (device, lines, then_read)) in batches.into_iter().enumerate() {
                let ids: Vec<String> = (0..lines).map(|line| format!("{n:04}-{line}")).collect();
                let lines: Vec<PackLine> = ids
                    .iter()
                    .map(|id| PackLine::Record(crate::sync::folder::tests::tree(id)))
                    .collect();
                let now = i64::try_from(n).unwrap() + 1;
                for pack in write_packs(folder, &writers[device], &lines, &seal, now).unwrap() {
                    // The writer's own lines are held by the database that wrote them; the
                    // reader here is another machine, which reads them from the folder.
                    proptest::prop_assert!(!pack.id.is_empty());
                }
                written.extend(ids);
                compact_own(folder, &writers[device], &seal, now).unwrap();
                if then_read {
                    read_now(&mut known, &mut read)?;
                }
            }
            read_now(&mut known, &mut read)?;
            proptest::prop_assert_eq!(&read, &written);
            // Compactions happened: no device keeps as many packs as start one.
            for device in devices {
                let packs = fs::read_dir(folder.join(own_folder(device)))
                    .map_or(0, |entries| entries.count());
                proptest::prop_assert!(packs < COMPACT_AT, "{device}: {packs} packs");
            }
            let again = read_new(folder, &known, &seal, false, &mut Signers::default()).unwrap();
            proptest::prop_assert!(again.records.is_empty() && again.packs.is_empty());
        }
    }
}
