//! The first slice's use cases on a real database file: what the desktop shell calls.

// Test helpers unwrap too: a panic carrying the error is the failure report.
#![allow(clippy::unwrap_used)]

mod ancestry;
mod attachments;
mod branches;
mod compaction;
mod conversation;
mod files;
mod histories;
mod hostile;
mod integrity;
mod interchange;
mod keys;
mod loom_tokens;
mod media;
mod over_picked;
mod permitted;
mod profiles;
mod shared_files;
mod sharing;
mod threads;
mod window;
mod wire;

use pinloom_app::json::{Author, Exchange, SendTarget, TreeMode};
use pinloom_app::{
    ApiError, CancellationToken, DATABASE_FILE_NAME, ErrorCode, Pinloom, ReplyEvent,
};
use tokio::sync::mpsc::UnboundedSender;

/// The sends these tests make, each spelled out but made as every front end makes it: through
/// [`Pinloom::reply_to`], the one public send.
pub(crate) trait Sends {
    /// The application the sends go to.
    fn app(&self) -> &Pinloom;

    /// A new message of the person's in a tree's thread, answered.
    async fn send(
        &self,
        tree_id: i64,
        parent_id: Option<i64>,
        text: String,
        profile: String,
        events: UnboundedSender<ReplyEvent>,
        cancel: CancellationToken,
    ) -> anyhow::Result<Exchange> {
        let target = SendTarget::Thread { tree_id, parent_id, text, images: Vec::new() };
        self.app().reply_to(target, profile, events, cancel).await
    }

    /// A new message in a pin's sub-thread, answered.
    async fn send_in_pin(
        &self,
        pin_id: i64,
        parent_id: Option<i64>,
        text: String,
        profile: String,
        events: UnboundedSender<ReplyEvent>,
        cancel: CancellationToken,
    ) -> anyhow::Result<Exchange> {
        let target = SendTarget::Pin { pin_id, parent_id, text, images: Vec::new() };
        self.app().reply_to(target, profile, events, cancel).await
    }

    /// A message answered again.
    async fn regenerate(
        &self,
        node_id: i64,
        profile: String,
        events: UnboundedSender<ReplyEvent>,
        cancel: CancellationToken,
    ) -> anyhow::Result<Exchange> {
        self.app().reply_to(SendTarget::Regenerate { node_id }, profile, events, cancel).await
    }

    /// An edit of the person's message, answered.
    async fn edit_and_send(
        &self,
        node_id: i64,
        text: String,
        profile: String,
        events: UnboundedSender<ReplyEvent>,
        cancel: CancellationToken,
    ) -> anyhow::Result<Exchange> {
        self.app().reply_to(SendTarget::Edit { node_id, text }, profile, events, cancel).await
    }

    /// A buffer document continued.
    async fn continue_buffer(
        &self,
        node_id: i64,
        profile: String,
        events: UnboundedSender<ReplyEvent>,
        cancel: CancellationToken,
    ) -> anyhow::Result<Exchange> {
        self.app()
            .reply_to(SendTarget::Continue { node_id, length: None }, profile, events, cancel)
            .await
    }
}

impl Sends for Pinloom {
    fn app(&self) -> &Pinloom {
        self
    }
}

#[tokio::test]
async fn a_tree_and_its_messages_survive_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().join("nested").join("data");
    let tree_id = {
        let pinloom = Pinloom::open(data_dir.clone()).await.unwrap();
        assert_eq!(pinloom.database_path(), data_dir.join(DATABASE_FILE_NAME));
        let tree = pinloom.create_tree("Rivers".into(), TreeMode::Dialogue).await.unwrap();
        let first = pinloom.append_message(tree.id, None, "Why meanders?".into()).await.unwrap();
        let second =
            pinloom.append_message(tree.id, Some(first.id), "And oxbows?".into()).await.unwrap();
        assert_eq!(second.parent_id, Some(first.id));
        assert_eq!(second.author, Author::Human);
        assert_eq!(second.token_estimate, 4, "11 characters at 3.5 a token round up to 4");
        tree.id
    };

    let pinloom = Pinloom::open(data_dir).await.unwrap();
    let trees = pinloom.list_trees().await.unwrap();
    assert_eq!(trees.len(), 1);
    assert_eq!(trees[0].message_count, 2);
    let view = pinloom.thread_view(tree_id, None).await.unwrap();
    let texts: Vec<_> =
        view.messages.iter().map(|message| message.node.message.text.as_str()).collect();
    assert_eq!(texts, ["Why meanders?", "And oxbows?"]);
}

#[tokio::test]
async fn refusals_cross_as_invalid_input_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let pinloom = Pinloom::open(dir.path().to_owned()).await.unwrap();

    let error =
        ApiError::from(pinloom.create_tree("  ".into(), TreeMode::Buffer).await.unwrap_err());
    assert_eq!(error.code, ErrorCode::InvalidInput);
    assert_eq!(
        error.message,
        "could not create the tree: a tree needs a title: type one before creating it"
    );

    let tree = pinloom.create_tree("Rivers".into(), TreeMode::Buffer).await.unwrap();
    let error =
        ApiError::from(pinloom.append_message(tree.id, None, "\n ".into()).await.unwrap_err());
    assert_eq!(error.code, ErrorCode::InvalidInput);
    assert!(error.message.contains("type something first"), "{}", error.message);
    assert_eq!(pinloom.thread_view(tree.id, None).await.unwrap().messages.len(), 0);
}

#[tokio::test]
async fn a_missing_tree_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let pinloom = Pinloom::open(dir.path().to_owned()).await.unwrap();
    let error = ApiError::from(pinloom.tree_summary(404).await.unwrap_err());
    assert_eq!(error.code, ErrorCode::NotFound);
    assert_eq!(
        error.message,
        "could not open the tree: tree 404 does not exist; it may have been deleted"
    );
}

#[tokio::test]
async fn a_damaged_database_is_unusable_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DATABASE_FILE_NAME);
    std::fs::write(&path, b"definitely not sqlite, but long enough to have a header of sorts....")
        .unwrap();
    let error = ApiError::from(Pinloom::open(dir.path().to_owned()).await.unwrap_err());
    assert_eq!(error.code, ErrorCode::DatabaseUnusable);
    assert!(error.message.starts_with("could not open Pinloom's database: "), "{}", error.message);
    assert!(error.message.contains(&path.display().to_string()), "{}", error.message);
}

#[tokio::test]
async fn a_data_folder_that_cannot_be_created_is_unusable() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"").unwrap();
    let error = ApiError::from(Pinloom::open(file.join("data")).await.unwrap_err());
    assert_eq!(error.code, ErrorCode::DatabaseUnusable);
    assert!(error.message.contains("--data-dir"), "says how to choose another: {}", error.message);
}
