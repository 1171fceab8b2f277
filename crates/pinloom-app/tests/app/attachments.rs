//! Attachments read from disk when attached, and what the plan makes of them.

use pinloom_app::json::{AttachAs, AttachTo, TreeSettings};
use pinloom_app::{ApiError, ErrorCode, MAX_FOLDER_ENTRIES};
use pinloom_test_server::Server;

use crate::wire::{dialogue, pinloom_with};

#[tokio::test]
async fn a_file_is_read_when_attached_and_never_again() {
    let server = Server::start(vec![]).await;
    let (pinloom, dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let first = pinloom.append_message(tree, None, "Review my notes.".into()).await.unwrap().id;
    let notes = dir.path().join("notes.md");
    std::fs::write(&notes, "Meanders migrate downstream.").unwrap();
    let attached = pinloom.attach_path(tree, AttachTo::Tree, notes.clone()).await.unwrap();
    assert_eq!(attached.role, "file");
    assert_eq!(attached.bytes, 28);

    std::fs::write(&notes, "Changed after attaching.").unwrap();
    let plan = pinloom.preview(first, "Local".into(), None).await.unwrap();
    let file = plan.slices.iter().find(|slice| slice.kind == "file").unwrap();
    assert!(file.included);
    assert_eq!(file.source_id, Some(attached.id));
    assert!(plan.request_body().contains(&format!("--- file: {} ---", notes.display())));
    assert!(plan.request_body().contains("Meanders migrate downstream."));
    assert!(!plan.request_body().contains("Changed after attaching."));

    pinloom.detach(attached.id).await.unwrap();
    assert!(pinloom.attachments(tree).await.unwrap().is_empty());
    let plan = pinloom.preview(first, "Local".into(), None).await.unwrap();
    assert!(!plan.request_body().contains("Meanders migrate"));
}

#[tokio::test]
async fn a_file_attached_as_an_instruction_or_a_context_takes_that_role_in_the_plan() {
    let server = Server::start(vec![]).await;
    let (pinloom, dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let first = pinloom.append_message(tree, None, "Review my notes.".into()).await.unwrap().id;
    let style = dir.path().join("style.md");
    std::fs::write(&style, "Answer as a hydrologist.").unwrap();
    let notes = dir.path().join("notes.md");
    std::fs::write(&notes, "Meanders migrate downstream.").unwrap();
    let instruction =
        pinloom.attach_path_as(tree, AttachTo::Tree, style, AttachAs::Instruction).await.unwrap();
    assert_eq!(instruction.role, "instruction");
    let context =
        pinloom.attach_path_as(tree, AttachTo::Tree, notes, AttachAs::Context).await.unwrap();
    assert_eq!(context.role, "context");

    let plan = pinloom.preview(first, "Local".into(), None).await.unwrap();
    let kind_of = |id: i64| {
        plan.slices.iter().find(|slice| slice.source_id == Some(id)).unwrap().kind.clone()
    };
    assert_eq!(kind_of(instruction.id), "system");
    assert_eq!(kind_of(context.id), "contextSource");
    let body: serde_json::Value = serde_json::from_str(plan.request_body()).unwrap();
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("Answer as a hydrologist."), "{system}");

    // A folder is attached only as its listing.
    let refused = ApiError::from(
        pinloom
            .attach_path_as(tree, AttachTo::Tree, dir.path().to_owned(), AttachAs::Context)
            .await
            .unwrap_err(),
    );
    assert_eq!(refused.code, ErrorCode::InvalidInput);
    assert!(refused.message.contains("attached only as its listing"), "{}", refused.message);
}

#[tokio::test]
async fn files_over_the_limit_or_not_text_are_refused_whole() {
    let server = Server::start(vec![]).await;
    let (pinloom, dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let big = dir.path().join("big.log");
    std::fs::write(&big, "x".repeat(100 * 1024 + 1)).unwrap();
    let error =
        ApiError::from(pinloom.attach_file(tree, AttachTo::Tree, big.clone()).await.unwrap_err());
    assert_eq!(error.code, ErrorCode::InvalidInput);
    assert!(error.message.contains("is 101 KB, over the 100 KB limit"), "{}", error.message);

    let settings = TreeSettings { max_file_bytes: Some(200 * 1024), ..TreeSettings::default() };
    pinloom.set_tree_settings(tree, settings).await.unwrap();
    pinloom.attach_file(tree, AttachTo::Tree, big).await.unwrap();

    let binary = dir.path().join("data.bin");
    std::fs::write(&binary, [0x00, 0xff, 0xfe, 0x80]).unwrap();
    let error =
        ApiError::from(pinloom.attach_file(tree, AttachTo::Tree, binary).await.unwrap_err());
    assert!(error.message.contains("not UTF-8 text, an image or a PDF"), "{}", error.message);
    let tiff = dir.path().join("scan.tiff");
    std::fs::write(&tiff, b"II*\0\x08\0\0\0\0\0\0\0\0\0\0\0").unwrap();
    let error = ApiError::from(pinloom.attach_file(tree, AttachTo::Tree, tiff).await.unwrap_err());
    assert!(error.message.contains("TIFF image; models take PNG, JPEG"), "{}", error.message);
    let error = ApiError::from(
        pinloom
            .attach_file(tree, AttachTo::Tree, dir.path().join("missing.txt"))
            .await
            .unwrap_err(),
    );
    assert!(error.message.contains("cannot read"), "{}", error.message);
    assert_eq!(pinloom.attachments(tree).await.unwrap().len(), 1, "refusals stored nothing");
}

#[tokio::test]
async fn a_folder_listing_leaves_out_the_usual_noise_and_stops_at_a_hundred() {
    let server = Server::start(vec![]).await;
    let (pinloom, dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let project = dir.path().join("project");
    for folder in ["src", "node_modules/left-pad", ".git/objects", "dist"] {
        std::fs::create_dir_all(project.join(folder)).unwrap();
    }
    std::fs::write(project.join("src/main.rs"), "").unwrap();
    std::fs::write(project.join("app.min.js"), "").unwrap();
    std::fs::write(project.join("node_modules/left-pad/index.js"), "").unwrap();
    std::fs::write(project.join("README.md"), "").unwrap();
    let first = pinloom.append_message(tree, None, "Look at the layout.".into()).await.unwrap().id;
    // A path to a folder attaches its listing.
    pinloom.attach_path(tree, AttachTo::Node(first), project.clone()).await.unwrap();
    let plan = pinloom.preview(first, "Local".into(), None).await.unwrap();
    let listing = plan.slices.iter().find(|slice| slice.kind == "folderListing").unwrap();
    assert!(listing.included);
    let body: serde_json::Value = serde_json::from_str(plan.request_body()).unwrap();
    let all = body.to_string();
    assert!(all.contains("README.md") && all.contains("src/main.rs"), "{all}");
    assert!(!all.contains("node_modules") && !all.contains("app.min.js") && !all.contains("dist/"));

    let many = dir.path().join("many");
    std::fs::create_dir_all(&many).unwrap();
    for index in 0..150 {
        std::fs::write(many.join(format!("file-{index:03}.txt")), "").unwrap();
    }
    let attached = pinloom.attach_folder(tree, AttachTo::Tree, many).await.unwrap();
    assert_eq!(attached.bytes as usize, MAX_FOLDER_ENTRIES * "file-000.txt\n".len() - 1);
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_systems_own_files_are_refused_even_through_a_link() {
    let server = Server::start(vec![]).await;
    let (pinloom, dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    // /proc/self/environ says it is 0 bytes and holds this process's environment, keys included.
    let link = dir.path().join("notes.txt");
    std::os::unix::fs::symlink("/proc/self/environ", &link).unwrap();
    for path in [std::path::PathBuf::from("/proc/self/environ"), link] {
        let error = ApiError::from(
            pinloom.attach_path(tree, AttachTo::Tree, path.clone()).await.unwrap_err(),
        );
        assert_eq!(error.code, ErrorCode::InvalidInput);
        assert!(error.message.contains("one of the system's own files"), "{}", error.message);
    }
    assert!(pinloom.attachments(tree).await.unwrap().is_empty());
}
