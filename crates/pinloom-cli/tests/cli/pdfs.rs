//! PDFs are read by the front end's own program started again as a reader (`pinloom
//! --pinloom-read-pdf`): a PDF that kills the extractor is a refused file, and the program that
//! attached it goes on.

use std::io::Write;
use std::process::{Command, Stdio};

use lopdf::{Document, Object, Stream, dictionary};
use pinloom_app::json::{AttachTo, TreeMode};
use pinloom_app::{ApiError, Connections, PdfReader, Pinloom};

/// A PDF with a page of Helvetica text for each of `pages`.
pub(crate) fn pdf_with_pages(pages: &[&str]) -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let parent = doc.new_object_id();
    let font = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
    });
    let resources = doc.add_object(dictionary! { "Font" => dictionary! { "F1" => font } });
    let mut kids: Vec<Object> = Vec::new();
    for text in pages {
        let drawing = format!("BT /F1 12 Tf 72 720 Td ({text}) Tj ET");
        let contents = doc.add_object(Stream::new(dictionary! {}, drawing.into_bytes()));
        let page = doc.add_object(dictionary! {
            "Type" => "Page", "Parent" => parent, "Contents" => contents, "Resources" => resources,
            "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
        });
        kids.push(page.into());
    }
    let count = i64::try_from(kids.len()).unwrap();
    doc.objects.insert(
        parent,
        Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => kids, "Count" => count }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => parent });
    doc.trailer.set("Root", catalog);
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).unwrap();
    bytes
}

/// A one-page PDF drawing `content` with Helvetica as F1; with `mirror`, the page's resources
/// hold a form, X1, whose own drawing is `/X1 Do`: drawn, it draws itself, forever deeper.
fn pdf(content: &[u8], mirror: bool) -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let pages = doc.new_object_id();
    let font = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
    });
    let mut resources = dictionary! { "Font" => dictionary! { "F1" => font } };
    if mirror {
        let form = Stream::new(
            dictionary! { "Type" => "XObject", "Subtype" => "Form",
            "BBox" => vec![0.into(), 0.into(), 10.into(), 10.into()] },
            b"/X1 Do".to_vec(),
        );
        let form = doc.add_object(form);
        resources.set("XObject", dictionary! { "X1" => form });
    }
    let resources = doc.add_object(resources);
    let contents = doc.add_object(Stream::new(dictionary! {}, content.to_vec()));
    let page = doc.add_object(dictionary! {
        "Type" => "Page", "Parent" => pages, "Contents" => contents, "Resources" => resources,
        "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
    });
    let kids: Vec<Object> = vec![page.into()];
    doc.objects.insert(
        pages,
        Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => kids, "Count" => 1 }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages });
    doc.trailer.set("Root", catalog);
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).unwrap();
    bytes
}

#[tokio::test]
async fn a_pdf_that_kills_its_reader_is_a_refused_file_and_the_program_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let mirror = pdf(b"BT /F1 24 Tf 100 600 Td (Mirror) Tj ET /X1 Do", true);
    // The reader itself dies on it: the extractor's recursion overflows its stack, which no
    // error return or unwinding catches (in the app's own process, the app would be gone).
    let mut reader = Command::new(env!("CARGO_BIN_EXE_pinloom"))
        .arg(pinloom_app::READ_PDF_ARGUMENT)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    reader.stdin.take().unwrap().write_all(&mirror).unwrap();
    let died = reader.wait().unwrap();
    assert!(died.code().is_none_or(|code| code != 0 && code != 2), "{died:?}");

    let connections = Connections {
        pdf_reader: PdfReader::OwnProcess(env!("CARGO_BIN_EXE_pinloom").into()),
        ..Connections::default()
    };
    let pinloom = Pinloom::open_with(dir.path().join("data"), connections).await.unwrap();
    let tree = pinloom.create_tree("Papers".into(), TreeMode::Dialogue).await.unwrap().id;
    let hostile = dir.path().join("mirror.pdf");
    std::fs::write(&hostile, &mirror).unwrap();
    let refused = pinloom.attach_path(tree, AttachTo::Tree, hostile).await.unwrap_err();
    let refused = ApiError::from(refused);
    assert!(refused.message.contains("mirror.pdf"), "{}", refused.message);
    assert!(refused.message.contains("print it to a new PDF"), "{}", refused.message);
    // The program goes on, and the reader reads a sound PDF as before.
    let sound = dir.path().join("meanders.pdf");
    std::fs::write(&sound, pdf(b"BT /F1 24 Tf 100 600 Td (Meanders migrate) Tj ET", false))
        .unwrap();
    let attached = pinloom.attach_path(tree, AttachTo::Tree, sound).await.unwrap();
    assert_eq!((attached.role.as_str(), attached.pages), ("pdf", Some(1)), "{attached:?}");
    let listed = pinloom.attachments(tree).await.unwrap();
    assert_eq!(listed.len(), 1, "the refused file left nothing behind: {listed:?}");
}
