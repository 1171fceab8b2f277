//! What the window asks for besides the conversation: the tree map, notes, the ThreadMind
//! export and a connection test.

use pinloom_app::NodeAction;
use pinloom_test_server::Server;

use crate::Sends;
use crate::wire::{ask, dialogue, pinloom_with, says};

#[tokio::test]
async fn the_tree_map_pages_through_every_message_with_its_flags() {
    let server = Server::start(vec![]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let mut parent = None;
    let mut ids = Vec::new();
    for turn in 0..5 {
        let id = pinloom.append_message(tree, parent, format!("Turn {turn}")).await.unwrap().id;
        ids.push(id);
        parent = Some(id);
    }
    pinloom.mark_node(ids[1], NodeAction::Bookmark).await.unwrap();
    let first = pinloom.tree_outline(tree, None, 3).await.unwrap();
    assert_eq!(first.iter().map(|e| e.id).collect::<Vec<_>>(), ids[..3]);
    assert!(first[1].bookmarked);
    assert_eq!(first[0].child_count, 1);
    let rest = pinloom.tree_outline(tree, Some(ids[2]), 3).await.unwrap();
    assert_eq!(rest.iter().map(|e| e.id).collect::<Vec<_>>(), ids[3..]);
    assert_eq!(rest[1].parent_id, Some(ids[3]));
}

#[tokio::test]
async fn notes_are_listed_and_the_threadmind_export_shows_the_chain() {
    let server =
        Server::start(vec![says("Erosion."), says("Summary: rivers."), says("Silt.")]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let first = ask(&pinloom, tree, None, "Why meanders?").await;
    let reply = first.reply.message.id;
    let note = pinloom.annotate(reply, "Check the textbook.".into(), false).await.unwrap();
    let notes = pinloom.notes(reply).await.unwrap();
    assert_eq!(
        (notes[0].id, notes[0].text.as_str(), notes[0].included),
        (note, "Check the textbook.", false)
    );

    let pin = pinloom.pin_range(reply, 0, 7, "Erosion".into(), String::new()).await.unwrap();
    let (events, _received, cancel) = crate::wire::listen();
    let asked = pinloom
        .send_in_pin(pin.id, None, "Where?".into(), "Local".into(), events, cancel)
        .await
        .unwrap();
    let markdown = pinloom.threadmind_markdown(asked.reply.message.id).await.unwrap();
    assert!(markdown.contains("Summary: rivers."), "{markdown}");
    assert!(markdown.contains("(active)"), "{markdown}");
    assert!(markdown.contains("Where?"), "{markdown}");
}

#[tokio::test]
async fn a_connection_test_sends_one_short_request() {
    let server = Server::start(vec![says("ready")]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let check = pinloom.check_connection("Local".into()).await.unwrap();
    assert_eq!(check.reply, "ready");
    let body = server.seen()[0].json();
    assert_eq!(body["max_tokens"], 16);
    assert!(pinloom.list_trees().await.unwrap().is_empty(), "no tree was touched");
}

#[tokio::test]
async fn a_search_hit_added_by_the_person_joins_the_search_slice() {
    let server = Server::start(vec![]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let root = pinloom.append_message(tree, None, "Rivers.".into()).await.unwrap().id;
    let aside = pinloom
        .append_message(tree, Some(root), "The thalweg is the line of deepest water.".into())
        .await
        .unwrap()
        .id;
    let other = pinloom.append_message(tree, Some(root), "Tell me more.".into()).await.unwrap().id;

    let found = pinloom.search(tree, "thalweg".into()).await.unwrap();
    assert_eq!(found.iter().map(|hit| hit.node_id).collect::<Vec<_>>(), [aside]);
    let before = pinloom.preview(other, "Local".into(), None).await.unwrap();
    assert!(before.slices.iter().all(|slice| slice.kind != "searchResult"), "no shared words");

    let mut settings = pinloom.tree_settings(tree).await.unwrap();
    settings.search_hits.push(aside);
    pinloom.set_tree_settings(tree, settings).await.unwrap();
    let after = pinloom.preview(other, "Local".into(), None).await.unwrap();
    let hit = after.slices.iter().find(|slice| slice.kind == "searchResult").unwrap();
    assert_eq!(hit.source_id, Some(aside));
    assert!(hit.included);
    assert!(after.request_body().contains("line of deepest water"));
}

/// The window's previews leave the request body out and read it when the person shows it: it
/// must be the request of the plan on show, and follow what is written after it.
#[tokio::test]
async fn the_request_read_apart_is_the_one_the_preview_plans() {
    let server = Server::start(vec![]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let root = pinloom.append_message(tree, None, "Rivers.".into()).await.unwrap().id;
    let plan = pinloom.preview(root, "Local".into(), None).await.unwrap();
    let request = pinloom.preview_request(root, "Local".into()).await.unwrap();
    assert_eq!(plan.body.as_deref(), Some(request.body.as_str()));
    assert_eq!(plan.url, request.url);
    assert!(request.body.contains("Rivers."), "{}", request.body);
    assert!(plan.clone().without_body().body.is_none());

    let next =
        pinloom.append_message(tree, Some(root), "Why do they bend?".into()).await.unwrap().id;
    let later = pinloom.preview_request(next, "Local".into()).await.unwrap();
    assert!(later.body.contains("Why do they bend?"), "{}", later.body);
    assert_ne!(later.body, request.body);
}
