use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OptionalExtension, Row, TransactionBehavior, params};

use crate::error::StoreError;
use crate::migrations::{self, SCHEMA_VERSION};

/// How long a write waits for another process's write to finish before giving up. The desktop app
/// and the MCP server share the file; their transactions are short, so this is generous.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The id of a tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TreeId(pub i64);

/// The id of a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub i64);

/// How a tree is read and continued, fixed when the tree is created (seed 002).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeMode {
    /// Messages between a person and models, sent as chat turns.
    Dialogue,
    /// One continuous document that generation continues.
    Buffer,
}

impl TreeMode {
    fn as_sql(self) -> &'static str {
        match self {
            TreeMode::Dialogue => "dialogue",
            TreeMode::Buffer => "buffer",
        }
    }

    fn from_sql(text: &str) -> rusqlite::Result<Self> {
        match text {
            "dialogue" => Ok(TreeMode::Dialogue),
            "buffer" => Ok(TreeMode::Buffer),
            other => Err(unknown_value("mode", other)),
        }
    }
}

/// Who wrote a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Author {
    /// The person using Pinloom.
    Human,
    /// A language model.
    Model,
    /// A tool's result.
    Tool,
}

impl Author {
    fn as_sql(self) -> &'static str {
        match self {
            Author::Human => "human",
            Author::Model => "model",
            Author::Tool => "tool",
        }
    }

    fn from_sql(text: &str) -> rusqlite::Result<Self> {
        match text {
            "human" => Ok(Author::Human),
            "model" => Ok(Author::Model),
            "tool" => Ok(Author::Tool),
            other => Err(unknown_value("author", other)),
        }
    }
}

/// A tree as the tree list shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    /// Its id.
    pub id: TreeId,
    /// Its title, never blank.
    pub title: String,
    /// Dialogue or buffer, fixed at creation.
    pub mode: TreeMode,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created_at_ms: i64,
    /// When it or any of its nodes last changed, in milliseconds since the Unix epoch.
    pub updated_at_ms: i64,
    /// How many nodes it holds.
    pub node_count: u64,
}

/// One immutable message in a tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// Its id.
    pub id: NodeId,
    /// The tree it belongs to.
    pub tree_id: TreeId,
    /// The node before it; `None` for the tree's root.
    pub parent_id: Option<NodeId>,
    /// Who wrote it.
    pub author: Author,
    /// Its text.
    pub text: String,
    /// When it was written, in milliseconds since the Unix epoch.
    pub created_at_ms: i64,
}

/// A node to append.
#[derive(Debug, Clone)]
pub struct NewNode<'a> {
    /// The tree to append to.
    pub tree_id: TreeId,
    /// The node to continue; `None` only for a tree's first node.
    pub parent_id: Option<NodeId>,
    /// Who wrote it.
    pub author: Author,
    /// Its text.
    pub text: &'a str,
    /// When it was written, in milliseconds since the Unix epoch.
    pub created_at_ms: i64,
}

/// An open Pinloom database.
///
/// One connection serves this process; calls are short, so a mutex in front of it is enough, and
/// it keeps writes from one process strictly ordered.
pub struct Store {
    path: PathBuf,
    conn: Mutex<Connection>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish_non_exhaustive()
    }
}

impl Store {
    /// Opens the database at `path`, creating it if it does not exist, and brings its schema up to
    /// date.
    ///
    /// A file that is not a SQLite database, or that a newer Pinloom wrote, is refused and left
    /// exactly as it was: nothing is written before both checks pass.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let open_error = |source| StoreError::Open { path: path.to_owned(), source };
        let mut conn = Connection::open(path).map_err(open_error)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(open_error)?;

        // Reading the header is the first thing that touches the file; it fails on a file that is
        // not SQLite before anything could be written to it.
        let found =
            migrations::version(&conn).map_err(|error| match error.sqlite_error_code() {
                Some(ErrorCode::NotADatabase) => StoreError::NotADatabase { path: path.to_owned() },
                _ => open_error(error),
            })?;
        if found > SCHEMA_VERSION {
            return Err(StoreError::NewerSchema {
                path: path.to_owned(),
                found,
                supported: SCHEMA_VERSION,
            });
        }

        // WAL lets the app and the MCP server read while the other writes. NORMAL sync in WAL mode
        // survives a crash of the process (every committed transaction is in the log); only a
        // power cut can lose the last few commits, never corrupt the file.
        conn.pragma_update(None, "journal_mode", "WAL").map_err(open_error)?;
        conn.pragma_update(None, "synchronous", "NORMAL").map_err(open_error)?;
        conn.pragma_update(None, "foreign_keys", "ON").map_err(open_error)?;
        migrations::upgrade(&mut conn).map_err(open_error)?;

        Ok(Store { path: path.to_owned(), conn: Mutex::new(conn) })
    }

    /// The file this store reads and writes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Creates an empty tree.
    pub fn create_tree(
        &self,
        title: &str,
        mode: TreeMode,
        created_at_ms: i64,
    ) -> Result<Tree, StoreError> {
        let title = title.trim();
        if title.is_empty() {
            return Err(StoreError::InvalidInput(
                "a tree needs a title: type one before creating it".into(),
            ));
        }
        let conn = self.conn();
        conn.execute(
            "INSERT INTO trees (title, mode, created_at_ms, updated_at_ms) VALUES (?1, ?2, ?3, ?3)",
            params![title, mode.as_sql(), created_at_ms],
        )?;
        let id = TreeId(conn.last_insert_rowid());
        tree_by_id(&conn, id)
    }

    /// All trees, the most recently changed first.
    pub fn list_trees(&self) -> Result<Vec<Tree>, StoreError> {
        let conn = self.conn();
        let mut statement = conn
            .prepare_cached(&format!("{TREE_SELECT} ORDER BY t.updated_at_ms DESC, t.id DESC"))?;
        let trees = statement.query_map([], tree_from_row)?.collect::<Result<_, _>>()?;
        Ok(trees)
    }

    /// One tree.
    pub fn tree(&self, id: TreeId) -> Result<Tree, StoreError> {
        tree_by_id(&self.conn(), id)
    }

    /// Appends a node, in one transaction that also marks the tree as changed.
    ///
    /// The parent must belong to the same tree, and only a tree's first node may have no parent:
    /// a tree has one root.
    pub fn append_node(&self, node: &NewNode<'_>) -> Result<Node, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        tree_by_id(&tx, node.tree_id)?;
        match node.parent_id {
            Some(parent) => {
                let parent_tree: Option<i64> = tx
                    .query_row("SELECT tree_id FROM nodes WHERE id = ?1", [parent.0], |row| {
                        row.get(0)
                    })
                    .optional()?;
                match parent_tree {
                    None => {
                        return Err(StoreError::NotFound { kind: "node", id: parent.0 });
                    }
                    Some(tree) if tree != node.tree_id.0 => {
                        return Err(StoreError::InvalidInput(format!(
                            "node {} belongs to another tree; a reply continues a node of its own tree",
                            parent.0
                        )));
                    }
                    Some(_) => {}
                }
            }
            None => {
                let has_root: bool = tx.query_row(
                    "SELECT EXISTS (SELECT 1 FROM nodes WHERE tree_id = ?1)",
                    [node.tree_id.0],
                    |row| row.get(0),
                )?;
                if has_root {
                    return Err(StoreError::InvalidInput(format!(
                        "tree {} already has a first message; continue one of its messages instead",
                        node.tree_id.0
                    )));
                }
            }
        }
        tx.execute(
            "INSERT INTO nodes (tree_id, parent_id, author, text, created_at_ms)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                node.tree_id.0,
                node.parent_id.map(|id| id.0),
                node.author.as_sql(),
                node.text,
                node.created_at_ms
            ],
        )?;
        let id = NodeId(tx.last_insert_rowid());
        tx.execute(
            "UPDATE trees SET updated_at_ms = max(updated_at_ms, ?2) WHERE id = ?1",
            params![node.tree_id.0, node.created_at_ms],
        )?;
        tx.commit()?;
        Ok(Node {
            id,
            tree_id: node.tree_id,
            parent_id: node.parent_id,
            author: node.author,
            text: node.text.to_owned(),
            created_at_ms: node.created_at_ms,
        })
    }

    /// The tree's most recently written node, if it has any.
    pub fn newest_node(&self, tree_id: TreeId) -> Result<Option<NodeId>, StoreError> {
        let conn = self.conn();
        tree_by_id(&conn, tree_id)?;
        let id = conn
            .query_row(
                "SELECT id FROM nodes WHERE tree_id = ?1 ORDER BY id DESC LIMIT 1",
                [tree_id.0],
                |row| row.get(0),
            )
            .optional()?;
        Ok(id.map(NodeId))
    }

    /// The path from the tree's root down to `node`, root first.
    pub fn ancestor_path(&self, node: NodeId) -> Result<Vec<Node>, StoreError> {
        let conn = self.conn();
        // `depth` orders the walk; UNION (not UNION ALL) stops a cycle, which the schema cannot
        // produce today but a damaged file could hold.
        let mut statement = conn.prepare_cached(
            "WITH RECURSIVE path(id, depth) AS (
                 SELECT ?1, 0
                 UNION
                 SELECT n.parent_id, path.depth + 1
                 FROM path JOIN nodes n ON n.id = path.id
                 WHERE n.parent_id IS NOT NULL
             )
             SELECT n.id, n.tree_id, n.parent_id, n.author, n.text, n.created_at_ms
             FROM path JOIN nodes n ON n.id = path.id
             ORDER BY path.depth DESC",
        )?;
        let path: Vec<Node> =
            statement.query_map([node.0], node_from_row)?.collect::<Result<_, _>>()?;
        if path.is_empty() {
            return Err(StoreError::NotFound { kind: "node", id: node.0 });
        }
        Ok(path)
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave the connection half-written: every write is
        // a transaction that rolls back when dropped. So a poisoned lock is safe to keep using.
        self.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

const TREE_SELECT: &str = "SELECT t.id, t.title, t.mode, t.created_at_ms, t.updated_at_ms,
        (SELECT count(*) FROM nodes n WHERE n.tree_id = t.id)
    FROM trees t";

fn tree_by_id(conn: &Connection, id: TreeId) -> Result<Tree, StoreError> {
    conn.prepare_cached(&format!("{TREE_SELECT} WHERE t.id = ?1"))?
        .query_row([id.0], tree_from_row)
        .optional()?
        .ok_or(StoreError::NotFound { kind: "tree", id: id.0 })
}

fn tree_from_row(row: &Row<'_>) -> rusqlite::Result<Tree> {
    Ok(Tree {
        id: TreeId(row.get(0)?),
        title: row.get(1)?,
        mode: TreeMode::from_sql(&row.get::<_, String>(2)?)?,
        created_at_ms: row.get(3)?,
        updated_at_ms: row.get(4)?,
        // count(*) is never negative.
        node_count: row.get::<_, i64>(5)?.unsigned_abs(),
    })
}

fn node_from_row(row: &Row<'_>) -> rusqlite::Result<Node> {
    Ok(Node {
        id: NodeId(row.get(0)?),
        tree_id: TreeId(row.get(1)?),
        parent_id: row.get::<_, Option<i64>>(2)?.map(NodeId),
        author: Author::from_sql(&row.get::<_, String>(3)?)?,
        text: row.get(4)?,
        created_at_ms: row.get(5)?,
    })
}

fn unknown_value(column: &str, value: &str) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        0,
        rusqlite::types::Type::Text,
        format!("unknown {column} {value:?} in the database").into(),
    )
}
