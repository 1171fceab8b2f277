//! Images and PDFs, attached from disk or sent with a message: what is stored, what the plan
//! counts, what reaches the provider, and what is refused with what to do.

use pinloom_app::json::{AttachTo, ImageInput, ModelProfile, SendTarget, TreeSettings, Verdict};
use pinloom_app::{ApiError, ErrorCode};
use pinloom_test_server::{Answer, Server};

use crate::wire::{dialogue, listen, local_profile, pinloom_with, says};

/// A PNG's first bytes: its signature and a header of `width` × `height` pixels, which is all
/// that is read of an image before it is sent.
pub(crate) fn png(width: u32, height: u32) -> Vec<u8> {
    let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    bytes.extend(width.to_be_bytes());
    bytes.extend(height.to_be_bytes());
    bytes.extend([8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89]);
    bytes
}

/// A PDF of `pages`, each page's text in Helvetica, written with lopdf.
fn pdf(pages: &[&str]) -> Vec<u8> {
    use lopdf::content::{Content, Operation};
    use lopdf::{Document, Object, Stream, dictionary};
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
    });
    let resources = doc.add_object(dictionary! { "Font" => dictionary! { "F1" => font } });
    let mut kids = Vec::new();
    for text in pages {
        let content = Content {
            operations: vec![
                Operation::new("BT", vec![]),
                Operation::new("Tf", vec!["F1".into(), 24.into()]),
                Operation::new("Td", vec![100.into(), 600.into()]),
                Operation::new("Tj", vec![Object::string_literal(*text)]),
                Operation::new("ET", vec![]),
            ],
        };
        let stream = doc.add_object(Stream::new(dictionary! {}, content.encode().unwrap()));
        let page = doc.add_object(dictionary! {
            "Type" => "Page", "Parent" => pages_id, "Contents" => stream,
            "Resources" => resources, "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
        });
        kids.push(page.into());
    }
    let count = kids.len() as i64;
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => kids, "Count" => count }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).unwrap();
    bytes
}

#[tokio::test]
async fn a_pdf_is_attached_as_its_pages_and_the_plan_keeps_them_from_the_first() {
    let server = Server::start(vec![]).await;
    let (pinloom, dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let first = pinloom.append_message(tree, None, "Summarise it.".into()).await.unwrap().id;
    let paper = dir.path().join("paper.pdf");
    std::fs::write(&paper, pdf(&["Meanders migrate.", "Oxbows form.", "Deltas grow."])).unwrap();
    // Chosen in the composer's image dialog, a PDF is refused unread: it goes to the tree.
    let refused = ApiError::from(pinloom.image_from_file(paper.clone()).await.unwrap_err());
    assert!(refused.message.contains("is not an image models take"), "{}", refused.message);
    let attached = pinloom.attach_path(tree, AttachTo::Tree, paper.clone()).await.unwrap();
    assert_eq!((attached.role.as_str(), attached.pages), ("pdf", Some(3)));

    let plan = pinloom.preview(first, "Local".into(), None).await.unwrap();
    let pages: Vec<_> = plan.slices.iter().filter(|slice| slice.source == "pdfPage").collect();
    assert_eq!(pages.len(), 3, "{:?}", plan.slices);
    assert!(pages.iter().all(|page| page.included && page.source_id == Some(attached.id)));
    let shown = paper.display();
    for (number, text) in [(1, "Meanders migrate."), (3, "Deltas grow.")] {
        let marker = format!("--- file: {shown}, page {number} of 3 ---");
        assert!(plan.request_body().contains(&marker), "{marker} in {}", plan.request_body());
        assert!(plan.request_body().contains(text), "{text} in {}", plan.request_body());
    }

    // Under a file limit that holds two pages' text, the third is left out as too large.
    let settings = TreeSettings { max_file_bytes: Some(30), ..TreeSettings::default() };
    pinloom.set_tree_settings(tree, settings).await.unwrap();
    let plan = pinloom.preview(first, "Local".into(), None).await.unwrap();
    let reasons: Vec<_> = plan
        .slices
        .iter()
        .filter(|slice| slice.source == "pdfPage")
        .map(|slice| slice.reason.as_deref())
        .collect();
    assert_eq!(reasons, [None, None, Some("fileTooLarge")]);
    assert!(!plan.request_body().contains("Deltas grow."));
}

#[tokio::test]
async fn a_pdf_without_text_or_damaged_is_refused_and_nothing_is_stored() {
    let server = Server::start(vec![]).await;
    let (pinloom, dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let scan = dir.path().join("scan.pdf");
    std::fs::write(&scan, pdf(&["", ""])).unwrap();
    let error = ApiError::from(pinloom.attach_path(tree, AttachTo::Tree, scan).await.unwrap_err());
    assert!(error.message.contains("has no text to read"), "{}", error.message);
    let broken = dir.path().join("broken.pdf");
    std::fs::write(&broken, b"%PDF-1.7\nnot really").unwrap();
    let error =
        ApiError::from(pinloom.attach_path(tree, AttachTo::Tree, broken).await.unwrap_err());
    assert_eq!(error.code, ErrorCode::InvalidInput);
    assert!(error.message.contains("broken.pdf"), "{}", error.message);
    assert!(pinloom.attachments(tree).await.unwrap().is_empty());
}

#[tokio::test]
async fn an_image_goes_with_its_message_to_a_model_that_sees_counted_by_its_rule() {
    let server = Server::start(vec![says("A heron.")]).await;
    let (pinloom, dir) = pinloom_with(&server).await;
    // An OpenAI-shaped server serving a model whose name says it sees.
    let mut seeing = local_profile("Seeing", &server, 32_000, "o200k");
    seeing.model_id = "qwen2.5-vl-7b".into();
    pinloom.save_model_profile(seeing).await.unwrap();
    let tree = dialogue(&pinloom).await;
    let photo = dir.path().join("heron.png");
    std::fs::write(&photo, png(1024, 1024)).unwrap();
    let image = pinloom.image_from_file(photo).await.unwrap();
    assert_eq!(image.name, "heron.png");

    let (events, _heard, cancel) = listen();
    let target = first_message(tree, "What bird is this?", image);
    let exchange = pinloom.reply_to(target, "Seeing".into(), events, cancel).await.unwrap();
    let sent = server.seen()[0].json();
    let content = &sent["messages"][0]["content"];
    let url = content[0]["image_url"]["url"].as_str().unwrap();
    assert!(url.starts_with("data:image/png;base64,iVBORw0KGgo"), "{content}");
    assert_eq!(content[1]["text"], "What bird is this?");
    // Counted by OpenAI's rule: 1024 × 1024 is four tiles, 765 tokens.
    let slice = exchange.plan.slices.iter().find(|slice| slice.kind == "image").unwrap();
    assert!(slice.included);
    assert_eq!(slice.tokens, 765 + 4, "the image's tokens and one message's overhead");
    // The rule is a ceiling: a server counting the image for less (this one counts 20 tokens in
    // all) did not cut the context.
    assert_eq!(exchange.receipt.as_ref().unwrap().verdict, Verdict::Matched);
    // Kept with the message: listed as its attachment, with a picture the window can show.
    let kept = pinloom.attachments(tree).await.unwrap();
    let prompt = exchange.prompt.unwrap().message.id;
    assert_eq!(kept[0].node_id, Some(prompt));
    assert!(kept[0].image.as_deref().unwrap().starts_with("data:image/png;base64,"));
}

#[tokio::test]
async fn a_model_that_does_not_see_refuses_images_before_anything_is_written() {
    let server = Server::start(vec![]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let pasted = ImageInput {
        name: "pasted image.png".into(),
        data_url: format!("data:image/png;base64,{}", base64_of(&png(64, 64))),
    };
    let (events, _heard, cancel) = listen();
    let target = first_message(tree, "What is this?", pasted);
    let error =
        ApiError::from(pinloom.reply_to(target, "Local".into(), events, cancel).await.unwrap_err());
    assert_eq!(error.code, ErrorCode::InvalidInput);
    assert!(
        error.message.contains("Local (local-model) does not see images: choose a model that does"),
        "{}",
        error.message
    );
    assert!(pinloom.tree_map(tree).await.unwrap().ids.is_empty(), "no message was written");
    assert!(server.seen().is_empty(), "nothing was sent");
}

/// The tree's first message, `text`, with `image`.
fn first_message(tree: i64, text: &str, image: ImageInput) -> SendTarget {
    SendTarget::Thread { tree_id: tree, parent_id: None, text: text.into(), images: vec![image] }
}

fn base64_of(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[tokio::test]
async fn a_local_server_that_says_its_model_sees_is_believed_and_remembered() {
    // llama.cpp's server answers `/props` with its modalities, then the reply.
    let props = r#"{"default_generation_settings":{"n_ctx":8192},"modalities":{"vision":true,"audio":false}}"#;
    let server = Server::start(vec![Answer::error(200, props), says("A heron.")]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let mut profile =
        ModelProfile::new("Own build", "llamacpp", "my-finetune", 8_192, 512, "o200k");
    profile.base_url = Some(format!("{}/v1", server.base));
    pinloom.save_model_profile(profile).await.unwrap();
    let tree = dialogue(&pinloom).await;
    let pasted = ImageInput {
        name: "pasted image.png".into(),
        data_url: format!("data:image/png;base64,{}", base64_of(&png(64, 64))),
    };
    let (events, _heard, cancel) = listen();
    let target = first_message(tree, "What bird?", pasted.clone());
    pinloom.reply_to(target, "Own build".into(), events, cancel).await.unwrap();
    let seen = server.seen();
    assert_eq!((seen[0].method.as_str(), seen[0].path.as_str()), ("GET", "/props"));
    assert_eq!(seen[1].json()["messages"][0]["content"][0]["type"], "image_url");
    let profiles = pinloom.model_profiles().await.unwrap();
    let own = profiles.iter().find(|profile| profile.name == "Own build").unwrap();
    assert_eq!(own.assembly.sees_images, Some(true), "remembered in the profile");

    // A server that says its model does not see: refused, nothing written.
    let props = r#"{"modalities":{"vision":false}}"#;
    let blind = Server::start(vec![Answer::error(200, props)]).await;
    let mut profile =
        ModelProfile::new("Text build", "llamacpp", "my-text-model", 8_192, 512, "o200k");
    profile.base_url = Some(format!("{}/v1", blind.base));
    pinloom.save_model_profile(profile).await.unwrap();
    let (events, _heard, cancel) = listen();
    let target = first_message(tree, "And this?", pasted);
    let error = ApiError::from(
        pinloom.reply_to(target, "Text build".into(), events, cancel).await.unwrap_err(),
    );
    assert!(
        error.message.contains("Text build (my-text-model) does not see images"),
        "{}",
        error.message
    );
    assert_eq!(blind.seen().len(), 1, "only the server's properties were read");
}

#[tokio::test]
async fn an_imported_image_is_what_its_bytes_say_not_what_its_file_labels_it() {
    let server = Server::start(vec![]).await;
    let (pinloom, dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let photo = dir.path().join("heron.png");
    std::fs::write(&photo, png(1024, 768)).unwrap();
    pinloom.attach_path(tree, AttachTo::Tree, photo).await.unwrap();
    let document = pinloom.export_open_loom(vec![tree], Default::default()).await.unwrap();
    assert!(document.contains("data:image/png;width=1024;height=768;base64,"));
    // The file says the image is 1 × 1 pixels: it is stored as what its bytes are.
    let relabelled = document.replace("width=1024;height=768", "width=1;height=1");
    let report = pinloom.import_document(relabelled, "relabelled".into()).await.unwrap();
    let there = report.trees[0].id;
    assert_eq!(pinloom.attachments(there).await.unwrap().len(), 1);
    let stored = pinloom.export_open_loom(vec![there], Default::default()).await.unwrap();
    assert!(stored.contains("data:image/png;width=1024;height=768;base64,"), "{stored}");
    assert!(!stored.contains("width=1;height=1"));
    // An SVG labelled as a PNG is not an image a model takes: left out.
    let svg = document.replace(
        &document[document.find("data:image/png").unwrap()..]
            .split('"')
            .next()
            .unwrap()
            .to_owned(),
        "data:image/png;width=1;height=1;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciLz4=",
    );
    let report = pinloom.import_document(svg, "svg".into()).await.unwrap();
    assert!(pinloom.attachments(report.trees[0].id).await.unwrap().is_empty());
}
