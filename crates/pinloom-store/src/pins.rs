//! Pins: sub-threads opened from a node, with or without a highlighted passage.

use rusqlite::{Connection, OptionalExtension, Row, params};

use crate::error::StoreError;
use crate::model::{Anchor, MAX_PIN_DEPTH, NodeId, Pin, PinId, TreeId};
use crate::node_rows::{id_list, in_deleted_branch, node_by_id, require_node};
use crate::slugs::{ROOT_THREAD_SLUG, slugify, unique_slug};
use crate::store::Store;
use crate::trees::{require_tree, touch_tree};

const PIN_COLUMNS: &str = "id, tree_id, parent_pin_id, anchor_node_id, range_start, range_end,
    anchor_text, title, depth, closed_at_ms, result, created_at_ms, slug, deleted_at_ms";

impl Store {
    /// Pins a highlighted passage of `node` and opens its sub-thread.
    ///
    /// `start..end` counts UTF-16 code units of the node's text (what a browser selection
    /// reports); the passage there must be exactly `anchor_text`. A blank title takes the start
    /// of the passage.
    pub fn pin_range(
        &self,
        node: NodeId,
        start: u32,
        end: u32,
        anchor_text: &str,
        title: &str,
        created_at_ms: i64,
    ) -> Result<Pin, StoreError> {
        self.write(|tx| {
            let anchor_node = node_by_id(tx, node)?;
            if in_deleted_branch(tx, node)? {
                return Err(StoreError::Deleted { node: node.0 });
            }
            let found = utf16_slice(&anchor_node.text, start, end).ok_or_else(|| {
                StoreError::InvalidInput(format!(
                    "the range {start}..{end} is not inside message {} (its text is {} UTF-16 units long) or splits a character; select the passage again",
                    node.0,
                    anchor_node.text.encode_utf16().count()
                ))
            })?;
            if found != anchor_text {
                return Err(StoreError::InvalidInput(format!(
                    "the range {start}..{end} of message {} reads {found:?}, not {anchor_text:?}; select the passage again",
                    node.0
                )));
            }
            let title = match title.trim() {
                "" => title_from(anchor_text),
                title => title.to_owned(),
            };
            let anchor = Anchor { start, end, text: anchor_text.to_owned() };
            let place = PinPlace {
                tree_id: anchor_node.tree_id,
                parent: anchor_node.pin_id,
                anchor_node: Some(node),
                anchor: Some(&anchor),
            };
            insert_pin(tx, place, &title, None, created_at_ms)
        })
    }

    /// Opens a sub-thread without a highlight (ThreadMind's thread_create), from the thread
    /// `parent` (`None` for the root thread), hanging off `anchor_node` when the parent thread
    /// has one to offer.
    pub fn open_thread(
        &self,
        tree_id: TreeId,
        parent: Option<PinId>,
        anchor_node: Option<NodeId>,
        title: &str,
        created_at_ms: i64,
    ) -> Result<Pin, StoreError> {
        let title = title.trim();
        if title.is_empty() {
            return Err(StoreError::InvalidInput("a thread needs a title: type one first".into()));
        }
        self.write(|tx| {
            require_tree(tx, tree_id)?;
            if let Some(parent) = parent {
                pin_in_tree(tx, parent, tree_id)?;
            }
            if let Some(node) = anchor_node {
                let anchor = node_by_id(tx, node)?;
                if anchor.tree_id != tree_id || anchor.pin_id != parent {
                    return Err(StoreError::InvalidInput(format!(
                        "node {} is not in the thread the new one opens from",
                        node.0
                    )));
                }
                if in_deleted_branch(tx, node)? {
                    return Err(StoreError::Deleted { node: node.0 });
                }
            }
            let place = PinPlace { tree_id, parent, anchor_node, anchor: None };
            insert_pin(tx, place, title, None, created_at_ms)
        })
    }

    /// Closes a pin with its result, which its parent thread then shows (a task frame popping).
    /// Closing again replaces the result.
    pub fn close_pin(
        &self,
        pin: PinId,
        result: &str,
        closed_at_ms: i64,
    ) -> Result<Pin, StoreError> {
        if result.trim().is_empty() {
            return Err(StoreError::InvalidInput(
                "a closed pin hands a result back to its parent: write one first".into(),
            ));
        }
        self.write(|tx| {
            let changed = tx.execute(
                "UPDATE pins SET closed_at_ms = ?2, result = ?3 WHERE id = ?1",
                params![pin.0, closed_at_ms, result],
            )?;
            if changed == 0 {
                return Err(StoreError::NotFound { kind: "pin", id: pin.0 });
            }
            let pin = pin_by_id(tx, pin)?;
            touch_tree(tx, pin.tree_id, closed_at_ms)?;
            Ok(pin)
        })
    }

    /// One pin.
    pub fn pin(&self, pin: PinId) -> Result<Pin, StoreError> {
        pin_by_id(&self.conn(), pin)
    }

    /// The pins anchored in `node`, oldest first.
    pub fn pins_anchored_in(&self, node: NodeId) -> Result<Vec<Pin>, StoreError> {
        let conn = self.conn();
        require_node(&conn, node)?;
        let mut statement = conn.prepare_cached(&format!(
            "SELECT {PIN_COLUMNS} FROM pins WHERE anchor_node_id = ?1 AND deleted_at_ms IS NULL
             ORDER BY id"
        ))?;
        let pins = statement.query_map([node.0], pin_from_row)?.collect::<Result<_, _>>()?;
        Ok(pins)
    }

    /// The live pins anchored in each of `nodes`, oldest first, in one query (see
    /// [`Store::alternatives`] for why a thread view asks for all its messages at once).
    pub fn pins_anchored_in_each(
        &self,
        nodes: &[NodeId],
    ) -> Result<std::collections::HashMap<NodeId, Vec<Pin>>, StoreError> {
        let ids = id_list(nodes.iter().copied());
        let conn = self.conn();
        let mut statement = conn.prepare_cached(&format!(
            "SELECT {PIN_COLUMNS} FROM pins
             WHERE anchor_node_id IN (SELECT value FROM json_each(?1)) AND deleted_at_ms IS NULL
             ORDER BY id"
        ))?;
        let mut by_node: std::collections::HashMap<NodeId, Vec<Pin>> = Default::default();
        for pin in statement.query_map([ids], pin_from_row)? {
            let pin = pin?;
            if let Some(anchor) = pin.anchor_node_id {
                by_node.entry(anchor).or_default().push(pin);
            }
        }
        Ok(by_node)
    }

    /// The live pins opened directly from thread `parent` (`None`: the root thread), oldest
    /// first.
    pub fn child_pins(
        &self,
        tree_id: TreeId,
        parent: Option<PinId>,
    ) -> Result<Vec<Pin>, StoreError> {
        let conn = self.conn();
        require_tree(&conn, tree_id)?;
        let mut statement = conn.prepare_cached(&child_pins_sql())?;
        let pins = statement
            .query_map(params![tree_id.0, parent.map(|id| id.0)], pin_from_row)?
            .collect::<Result<_, _>>()?;
        Ok(pins)
    }
}

/// The statement [`Store::child_pins`] runs, also read back by its test of recompiling.
fn child_pins_sql() -> String {
    format!(
        "SELECT {PIN_COLUMNS} FROM pins
         WHERE tree_id = ?1 AND parent_pin_id IS ?2 AND deleted_at_ms IS NULL ORDER BY id"
    )
}

/// Where a new pin goes: its tree, the thread it opens from (`None`: the main thread), and the
/// message and passage it hangs off.
pub(crate) struct PinPlace<'a> {
    pub(crate) tree_id: TreeId,
    pub(crate) parent: Option<PinId>,
    pub(crate) anchor_node: Option<NodeId>,
    pub(crate) anchor: Option<&'a Anchor>,
}

/// Writes a pin at `place`, named `slug` (a free one made from the title when `None`).
pub(crate) fn insert_pin(
    conn: &Connection,
    place: PinPlace<'_>,
    title: &str,
    slug: Option<&str>,
    created_at_ms: i64,
) -> Result<Pin, StoreError> {
    let PinPlace { tree_id, parent, anchor_node, anchor } = place;
    // A sub-thread opens from the thread of the message it hangs off: anything else would place
    // it at a depth its chain does not have (and past the depth limit unseen).
    if let Some(anchor) = anchor_node {
        let anchor_thread = node_by_id(conn, anchor)?.pin_id;
        if anchor_thread != parent {
            return Err(StoreError::InvalidInput(format!(
                "a sub-thread hangs off message {} of {}, so it must open from that thread",
                anchor.0,
                anchor_thread
                    .map_or("the main thread".to_owned(), |pin| format!("thread {}", pin.0))
            )));
        }
    }
    let depth = thread_depth(conn, parent)? + 1;
    if depth > MAX_PIN_DEPTH {
        return Err(StoreError::TooDeep { limit: MAX_PIN_DEPTH });
    }
    let slug = match slug {
        Some(slug) => slug.to_owned(),
        None => free_pin_slug(conn, tree_id, &slugify(title))?,
    };
    conn.prepare_cached(
        "INSERT INTO pins (tree_id, parent_pin_id, anchor_node_id, range_start, range_end,
             anchor_text, title, depth, created_at_ms, slug, list_order)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10,
             (SELECT coalesce(max(list_order), 0) + 1 FROM pins WHERE tree_id = ?1))",
    )?
    .execute(params![
        tree_id.0,
        parent.map(|id| id.0),
        anchor_node.map(|id| id.0),
        anchor.map(|anchor| anchor.start),
        anchor.map(|anchor| anchor.end),
        anchor.map(|anchor| anchor.text.as_str()),
        title,
        depth,
        created_at_ms,
        slug,
    ])?;
    let pin = pin_by_id(conn, PinId(conn.last_insert_rowid()))?;
    touch_tree(conn, tree_id, created_at_ms)?;
    Ok(pin)
}

/// `base`, or the first `base-N` that neither a live pin of the tree nor the root thread has.
pub(crate) fn free_pin_slug(
    conn: &Connection,
    tree_id: TreeId,
    base: &str,
) -> rusqlite::Result<String> {
    let mut exists = conn.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM pins
         WHERE tree_id = ?1 AND slug = ?2 AND deleted_at_ms IS NULL)",
    )?;
    unique_slug(base, |candidate| {
        Ok(candidate == ROOT_THREAD_SLUG
            || exists.query_row(params![tree_id.0, candidate], |row| row.get(0))?)
    })
}

/// The text between two UTF-16 offsets, or `None` when the range is empty, runs past the end or
/// cuts a character in half.
fn utf16_slice(text: &str, start: u32, end: u32) -> Option<String> {
    let units: Vec<u16> = text.encode_utf16().collect();
    let range = units.get(start as usize..end as usize).filter(|range| !range.is_empty())?;
    String::from_utf16(range).ok()
}

fn title_from(anchor_text: &str) -> String {
    const TITLE_CHARS: usize = 60;
    let flat = anchor_text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(TITLE_CHARS) {
        None => flat,
        Some((cut, _)) => format!("{}…", &flat[..cut]),
    }
}

/// The pin, refused unless it belongs to `tree_id`.
pub(crate) fn pin_in_tree(
    conn: &Connection,
    pin: PinId,
    tree_id: TreeId,
) -> Result<Pin, StoreError> {
    let found = pin_by_id(conn, pin)?;
    if found.tree_id != tree_id {
        return Err(StoreError::InvalidInput(format!("pin {} belongs to another tree", pin.0)));
    }
    Ok(found)
}

/// The pins matching a WHERE clause (with its ORDER BY, if any).
pub(crate) fn pins_where(
    conn: &Connection,
    clause: &str,
    params: impl rusqlite::Params,
) -> Result<Vec<Pin>, StoreError> {
    let mut statement =
        conn.prepare_cached(&format!("SELECT {PIN_COLUMNS} FROM pins WHERE {clause}"))?;
    let pins = statement.query_map(params, pin_from_row)?.collect::<Result<_, _>>()?;
    Ok(pins)
}

pub(crate) fn pin_by_id(conn: &Connection, id: PinId) -> Result<Pin, StoreError> {
    conn.prepare_cached(&format!("SELECT {PIN_COLUMNS} FROM pins WHERE id = ?1"))?
        .query_row([id.0], pin_from_row)
        .optional()?
        .ok_or(StoreError::NotFound { kind: "pin", id: id.0 })
}

fn pin_from_row(row: &Row<'_>) -> rusqlite::Result<Pin> {
    let range: (Option<u32>, Option<u32>, Option<String>) = (row.get(4)?, row.get(5)?, row.get(6)?);
    Ok(Pin {
        id: PinId(row.get(0)?),
        tree_id: TreeId(row.get(1)?),
        parent_pin_id: row.get::<_, Option<i64>>(2)?.map(PinId),
        anchor_node_id: row.get::<_, Option<i64>>(3)?.map(NodeId),
        anchor: match range {
            (Some(start), Some(end), Some(text)) => Some(Anchor { start, end, text }),
            _ => None,
        },
        title: row.get(7)?,
        depth: row.get(8)?,
        closed_at_ms: row.get(9)?,
        result: row.get(10)?,
        created_at_ms: row.get(11)?,
        slug: row.get(12)?,
        deleted_at_ms: row.get(13)?,
    })
}

pub(crate) fn thread_depth(conn: &Connection, thread: Option<PinId>) -> Result<u32, StoreError> {
    match thread {
        None => Ok(0),
        Some(pin) => Ok(pin_by_id(conn, pin)?.depth),
    }
}

#[cfg(test)]
mod tests {
    use rusqlite::StatementStatus;

    use super::{child_pins_sql, title_from, utf16_slice};
    use crate::{PinId, Store, TreeMode};

    /// Every plan reads the pins beside its path with new values bound (the tree, the parent
    /// thread): the cached statement must keep its compiled plan, not be parsed again each time
    /// (see `SQLITE_DBCONFIG_ENABLE_QPSG` in `Store::open`).
    #[test]
    fn reading_pins_again_does_not_compile_the_statement_again() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let store = Store::open(&dir.path().join("p.sqlite")).expect("the store opens");
        let first = store.create_tree("a", TreeMode::Dialogue, 0).expect("a tree").id;
        let second = store.create_tree("b", TreeMode::Dialogue, 0).expect("a tree").id;
        for (tree, parent) in [(first, None), (second, Some(PinId(7))), (first, None)] {
            assert!(store.child_pins(tree, parent).expect("pins are read").is_empty());
        }
        let conn = store.conn();
        let statement = conn.prepare_cached(&child_pins_sql()).expect("the cached statement");
        assert_eq!(statement.get_status(StatementStatus::Run), 3, "the reads' own statement");
        assert_eq!(statement.get_status(StatementStatus::RePrepare), 0);
    }

    #[test]
    fn utf16_ranges_match_what_a_browser_selection_reports() {
        // "🌊" is two UTF-16 units; "é" is one.
        let text = "a🌊é b";
        assert_eq!(utf16_slice(text, 1, 3).as_deref(), Some("🌊"));
        assert_eq!(utf16_slice(text, 3, 4).as_deref(), Some("é"));
        assert_eq!(utf16_slice(text, 1, 2), None, "half a surrogate pair is not a passage");
        assert_eq!(utf16_slice(text, 4, 4), None, "an empty range is not a passage");
        assert_eq!(utf16_slice(text, 5, 7), None, "past the end");
    }

    #[test]
    fn a_long_passage_gives_a_short_title() {
        assert_eq!(title_from("  the outer\n bank  "), "the outer bank");
        let long = "word ".repeat(30);
        let title = title_from(&long);
        assert_eq!(title.chars().count(), 61);
        assert!(title.ends_with('…'));
    }
}
