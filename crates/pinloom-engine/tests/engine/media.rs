//! Images and PDFs: counted by each provider's image rule, left out for a model that does not
//! see, sent as each wire family's image part with the message they belong to; a PDF kept page
//! by page from its first page, its pages past the file limit or the budget left out as such.

use pinloom_engine::family::request_body;
use pinloom_engine::plan::{PruneReason, SliceKind, SliceStatus, SourceId};
use pinloom_engine::planner::plan;
use pinloom_engine::profile::ProviderFamily;
use pinloom_engine::render::chat_request;
use pinloom_engine::settings::Settings;
use pinloom_engine::snapshot::{Attachment, AttachmentKind, AttachmentScope, Author, Part};
use serde_json::Value;

use crate::fixtures::{Tree, profile};

fn image(id: u64, scope: AttachmentScope, data: &str) -> Attachment {
    Attachment {
        id,
        scope,
        kind: AttachmentKind::Image {
            name: format!("photo{id}.png"),
            media_type: "image/png".into(),
            width: 1024,
            height: 1024,
            data: data.into(),
        },
    }
}

fn seeing(family: ProviderFamily) -> pinloom_engine::profile::ModelProfile {
    let mut p = profile(family, 100_000);
    p.sees_images = true;
    p
}

#[test]
fn an_image_costs_what_its_provider_counts_and_is_sent_with_its_message() {
    let mut t = Tree::new("t");
    let first = t.say(Author::Human, "What is in this photo?");
    t.say(Author::Model, "A heron.");
    t.say(Author::Human, "And its colour?");
    t.snapshot.attachments.push(image(1, AttachmentScope::Node(first), "QUJD"));
    for family in [
        ProviderFamily::OpenAiCompatible,
        ProviderFamily::Anthropic,
        ProviderFamily::Gemini,
        ProviderFamily::Ollama,
    ] {
        let model = seeing(family);
        let p = plan(&t.snapshot, &model, &Settings::default()).unwrap();
        let slice = p.slices.iter().find(|s| s.kind == SliceKind::Image).unwrap();
        assert!(slice.is_included(), "{family:?}");
        assert_eq!(slice.tokens, family.rules().image_tokens(1024, 1024), "{family:?}");
        // With the message it was attached to, before its text; not with the prompt.
        let request = chat_request(&p, &t.snapshot, &model);
        let first_user = &request.messages[0];
        assert!(
            matches!(&first_user.parts[0], Part::Image { data, media_type } if data == "QUJD" && media_type == "image/png"),
            "{family:?}: {:?}",
            first_user.parts
        );
        let last = request.messages.last().unwrap();
        assert!(last.parts.iter().all(|part| !matches!(part, Part::Image { .. })));
    }
}

#[test]
fn each_wire_family_writes_its_own_image_part() {
    let mut t = Tree::new("t");
    t.say(Author::Human, "Describe it.");
    t.snapshot.attachments.push(image(1, AttachmentScope::Tree, "QUJD"));
    let body = |family| {
        let model = seeing(family);
        let p = plan(&t.snapshot, &model, &Settings::default()).unwrap();
        serde_json::from_str::<Value>(&request_body(&p, &t.snapshot, &model)).unwrap()
    };
    let openai = body(ProviderFamily::OpenAiCompatible);
    assert_eq!(
        openai["messages"][0]["content"],
        serde_json::json!([
            {"image_url": {"url": "data:image/png;base64,QUJD"}, "type": "image_url"},
            {"text": "Describe it.", "type": "text"}
        ])
    );
    let anthropic = body(ProviderFamily::Anthropic);
    assert_eq!(
        anthropic["messages"][0]["content"][0],
        serde_json::json!({"source": {"data": "QUJD", "media_type": "image/png", "type": "base64"}, "type": "image"})
    );
    let gemini = body(ProviderFamily::Gemini);
    assert_eq!(
        gemini["contents"][0]["parts"][0],
        serde_json::json!({"inlineData": {"data": "QUJD", "mimeType": "image/png"}})
    );
    let ollama = body(ProviderFamily::Ollama);
    assert_eq!(ollama["messages"][0]["images"], serde_json::json!(["QUJD"]));
    assert_eq!(ollama["messages"][0]["content"], "Describe it.");
}

#[test]
fn a_model_that_does_not_see_gets_no_image_and_the_plan_says_why() {
    let mut t = Tree::new("t");
    t.say(Author::Human, "What is this?");
    t.snapshot.attachments.push(image(1, AttachmentScope::Tree, "QUJD"));
    let mut blind = profile(ProviderFamily::OpenAiCompatible, 100_000);
    blind.sees_images = false;
    let p = plan(&t.snapshot, &blind, &Settings::default()).unwrap();
    let slice = p.slices.iter().find(|s| s.kind == SliceKind::Image).unwrap();
    assert_eq!(slice.status, SliceStatus::Pruned(PruneReason::ImageNotSeen));
    let body = request_body(&p, &t.snapshot, &blind);
    assert!(!body.contains("QUJD"), "{body}");
}

#[test]
fn an_image_whose_message_was_cut_goes_with_the_prompt() {
    let mut t = Tree::new("t");
    let first = t.say(Author::Human, &"old words ".repeat(200));
    t.say(Author::Model, "ok");
    t.say(Author::Human, "now?");
    t.snapshot.attachments.push(image(1, AttachmentScope::Node(first), "QUJD"));
    let mut model = seeing(ProviderFamily::Anthropic);
    model.context_window = 1_600;
    let settings = Settings { minimum_recent_nodes: 1, ..Settings::default() };
    let p = plan(&t.snapshot, &model, &settings).unwrap();
    let first_slice = p.slices.iter().find(|s| s.source == SourceId::Node(first)).unwrap();
    assert!(!first_slice.is_included(), "the long first message should be cut");
    let request = chat_request(&p, &t.snapshot, &model);
    let last = request.messages.last().unwrap();
    assert!(last.parts.iter().any(|part| matches!(part, Part::Image { .. })), "{:?}", last.parts);
}

fn pdf(pages: &[&str]) -> Attachment {
    Attachment {
        id: 7,
        scope: AttachmentScope::Tree,
        kind: AttachmentKind::Pdf {
            path: "paper.pdf".into(),
            pages: pages.iter().map(|page| (*page).to_owned()).collect(),
        },
    }
}

fn page_status(p: &pinloom_engine::ContextPlan) -> Vec<(u32, SliceStatus)> {
    p.slices
        .iter()
        .filter_map(|s| match s.source {
            SourceId::PdfPage { page, .. } => Some((page, s.status)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_pdf_is_sent_page_by_page_with_markers() {
    let mut t = Tree::new("t");
    t.say(Author::Human, "Summarise the paper.");
    t.snapshot.attachments.push(pdf(&["Abstract.", "Methods."]));
    let model = profile(ProviderFamily::OpenAiCompatible, 100_000);
    let p = plan(&t.snapshot, &model, &Settings::default()).unwrap();
    let request = chat_request(&p, &t.snapshot, &model);
    assert_eq!(
        request.system.as_deref(),
        Some(
            "--- file: paper.pdf, page 1 of 2 ---\nAbstract.\n\n\
             --- file: paper.pdf, page 2 of 2 ---\nMethods."
        )
    );
}

#[test]
fn a_pdf_over_the_budget_keeps_its_first_pages_and_cuts_the_rest_in_order() {
    let mut t = Tree::new("t");
    t.say(Author::Human, "Q");
    // Page 2 is long; page 3 is short and would fit in what page 2 leaves, but a PDF is kept
    // without gaps.
    let long = "w".repeat(400);
    t.snapshot.attachments.push(pdf(&["first page", &long, "third"]));
    let p = plan(&t.snapshot, &profile(ProviderFamily::OpenAiCompatible, 60), &Settings::default())
        .unwrap();
    assert_eq!(
        page_status(&p),
        vec![
            (1, SliceStatus::Included),
            (2, SliceStatus::Pruned(PruneReason::OverBudget)),
            (3, SliceStatus::Pruned(PruneReason::AfterCutPage)),
        ]
    );
}

#[test]
fn pdf_pages_past_the_file_limit_are_left_out_as_too_large() {
    let mut t = Tree::new("t");
    t.say(Author::Human, "Q");
    t.snapshot.attachments.push(pdf(&["aaaa", "bbbb", "cccc"]));
    let settings = Settings { max_file_bytes: 9, ..Settings::default() };
    let p =
        plan(&t.snapshot, &profile(ProviderFamily::OpenAiCompatible, 100_000), &settings).unwrap();
    assert_eq!(
        page_status(&p),
        vec![
            (1, SliceStatus::Included),
            (2, SliceStatus::Included),
            (3, SliceStatus::Pruned(PruneReason::FileTooLarge)),
        ]
    );
}
