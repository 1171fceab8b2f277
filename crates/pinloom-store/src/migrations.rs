//! Versioned schema migrations.
//!
//! The schema version lives in SQLite's `user_version`. Migration `n` (counting from 1) moves a
//! file from version `n - 1` to `n`, inside one transaction. Released migrations are never edited:
//! a change is a new migration, and a database made by every released version is kept as a test
//! fixture so that upgrading from each is tested.

use rusqlite::{Connection, Transaction, TransactionBehavior};

use rusqlite::params;

/// The schema version this build writes.
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// Work a migration does in Rust after its SQL, in the same transaction: filling new columns
/// with values SQL cannot compute (slugs of titles).
type Fill = fn(&Transaction<'_>) -> rusqlite::Result<()>;

const MIGRATIONS: &[(&str, Option<Fill>)] = &[
    (
        // 1: trees and their nodes. A node is immutable; its parent is the node before it, and several
        // children of one parent are alternative branches.
        r#"
    CREATE TABLE trees (
        id             INTEGER PRIMARY KEY,
        title          TEXT    NOT NULL CHECK (length(trim(title)) > 0),
        mode           TEXT    NOT NULL CHECK (mode IN ('dialogue', 'buffer')),
        system_context TEXT    NOT NULL DEFAULT '',
        created_at_ms  INTEGER NOT NULL,
        updated_at_ms  INTEGER NOT NULL
    ) STRICT;

    CREATE TABLE nodes (
        id            INTEGER PRIMARY KEY,
        tree_id       INTEGER NOT NULL REFERENCES trees(id) ON DELETE CASCADE,
        parent_id     INTEGER REFERENCES nodes(id) ON DELETE CASCADE,
        author        TEXT    NOT NULL CHECK (author IN ('human', 'model', 'tool')),
        text          TEXT    NOT NULL,
        created_at_ms INTEGER NOT NULL
    ) STRICT;

    -- The ancestor walk follows parent_id upwards by primary key; children are found by parent.
    CREATE INDEX nodes_by_parent ON nodes(parent_id);
    -- A tree's nodes in write order: its newest node, its node count.
    CREATE INDEX nodes_by_tree ON nodes(tree_id, id);
    -- The tree list is ordered by last change.
    CREATE INDEX trees_by_update ON trees(updated_at_ms DESC, id DESC);
    "#,
        None,
    ),
    (
        // 2: the whole domain model. Threads are pins: every node records the thread it belongs to
        // (`pin_id`, NULL for the tree's root thread), so a pin edge is a parent link that crosses
        // threads and a node's thread is read without a walk.
        r#"
    ALTER TABLE trees ADD COLUMN buffer_includes_system INTEGER NOT NULL DEFAULT 0
        CHECK (buffer_includes_system IN (0, 1));
    ALTER TABLE trees ADD COLUMN settings_json TEXT NOT NULL DEFAULT '{}';

    CREATE TABLE pins (
        id             INTEGER PRIMARY KEY,
        tree_id        INTEGER NOT NULL REFERENCES trees(id) ON DELETE CASCADE,
        -- The thread this pin opens from; NULL for the tree's root thread.
        parent_pin_id  INTEGER REFERENCES pins(id) ON DELETE CASCADE,
        -- The node the sub-thread hangs off; NULL only when its parent thread had no node yet.
        anchor_node_id INTEGER REFERENCES nodes(id) ON DELETE CASCADE,
        -- The highlighted range, in UTF-16 code units of the anchor node's text (what a browser
        -- selection reports), and the text itself, verbatim. All three absent without a highlight.
        range_start    INTEGER,
        range_end      INTEGER,
        anchor_text    TEXT,
        title          TEXT    NOT NULL,
        depth          INTEGER NOT NULL CHECK (depth BETWEEN 1 AND 50),
        closed_at_ms   INTEGER,
        result         TEXT,
        created_at_ms  INTEGER NOT NULL,
        CHECK ((range_start IS NULL) = (range_end IS NULL)),
        CHECK ((range_start IS NULL) = (anchor_text IS NULL)),
        CHECK (range_start IS NULL OR (range_start >= 0 AND range_end > range_start)),
        CHECK (range_start IS NULL OR anchor_node_id IS NOT NULL)
    ) STRICT;
    CREATE INDEX pins_by_anchor ON pins(anchor_node_id);
    CREATE INDEX pins_by_parent ON pins(tree_id, parent_pin_id);

    ALTER TABLE nodes ADD COLUMN pin_id INTEGER REFERENCES pins(id) ON DELETE CASCADE;
    -- NULL when the content is a single text part equal to `text`.
    ALTER TABLE nodes ADD COLUMN parts_json TEXT;
    ALTER TABLE nodes ADD COLUMN edited_from INTEGER REFERENCES nodes(id) ON DELETE SET NULL;
    ALTER TABLE nodes ADD COLUMN model TEXT;
    ALTER TABLE nodes ADD COLUMN generation_json TEXT;
    ALTER TABLE nodes ADD COLUMN usage_json TEXT;
    ALTER TABLE nodes ADD COLUMN excluded INTEGER NOT NULL DEFAULT 0 CHECK (excluded IN (0, 1));
    ALTER TABLE nodes ADD COLUMN bookmarked INTEGER NOT NULL DEFAULT 0 CHECK (bookmarked IN (0, 1));
    ALTER TABLE nodes ADD COLUMN incomplete INTEGER NOT NULL DEFAULT 0 CHECK (incomplete IN (0, 1));
    ALTER TABLE nodes ADD COLUMN pruned_at_ms INTEGER;
    -- How many soft-deleted nodes are on this node's path, itself included: 0 for a live node.
    -- Kept up to date over the subtree by soft-delete, restore and move, so that "is this node
    -- in a deleted branch?" is one row read instead of a walk to the root.
    ALTER TABLE nodes ADD COLUMN deleted_depth INTEGER NOT NULL DEFAULT 0
        CHECK (deleted_depth >= 0);
    CREATE INDEX nodes_by_pin ON nodes(pin_id);

    -- Segments: maximal runs of first children. A node continues its parent's segment at the
    -- next position when that position is free, and otherwise heads a segment of its own
    -- (segment_id = its id). A node's ancestors are then the earlier positions of its segment,
    -- then the same for the segment head's parent: a 10,000-message thread is one index range
    -- instead of 10,000 recursive steps. Existing nodes start as one-node segments.
    ALTER TABLE nodes ADD COLUMN segment_id INTEGER;
    ALTER TABLE nodes ADD COLUMN segment_pos INTEGER NOT NULL DEFAULT 0;
    UPDATE nodes SET segment_id = id;
    CREATE UNIQUE INDEX nodes_by_segment ON nodes(segment_id, segment_pos);

    -- A node's words never change once written: an edit is a new node (`edited_from`).
    CREATE TRIGGER nodes_are_immutable BEFORE UPDATE OF author, text, parts_json ON nodes
    BEGIN
        SELECT RAISE(ABORT, 'nodes are immutable: an edit makes a new node');
    END;

    CREATE TABLE node_tokens (
        node_id INTEGER NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
        family  TEXT    NOT NULL,
        tokens  INTEGER NOT NULL CHECK (tokens >= 0),
        PRIMARY KEY (node_id, family)
    ) STRICT, WITHOUT ROWID;

    -- The current text of each summary; every write is also kept in summary_updates.
    CREATE TABLE summaries (
        id               INTEGER PRIMARY KEY,
        tree_id          INTEGER NOT NULL REFERENCES trees(id) ON DELETE CASCADE,
        pin_id           INTEGER REFERENCES pins(id) ON DELETE CASCADE,
        -- The last node summarised; NULL for a summary of the thread as a whole (ThreadMind).
        path_end_node_id INTEGER REFERENCES nodes(id) ON DELETE CASCADE,
        budget           INTEGER CHECK (budget IS NULL OR budget > 0),
        -- The model that wrote it; '' when a person wrote it.
        summarizer       TEXT    NOT NULL DEFAULT '',
        text             TEXT    NOT NULL,
        input_chars      INTEGER NOT NULL DEFAULT 0,
        input_tokens     INTEGER NOT NULL DEFAULT 0,
        updated_at_ms    INTEGER NOT NULL
    ) STRICT;
    CREATE UNIQUE INDEX summaries_by_key ON summaries(
        tree_id, ifnull(pin_id, 0), ifnull(path_end_node_id, 0), ifnull(budget, 0), summarizer);
    CREATE TABLE summary_updates (
        id            INTEGER PRIMARY KEY,
        summary_id    INTEGER NOT NULL REFERENCES summaries(id) ON DELETE CASCADE,
        text          TEXT    NOT NULL,
        input_chars   INTEGER NOT NULL,
        input_tokens  INTEGER NOT NULL,
        written_at_ms INTEGER NOT NULL
    ) STRICT;
    CREATE INDEX summary_updates_by_summary ON summary_updates(summary_id);

    CREATE TABLE attachments (
        id            INTEGER PRIMARY KEY,
        tree_id       INTEGER NOT NULL REFERENCES trees(id) ON DELETE CASCADE,
        scope         TEXT    NOT NULL CHECK (scope IN ('tree', 'thread', 'node')),
        pin_id        INTEGER REFERENCES pins(id) ON DELETE CASCADE,
        node_id       INTEGER REFERENCES nodes(id) ON DELETE CASCADE,
        role          TEXT    NOT NULL CHECK (role IN ('context', 'instruction', 'file', 'folder')),
        name          TEXT    NOT NULL,
        content       TEXT    NOT NULL,
        created_at_ms INTEGER NOT NULL,
        CHECK ((scope = 'node') = (node_id IS NOT NULL)),
        CHECK (scope = 'thread' OR pin_id IS NULL)
    ) STRICT;
    CREATE INDEX attachments_by_tree ON attachments(tree_id, scope);
    CREATE INDEX attachments_by_node ON attachments(node_id) WHERE node_id IS NOT NULL;

    CREATE TABLE annotations (
        id            INTEGER PRIMARY KEY,
        node_id       INTEGER NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
        text          TEXT    NOT NULL,
        included      INTEGER NOT NULL DEFAULT 0 CHECK (included IN (0, 1)),
        created_at_ms INTEGER NOT NULL
    ) STRICT;
    CREATE INDEX annotations_by_node ON annotations(node_id);

    CREATE TABLE model_profiles (
        id                  INTEGER PRIMARY KEY,
        name                TEXT    NOT NULL UNIQUE CHECK (length(trim(name)) > 0),
        provider            TEXT    NOT NULL,
        model_id            TEXT    NOT NULL,
        base_url            TEXT,
        context_window      INTEGER NOT NULL CHECK (context_window > 0),
        reserve             INTEGER NOT NULL CHECK (reserve >= 0 AND reserve < context_window),
        native_system       INTEGER NOT NULL DEFAULT 1 CHECK (native_system IN (0, 1)),
        completion_endpoint INTEGER NOT NULL DEFAULT 0 CHECK (completion_endpoint IN (0, 1)),
        tokenizer           TEXT    NOT NULL,
        agent_system_prompt TEXT    NOT NULL DEFAULT '',
        sampling_json       TEXT    NOT NULL DEFAULT '{}',
        settings_json       TEXT    NOT NULL DEFAULT '{}',
        updated_at_ms       INTEGER NOT NULL
    ) STRICT;

    -- Full-text search over node text for the retrieval slice; kept in step by triggers.
    CREATE VIRTUAL TABLE nodes_fts USING fts5(
        text, content = 'nodes', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2');
    INSERT INTO nodes_fts(rowid, text) SELECT id, text FROM nodes;
    CREATE TRIGGER nodes_fts_after_insert AFTER INSERT ON nodes BEGIN
        INSERT INTO nodes_fts(rowid, text) VALUES (new.id, new.text);
    END;
    CREATE TRIGGER nodes_fts_after_delete AFTER DELETE ON nodes BEGIN
        INSERT INTO nodes_fts(nodes_fts, rowid, text) VALUES ('delete', old.id, old.text);
    END;
    "#,
        None,
    ),
    (
        // 3: what the usage of each reply taught about a model's tokens, the person's "keep" on a
        // message, and word frequencies for the search. Families without an offline tokenizer are
        // estimated at so many characters a token; the ratio is corrected from every reply's reported
        // input tokens and kept per model profile, so all front ends share it.
        r#"
    CREATE TABLE calibrations (
        profile_name          TEXT    PRIMARY KEY,
        milli_chars_per_token INTEGER NOT NULL CHECK (milli_chars_per_token > 0),
        samples               INTEGER NOT NULL CHECK (samples >= 0),
        updated_at_ms         INTEGER NOT NULL
    ) STRICT, WITHOUT ROWID;

    -- Messages the person keeps in every context, whatever the truncation (the inspector's keep).
    ALTER TABLE nodes ADD COLUMN kept INTEGER NOT NULL DEFAULT 0 CHECK (kept IN (0, 1));

    -- How many messages hold each indexed word: the search leaves out words too common to rank.
    CREATE VIRTUAL TABLE nodes_fts_vocab USING fts5vocab(nodes_fts, 'row');
    "#,
        None,
    ),
    (
        // 4: what the headless front ends and Open Loom need. ThreadMind names projects and threads
        // by slugs of their titles (src/slugs.rs): trees and pins get theirs, filled in below for
        // existing rows and then kept unique (a deleted thread's slug is free again, as in
        // ThreadMind). ThreadMind's thread_delete leaves a pin in the file, out of every view, with
        // its summaries' log, which ThreadMind's stats go on counting. A pin's place among its parent
        // thread's children is its creation order, or last after a move (ThreadMind appends a
        // rebased thread). Each working folder remembers its active tree and thread, as ThreadMind
        // keeps one per project folder. Open Loom documents carry what Pinloom does not model
        // (other apps' extensions, provenance, media): kept as JSON to write back on export.
        r#"
    ALTER TABLE trees ADD COLUMN slug TEXT NOT NULL DEFAULT '';
    -- ThreadMind's project mode. Pinloom has one author per machine, so a team project behaves
    -- as a solo one until trees are shared between people.
    ALTER TABLE trees ADD COLUMN sharing TEXT NOT NULL DEFAULT 'solo'
        CHECK (sharing IN ('solo', 'team'));
    ALTER TABLE trees ADD COLUMN interchange_json TEXT;

    ALTER TABLE pins ADD COLUMN slug TEXT NOT NULL DEFAULT '';
    ALTER TABLE pins ADD COLUMN list_order INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE pins ADD COLUMN deleted_at_ms INTEGER;
    UPDATE pins SET list_order = id;

    ALTER TABLE nodes ADD COLUMN interchange_json TEXT;

    CREATE TABLE workspaces (
        folder        TEXT    PRIMARY KEY,
        tree_id       INTEGER REFERENCES trees(id) ON DELETE SET NULL,
        -- NULL with a tree: the tree's root thread, `main`.
        pin_id        INTEGER REFERENCES pins(id) ON DELETE SET NULL,
        updated_at_ms INTEGER NOT NULL
    ) STRICT;
    "#,
        Some(fill_slugs),
    ),
    (
        // 5: receipts. Every reply keeps what its request was planned to hold (tokens by kind of
        // slice, what was sent) beside what the provider counted, so a person can check what a
        // model saw, and a provider that cut the context (a local server's own window) is found
        // by one indexed column. Profiles may carry the model's prices for the receipt's cost.
        r#"
    CREATE TABLE receipts (
        node_id      INTEGER PRIMARY KEY REFERENCES nodes(id) ON DELETE CASCADE,
        receipt_json TEXT    NOT NULL,
        provider_cut INTEGER NOT NULL DEFAULT 0 CHECK (provider_cut IN (0, 1))
    ) STRICT;
    CREATE INDEX receipts_cut ON receipts(node_id) WHERE provider_cut = 1;

    ALTER TABLE model_profiles ADD COLUMN prices_json TEXT;

    -- A reply while it streams: what has arrived, written at least every second, so a crash
    -- loses at most the last second. Nodes never change once written, so the growing text
    -- lives here; the finished reply is written as a node and its draft deleted in one
    -- transaction, and a draft found at start is written as an incomplete reply.
    CREATE TABLE reply_drafts (
        id            INTEGER PRIMARY KEY,
        tree_id       INTEGER NOT NULL REFERENCES trees(id) ON DELETE CASCADE,
        parent_id     INTEGER NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
        model         TEXT    NOT NULL,
        text          TEXT    NOT NULL,
        owner_pid     INTEGER NOT NULL,
        started_at_ms INTEGER NOT NULL,
        saved_at_ms   INTEGER NOT NULL
    ) STRICT;
    "#,
        None,
    ),
    (
        // 6: a trash. A tree the person deletes is marked, not erased, and comes back until the
        // trash is emptied (messages and threads were already soft-deleted this way).
        r#"
    ALTER TABLE trees ADD COLUMN deleted_at_ms INTEGER;
    "#,
        None,
    ),
    (
        // 7: who wrote each summary, and fitted versions of the ones written on purpose. A
        // summary written by the person, by an agent (ThreadMind's summary_update) or by a file
        // is *chosen*: sends use it before any the summariser wrote on its own, and so does a
        // summary the person asked the summariser to write again. One longer than the budget it
        // is used at gets a *fitted* version, condensed by the summariser from the chosen text
        // and kept beside it (`fitted_from`), one per budget; both stay, and the fitted ones go
        // when the chosen text changes. Rows from before were written by a model unless they
        // had no summariser: then by an agent (the whole thread, as summary_update writes it)
        // or by the person (a point of the thread).
        r#"
    ALTER TABLE summaries ADD COLUMN written_by TEXT NOT NULL DEFAULT 'model'
        CHECK (written_by IN ('model', 'person', 'agent', 'file'));
    ALTER TABLE summaries ADD COLUMN chosen INTEGER NOT NULL DEFAULT 0 CHECK (chosen IN (0, 1));
    ALTER TABLE summaries ADD COLUMN fitted_from INTEGER REFERENCES summaries(id) ON DELETE CASCADE;
    UPDATE summaries SET chosen = 1,
        written_by = CASE WHEN path_end_node_id IS NULL THEN 'agent' ELSE 'person' END
        WHERE summarizer = '';
    DROP INDEX summaries_by_key;
    CREATE UNIQUE INDEX summaries_by_key ON summaries(
        tree_id, ifnull(pin_id, 0), ifnull(path_end_node_id, 0), ifnull(budget, 0), summarizer,
        ifnull(fitted_from, 0));
    CREATE INDEX summaries_fitted ON summaries(fitted_from) WHERE fitted_from IS NOT NULL;
    "#,
        None,
    ),
    (
        // 8: what a file brings in is data until the person accepts it. A model profile that came
        // with an imported file names the file (`imported_from`) and is not used (no plan, no
        // send, never a default) until the person enables it, which clears the name. A tree's
        // next thread takes its place after the last one by an index rather than a scan, so an
        // import of many threads is not quadratic.
        r#"
    ALTER TABLE model_profiles ADD COLUMN imported_from TEXT;
    CREATE INDEX pins_by_tree_order ON pins(tree_id, list_order);
    "#,
        None,
    ),
    (
        // 9: sync through git (src/sync.rs). Every tree, message, pin, attachment, note and
        // summary write gets a global id beside its row number: a UUIDv7 made from the row's own
        // time, so ids sort by age everywhere. A receipt is its reply's, so it takes the reply's.
        // Rows get theirs from a trigger, so no insert path can forget one. The device's id and
        // clock live in `sync_state`; each remote the database syncs with is a `sync_targets` row
        // (the remote is remembered per database); `sync_known` lists what a remote's folder
        // already holds; `sync_ops` is every change to a mutable field this database knows (its
        // own and other devices'), the latest by (clock, device) being the field's value; and
        // `sync_changes` is what changed here since the last stamp, filled by triggers that stay
        // quiet while a sync folds what arrived (`sync_state.folding`).
        r#"
    ALTER TABLE trees ADD COLUMN gid TEXT;
    ALTER TABLE nodes ADD COLUMN gid TEXT;
    ALTER TABLE pins ADD COLUMN gid TEXT;
    ALTER TABLE attachments ADD COLUMN gid TEXT;
    ALTER TABLE annotations ADD COLUMN gid TEXT;
    ALTER TABLE summary_updates ADD COLUMN gid TEXT;

    CREATE TABLE sync_state (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
    ) STRICT, WITHOUT ROWID;
    CREATE TABLE sync_targets (
        name             TEXT    PRIMARY KEY,
        remote           TEXT    NOT NULL,
        -- 'all': every tree (a person's own machines); 'shared': only trees shared to it (a team).
        scope            TEXT    NOT NULL CHECK (scope IN ('all', 'shared')),
        last_result_json TEXT,
        updated_at_ms    INTEGER NOT NULL
    ) STRICT;
    CREATE TABLE sync_known (
        target TEXT NOT NULL,
        id     TEXT NOT NULL,
        PRIMARY KEY (target, id)
    ) STRICT, WITHOUT ROWID;
    CREATE TABLE sync_ops (
        id         TEXT    PRIMARY KEY,
        gid        TEXT    NOT NULL,
        kind       TEXT    NOT NULL,
        field      TEXT    NOT NULL,
        value_json TEXT    NOT NULL,
        clock      INTEGER NOT NULL,
        device     TEXT    NOT NULL
    ) STRICT;
    CREATE INDEX sync_ops_by_field ON sync_ops(gid, field, clock DESC, device DESC);
    CREATE TABLE sync_changes (
        gid   TEXT    NOT NULL,
        kind  TEXT    NOT NULL,
        field TEXT    NOT NULL,
        at_ms INTEGER NOT NULL,
        PRIMARY KEY (gid, field)
    ) STRICT, WITHOUT ROWID;
    CREATE TABLE sync_shares (
        target    TEXT    NOT NULL,
        tree_gid  TEXT    NOT NULL,
        shared_by TEXT    NOT NULL,
        at_ms     INTEGER NOT NULL,
        PRIMARY KEY (target, tree_gid)
    ) STRICT, WITHOUT ROWID;
    "#,
        Some(fill_global_ids),
    ),
    (
        // 10: a branch moved, or a thread (ThreadMind's thread_rebase), is a change a sync
        // carries: the moved message's new parent, replayed elsewhere with its threads, and the
        // thread's new place (its parent thread and anchor).
        r#"
    CREATE TRIGGER sync_nodes_parent AFTER UPDATE OF parent_id ON nodes
    WHEN old.parent_id IS NOT new.parent_id AND new.gid IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM sync_state WHERE key = 'folding')
    BEGIN
        INSERT OR REPLACE INTO sync_changes (gid, kind, field, at_ms)
        VALUES (new.gid, 'message', 'parent',
            CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
    END;
    CREATE TRIGGER sync_pins_place AFTER UPDATE OF parent_pin_id, anchor_node_id ON pins
    WHEN (old.parent_pin_id IS NOT new.parent_pin_id OR old.anchor_node_id IS NOT new.anchor_node_id)
        AND new.gid IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM sync_state WHERE key = 'folding')
    BEGIN
        INSERT OR REPLACE INTO sync_changes (gid, kind, field, at_ms)
        VALUES (new.gid, 'pin', 'place',
            CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
    END;
    "#,
        None,
    ),
    (
        // 11: images and PDFs are attachments of their own roles (an image as a data URL, a PDF
        // as its pages' text). SQLite cannot change a CHECK in place: the table is rebuilt with
        // the same rows, ids and global ids, and its indexes and triggers made again as they were.
        "",
        Some(widen_attachment_roles),
    ),
    (
        // 12: the tokens a continuation was generated as, with their log-probabilities and
        // alternatives (what the loom shows on hover), beside the reply; gone with it.
        r#"
    CREATE TABLE reply_tokens (
        node_id     INTEGER PRIMARY KEY REFERENCES nodes(id) ON DELETE CASCADE,
        tokens_json TEXT    NOT NULL
    ) STRICT;
    "#,
        None,
    ),
    (
        // 13: derived text that no longer holds. When a message a summary was written from is
        // excluded, deleted or moved away, the summary would still carry its words: it is marked
        // with why, never sent while marked, and written again (a write clears the mark). A
        // title taken from a message follows it. And requests made in the background are kept.
        r#"
    ALTER TABLE summaries ADD COLUMN stale_reason TEXT;
    -- A title Pinloom took from a message (the command line titles a new tree after its first
    -- question): while that message is excluded or deleted, requests do not name the tree by it.
    -- A title the person types is theirs, and clears this.
    ALTER TABLE trees ADD COLUMN title_from_node INTEGER REFERENCES nodes(id) ON DELETE SET NULL;
    -- Every request Pinloom makes on its own (a summary, a condensation): what it was for, what
    -- it asked of which model, what the provider counted and charged, how it ended, and its
    -- body, so that nothing is sent unseen. Replies keep theirs in their receipts.
    CREATE TABLE background_requests (
        id             INTEGER PRIMARY KEY,
        tree_id        INTEGER NOT NULL REFERENCES trees(id) ON DELETE CASCADE,
        kind           TEXT    NOT NULL CHECK (kind IN ('summary', 'condensation')),
        model          TEXT    NOT NULL,
        pin_id         INTEGER REFERENCES pins(id) ON DELETE SET NULL,
        up_to_node_id  INTEGER REFERENCES nodes(id) ON DELETE SET NULL,
        planned_tokens INTEGER NOT NULL,
        prompt_tokens  INTEGER,
        reply_tokens   INTEGER,
        cost_usd       REAL,
        started_at_ms  INTEGER NOT NULL,
        duration_ms    INTEGER NOT NULL,
        failure        TEXT,
        body_json      TEXT    NOT NULL
    ) STRICT;
    CREATE INDEX background_requests_by_tree ON background_requests(tree_id, id);
    "#,
        None,
    ),
    (
        // 14: new rows' global ids in the order they were written (see `ordered_global_ids`).
        "",
        Some(ordered_global_ids),
    ),
    (
        // 15: a thread's older part compacted: the summary of the thread up to `up_to_node_id`
        // (a row of `summaries`, which follows its sources) stands for those messages in every
        // request of the thread's path past it, until undone.
        r#"
    CREATE TABLE compactions (
        id            INTEGER PRIMARY KEY,
        tree_id       INTEGER NOT NULL REFERENCES trees(id) ON DELETE CASCADE,
        pin_id        INTEGER REFERENCES pins(id) ON DELETE CASCADE,
        up_to_node_id INTEGER NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
        created_at_ms INTEGER NOT NULL,
        undone_at_ms  INTEGER
    ) STRICT;
    CREATE INDEX compactions_by_thread ON compactions(tree_id, pin_id);
    "#,
        None,
    ),
    (
        // 16: a compaction's summary and a pin's suggested result are requests of their own
        // kinds in the list of requests.
        r#"
    CREATE TABLE background_requests_widened (
        id             INTEGER PRIMARY KEY,
        tree_id        INTEGER NOT NULL REFERENCES trees(id) ON DELETE CASCADE,
        kind           TEXT    NOT NULL
            CHECK (kind IN ('summary', 'condensation', 'compaction', 'pinResult')),
        model          TEXT    NOT NULL,
        pin_id         INTEGER REFERENCES pins(id) ON DELETE SET NULL,
        up_to_node_id  INTEGER REFERENCES nodes(id) ON DELETE SET NULL,
        planned_tokens INTEGER NOT NULL,
        prompt_tokens  INTEGER,
        reply_tokens   INTEGER,
        cost_usd       REAL,
        started_at_ms  INTEGER NOT NULL,
        duration_ms    INTEGER NOT NULL,
        failure        TEXT,
        body_json      TEXT    NOT NULL
    ) STRICT;
    INSERT INTO background_requests_widened SELECT * FROM background_requests;
    DROP TABLE background_requests;
    ALTER TABLE background_requests_widened RENAME TO background_requests;
    CREATE INDEX background_requests_by_tree ON background_requests(tree_id, id);
    "#,
        None,
    ),
    (
        // 17: what this machine's person chose for themselves and no other machine should follow
        // (the default model, the conversation last asked in from the terminal). Never synced.
        r#"
    CREATE TABLE local_choices (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
    ) STRICT, WITHOUT ROWID;
    "#,
        None,
    ),
    (
        // 18: a question over several branches: the messages picked for it, in the order picked,
        // each with whether its branch's summary up to it goes too. The question's thread (it and
        // what continues it) carries them; a message deleted for good takes its pick with it.
        // And where this machine last showed each tree (never synced): the message, and the
        // tree's newest message then, so that anything written since opens instead. And a
        // message's full-text indexing left to the end of a write of many
        // (`search::indexed_at_the_end`), which the insert trigger then leaves alone.
        r#"
    DROP TRIGGER nodes_fts_after_insert;
    CREATE TRIGGER nodes_fts_after_insert AFTER INSERT ON nodes
    WHEN NOT EXISTS (SELECT 1 FROM sync_state WHERE key = 'indexed at the end')
    BEGIN
        INSERT INTO nodes_fts(rowid, text) VALUES (new.id, new.text);
    END;
    CREATE TABLE tree_places (
        tree_id   INTEGER PRIMARY KEY REFERENCES trees(id) ON DELETE CASCADE,
        node_id   INTEGER NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
        newest_id INTEGER NOT NULL
    ) STRICT;
    CREATE TABLE picked_sources (
        question_id  INTEGER NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
        position     INTEGER NOT NULL,
        source_id    INTEGER NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
        with_summary INTEGER NOT NULL CHECK (with_summary IN (0, 1)),
        PRIMARY KEY (question_id, position)
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX picked_sources_by_source ON picked_sources(source_id);
    "#,
        None,
    ),
    (
        // 19: a move remembers where the message was before it (the first move since the last
        // stamp), and its operation carries that: every machine settles a tree's moves from the
        // same starting places (`sync::fold::settle_moves`).
        r#"
    ALTER TABLE sync_changes ADD COLUMN before_json TEXT;
    ALTER TABLE sync_ops ADD COLUMN from_json TEXT;
    DROP TRIGGER sync_nodes_parent;
    CREATE TRIGGER sync_nodes_parent AFTER UPDATE OF parent_id ON nodes
    WHEN old.parent_id IS NOT new.parent_id AND new.gid IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM sync_state WHERE key = 'folding')
    BEGIN
        INSERT INTO sync_changes (gid, kind, field, at_ms, before_json)
        VALUES (new.gid, 'message', 'parent',
            CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER),
            json_quote((SELECT gid FROM nodes WHERE id = old.parent_id)))
        ON CONFLICT (gid, field) DO UPDATE SET at_ms = excluded.at_ms;
    END;
    "#,
        None,
    ),
    (
        // 20: the key each device signs its packs with, as a target's folder first showed it: a
        // pack of that device signed by another key is refused.
        r#"
    CREATE TABLE sync_signers (
        target TEXT NOT NULL,
        device TEXT NOT NULL,
        key    TEXT NOT NULL,
        PRIMARY KEY (target, device)
    ) STRICT, WITHOUT ROWID;
    "#,
        None,
    ),
    (
        // 21: who wrote what arrived from a team's folder (the device whose signed pack brought
        // it, and its name in the team's roster): in a team only a thing's author changes it.
        // What has no row here was written by this database's person.
        r#"
    CREATE TABLE sync_authors (
        gid    TEXT PRIMARY KEY,
        target TEXT NOT NULL,
        device TEXT NOT NULL,
        name   TEXT NOT NULL
    ) STRICT, WITHOUT ROWID;
    "#,
        None,
    ),
];

/// Migration 11: the attachments table rebuilt to admit the `image` and `pdf` roles. Its
/// indexes and triggers are read from the schema before and made again after, so the rebuild
/// keeps whatever earlier migrations gave it.
fn widen_attachment_roles(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    let kept: Vec<String> = tx
        .prepare(
            "SELECT sql FROM sqlite_master WHERE tbl_name = 'attachments'
             AND type IN ('index', 'trigger') AND sql IS NOT NULL ORDER BY type, name",
        )?
        .query_map([], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    tx.execute_batch(
        "CREATE TABLE attachments_widened (
            id            INTEGER PRIMARY KEY,
            tree_id       INTEGER NOT NULL REFERENCES trees(id) ON DELETE CASCADE,
            scope         TEXT    NOT NULL CHECK (scope IN ('tree', 'thread', 'node')),
            pin_id        INTEGER REFERENCES pins(id) ON DELETE CASCADE,
            node_id       INTEGER REFERENCES nodes(id) ON DELETE CASCADE,
            role          TEXT    NOT NULL
                CHECK (role IN ('context', 'instruction', 'file', 'folder', 'image', 'pdf')),
            name          TEXT    NOT NULL,
            content       TEXT    NOT NULL,
            created_at_ms INTEGER NOT NULL,
            gid           TEXT,
            CHECK ((scope = 'node') = (node_id IS NOT NULL)),
            CHECK (scope = 'thread' OR pin_id IS NULL)
        ) STRICT;
        INSERT INTO attachments_widened
            (id, tree_id, scope, pin_id, node_id, role, name, content, created_at_ms, gid)
        SELECT id, tree_id, scope, pin_id, node_id, role, name, content, created_at_ms, gid
        FROM attachments;
        DROP TABLE attachments;
        ALTER TABLE attachments_widened RENAME TO attachments;",
    )?;
    for sql in kept {
        tx.execute_batch(&sql)?;
    }
    Ok(())
}

/// A UUIDv7 (RFC 9562) in SQL from a time in milliseconds: 48 bits of the time, the version,
/// 74 random bits and the variant. Migration 9's, frozen with it.
fn uuid_v7_sql(ms: &str) -> String {
    format!(
        "printf('%08x-%04x-7%03x-%04x-%012x', ({ms} >> 16) & 0xffffffff, {ms} & 0xffff, \
         random() & 0xfff, (random() & 0x3fff) | 0x8000, random() & 0xffffffffffff)"
    )
}

/// A UUIDv7 (RFC 9562) in SQL for a new row: 48 bits of the time, the version, then the row's
/// `rowid` (42 bits, counting up as rows are written) where the standard allows a counter, and
/// 32 random bits. Rows written in one millisecond get ids in the order they were written, so a
/// sync, which writes what arrives in the order of its ids, gives two branches of one message
/// the same order on every machine (an import writes thousands a second).
fn ordered_uuid_v7_sql(ms: &str, rowid: &str) -> String {
    format!(
        "printf('%08x-%04x-7%03x-%04x-%012x', ({ms} >> 16) & 0xffffffff, {ms} & 0xffff, \
         ({rowid} >> 30) & 0xfff, (({rowid} >> 16) & 0x3fff) | 0x8000, \
         (({rowid} & 0xffff) << 32) | (random() & 0xffffffff))"
    )
}

/// Migration 14: the triggers that give new rows their global ids give ordered ones
/// ([`ordered_uuid_v7_sql`]); ids already given stay.
fn ordered_global_ids(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    let mut sql = String::new();
    for (table, time) in GLOBAL_ID_TABLES {
        let for_new = ordered_uuid_v7_sql(&format!("new.{time}"), "new.rowid");
        sql.push_str(&format!(
            "DROP TRIGGER {table}_get_gid;
             CREATE TRIGGER {table}_get_gid AFTER INSERT ON {table} WHEN new.gid IS NULL BEGIN
                 UPDATE {table} SET gid = {for_new} WHERE rowid = new.rowid;
             END;\n"
        ));
    }
    tx.execute_batch(&sql)
}

/// The rows that get a global id, with the column holding their time.
const GLOBAL_ID_TABLES: [(&str, &str); 6] = [
    ("trees", "created_at_ms"),
    ("nodes", "created_at_ms"),
    ("pins", "created_at_ms"),
    ("attachments", "created_at_ms"),
    ("annotations", "created_at_ms"),
    ("summary_updates", "written_at_ms"),
];

/// The mutable fields whose changes this migration has triggers note, as (table, the sync's
/// kind, field name, columns): a change of any of the columns is a change of the field. History:
/// a later migration's triggers note the moves (`parent`, `place`); what a sync may set today is
/// `SyncedField`, which a test holds every trigger's pair to.
const FIELD_TRIGGERS: [(&str, &str, &str, &[&str]); 13] = [
    ("trees", "tree", "title", &["title"]),
    ("trees", "tree", "systemContext", &["system_context"]),
    ("trees", "tree", "settings", &["settings_json"]),
    ("trees", "tree", "bufferIncludesSystem", &["buffer_includes_system"]),
    ("trees", "tree", "deleted", &["deleted_at_ms"]),
    ("nodes", "message", "excluded", &["excluded"]),
    ("nodes", "message", "bookmarked", &["bookmarked"]),
    ("nodes", "message", "kept", &["kept"]),
    ("nodes", "message", "deleted", &["pruned_at_ms"]),
    ("pins", "pin", "title", &["title"]),
    ("pins", "pin", "closed", &["closed_at_ms", "result"]),
    ("pins", "pin", "deleted", &["deleted_at_ms"]),
    ("annotations", "note", "included", &["included"]),
];

/// Gives every existing row its global id, makes the ids unique, has new rows get one, and has
/// a change of a synced field recorded in `sync_changes` (unless a sync is folding).
fn fill_global_ids(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    let now = "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)";
    let quiet = "NOT EXISTS (SELECT 1 FROM sync_state WHERE key = 'folding')";
    let mut sql = String::new();
    for (table, time) in GLOBAL_ID_TABLES {
        let fresh = uuid_v7_sql(time);
        let for_new = uuid_v7_sql(&format!("new.{time}"));
        sql.push_str(&format!(
            "UPDATE {table} SET gid = {fresh};
             CREATE UNIQUE INDEX {table}_by_gid ON {table}(gid);
             CREATE TRIGGER {table}_get_gid AFTER INSERT ON {table} WHEN new.gid IS NULL BEGIN
                 UPDATE {table} SET gid = {for_new} WHERE rowid = new.rowid;
             END;\n"
        ));
    }
    for (table, kind, field, columns) in FIELD_TRIGGERS {
        let changed: Vec<String> =
            columns.iter().map(|column| format!("old.{column} IS NOT new.{column}")).collect();
        sql.push_str(&format!(
            "CREATE TRIGGER sync_{table}_{field} AFTER UPDATE OF {columns} ON {table}
             WHEN ({changed}) AND new.gid IS NOT NULL AND {quiet} BEGIN
                 INSERT OR REPLACE INTO sync_changes (gid, kind, field, at_ms)
                 VALUES (new.gid, '{kind}', '{field}', {now});
             END;\n",
            columns = columns.join(", "),
            changed = changed.join(" OR "),
        ));
    }
    // A removed attachment is a change too: its row is gone, its global id is not.
    sql.push_str(&format!(
        "CREATE TRIGGER sync_attachments_removed AFTER DELETE ON attachments
         WHEN old.gid IS NOT NULL AND {quiet} BEGIN
             INSERT OR REPLACE INTO sync_changes (gid, kind, field, at_ms)
             VALUES (old.gid, 'attachment', 'removed', {now});
         END;"
    ));
    tx.execute_batch(&sql)
}

/// Gives every existing tree and pin its ThreadMind slug, oldest first so that the oldest keeps
/// the plain one, as the store gives new ones, then makes slugs unique from here on. Every row
/// starts on a placeholder no slug can equal (`\x01` and its id), so that rows not yet named
/// never stand in the way.
///
/// A released migration never changes, so it names rows with its own copy of the slug rules
/// (`frozen_slugs`) as they were when it was released, not with whatever the store's helpers
/// become.
fn fill_slugs(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(
        "UPDATE trees SET slug = char(1) || id;
         UPDATE pins SET slug = char(1) || id;",
    )?;
    let trees: Vec<(i64, String)> = tx
        .prepare("SELECT id, title FROM trees ORDER BY id")?
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect::<Result<_, _>>()?;
    for (id, title) in trees {
        let slug = frozen_slugs::free_tree_slug(tx, &frozen_slugs::slugify(&title))?;
        tx.execute("UPDATE trees SET slug = ?2 WHERE id = ?1", params![id, slug])?;
    }
    let pins: Vec<(i64, i64, String)> = tx
        .prepare("SELECT id, tree_id, title FROM pins ORDER BY id")?
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?
        .collect::<Result<_, _>>()?;
    for (id, tree, title) in pins {
        let slug = frozen_slugs::free_pin_slug(tx, tree, &frozen_slugs::slugify(&title))?;
        tx.execute("UPDATE pins SET slug = ?2 WHERE id = ?1", params![id, slug])?;
    }
    tx.execute_batch(
        "CREATE UNIQUE INDEX trees_by_slug ON trees(slug);
         CREATE UNIQUE INDEX pins_by_slug ON pins(tree_id, slug) WHERE deleted_at_ms IS NULL;
         CREATE INDEX pins_by_order ON pins(tree_id, parent_pin_id, list_order);",
    )
}

/// Migration 4's slug rules, frozen as released (ThreadMind v0.4.1's `slugify`, `-2`, `-3`, …
/// for repeats, `main` reserved among a tree's threads). The store's own helpers in `slugs.rs`
/// may change for new rows; these may not.
mod frozen_slugs {
    use rusqlite::{Connection, params};

    pub(super) fn slugify(title: &str) -> String {
        let lowered = title.to_lowercase();
        let trimmed = lowered.trim_matches(is_js_whitespace);
        let mut slug = String::with_capacity(trimmed.len());
        let mut pending_dash = false;
        for c in trimmed.chars() {
            if c.is_ascii_alphanumeric() {
                if pending_dash && !slug.is_empty() {
                    slug.push('-');
                }
                pending_dash = false;
                slug.push(c);
            } else if c == '-' || c == '_' || is_js_whitespace(c) {
                pending_dash = true;
            }
        }
        slug
    }

    pub(super) fn free_tree_slug(conn: &Connection, base: &str) -> rusqlite::Result<String> {
        let mut exists = conn.prepare("SELECT EXISTS (SELECT 1 FROM trees WHERE slug = ?1)")?;
        first_free(base, |candidate| exists.query_row([candidate], |row| row.get(0)))
    }

    pub(super) fn free_pin_slug(
        conn: &Connection,
        tree: i64,
        base: &str,
    ) -> rusqlite::Result<String> {
        let mut exists = conn.prepare(
            "SELECT EXISTS (SELECT 1 FROM pins
             WHERE tree_id = ?1 AND slug = ?2 AND deleted_at_ms IS NULL)",
        )?;
        first_free(base, |candidate| {
            Ok(candidate == "main"
                || exists.query_row(params![tree, candidate], |row| row.get(0))?)
        })
    }

    fn first_free(
        base: &str,
        mut taken: impl FnMut(&str) -> rusqlite::Result<bool>,
    ) -> rusqlite::Result<String> {
        if !taken(base)? {
            return Ok(base.to_owned());
        }
        let mut counter = 2_u64;
        loop {
            let candidate = format!("{base}-{counter}");
            if !taken(&candidate)? {
                return Ok(candidate);
            }
            counter += 1;
        }
    }

    fn is_js_whitespace(c: char) -> bool {
        matches!(
            c,
            '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
                ..='\u{200A}'
                    | '\u{2028}'
                    | '\u{2029}'
                    | '\u{202F}'
                    | '\u{205F}'
                    | '\u{3000}'
                    | '\u{FEFF}'
        )
    }
}

/// Brings `conn` up to [`SCHEMA_VERSION`]. Returns the version the file had before.
///
/// The caller has already checked that the file is not newer than this build.
pub(crate) fn upgrade(conn: &mut Connection) -> rusqlite::Result<u32> {
    let found = version(conn)?;
    for (index, (sql, fill)) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        // IMMEDIATE takes the write lock up front, so two processes opening an old file at once
        // migrate it one after the other instead of both trying.
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let now = tx.query_row("PRAGMA user_version", [], |row| row.get::<_, u32>(0))?;
        if now as usize > index {
            // The other process got here first.
            tx.commit()?;
            continue;
        }
        tx.execute_batch(sql)?;
        if let Some(fill) = fill {
            fill(&tx)?;
        }
        tx.pragma_update(None, "user_version", index as u32 + 1)?;
        tx.commit()?;
    }
    Ok(found)
}

pub(crate) fn version(conn: &Connection) -> rusqlite::Result<u32> {
    conn.query_row("PRAGMA user_version", [], |row| row.get(0))
}
