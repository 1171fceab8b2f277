//! What a sync folder holds, as types: records written once, and operations that set one
//! mutable field of one thing.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::{Anchor, ModelProfile, Part};

/// A thing written once into a sync folder. Its mutable fields carry their values when it was
/// written; later changes are [`SyncOp`]s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum SyncRecord {
    /// A tree.
    Tree(TreeRecord),
    /// A message.
    Message(MessageRecord),
    /// A pin: a sub-thread opened from a message.
    Pin(PinRecord),
    /// A file or text attached to a tree, a thread or a message.
    Attachment(AttachmentRecord),
    /// A note on a message.
    Note(NoteRecord),
    /// A reply's receipt: what its request was planned to hold and sent, and what the provider
    /// counted. Its id is `receipt-` and its reply's global id; the messages and threads it names
    /// are named by global id (the application layer turns them, [`TurnReceipt`]).
    Receipt(ReceiptRecord),
    /// One version of a model profile of the person's (never a key), written when they chose to
    /// sync profiles and prices. Its id is `profile-` and a digest of the version, so each change
    /// is a new record; a machine keeps the latest version of each name.
    Profile(ProfileRecord),
    /// One write of a summary (fitted versions are not synced: each device condenses its own).
    Summary(SummaryRecord),
}

/// A tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TreeRecord {
    /// Its global id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// `dialogue` or `buffer`.
    pub mode: String,
    /// Its system context.
    pub system_context: String,
    /// Whether buffer mode includes the system context.
    pub buffer_includes_system: bool,
    /// Its settings overrides (search hits named by global id).
    pub settings: Value,
    /// When it was created.
    pub created_at_ms: i64,
    /// When it was put in the trash.
    pub deleted_at_ms: Option<i64>,
    /// In a team's folder: who shared it there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_by: Option<String>,
}

/// A message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageRecord {
    /// Its global id.
    pub id: String,
    /// Its tree.
    pub tree: String,
    /// The message it follows.
    pub parent: Option<String>,
    /// The pin whose thread it begins (hanging off the pin's anchor); `None` when it
    /// continues its parent's thread, or begins the tree's main thread.
    pub thread: Option<String>,
    /// The message it is an edit of.
    pub edited_from: Option<String>,
    /// `human`, `model` or `tool`.
    pub author: String,
    /// Its content.
    pub parts: Vec<Part>,
    /// The model that wrote it.
    pub model: Option<String>,
    /// Its generation settings, as JSON.
    pub generation: Option<String>,
    /// The usage its provider reported, as JSON.
    pub usage: Option<String>,
    /// A reply that did not finish.
    pub incomplete: bool,
    /// Left out of every context.
    pub excluded: bool,
    /// Bookmarked.
    pub bookmarked: bool,
    /// Kept in every context.
    pub kept: bool,
    /// When it was soft-deleted.
    pub deleted_at_ms: Option<i64>,
    /// When it was written.
    pub created_at_ms: i64,
    /// Its exact token counts by tokenizer family.
    pub token_counts: BTreeMap<String, u64>,
    /// For a question over picked messages: those messages (of the same tree), in the order
    /// picked. A Pinloom that predates them reads the question as a plain first message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub picked: Vec<PickedRecord>,
}

/// A message picked for a question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PickedRecord {
    /// The message's global id.
    pub message: String,
    /// Whether its branch's summary up to it goes too.
    pub with_summary: bool,
}

/// A pin: a sub-thread opened from a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PinRecord {
    /// Its global id.
    pub id: String,
    /// Its tree.
    pub tree: String,
    /// The pin of the thread it opens from; `None` for the main thread.
    pub parent: Option<String>,
    /// The message it hangs off.
    pub anchor_node: Option<String>,
    /// The highlighted passage.
    pub anchor: Option<SyncAnchor>,
    /// Its title.
    pub title: String,
    /// When it was closed, and its result.
    pub closed: Option<SyncClosed>,
    /// When it was deleted.
    pub deleted_at_ms: Option<i64>,
    /// When it was opened.
    pub created_at_ms: i64,
}

/// A file or text attached to a tree, a thread or a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AttachmentRecord {
    /// Its global id.
    pub id: String,
    /// Its tree.
    pub tree: String,
    /// `tree`, `thread` or `node`.
    pub scope: String,
    /// For a thread's: the pin (`None` for the main thread).
    pub thread: Option<String>,
    /// For a message's: the message.
    pub node: Option<String>,
    /// `context`, `instruction`, `file` or `folder`.
    pub role: String,
    /// Its name.
    pub name: String,
    /// Its content.
    pub content: String,
    /// When it was attached.
    pub created_at_ms: i64,
}

/// A note on a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NoteRecord {
    /// Its global id.
    pub id: String,
    /// The message.
    pub message: String,
    /// The note.
    pub text: String,
    /// Whether it enters context.
    pub included: bool,
    /// When it was written.
    pub created_at_ms: i64,
}

/// A reply's receipt: what its request was planned to hold and sent, and what the provider
/// counted. Its id is `receipt-` and its reply's global id; the messages and threads it names
/// are named by global id (the application layer turns them, [`TurnReceipt`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReceiptRecord {
    /// `receipt-` and the reply's global id.
    pub id: String,
    /// The reply.
    pub message: String,
    /// The receipt, as the application layer writes it.
    pub receipt: Value,
    /// Whether its provider cut the context.
    pub provider_cut: bool,
}

/// One version of a model profile of the person's (never a key), written when they chose to
/// sync profiles and prices. Its id is `profile-` and a digest of the version, so each change
/// is a new record; a machine keeps the latest version of each name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileRecord {
    /// `profile-` and a digest of what it holds.
    pub id: String,
    /// The profile as the store holds it (never one that came with a file and waits).
    pub profile: ModelProfile,
    /// When it was last changed.
    pub updated_at_ms: i64,
}

/// One write of a summary (fitted versions are not synced: each device condenses its own).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryRecord {
    /// The write's global id.
    pub id: String,
    /// Its tree.
    pub tree: String,
    /// The thread summarised; `None` for the main thread.
    pub thread: Option<String>,
    /// The last message covered; `None` for the thread as a whole.
    pub path_end: Option<String>,
    /// The budget it was written for.
    pub budget: Option<u32>,
    /// The model that wrote it; '' for a person, an agent or a file.
    pub summarizer: String,
    /// `model`, `person`, `agent` or `file`.
    pub written_by: String,
    /// Written or asked for on purpose.
    pub chosen: bool,
    /// The text.
    pub text: String,
    /// What it summarised, in characters.
    pub input_chars: u64,
    /// What it summarised, in tokens.
    pub input_tokens: u64,
    /// When it was written.
    pub written_at_ms: i64,
}

/// A digest of a profile's version, naming its record: FNV-1a, 64 bits (names, not security:
/// a version is the person's own, and a clash would only keep one of two versions).
pub(crate) fn profile_digest(profile: &ModelProfile, updated_at_ms: i64) -> String {
    let text = serde_json::to_string(&(profile, updated_at_ms)).unwrap_or_default();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("profile-{hash:016x}")
}

/// What a receipt names by id: a message or a thread's pin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReceiptRef {
    /// A message.
    Message,
    /// A thread's pin.
    Pin,
}

/// Turns the ids a receipt names (the store never reads a receipt; the application layer knows
/// where it keeps them): given the receipt and how to turn one id of a kind, the receipt with
/// every id turned. Used with row numbers → global ids on the way out, the other way on the way
/// in, where it may also apply what a team's receipts may say.
pub type TurnReceipt<'a> = &'a dyn Fn(&Value, &dyn Fn(ReceiptRef, &Value) -> Value) -> Value;

/// The kinds of record, in the order a fold writes them: what a record hangs from is written
/// before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RecordKind {
    /// Trees.
    Tree,
    /// Pins.
    Pin,
    /// Messages.
    Message,
    /// Attachments.
    Attachment,
    /// Notes on messages.
    Note,
    /// Summaries' writes.
    Summary,
    /// Replies' receipts.
    Receipt,
    /// Model profiles.
    Profile,
}

impl RecordKind {
    /// Every kind, in the order a fold writes them.
    pub const ALL: [RecordKind; 8] = [
        RecordKind::Tree,
        RecordKind::Pin,
        RecordKind::Message,
        RecordKind::Attachment,
        RecordKind::Note,
        RecordKind::Summary,
        RecordKind::Receipt,
        RecordKind::Profile,
    ];

    /// (its name in an operation, its folder, the table holding it)
    const fn names(self) -> (&'static str, &'static str, &'static str) {
        match self {
            RecordKind::Tree => ("tree", "trees", "trees"),
            RecordKind::Pin => ("pin", "pins", "pins"),
            RecordKind::Message => ("message", "messages", "nodes"),
            RecordKind::Attachment => ("attachment", "attachments", "attachments"),
            RecordKind::Note => ("note", "notes", "annotations"),
            RecordKind::Summary => ("summary", "summaries", "summary_updates"),
            RecordKind::Receipt => ("receipt", "receipts", "receipts"),
            RecordKind::Profile => ("profile", "profiles", "model_profiles"),
        }
    }

    /// Its name in an operation: `tree`, `message`, `pin`, ….
    pub fn name(self) -> &'static str {
        self.names().0
    }

    /// The folder its records are written in: `trees`, `messages`, `pins`, ….
    pub fn folder(self) -> &'static str {
        self.names().1
    }

    /// The table that holds things of this kind.
    pub(crate) fn table(self) -> &'static str {
        self.names().2
    }

    /// The kind an operation names `name`, if there is one.
    pub fn from_name(name: &str) -> Option<RecordKind> {
        RecordKind::ALL.into_iter().find(|kind| kind.name() == name)
    }
}

/// A highlighted passage, as [`Anchor`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncAnchor {
    /// Where it starts, in UTF-16 code units.
    pub start: u32,
    /// Where it ends.
    pub end: u32,
    /// The passage.
    pub text: String,
}

/// A closed pin's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncClosed {
    /// When it was closed.
    pub at_ms: i64,
    /// What the sub-thread concluded.
    pub result: String,
}

/// A change of one mutable field, written once into a sync folder. Its kind and field are kept as
/// the folder spelled them: what arrives is read with [`SyncedField::parse`], and an operation
/// that names no synced field is reported and skipped, never applied.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncOp {
    /// `{clock as 16 hex digits}-{device}`: unique, and sorting by it sorts by clock.
    pub id: String,
    /// The thing changed, by global id (`target` in a folder's files).
    #[serde(rename = "target")]
    pub gid: String,
    /// `tree`, `message`, `pin`, `note` or `attachment`.
    pub kind: String,
    /// The field (see [`SyncedField`]).
    pub field: String,
    /// Its new value.
    pub value: Value,
    /// The hybrid logical clock: milliseconds since 1970 shifted left 16 bits, plus a counter.
    pub clock: i64,
    /// The device that made the change.
    pub device: String,
    /// For a move, the parent before it (`null` for none), as the machine that moved saw it:
    /// every machine settles a tree's moves from the same starting places. Absent in what an
    /// earlier Pinloom wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<Value>,
}

impl SyncOp {
    /// The field it sets, when it names one a sync may set.
    pub fn synced_field(&self) -> Option<SyncedField> {
        SyncedField::parse(&self.kind, &self.field)
    }
}

/// Every field an operation may set: anything else in a folder is reported and skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SyncedField {
    /// A tree's title.
    TreeTitle,
    /// A tree's system context.
    TreeSystemContext,
    /// A tree's settings.
    TreeSettings,
    /// Whether a buffer tree's continuation includes the system context.
    TreeBufferIncludesSystem,
    /// When a tree was put in the trash.
    TreeDeleted,
    /// A message left out of every context.
    MessageExcluded,
    /// A message bookmarked.
    MessageBookmarked,
    /// A message kept in every context.
    MessageKept,
    /// When a message was soft-deleted.
    MessageDeleted,
    /// The message a message follows (a move).
    MessageParent,
    /// A pin's title.
    PinTitle,
    /// When a pin was closed, and its result.
    PinClosed,
    /// When a pin was deleted.
    PinDeleted,
    /// Where a pin's thread opens from (a move).
    PinPlace,
    /// Whether a note enters context.
    NoteIncluded,
    /// An attachment removed.
    AttachmentRemoved,
}

impl SyncedField {
    /// Every field.
    pub const ALL: [SyncedField; 16] = [
        SyncedField::TreeTitle,
        SyncedField::TreeSystemContext,
        SyncedField::TreeSettings,
        SyncedField::TreeBufferIncludesSystem,
        SyncedField::TreeDeleted,
        SyncedField::MessageExcluded,
        SyncedField::MessageBookmarked,
        SyncedField::MessageKept,
        SyncedField::MessageDeleted,
        SyncedField::MessageParent,
        SyncedField::PinTitle,
        SyncedField::PinClosed,
        SyncedField::PinDeleted,
        SyncedField::PinPlace,
        SyncedField::NoteIncluded,
        SyncedField::AttachmentRemoved,
    ];

    /// The kind of thing it belongs to.
    pub fn kind(self) -> RecordKind {
        match self {
            SyncedField::TreeTitle
            | SyncedField::TreeSystemContext
            | SyncedField::TreeSettings
            | SyncedField::TreeBufferIncludesSystem
            | SyncedField::TreeDeleted => RecordKind::Tree,
            SyncedField::MessageExcluded
            | SyncedField::MessageBookmarked
            | SyncedField::MessageKept
            | SyncedField::MessageDeleted
            | SyncedField::MessageParent => RecordKind::Message,
            SyncedField::PinTitle
            | SyncedField::PinClosed
            | SyncedField::PinDeleted
            | SyncedField::PinPlace => RecordKind::Pin,
            SyncedField::NoteIncluded => RecordKind::Note,
            SyncedField::AttachmentRemoved => RecordKind::Attachment,
        }
    }

    /// Its name in an operation (and in the store's `sync_ops` and `sync_changes`).
    pub fn name(self) -> &'static str {
        match self {
            SyncedField::TreeTitle | SyncedField::PinTitle => "title",
            SyncedField::TreeSystemContext => "systemContext",
            SyncedField::TreeSettings => "settings",
            SyncedField::TreeBufferIncludesSystem => "bufferIncludesSystem",
            SyncedField::TreeDeleted | SyncedField::MessageDeleted | SyncedField::PinDeleted => {
                "deleted"
            }
            SyncedField::MessageExcluded => "excluded",
            SyncedField::MessageBookmarked => "bookmarked",
            SyncedField::MessageKept => "kept",
            SyncedField::MessageParent => "parent",
            SyncedField::PinClosed => "closed",
            SyncedField::PinPlace => "place",
            SyncedField::NoteIncluded => "included",
            SyncedField::AttachmentRemoved => "removed",
        }
    }

    /// The field `field` of kind `kind`, as an operation names them, if a sync may set it.
    pub fn parse(kind: &str, field: &str) -> Option<SyncedField> {
        SyncedField::ALL
            .into_iter()
            .find(|known| known.kind().name() == kind && known.name() == field)
    }
}

impl SyncRecord {
    /// Its global id, which names its file.
    pub fn id(&self) -> &str {
        match self {
            SyncRecord::Tree(TreeRecord { id, .. })
            | SyncRecord::Message(MessageRecord { id, .. })
            | SyncRecord::Pin(PinRecord { id, .. })
            | SyncRecord::Attachment(AttachmentRecord { id, .. })
            | SyncRecord::Note(NoteRecord { id, .. })
            | SyncRecord::Receipt(ReceiptRecord { id, .. })
            | SyncRecord::Profile(ProfileRecord { id, .. })
            | SyncRecord::Summary(SummaryRecord { id, .. }) => id,
        }
    }

    /// Its kind: also where a fold writes it, what a record hangs from being written before it.
    pub fn kind(&self) -> RecordKind {
        match self {
            SyncRecord::Tree(_) => RecordKind::Tree,
            SyncRecord::Pin(_) => RecordKind::Pin,
            SyncRecord::Message(_) => RecordKind::Message,
            SyncRecord::Attachment(_) => RecordKind::Attachment,
            SyncRecord::Note(_) => RecordKind::Note,
            SyncRecord::Summary(_) => RecordKind::Summary,
            SyncRecord::Receipt(_) => RecordKind::Receipt,
            SyncRecord::Profile(_) => RecordKind::Profile,
        }
    }

    /// The tree it belongs to, for a target that holds only some trees (`None` for a note or a
    /// receipt, whose message says).
    pub(crate) fn tree(&self) -> Option<&str> {
        match self {
            SyncRecord::Tree(TreeRecord { id, .. }) => Some(id),
            SyncRecord::Message(MessageRecord { tree, .. })
            | SyncRecord::Pin(PinRecord { tree, .. })
            | SyncRecord::Attachment(AttachmentRecord { tree, .. })
            | SyncRecord::Summary(SummaryRecord { tree, .. }) => Some(tree),
            SyncRecord::Note(_) | SyncRecord::Receipt(_) | SyncRecord::Profile(_) => None,
        }
    }
}

impl SyncRecord {
    /// The message a note or a receipt belongs to.
    pub(crate) fn message(&self) -> Option<&str> {
        match self {
            SyncRecord::Note(NoteRecord { message, .. })
            | SyncRecord::Receipt(ReceiptRecord { message, .. }) => Some(message),
            _ => None,
        }
    }
}

impl From<SyncAnchor> for Anchor {
    fn from(anchor: SyncAnchor) -> Anchor {
        Anchor { start: anchor.start, end: anchor.end, text: anchor.text }
    }
}
