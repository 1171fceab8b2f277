//! A question over several branches: the messages the person picked from other branches and
//! pins, kept beside the question so every request of its thread carries them
//! (`pinloom_engine::permitted`, rule 8), and nothing else of their branches.

use rusqlite::{Connection, OptionalExtension, params};

use crate::error::StoreError;
use crate::model::{NewNode, Node, NodeId};
use crate::node_rows::{NODE_COLUMNS, id_list, node_by_id, node_from_row};
use crate::node_writes::insert_node;
use crate::store::Store;

/// The most messages one question may be asked over: each is sent whole in every request of its
/// thread, so more would crowd out the thread itself.
pub const MAX_PICKS: usize = 12;

/// A message picked for a question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pick {
    /// The message.
    pub node: NodeId,
    /// Whether its branch's summary up to it goes with it.
    pub with_summary: bool,
}

/// A pick as read back: the question it is for, and the message as it stands now.
#[derive(Debug, Clone, PartialEq)]
pub struct Picked {
    /// The question asked over it.
    pub question: NodeId,
    /// The message picked, as it stands (excluded or deleted since, perhaps).
    pub node: Node,
    /// Whether its branch's summary up to it goes with it.
    pub with_summary: bool,
}

impl Store {
    /// Writes `question` as a new first message of its tree (a thread of its own, beside the
    /// others) with the messages picked for it, in one transaction. Each pick must be a message
    /// of the same tree, named once; none may be deleted.
    pub fn ask_over_picked(&self, question: &NewNode, picks: &[Pick]) -> Result<Node, StoreError> {
        if picks.is_empty() {
            return Err(StoreError::InvalidInput(
                "pick at least one message to ask over".to_owned(),
            ));
        }
        if picks.len() > MAX_PICKS {
            return Err(StoreError::InvalidInput(format!(
                "{} messages picked; a question is asked over at most {MAX_PICKS}: leave some out",
                picks.len()
            )));
        }
        if question.parent_id.is_some() || question.pin_id.is_some() {
            return Err(StoreError::InvalidInput(
                "a question over picked messages starts a thread of its own".to_owned(),
            ));
        }
        self.write(|tx| {
            for (at, pick) in picks.iter().enumerate() {
                if picks[..at].iter().any(|earlier| earlier.node == pick.node) {
                    return Err(StoreError::InvalidInput(format!(
                        "message {} is picked twice; pick each message once",
                        pick.node.0
                    )));
                }
                let node = node_by_id(tx, pick.node)?;
                if node.tree_id != question.tree_id {
                    return Err(StoreError::InvalidInput(format!(
                        "message {} is in another tree: a question is asked over messages of \
                         one tree",
                        pick.node.0
                    )));
                }
                if node.pruned_at_ms.is_some() {
                    return Err(StoreError::InvalidInput(format!(
                        "message {} is deleted: restore it first, or leave it out",
                        pick.node.0
                    )));
                }
            }
            let written = insert_node(tx, question, true)?;
            write_picks(tx, written.id, picks)?;
            Ok(written)
        })
    }

    /// The picks of those of `questions` that were asked over picked messages, each question's in
    /// the order picked, questions in the order given. Most paths hold none: one indexed lookup.
    pub fn picked_for(&self, questions: &[NodeId]) -> Result<Vec<Picked>, StoreError> {
        if questions.is_empty() {
            return Ok(Vec::new());
        }
        let conn = self.conn();
        // The node's columns first, where `node_from_row` reads them; the pick's after.
        let mut statement = conn.prepare_cached(&format!(
            "SELECT {NODE_COLUMNS}, p.question_id, p.with_summary
             FROM json_each(?1) j
             JOIN picked_sources p ON p.question_id = j.value
             JOIN nodes n ON n.id = p.source_id
             ORDER BY j.key, p.position"
        ))?;
        let columns = NODE_COLUMNS.split(',').count();
        let rows = statement.query_map([id_list(questions.iter().copied())], |row| {
            Ok(Picked {
                question: NodeId(row.get(columns)?),
                node: node_from_row(row)?,
                with_summary: row.get(columns + 1)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// Writes `picks` as question `question`'s, in order, as far as they may stand: a message of the
/// question's own tree, each once, at most [`MAX_PICKS`] (every request of the question's thread
/// sends each whole); anything else is left out. What a person asks is refused before with why
/// ([`Store::ask_over_picked`]); what arrives from a file or a sync folder is held to the same rule
/// here, whoever wrote it.
pub(crate) fn write_picks(
    conn: &Connection,
    question: NodeId,
    picks: &[Pick],
) -> Result<(), StoreError> {
    let tree = node_by_id(conn, question)?.tree_id;
    let mut tree_of = conn.prepare_cached("SELECT tree_id FROM nodes WHERE id = ?1")?;
    let mut insert = conn.prepare_cached(
        "INSERT INTO picked_sources (question_id, position, source_id, with_summary)
         VALUES (?1, ?2, ?3, ?4)",
    )?;
    let mut written: Vec<NodeId> = Vec::new();
    for pick in picks {
        if written.len() == MAX_PICKS {
            break;
        }
        let of: Option<i64> = tree_of.query_row([pick.node.0], |row| row.get(0)).optional()?;
        if of != Some(tree.0) || written.contains(&pick.node) {
            continue;
        }
        insert.execute(params![
            question.0,
            written.len() as i64,
            pick.node.0,
            pick.with_summary
        ])?;
        written.push(pick.node);
    }
    Ok(())
}
