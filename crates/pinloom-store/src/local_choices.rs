//! What the person chose on this machine alone: kept beside the trees, never synced, so another
//! machine's default model or last conversation never moves this one's.

use rusqlite::{OptionalExtension, params};

use crate::error::StoreError;
use crate::store::Store;

/// A choice kept on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocalChoice {
    /// The model profile a send uses when none is named and its thread names none.
    DefaultProfile,
    /// The message the person last asked about from the terminal (their question, or its reply
    /// once written): where `pinloom ask -c` continues.
    LastAsked,
}

impl LocalChoice {
    fn key(self) -> &'static str {
        match self {
            LocalChoice::DefaultProfile => "default_profile",
            LocalChoice::LastAsked => "last_asked",
        }
    }
}

impl Store {
    /// The value of `choice`, if one was made.
    pub fn local_choice(&self, choice: LocalChoice) -> Result<Option<String>, StoreError> {
        let conn = self.conn();
        Ok(conn
            .prepare_cached("SELECT value FROM local_choices WHERE key = ?1")?
            .query_row([choice.key()], |row| row.get(0))
            .optional()?)
    }

    /// Makes `choice` `value`, or forgets it (`None`).
    pub fn set_local_choice(
        &self,
        choice: LocalChoice,
        value: Option<&str>,
    ) -> Result<(), StoreError> {
        let conn = self.conn();
        match value {
            Some(value) => conn.execute(
                "INSERT INTO local_choices (key, value) VALUES (?1, ?2)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                params![choice.key(), value],
            )?,
            None => conn.execute("DELETE FROM local_choices WHERE key = ?1", [choice.key()])?,
        };
        Ok(())
    }
}
