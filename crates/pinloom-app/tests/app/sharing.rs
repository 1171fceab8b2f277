//! Two front ends on one file (the app and the MCP server): each notices the other's writes.

use pinloom_app::{NodeAction, Pinloom};
use pinloom_test_server::Server;

use crate::wire::{dialogue, local_profile};

#[tokio::test]
async fn each_front_end_sees_the_others_writes_on_its_next_read() {
    let server = Server::start(vec![]).await;
    let dir = tempfile::tempdir().unwrap();
    let app = Pinloom::open(dir.path().to_owned()).await.unwrap();
    let mcp = Pinloom::open(dir.path().to_owned()).await.unwrap();
    app.save_model_profile(local_profile("Local", &server, 8_192, "o200k")).await.unwrap();
    let tree = dialogue(&app).await;
    let first = app.append_message(tree, None, "Rivers.".into()).await.unwrap().id;
    let second = app.append_message(tree, Some(first), "Deltas.".into()).await.unwrap().id;

    // The app plans (and caches the path and the plan); the server excludes a message on it.
    let before = app.preview(second, "Local".into(), None).await.unwrap();
    assert!(before.slices.iter().all(|slice| slice.included));
    assert!(mcp.model_profiles().await.unwrap().iter().any(|p| p.name == "Local"));
    mcp.mark_node(first, NodeAction::Exclude).await.unwrap();
    let after = app.preview(second, "Local".into(), None).await.unwrap();
    let excluded = after.slices.iter().find(|slice| slice.source_id == Some(first)).unwrap();
    assert_eq!(excluded.reason.as_deref(), Some("excluded"), "the app noticed the write");

    // The server continues the thread; the app's next plan of the new end includes it.
    let third = mcp.append_message(tree, Some(second), "Estuaries.".into()).await.unwrap().id;
    let extended = app.preview(third, "Local".into(), None).await.unwrap();
    assert!(
        extended.request_body().contains("Estuaries.")
            && extended.request_body().contains("Deltas.")
    );
    assert_eq!(app.thread_view(tree, None).await.unwrap().messages.len(), 3);
}
