//! Moves settled: two machines that, between syncs, moved branches under each other end with the
//! same tree. Every machine replays all the moves of a tree in clock order from the same starting
//! places (each moved message where its first move found it, which that move carries), and a move
//! that would make a loop at its turn stands undone: the later of two crossing moves is the one
//! undone, on every machine, whatever order the moves arrived in. The settled places are then
//! given to the messages whose parent differs, one at a time in an order that never makes a loop
//! on the way.

use std::collections::{HashMap, HashSet};

use rusqlite::{Connection, params};
use serde_json::Value;

use crate::error::StoreError;
use crate::model::NodeId;
use crate::node_rows::node_by_id;
use crate::nodes::{move_branch, reparent};
use crate::sync::read::row_of;

/// A message of the tree: its row, its parent now (by global id), and whether it begins a thread
/// (only such a message may have no parent after a move).
struct Message {
    row: i64,
    parent: Option<String>,
    begins_thread: bool,
}

/// What settling a tree's moves did that a person should hear of.
#[derive(Debug, Default)]
pub(crate) struct Settled {
    /// Moves undone (the moved message, the message it was moved under), by global id.
    pub(crate) undone: Vec<(String, String)>,
    /// Messages that could not be given their settled place, with why.
    pub(crate) skipped: Vec<(String, String)>,
}

/// One move: which message, under what, from where, and its operation's id.
struct Move {
    id: String,
    message: String,
    to: Value,
    from: Option<Value>,
}

/// Settles every move of the tree `tree_gid`; `arrived` names the operations this fold brought.
/// A move undone is reported where its arrival, or the arrival of an earlier move, undid it.
pub(crate) fn settle_moves(
    tx: &Connection,
    tree_gid: &str,
    arrived: &HashSet<&str>,
) -> Result<Settled, StoreError> {
    let mut settled = Settled::default();
    let Some(tree) = row_of(tx, "trees", tree_gid)? else { return Ok(settled) };
    let moves = moves_of(tx, tree)?;
    if moves.is_empty() {
        return Ok(settled);
    }
    let messages = messages_of(tx, tree)?;
    let mut place: HashMap<&str, Option<String>> =
        messages.iter().map(|(gid, message)| (gid.as_str(), message.parent.clone())).collect();
    let mut started = HashSet::new();
    for step in &moves {
        if started.insert(step.message.as_str())
            && let Some(from) = &step.from
            && let Some(slot) = place.get_mut(step.message.as_str())
        {
            *slot = from.as_str().map(str::to_owned);
        }
    }
    let first_arrived = moves.iter().position(|step| arrived.contains(step.id.as_str()));
    for (index, step) in moves.iter().enumerate() {
        let Some(message) = messages.get(&step.message) else { continue };
        let to = match &step.to {
            Value::String(to) if messages.contains_key(to) => Some(to.clone()),
            // A message not here (yet) is no place to settle on; a value that is no message's
            // id was refused when the operation arrived.
            Value::Null if message.begins_thread => None,
            _ => continue,
        };
        if let Some(to) = &to
            && makes_loop(&place, &step.message, to)
        {
            if first_arrived.is_some_and(|first| first <= index) {
                settled.undone.push((step.message.clone(), to.clone()));
            }
            continue;
        }
        place.insert(step.message.as_str(), to);
    }
    give_places(tx, &messages, &place, &mut settled.skipped)?;
    Ok(settled)
}

fn moves_of(tx: &Connection, tree: i64) -> Result<Vec<Move>, StoreError> {
    let mut statement = tx.prepare_cached(
        "SELECT o.id, o.gid, o.value_json, o.from_json FROM sync_ops o
         JOIN nodes n ON n.gid = o.gid
         WHERE n.tree_id = ?1 AND o.kind = 'message' AND o.field = 'parent'
         ORDER BY o.clock, o.device",
    )?;
    let moves = statement
        .query_map([tree], |row| {
            let value: String = row.get(2)?;
            let from: Option<String> = row.get(3)?;
            Ok(Move {
                id: row.get(0)?,
                message: row.get(1)?,
                to: serde_json::from_str(&value).unwrap_or(Value::Null),
                from: from.map(|from| serde_json::from_str(&from).unwrap_or(Value::Null)),
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(moves)
}

fn messages_of(tx: &Connection, tree: i64) -> Result<HashMap<String, Message>, StoreError> {
    let mut statement = tx.prepare_cached(
        "SELECT n.id, n.gid, p.gid, n.pin_id IS NOT NULL FROM nodes n
         LEFT JOIN nodes p ON p.id = n.parent_id
         WHERE n.tree_id = ?1 AND n.gid IS NOT NULL",
    )?;
    let messages = statement
        .query_map([tree], |row| {
            Ok((
                row.get::<_, String>(1)?,
                Message { row: row.get(0)?, parent: row.get(2)?, begins_thread: row.get(3)? },
            ))
        })?
        .collect::<Result<_, _>>()?;
    Ok(messages)
}

/// Whether putting `message` under `under` makes a loop in `place`: `under` is the message or
/// hangs from it.
fn makes_loop(place: &HashMap<&str, Option<String>>, message: &str, under: &str) -> bool {
    let mut at = Some(under);
    // Bounded: a loop already in `place` (none is ever settled) cannot hold the walk.
    for _ in 0..=place.len() {
        match at {
            Some(here) if here == message => return true,
            Some(here) => at = place.get(here).and_then(|parent| parent.as_deref()),
            None => return false,
        }
    }
    true
}

/// Gives each message whose parent differs its settled place. A move that would make a loop with
/// the places not given yet waits for the others; the settled places make none, so each round
/// gives at least one.
fn give_places(
    tx: &Connection,
    messages: &HashMap<String, Message>,
    place: &HashMap<&str, Option<String>>,
    skipped: &mut Vec<(String, String)>,
) -> Result<(), StoreError> {
    let mut pending: Vec<(&str, &Option<String>)> = place
        .iter()
        .filter(|(gid, to)| messages.get(**gid).is_some_and(|message| message.parent != **to))
        .map(|(gid, to)| (*gid, to))
        .collect();
    pending.sort_unstable();
    while !pending.is_empty() {
        let before = pending.len();
        let mut waiting = Vec::new();
        for (gid, to) in pending {
            let row = NodeId(messages[gid].row);
            tx.execute_batch("SAVEPOINT settle_move")?;
            let moved = match to {
                Some(to) => move_branch(tx, row, NodeId(messages[to.as_str()].row)).map(|_| ()),
                None => node_by_id(tx, row).and_then(|node| reparent(tx, &node, None)),
            };
            match moved {
                Ok(()) => tx.execute_batch("RELEASE settle_move")?,
                Err(error) => {
                    tx.execute_batch("ROLLBACK TO settle_move; RELEASE settle_move")?;
                    if is_loop_now(tx, row, to, messages)? {
                        waiting.push((gid, to));
                    } else {
                        skipped.push((gid.to_owned(), error.to_string()));
                    }
                }
            }
        }
        if waiting.len() == before {
            for (gid, _) in waiting {
                skipped.push((gid.to_owned(), "its settled place makes a loop".into()));
            }
            break;
        }
        pending = waiting;
    }
    Ok(())
}

/// Whether moving `row` under `to` fails only because of where the database's parents are now
/// (`to` hangs from `row` at the moment).
fn is_loop_now(
    tx: &Connection,
    row: NodeId,
    to: &Option<String>,
    messages: &HashMap<String, Message>,
) -> Result<bool, StoreError> {
    let Some(to) = to else { return Ok(false) };
    let hangs: bool = tx
        .prepare_cached(
            "WITH RECURSIVE up(id) AS (
                 SELECT ?1 UNION SELECT n.parent_id FROM up JOIN nodes n ON n.id = up.id
                 WHERE n.parent_id IS NOT NULL
             )
             SELECT EXISTS (SELECT 1 FROM up WHERE id = ?2)",
        )?
        .query_row(params![messages[to.as_str()].row, row.0], |row| row.get(0))?;
    Ok(hangs)
}
