//! The requests Pinloom makes on its own (summaries, condensations, compactions), kept so that a person can
//! see every one: what it was for, the model, the tokens planned and counted, the cost, the time,
//! how it ended, and the body as sent.

use rusqlite::{OptionalExtension, Row, params};

use crate::codec::count;
use crate::error::StoreError;
use crate::model::{NodeId, PinId, TreeId};
use crate::store::Store;

/// What a background request was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKind {
    /// A thread's summary up to a message.
    Summary,
    /// A summary condensed to a smaller budget.
    Condensation,
    /// The summary of a thread's older part that a compaction puts in its place.
    Compaction,
    /// A result for a pin, suggested for the person to edit before closing it.
    PinResult,
}

impl RequestKind {
    /// Its stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            RequestKind::Summary => "summary",
            RequestKind::Condensation => "condensation",
            RequestKind::Compaction => "compaction",
            RequestKind::PinResult => "pinResult",
        }
    }
}

/// One request made in the background, as it is kept.
#[derive(Debug, Clone, PartialEq)]
pub struct BackgroundRequest {
    /// Its row (0 before it is kept).
    pub id: i64,
    /// The tree it served.
    pub tree_id: TreeId,
    /// What it was for.
    pub kind: RequestKind,
    /// The model profile asked.
    pub model: String,
    /// The thread summarised (`None`: the root thread).
    pub pin_id: Option<PinId>,
    /// The last message summarised.
    pub up_to: Option<NodeId>,
    /// The tokens Pinloom counted in what it sent.
    pub planned_tokens: u64,
    /// The prompt tokens the provider counted, when it said.
    pub prompt_tokens: Option<u64>,
    /// The reply's tokens, when the provider said.
    pub reply_tokens: Option<u64>,
    /// What it cost in dollars, when the profile has prices.
    pub cost_usd: Option<f64>,
    /// When it was sent.
    pub started_at_ms: i64,
    /// How long it took.
    pub duration_ms: i64,
    /// Why it failed, when it did.
    pub failure: Option<String>,
    /// The request body as sent (JSON); `None` when read in a list, which leaves bodies out.
    pub body_json: Option<String>,
}

impl Store {
    /// Keeps one background request; returns its row.
    pub fn log_background_request(&self, request: &BackgroundRequest) -> Result<i64, StoreError> {
        self.write(|tx| {
            tx.prepare_cached(
                "INSERT INTO background_requests (tree_id, kind, model, pin_id, up_to_node_id,
                     planned_tokens, prompt_tokens, reply_tokens, cost_usd, started_at_ms,
                     duration_ms, failure, body_json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            )?
            .execute(params![
                request.tree_id.0,
                request.kind.as_str(),
                request.model,
                request.pin_id.map(|pin| pin.0),
                request.up_to.map(|node| node.0),
                sql_count(request.planned_tokens),
                request.prompt_tokens.map(sql_count),
                request.reply_tokens.map(sql_count),
                request.cost_usd,
                request.started_at_ms,
                request.duration_ms,
                request.failure,
                request.body_json.as_deref().unwrap_or_default(),
            ])?;
            Ok(tx.last_insert_rowid())
        })
    }

    /// The background requests of tree `tree` (every tree's when `None`), newest first, at most
    /// `limit`; their bodies, which may be long, only when `bodies` is set.
    pub fn background_requests(
        &self,
        tree: Option<TreeId>,
        limit: usize,
        bodies: bool,
    ) -> Result<Vec<BackgroundRequest>, StoreError> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached(
            "SELECT id, tree_id, kind, model, pin_id, up_to_node_id, planned_tokens,
                 prompt_tokens, reply_tokens, cost_usd, started_at_ms, duration_ms, failure,
                 CASE WHEN ?3 THEN body_json END
             FROM background_requests WHERE ?1 IS NULL OR tree_id = ?1
             ORDER BY id DESC LIMIT ?2",
        )?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let requests = statement
            .query_map(params![tree.map(|tree| tree.0), limit, bodies], request_from_row)?
            .collect::<Result<_, _>>()?;
        Ok(requests)
    }

    /// What tree `tree`'s background requests cost: how many there are, how many have a price,
    /// and the sum of those prices in US dollars.
    pub fn background_spending(&self, tree: TreeId) -> Result<(u64, u64, f64), StoreError> {
        let conn = self.conn();
        let spending = conn
            .prepare_cached(
                "SELECT count(*), count(cost_usd), coalesce(sum(cost_usd), 0.0)
                 FROM background_requests WHERE tree_id = ?1",
            )?
            .query_row([tree.0], |row| Ok((count(row.get(0)?), count(row.get(1)?), row.get(2)?)))?;
        Ok(spending)
    }

    /// The tokens tree `tree`'s background requests took since `since_ms`, in milliseconds
    /// since the Unix epoch: what the provider counted (planned, where it said nothing) and the
    /// replies.
    pub fn background_tokens_since(&self, tree: TreeId, since_ms: i64) -> Result<u64, StoreError> {
        let conn = self.conn();
        let tokens: i64 = conn
            .prepare_cached(
                "SELECT coalesce(sum(coalesce(prompt_tokens, planned_tokens)
                     + coalesce(reply_tokens, 0)), 0)
                 FROM background_requests WHERE tree_id = ?1 AND started_at_ms >= ?2",
            )?
            .query_row(params![tree.0, since_ms], |row| row.get(0))?;
        Ok(count(tokens))
    }

    /// Background request `id` with its body, if it is kept.
    pub fn background_request(&self, id: i64) -> Result<Option<BackgroundRequest>, StoreError> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached(
            "SELECT id, tree_id, kind, model, pin_id, up_to_node_id, planned_tokens,
                 prompt_tokens, reply_tokens, cost_usd, started_at_ms, duration_ms, failure,
                 body_json
             FROM background_requests WHERE id = ?1",
        )?;
        Ok(statement.query_row(params![id], request_from_row).optional()?)
    }
}

fn sql_count(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn request_from_row(row: &Row<'_>) -> rusqlite::Result<BackgroundRequest> {
    let kind: String = row.get(2)?;
    Ok(BackgroundRequest {
        id: row.get(0)?,
        tree_id: TreeId(row.get(1)?),
        // The column's CHECK admits only these names.
        kind: match kind.as_str() {
            "condensation" => RequestKind::Condensation,
            "compaction" => RequestKind::Compaction,
            "pinResult" => RequestKind::PinResult,
            _ => RequestKind::Summary,
        },
        model: row.get(3)?,
        pin_id: row.get::<_, Option<i64>>(4)?.map(PinId),
        up_to: row.get::<_, Option<i64>>(5)?.map(NodeId),
        planned_tokens: count(row.get(6)?),
        prompt_tokens: row.get::<_, Option<i64>>(7)?.map(count),
        reply_tokens: row.get::<_, Option<i64>>(8)?.map(count),
        cost_usd: row.get(9)?,
        started_at_ms: row.get(10)?,
        duration_ms: row.get(11)?,
        failure: row.get(12)?,
        body_json: row.get(13)?,
    })
}
