//! How enums are spelled in the database. The spellings are part of the file format: never
//! change one, only add.

use crate::model::{AttachmentRole, Author, Sharing, TreeMode};

pub(crate) fn mode_to_sql(mode: TreeMode) -> &'static str {
    match mode {
        TreeMode::Dialogue => "dialogue",
        TreeMode::Buffer => "buffer",
    }
}

pub(crate) fn mode_from_sql(text: &str) -> rusqlite::Result<TreeMode> {
    match text {
        "dialogue" => Ok(TreeMode::Dialogue),
        "buffer" => Ok(TreeMode::Buffer),
        other => Err(unknown_value("mode", other)),
    }
}

pub(crate) fn sharing_to_sql(sharing: Sharing) -> &'static str {
    match sharing {
        Sharing::Solo => "solo",
        Sharing::Team => "team",
    }
}

pub(crate) fn sharing_from_sql(text: &str) -> rusqlite::Result<Sharing> {
    match text {
        "solo" => Ok(Sharing::Solo),
        "team" => Ok(Sharing::Team),
        other => Err(unknown_value("sharing", other)),
    }
}

pub(crate) fn author_to_sql(author: Author) -> &'static str {
    match author {
        Author::Human => "human",
        Author::Model => "model",
        Author::Tool => "tool",
    }
}

pub(crate) fn author_from_sql(text: &str) -> rusqlite::Result<Author> {
    match text {
        "human" => Ok(Author::Human),
        "model" => Ok(Author::Model),
        "tool" => Ok(Author::Tool),
        other => Err(unknown_value("author", other)),
    }
}

pub(crate) fn role_to_sql(role: AttachmentRole) -> &'static str {
    match role {
        AttachmentRole::Context => "context",
        AttachmentRole::Instruction => "instruction",
        AttachmentRole::File => "file",
        AttachmentRole::Folder => "folder",
        AttachmentRole::Image => "image",
        AttachmentRole::Pdf => "pdf",
    }
}

pub(crate) fn role_from_sql(text: &str) -> rusqlite::Result<AttachmentRole> {
    match text {
        "context" => Ok(AttachmentRole::Context),
        "instruction" => Ok(AttachmentRole::Instruction),
        "file" => Ok(AttachmentRole::File),
        "folder" => Ok(AttachmentRole::Folder),
        "image" => Ok(AttachmentRole::Image),
        "pdf" => Ok(AttachmentRole::Pdf),
        other => Err(unknown_value("role", other)),
    }
}

pub(crate) fn unknown_value(column: &str, value: &str) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        0,
        rusqlite::types::Type::Text,
        format!("unknown {column} {value:?} in the database").into(),
    )
}

/// A count read from SQLite, which stores integers signed; counts are never negative.
pub(crate) fn count(value: i64) -> u64 {
    value.unsigned_abs()
}
