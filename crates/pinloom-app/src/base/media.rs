//! Images and PDFs as attachments store them: an image as a `data:` URL that also names its size
//! in pixels (`data:image/png;width=1024;height=768;base64,…`, parameters RFC 2397 allows), so
//! a plan counts it by its provider's rule without decoding it; a PDF as its pages' text, each
//! page after a form feed but the first.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use crate::error::ApiError;
use crate::json::AttachmentView;

/// The largest image accepted: OpenAI's and Gemini's limit for one image. (Anthropic takes up
/// to 5 MB; a larger image sent there fails with the provider's own message.)
pub(crate) const MAX_IMAGE_BYTES: u64 = 20 * 1024 * 1024;

/// The longest side of an image accepted, in pixels: a 20 MB file can hold an image that
/// decodes to gigapixels, which no model takes and which a window would have to decode to show.
pub(crate) const MAX_IMAGE_SIDE: u32 = 16_384;

/// The most pixels an image accepted may have (about 8,000 × 8,000).
pub(crate) const MAX_IMAGE_PIXELS: u64 = 64_000_000;

/// The media types stored and sent as images: the kinds models take, read from the bytes.
const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// The largest PDF read. Its text is what counts against the tree's file limit, page by page.
pub(crate) const MAX_PDF_BYTES: u64 = 64 * 1024 * 1024;

/// What a PDF's pages are stored between.
pub(crate) const PAGE_BREAK: char = '\u{c}';

/// What a file's first bytes say it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sniffed {
    /// A PDF (`%PDF-`).
    Pdf,
    /// An image of a kind models take, with its media type.
    Image(&'static str),
    /// An image of a kind they do not (HEIC, TIFF), by its name.
    OtherImage(&'static str),
    /// Anything else: read as text.
    Other,
}

/// What `bytes` are, from their first bytes.
pub(crate) fn sniff(bytes: &[u8]) -> Sniffed {
    if bytes.starts_with(b"%PDF-") {
        return Sniffed::Pdf;
    }
    // Only kinds with a signature no text starts with: a note that opens with "BM" is not a
    // bitmap.
    match imagesize::image_type(bytes) {
        Ok(imagesize::ImageType::Png) => Sniffed::Image("image/png"),
        Ok(imagesize::ImageType::Jpeg) => Sniffed::Image("image/jpeg"),
        Ok(imagesize::ImageType::Gif) => Sniffed::Image("image/gif"),
        Ok(imagesize::ImageType::Webp) => Sniffed::Image("image/webp"),
        Ok(imagesize::ImageType::Heif(_)) => Sniffed::OtherImage("HEIC"),
        Ok(imagesize::ImageType::Tiff) => Sniffed::OtherImage("TIFF"),
        _ => Sniffed::Other,
    }
}

/// An image as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StoredImage<'a> {
    pub(crate) media_type: &'a str,
    pub(crate) width: u32,
    pub(crate) height: u32,
    /// Its bytes in base64.
    pub(crate) data: &'a str,
}

/// The stored form of the image `bytes`; `shown` names it in a refusal.
pub(crate) fn image_data_url(bytes: &[u8], shown: &str) -> Result<String, ApiError> {
    let media_type = match sniff(bytes) {
        Sniffed::Image(media_type) => media_type,
        Sniffed::OtherImage(kind) => {
            return Err(ApiError::invalid_input(format!(
                "{shown} is a {kind} image; models take PNG, JPEG, GIF or WebP: save it as one \
                 of those and attach it again"
            )));
        }
        Sniffed::Pdf | Sniffed::Other => {
            return Err(ApiError::invalid_input(format!(
                "{shown} is not an image Pinloom can read; attach a PNG, JPEG, GIF or WebP"
            )));
        }
    };
    if bytes.len() as u64 > MAX_IMAGE_BYTES {
        return Err(ApiError::invalid_input(format!(
            "{shown} is {} MB, over the {} MB models take for one image; make it smaller and \
             attach it again",
            (bytes.len() as u64).div_ceil(1024 * 1024),
            MAX_IMAGE_BYTES / (1024 * 1024)
        )));
    }
    let size = imagesize::blob_size(bytes).map_err(|error| {
        ApiError::invalid_input(format!(
            "{shown} looks like an image but its size cannot be read ({error}); it may be \
             damaged: open it in an image viewer and save it again"
        ))
    })?;
    let (width, height) = (size.width, size.height);
    let pixels = (width as u64).saturating_mul(height as u64);
    if width > MAX_IMAGE_SIDE as usize
        || height > MAX_IMAGE_SIDE as usize
        || pixels > MAX_IMAGE_PIXELS
        || pixels == 0
    {
        return Err(ApiError::invalid_input(format!(
            "{shown} is {width} × {height} pixels; Pinloom takes images up to {MAX_IMAGE_SIDE}              pixels a side and {} megapixels: scale it down and attach it again",
            MAX_IMAGE_PIXELS / 1_000_000
        )));
    }
    let data = STANDARD.encode(bytes);
    Ok(format!("data:{media_type};width={width};height={height};base64,{data}"))
}

/// The stored form of an image that came as a `data:` URL (pasted in the window); `shown`
/// names it in a refusal. Its kind and size are read from its bytes, not from what the URL says.
pub(crate) fn image_from_data_url(data_url: &str, shown: &str) -> Result<String, ApiError> {
    let encoded = data_url
        .strip_prefix("data:")
        .and_then(|rest| rest.split_once(";base64,"))
        .map(|(_, data)| data)
        .ok_or_else(|| {
            ApiError::invalid_input(format!(
                "{shown} did not arrive as an image (a base64 data URL); paste or choose it again"
            ))
        })?;
    let bytes = STANDARD.decode(encoded.trim()).map_err(|error| {
        ApiError::invalid_input(format!(
            "{shown} arrived damaged ({error}); paste or choose it again"
        ))
    })?;
    image_data_url(&bytes, shown)
}

/// The image stored as `content`, when it is one Pinloom stored: of a kind models take (never an
/// SVG or a page of HTML labelled as an image), with its size in pixels.
pub(crate) fn stored_image(content: &str) -> Option<StoredImage<'_>> {
    let (header, data) = content.strip_prefix("data:")?.split_once(";base64,")?;
    let mut fields = header.split(';');
    let media_type = fields.next().filter(|kind| IMAGE_TYPES.contains(kind))?;
    let (mut width, mut height) = (None, None);
    for field in fields {
        match field.split_once('=') {
            Some(("width", value)) => width = value.parse().ok(),
            Some(("height", value)) => height = value.parse().ok(),
            _ => {}
        }
    }
    Some(StoredImage { media_type, width: width?, height: height?, data })
}

/// The text of each page of the PDF `bytes`; `shown` names it in a refusal. A PDF with no text
/// at all (a scan) is refused: it would send nothing but page markers.
pub(crate) fn pdf_pages(bytes: &[u8], shown: &str) -> Result<Vec<String>, ApiError> {
    // The extractor panics on some malformed files rather than returning an error; a damaged
    // PDF is refused like any other, never taken for a crash of the app.
    let extracted = std::panic::catch_unwind(|| pdf_extract::extract_text_from_mem_by_pages(bytes));
    let pages = match extracted {
        Ok(Ok(pages)) => pages,
        Ok(Err(error)) => {
            return Err(ApiError::invalid_input(format!(
                "the text of {shown} cannot be read ({error}); if it is protected by a password, \
                 save an unprotected copy and attach that"
            )));
        }
        Err(_) => {
            return Err(ApiError::invalid_input(format!(
                "the text of {shown} cannot be read (the PDF is damaged or of a kind the reader \
                 does not know); print it to a new PDF and attach that"
            )));
        }
    };
    let pages: Vec<String> =
        pages.into_iter().map(|page| page.replace(PAGE_BREAK, "\n").trim().to_owned()).collect();
    if pages.iter().all(String::is_empty) {
        return Err(ApiError::invalid_input(format!(
            "{shown} has no text to read (a scan, or pages of pictures); attach its pages as \
             images for a model that sees"
        )));
    }
    Ok(pages)
}

// Here rather than beside the view in `json`, since showing an attachment decodes what this
// file encodes.
impl From<pinloom_store::Attachment> for AttachmentView {
    fn from(attachment: pinloom_store::Attachment) -> AttachmentView {
        let role = match attachment.role {
            pinloom_store::AttachmentRole::File => "file",
            pinloom_store::AttachmentRole::Folder => "folder",
            pinloom_store::AttachmentRole::Context => "context",
            pinloom_store::AttachmentRole::Instruction => "instruction",
            pinloom_store::AttachmentRole::Image => "image",
            pinloom_store::AttachmentRole::Pdf => "pdf",
        };
        let image = match attachment.role {
            pinloom_store::AttachmentRole::Image => stored_image(&attachment.content)
                .map(|image| format!("data:{};base64,{}", image.media_type, image.data)),
            _ => None,
        };
        let pages = match attachment.role {
            pinloom_store::AttachmentRole::Pdf => {
                u32::try_from(attachment.content.split(PAGE_BREAK).count()).ok()
            }
            _ => None,
        };
        let node_id = match attachment.scope {
            pinloom_store::AttachmentScope::Node(node) => Some(node.0),
            _ => None,
        };
        AttachmentView {
            id: attachment.id,
            role: role.to_owned(),
            name: attachment.name,
            bytes: attachment.content.len() as u64,
            node_id,
            image,
            pages,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest PNG: its signature and an IHDR of 3 × 2 pixels (the rest is not read).
    fn png(width: u32, height: u32) -> Vec<u8> {
        let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        bytes.extend(width.to_be_bytes());
        bytes.extend(height.to_be_bytes());
        bytes.extend([8, 6, 0, 0, 0, 0, 0, 0, 0]);
        bytes
    }

    #[test]
    fn an_image_is_stored_with_its_kind_and_size_read_from_its_bytes() {
        let url = image_data_url(&png(3, 2), "dot.png").unwrap();
        assert!(url.starts_with("data:image/png;width=3;height=2;base64,iVBORw0KGgo"), "{url}");
        let image = stored_image(&url).unwrap();
        assert_eq!((image.media_type, image.width, image.height), ("image/png", 3, 2));
        assert_eq!(STANDARD.decode(image.data).unwrap(), png(3, 2));
        // A pasted data URL that claims another kind is stored as what its bytes are.
        let pasted = format!("data:image/jpeg;base64,{}", STANDARD.encode(png(3, 2)));
        assert_eq!(image_from_data_url(&pasted, "pasted").unwrap(), url);
    }

    #[test]
    fn what_is_not_an_image_models_take_is_refused_with_what_to_do() {
        let tiff = b"II*\0\x08\0\0\0\0\0\0\0\0\0\0\0";
        let refused = image_data_url(tiff, "scan.tiff").unwrap_err();
        assert!(refused.message.contains("TIFF image; models take PNG, JPEG"), "{refused:?}");
        let refused = image_from_data_url("hello", "pasted image").unwrap_err();
        assert!(refused.message.contains("paste or choose it again"), "{refused:?}");
        let refused = image_data_url(b"plain text", "notes.txt").unwrap_err();
        assert!(refused.message.contains("not an image"), "{refused:?}");
    }

    #[test]
    fn a_damaged_pdf_is_refused_not_a_crash() {
        let refused = pdf_pages(b"%PDF-1.7\ngarbage", "broken.pdf").unwrap_err();
        assert!(refused.message.contains("broken.pdf"), "{refused:?}");
    }
}
