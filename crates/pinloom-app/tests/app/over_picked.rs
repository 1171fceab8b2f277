//! A question over several branches, through the use cases on a real database file and a
//! scripted server on 127.0.0.1: the request carries each picked message, labelled as the
//! person's with where it came from, and nothing else of their branches; the thread it starts
//! keeps carrying them, shows them at its top, lists them on its receipts; a branch's summary
//! goes when asked for (written first); and what cannot be asked over is refused, writing
//! nothing.

use pinloom_app::json::{NodeAction, PickInput, Provenance, SendTarget};
use pinloom_app::{ApiError, ErrorCode};
use pinloom_test_server::Server;

use crate::Sends;
use crate::wire::{ask, dialogue, listen, messages, pinloom_with, says};

/// The whole text a request sent, its messages joined.
fn sent(body: &serde_json::Value) -> String {
    messages(body).into_iter().map(|(role, text)| format!("{role}: {text}\n")).collect()
}

fn pick(node_id: i64) -> PickInput {
    PickInput { node_id, with_summary: false }
}

#[tokio::test]
async fn a_question_over_two_branches_carries_the_two_picked_messages_and_nothing_else_of_them() {
    let server = Server::start(vec![
        says("Erosion of the outer bank shapes the bend."),
        says("Uplift of the land tilts the river."),
        says("Sediment settles on the inner bank."),
        says("The root thread, summarised: the person asked why rivers meander."),
        says("A few metres a year on a fast river."),
        says("Together: the outer bank erodes a few metres a year."),
        says("A delta spreads the same sediment."),
        says("The pin asked how fast the bank erodes; a few metres a year."),
        says("Because the current is fastest there."),
    ])
    .await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    // One question answered twice (two branches), the second branch going on, and a pin on the
    // first answer with an exchange of its own.
    let first = ask(&pinloom, tree, None, "Why do rivers meander?").await;
    let erosion = first.reply.message.id;
    let (events, _received, cancel) = listen();
    let again = SendTarget::Regenerate { node_id: erosion };
    let uplift = pinloom.reply_to(again, "Local".into(), events, cancel).await.unwrap();
    ask(&pinloom, tree, Some(uplift.reply.message.id), "And the sediment?").await;
    let pin = pinloom.pin_passage(erosion, "outer bank".into()).await.unwrap();
    let (events, _received, cancel) = listen();
    let in_pin = pinloom
        .send_in_pin(pin.id, None, "How fast does it erode?".into(), "Local".into(), events, cancel)
        .await
        .unwrap();
    let rate = in_pin.reply.message.id;
    assert_eq!(server.seen().len(), 5, "three answers, the pin's summary and the pin's answer");

    let (events, _received, cancel) = listen();
    let question = "What do these two say together?";
    let target =
        SendTarget::OverPicked { picks: vec![pick(erosion), pick(rate)], text: question.into() };
    let together = pinloom.reply_to(target, "Local".into(), events, cancel).await.unwrap();

    let request = sent(&server.seen()[5].json());
    let from_main = "Added by you, from the main thread, an answer by Local:\nErosion of the outer \
                     bank shapes the bend.";
    assert!(request.contains(from_main), "{request}");
    let from_pin = format!(
        "Added by you, from the pin “{}”, an answer by Local:\nA few metres a year on a fast \
         river.",
        pin.title
    );
    assert!(request.contains(&from_pin), "{request}");
    for elsewhere in [
        "Why do rivers meander?",
        "Uplift",
        "Sediment",
        "How fast does it erode?",
        "the person asked why rivers meander",
    ] {
        assert!(!request.contains(elsewhere), "{elsewhere:?} is of their branches: {request}");
    }
    let turns = messages(&server.seen()[5].json());
    assert_eq!(turns.last().unwrap(), &("user".to_owned(), question.to_owned()));

    // A thread of its own at the tree's top, its sources at its top, each a way back.
    let prompt = together.prompt.as_ref().expect("the question was written");
    assert_eq!(prompt.message.parent_id, None, "a thread of its own");
    let view = pinloom.thread_view(tree, Some(prompt.message.id)).await.unwrap();
    let shown: Vec<(i64, Option<i64>)> =
        view.picked.iter().map(|picked| (picked.node_id, picked.pin_id)).collect();
    assert_eq!(shown, [(erosion, None), (rate, Some(pin.id))]);
    assert_eq!(view.picked[1].came_from, format!("the pin “{}”, an answer by Local", pin.title));
    assert!(view.picked.iter().all(|picked| picked.left_out.is_none()));
    let main = pinloom.thread_view(tree, Some(erosion)).await.unwrap();
    assert!(main.picked.is_empty(), "the other threads were asked over nothing");

    // Listed on the receipt as the person's.
    let receipt = pinloom.receipt(together.reply.message.id).await.unwrap().expect("a receipt");
    let picked: Vec<_> = receipt.sent.iter().filter(|slice| slice.kind == "picked").collect();
    assert_eq!(picked.len(), 2, "{:?}", receipt.sent);
    assert_eq!(together.plan.slices.iter().filter(|s| s.kind == "picked").count(), 2);
    assert!(
        together
            .plan
            .slices
            .iter()
            .filter(|s| s.kind == "picked")
            .all(|s| s.provenance == Provenance::AddedByPerson && s.included)
    );

    // The thread goes on with them.
    let on = ask(&pinloom, tree, Some(together.reply.message.id), "And in a delta?").await;
    let request = sent(&server.seen()[6].json());
    assert!(request.contains(from_main) && request.contains(&from_pin), "{request}");
    assert!(request.contains(question) && !request.contains("Uplift"), "{request}");

    // Excluded since: left out, and shown so.
    pinloom.mark_node(erosion, NodeAction::Exclude).await.unwrap();
    let view = pinloom.thread_view(tree, Some(on.reply.message.id)).await.unwrap();
    assert!(view.picked[0].left_out.as_deref().unwrap().starts_with("excluded"));
    pinloom.mark_node(erosion, NodeAction::Include).await.unwrap();

    // With its branch's summary: written first (from the pin's own messages), then sent before
    // the message, labelled.
    let (events, _received, cancel) = listen();
    let target = SendTarget::OverPicked {
        picks: vec![PickInput { node_id: rate, with_summary: true }],
        text: "Why so fast?".into(),
    };
    pinloom.reply_to(target, "Local".into(), events, cancel).await.unwrap();
    let summary_request = sent(&server.seen()[7].json());
    assert!(summary_request.contains("How fast does it erode?"), "{summary_request}");
    let request = sent(&server.seen()[8].json());
    let summary = format!(
        "Added by you, a summary of the pin “{}”, an answer by Local up to the message picked \
         from it:\nThe pin asked how fast the bank erodes; a few metres a year.",
        pin.title
    );
    assert!(request.contains(&summary), "{request}");
    assert!(request.find(&summary) < request.find("Added by you, from the pin"), "{request}");
    assert!(!request.contains("Erosion of the outer bank"), "not picked this time: {request}");
}

#[tokio::test]
async fn what_cannot_be_asked_over_is_refused_and_nothing_is_written() {
    let server = Server::start(vec![says("Erosion."), says("Elsewhere.")]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let first = ask(&pinloom, tree, None, "Why do rivers meander?").await;
    let other_tree = dialogue(&pinloom).await;
    let elsewhere = ask(&pinloom, other_tree, None, "What of lakes?").await;
    let answer = first.reply.message.id;
    let refused = |picks: Vec<PickInput>, text: &str| {
        let (events, _received, cancel) = listen();
        let target = SendTarget::OverPicked { picks, text: text.into() };
        let pinloom = &pinloom;
        async move {
            let error = pinloom.reply_to(target, "Local".into(), events, cancel).await.unwrap_err();
            ApiError::from(error)
        }
    };
    let messages_in = |pinloom: &pinloom_app::Pinloom| {
        let pinloom = pinloom.clone();
        async move { pinloom.tree_outline(tree, None, 100).await.unwrap().len() }
    };
    let before = messages_in(&pinloom).await;
    let none = refused(Vec::new(), "Over what?").await;
    assert!(none.message.contains("pick the messages"), "{}", none.message);
    let empty = refused(vec![pick(answer)], "  ").await;
    assert!(empty.message.contains("the question is empty"), "{}", empty.message);
    let twice = refused(vec![pick(answer), pick(answer)], "Twice?").await;
    assert!(twice.message.contains("picked twice"), "{}", twice.message);
    let apart = refused(vec![pick(answer), pick(elsewhere.reply.message.id)], "Apart?").await;
    assert!(apart.message.contains("in another tree"), "{}", apart.message);
    let many = refused((0..13).map(|_| pick(answer)).collect(), "Many?").await;
    assert!(many.message.contains("at most 12"), "{}", many.message);
    let missing = refused(vec![pick(999_999)], "Gone?").await;
    assert_eq!(missing.code, ErrorCode::NotFound, "{}", missing.message);
    assert_eq!(messages_in(&pinloom).await, before, "no question was written");
    pinloom.mark_node(answer, NodeAction::Delete).await.unwrap();
    let before = messages_in(&pinloom).await;
    let deleted = refused(vec![pick(answer)], "Deleted?").await;
    assert!(deleted.message.contains("is deleted: restore it first"), "{}", deleted.message);

    assert_eq!(messages_in(&pinloom).await, before, "no question was written");
    assert_eq!(server.seen().len(), 2, "nothing refused was sent");
}

#[tokio::test]
async fn a_question_over_picked_messages_goes_out_as_open_loom_and_comes_back_with_its_picks() {
    let server = Server::start(vec![
        says("Erosion."),
        says("Uplift."),
        says("The person asked; erosion."),
        says("Both."),
    ])
    .await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let first = ask(&pinloom, tree, None, "Why do rivers meander?").await;
    let (events, _received, cancel) = listen();
    let again = SendTarget::Regenerate { node_id: first.reply.message.id };
    let uplift = pinloom.reply_to(again, "Local".into(), events, cancel).await.unwrap();
    let (events, _received, cancel) = listen();
    let picks = vec![
        PickInput { node_id: first.reply.message.id, with_summary: true },
        pick(uplift.reply.message.id),
    ];
    let target = SendTarget::OverPicked { picks, text: "Both?".into() };
    let both = pinloom.reply_to(target, "Local".into(), events, cancel).await.unwrap();
    let question = both.prompt.unwrap().message.id;
    let document = pinloom.export_open_loom(vec![tree], Default::default()).await.unwrap();

    let dir = tempfile::tempdir().unwrap();
    let fresh = pinloom_app::Pinloom::open(dir.path().to_owned()).await.unwrap();
    let back = fresh.import_document(document.clone(), "round trip".into()).await.unwrap();
    let back_tree = back.trees[0].id;
    let shown = |view: pinloom_app::json::ThreadView| {
        view.picked
            .into_iter()
            .map(|picked| (picked.opening, picked.with_summary))
            .collect::<Vec<_>>()
    };
    let here = shown(pinloom.thread_view(tree, Some(question)).await.unwrap());
    let outline = fresh.tree_outline(back_tree, None, 100).await.unwrap();
    let question_back = outline.iter().find(|entry| entry.preview.starts_with("Both?")).unwrap().id;
    let there = shown(fresh.thread_view(back_tree, Some(question_back)).await.unwrap());
    assert_eq!(there, here);
    assert_eq!(here, [("Erosion.".to_owned(), true), ("Uplift.".to_owned(), false)]);

    // A file that names a message of nowhere, one twice, or picks on a message that continues
    // another has them dropped, and says so.
    let mut hostile: serde_json::Value = serde_json::from_str(&document).unwrap();
    let nodes = hostile["trees"][0]["nodes"].as_object_mut().unwrap();
    let (question_id, answer_id) = {
        let find = |text: &str| {
            nodes
                .iter()
                .find(|(_, node)| node["content"][0]["text"] == text)
                .map(|(id, _)| id.clone())
                .unwrap()
        };
        (find("Both?"), find("Erosion."))
    };
    nodes[&question_id]["extensions"]["pinloom"]["picked"] = serde_json::json!([
        { "node": "nowhere", "withSummary": false },
        { "node": answer_id, "withSummary": false },
        { "node": answer_id, "withSummary": true },
    ]);
    nodes[&answer_id]["extensions"]["pinloom"]["picked"] =
        serde_json::json!([{ "node": question_id, "withSummary": false }]);
    nodes[&question_id]["extensions"]["pinloom"].as_object_mut().unwrap().remove("globalId");
    let dir = tempfile::tempdir().unwrap();
    let fresh = pinloom_app::Pinloom::open(dir.path().to_owned()).await.unwrap();
    let report = fresh.import_document(hostile.to_string(), "hostile".into()).await.unwrap();
    let notes = report.notes.join("\n");
    assert!(notes.contains("names 2 picked messages that are not messages of the tree"), "{notes}");
    assert!(
        notes.contains("continues another message, so the messages it names as picked"),
        "{notes}"
    );
    let back_tree = report.trees[0].id;
    let outline = fresh.tree_outline(back_tree, None, 100).await.unwrap();
    let id_of =
        |text: &str| outline.iter().find(|entry| entry.preview.starts_with(text)).unwrap().id;
    let there = shown(fresh.thread_view(back_tree, Some(id_of("Both?"))).await.unwrap());
    assert_eq!(there, [("Erosion.".to_owned(), false)]);
    let answer = fresh.thread_view(back_tree, Some(id_of("Erosion."))).await.unwrap();
    assert!(answer.picked.is_empty());
}
