//! The ThreadMind session of one working folder and its tools' use cases.

use pinloom_engine::threadmind::{self as render, PREVIEW_UNITS, ThreadMindContext};
use pinloom_store::{
    NewTree, NodeId, PinId, ROOT_THREAD_SLUG, Sharing, Store, SummaryAuthor, SummaryWrite, Tree,
    TreeMode, Workspace,
};

use super::instructions::InstructionClient;

use crate::base::pinloom::Pinloom;
use crate::error::{ApiError, ErrorCode};
use crate::json::{PromptState, ResourceText, SendTarget, ThreadMindReport};
use crate::runtime::{blocking, now_ms};

use super::chain::{self, Unsummarised, chain, summary_writes, thread_list};
use super::instructions;

pub(super) const NO_PROJECT: &str = "No active project. Use project_create first.";
const NO_PROJECT_THREAD: &str = "No active project/thread. Use project_create first.";

/// The headless session of one working folder: its active project and thread live in the
/// database, so every MCP server and command run from that folder shares them.
#[derive(Debug, Clone)]
pub struct ThreadMindSession {
    pub(super) pinloom: Pinloom,
    folder: String,
}

/// The active tree and thread, resolved.
pub(super) struct Active {
    pub(super) tree: Tree,
    pub(super) thread: Option<PinId>,
    pub(super) thread_slug: String,
}

impl Pinloom {
    /// The headless session of `folder` (the MCP server's working folder).
    pub fn threadmind_session(&self, folder: impl Into<String>) -> ThreadMindSession {
        ThreadMindSession { pinloom: self.clone(), folder: folder.into() }
    }
}

pub(super) fn refuse(message: impl Into<String>) -> anyhow::Error {
    ApiError::invalid_input(message).into()
}

pub(super) fn missing(message: impl Into<String>) -> anyhow::Error {
    ApiError { code: ErrorCode::NotFound, message: message.into() }.into()
}

impl ThreadMindSession {
    /// The folder whose session this is.
    pub fn folder(&self) -> &str {
        &self.folder
    }

    /// Runs store work on a blocking thread. ThreadMind's refusals pass through without added
    /// context, so their messages stay ThreadMind's. A write drops this process's caches.
    pub(super) async fn run<T: Send + 'static>(
        &self,
        writes: bool,
        work: impl FnOnce(&Store, &str) -> anyhow::Result<T> + Send + 'static,
    ) -> anyhow::Result<T> {
        let store = self.pinloom.store.clone();
        let snapshot_cache = self.pinloom.snapshot_cache.clone();
        let folder = self.folder.clone();
        blocking(move || {
            let result = work(&store, &folder);
            if writes {
                snapshot_cache.forget();
            }
            result
        })
        .await
    }

    /// ThreadMind's `project_create`: a new tree with its system context, active on `main`.
    pub async fn project_create(
        &self,
        title: String,
        system_context: Option<String>,
        mode: Option<String>,
    ) -> anyhow::Result<String> {
        let sharing = match mode.as_deref() {
            None | Some("solo") => Sharing::Solo,
            Some("team") => Sharing::Team,
            Some(other) => {
                return Err(refuse(format!("mode must be \"solo\" or \"team\", not {other:?}")));
            }
        };
        self.run(true, move |store, folder| {
            let tree = store.create_tree_with(&NewTree {
                title: title.clone(),
                mode: TreeMode::Dialogue,
                system_context: system_context.unwrap_or_default(),
                sharing,
                created_at_ms: now_ms(),
            })?;
            store.set_workspace(folder, Workspace { tree_id: Some(tree.id), pin_id: None }, now_ms())?;
            Ok(format!(
                "Project \"{title}\" created (id: {}, mode: {}).\nMain thread created and set as active.\n\nTip: Run `threadmind_init` to generate instruction files (CLAUDE.md, .cursorrules) for automatic context integration.",
                tree.slug,
                sharing_name(tree.sharing)
            ))
        })
        .await
    }

    /// ThreadMind's `project_list`: every tree, in the order ThreadMind lists its project files.
    pub async fn project_list(&self) -> anyhow::Result<String> {
        self.run(false, |store, folder| {
            let mut trees = store.list_trees()?;
            if trees.is_empty() {
                return Ok("No projects found. Use project_create to create one.".to_owned());
            }
            // ThreadMind lists `projects/<id>.json` in the order the file system returns them,
            // which Node sorts by name: `my-app-2.json` before `my-app.json`.
            trees.sort_by(|a, b| format!("{}.json", a.slug).cmp(&format!("{}.json", b.slug)));
            let active = store.workspace(folder)?.tree_id;
            Ok(trees
                .iter()
                .map(|tree| {
                    let marker = if Some(tree.id) == active { " ← active" } else { "" };
                    format!(
                        "- {} ({}) [{}]{marker}",
                        tree.title,
                        tree.slug,
                        sharing_name(tree.sharing)
                    )
                })
                .collect::<Vec<_>>()
                .join("\n"))
        })
        .await
    }

    /// ThreadMind's `project_switch`: another tree becomes active, on `main`.
    pub async fn project_switch(&self, project_id: String) -> anyhow::Result<String> {
        self.run(true, move |store, folder| {
            let tree = store
                .tree_by_slug(&project_id)?
                .ok_or_else(|| missing(format!("Project \"{project_id}\" not found")))?;
            store.set_workspace(
                folder,
                Workspace { tree_id: Some(tree.id), pin_id: None },
                now_ms(),
            )?;
            Ok(format!("Switched to project \"{project_id}\". Active thread reset to \"main\"."))
        })
        .await
    }

    /// ThreadMind's `thread_create`: a sub-thread of `parent_id` (the active thread when absent),
    /// hanging off that thread's newest message when it has one, made active.
    pub async fn thread_create(
        &self,
        title: String,
        parent_id: Option<String>,
    ) -> anyhow::Result<String> {
        self.run(true, move |store, folder| {
            let active = active(store, folder)?.ok_or_else(|| refuse(NO_PROJECT))?;
            let parent_id = parent_id.unwrap_or(active.thread_slug);
            let tree = active.tree;
            let parent = chain::find_thread(store, &tree, &parent_id)?
                .ok_or_else(|| missing(format!("Parent thread \"{parent_id}\" not found")))?;
            let anchor = store.newest_in_thread(tree.id, parent)?;
            let pin = store.open_thread(tree.id, parent, anchor, &title, now_ms())?;
            store.set_workspace(
                folder,
                Workspace { tree_id: Some(tree.id), pin_id: Some(pin.id) },
                now_ms(),
            )?;
            let list = thread_list(store, &tree, Some(pin.id))?;
            let warning = if chain::thread_summary(store, &tree, parent, anchor)?.is_empty() {
                format!(
                    "\n\n⚠️  Parent thread \"{parent_id}\" has no summary yet.\nRun `tm:summary` on \"{parent_id}\" before continuing — this ensures the context chain is complete when you call `context_get` from child threads."
                )
            } else {
                String::new()
            };
            Ok(format!("Thread \"{}\" created under \"{parent_id}\".\n\n{list}{warning}", pin.slug))
        })
        .await
    }

    /// ThreadMind's `thread_switch`: another thread of the active project becomes active; shows
    /// the start of its context.
    pub async fn thread_switch(&self, thread_id: String) -> anyhow::Result<String> {
        self.run(true, move |store, folder| {
            let active = active(store, folder)?.ok_or_else(|| refuse(NO_PROJECT))?;
            let (thread_id, thread) = named_thread(store, &active, Some(thread_id))?;
            store.set_workspace(
                folder,
                Workspace { tree_id: Some(active.tree.id), pin_id: thread },
                now_ms(),
            )?;
            let context = assemble(store, &active.tree, thread, None, Unsummarised::Skipped)?;
            Ok(format!(
                "Switched to thread \"{thread_id}\".\n\nContext preview (~{} tokens):\n{}",
                context.tokens,
                render::preview(&context.text, PREVIEW_UNITS)
            ))
        })
        .await
    }

    /// ThreadMind's `thread_list`.
    pub async fn thread_list(&self) -> anyhow::Result<String> {
        self.run(false, |store, folder| {
            let active = active(store, folder)?.ok_or_else(|| refuse(NO_PROJECT))?;
            Ok(thread_list(store, &active.tree, active.thread)?)
        })
        .await
    }

    /// ThreadMind's `summary_update`: writes the summary of `thread_id` (the active thread when
    /// absent) as it is given; the log keeps every write.
    pub async fn summary_update(
        &self,
        content: String,
        thread_id: Option<String>,
    ) -> anyhow::Result<String> {
        self.run(true, move |store, folder| {
            let active = active(store, folder)?.ok_or_else(|| refuse(NO_PROJECT))?;
            let (thread_id, thread) = named_thread(store, &active, thread_id)?;
            let key = chain::own_summary_key(&active.tree, thread);
            store.set_summary(
                &key,
                &SummaryWrite {
                    text: &content,
                    written_by: SummaryAuthor::Agent,
                    chosen: true,
                    input_chars: content.encode_utf16().count() as u64,
                    input_tokens: 0,
                    written_at_ms: now_ms(),
                },
            )?;
            Ok(format!("Summary updated for thread \"{thread_id}\"."))
        })
        .await
    }

    /// ThreadMind's `context_get`: the active thread's assembled context with its footer.
    pub async fn context_get(&self) -> anyhow::Result<String> {
        self.run(false, |store, folder| {
            let active = active(store, folder)?.ok_or_else(|| refuse(NO_PROJECT_THREAD))?;
            threadmind_report(
                store,
                &active.tree,
                active.thread,
                None,
                ThreadMindReport::Context,
                Unsummarised::Skipped,
            )
        })
        .await
    }

    /// ThreadMind's `thread_delete`: the thread and everything below it leave every view (they
    /// stay in the file, soft-deleted); the active thread goes back to `main` if it was among
    /// them.
    pub async fn thread_delete(&self, thread_id: String) -> anyhow::Result<String> {
        self.run(true, move |store, folder| {
            let active = active(store, folder)?.ok_or_else(|| refuse(NO_PROJECT))?;
            if thread_id == ROOT_THREAD_SLUG {
                return Err(refuse("Cannot delete the main thread"));
            }
            let pin = store
                .pin_by_slug(active.tree.id, &thread_id)?
                .ok_or_else(|| missing(format!("Thread \"{thread_id}\" not found")))?;
            store.delete_thread(pin.id, now_ms())?;
            let now_active = store.workspace(folder)?.pin_id;
            let list = thread_list(store, &active.tree, now_active)?;
            Ok(format!("Thread \"{thread_id}\" and its descendants deleted.\n\n{list}"))
        })
        .await
    }

    /// ThreadMind's `thread_rebase`: moves a thread, with everything below it, under another.
    pub async fn thread_rebase(
        &self,
        thread_id: String,
        new_parent_id: String,
    ) -> anyhow::Result<String> {
        self.run(true, move |store, folder| {
            let active = active(store, folder)?.ok_or_else(|| refuse(NO_PROJECT))?;
            let tree = active.tree;
            // ThreadMind's checks, in its order, with its words.
            if thread_id == ROOT_THREAD_SLUG {
                return Err(refuse("Cannot rebase the main thread"));
            }
            if thread_id == new_parent_id {
                return Err(refuse(format!("Cannot rebase \"{thread_id}\" onto itself")));
            }
            let pin = store
                .pin_by_slug(tree.id, &thread_id)?
                .ok_or_else(|| missing(format!("Thread \"{thread_id}\" not found")))?;
            let new_parent = chain::find_thread(store, &tree, &new_parent_id)?.ok_or_else(|| {
                missing(format!("Target parent thread \"{new_parent_id}\" not found"))
            })?;
            if pin.parent_pin_id == new_parent {
                return Err(refuse(format!(
                    "Thread \"{thread_id}\" is already under \"{new_parent_id}\""
                )));
            }
            if let Some(target) = new_parent
                && is_below(store, &tree, target, pin.id)?
            {
                return Err(refuse(format!(
                    "Cannot rebase \"{thread_id}\" onto \"{new_parent_id}\": \"{new_parent_id}\" is a descendant of \"{thread_id}\""
                )));
            }
            store.move_thread(pin.id, new_parent, now_ms())?;
            let list = thread_list(store, &tree, active.thread)?;
            Ok(format!("Thread \"{thread_id}\" moved under \"{new_parent_id}\".\n\n{list}"))
        })
        .await
    }

    /// ThreadMind's `threadmind_init`: writes the instruction files AI clients read (CLAUDE.md,
    /// .cursorrules, .threadmind/instructions.md in the session's folder), each teaching the
    /// workflow with Pinloom's server, between markers that a later run replaces in place.
    pub async fn threadmind_init(&self, clients: Option<Vec<String>>) -> anyhow::Result<String> {
        let clients = match clients {
            None => InstructionClient::ALL.to_vec(),
            Some(names) => names
                .iter()
                .map(|name| {
                    InstructionClient::from_name(name).ok_or_else(|| {
                        refuse(format!(
                            "unknown client {name:?}: choose \"claude\", \"cursor\" or \"generic\""
                        ))
                    })
                })
                .collect::<anyhow::Result<Vec<_>>>()?,
        };
        self.run(false, move |store, folder| {
            let active = active(store, folder)?.ok_or_else(|| refuse(NO_PROJECT))?;
            let written = instructions::write_all(
                std::path::Path::new(folder),
                &active.tree.title,
                &clients,
            )?;
            let files: Vec<String> = written
                .iter()
                .map(|file| format!("  - {}: {} ({})", file.client.name(), file.path.display(), file.note()))
                .collect();
            Ok(format!(
                "Instruction files generated:\n{}\n\nThreadMind section is delimited by <!-- threadmind:start/end --> markers.\nRe-run threadmind_init at any time to update the ThreadMind section without affecting your other content.",
                files.join("\n")
            ))
        })
        .await
    }

    /// ThreadMind's `stats_show`.
    pub async fn stats_show(&self) -> anyhow::Result<String> {
        self.run(false, |store, folder| {
            let active = active(store, folder)?.ok_or_else(|| refuse(NO_PROJECT_THREAD))?;
            threadmind_report(
                store,
                &active.tree,
                active.thread,
                None,
                ThreadMindReport::Stats,
                Unsummarised::Skipped,
            )
        })
        .await
    }

    /// The `threadmind://context` resource (also `pinloom://context`).
    pub async fn context_resource(&self) -> anyhow::Result<ResourceText> {
        self.run(false, |store, folder| {
            let Some(active) = active(store, folder)? else {
                return Ok(ResourceText {
                    mime_type: "text/plain",
                    text: "No active project or thread. Use project_create first.".to_owned(),
                });
            };
            let context =
                assemble(store, &active.tree, active.thread, None, Unsummarised::Skipped)?;
            Ok(ResourceText {
                mime_type: "text/markdown",
                text: render::context_resource(&context),
            })
        })
        .await
    }

    /// The `threadmind://tree` resource (also `pinloom://tree`).
    pub async fn tree_resource(&self) -> anyhow::Result<ResourceText> {
        self.run(false, |store, folder| {
            let text = match active(store, folder)? {
                None => NO_PROJECT.to_owned(),
                Some(active) => thread_list(store, &active.tree, active.thread)?,
            };
            Ok(ResourceText { mime_type: "text/plain", text })
        })
        .await
    }

    /// What the prompts show: the active ids, the active thread's summary and context.
    pub async fn prompt_state(&self) -> anyhow::Result<PromptState> {
        self.run(false, |store, folder| {
            let Some(active) = active(store, folder)? else {
                return Ok(PromptState {
                    project: None,
                    thread: None,
                    summary: String::new(),
                    context: None,
                });
            };
            Ok(PromptState {
                summary: chain::thread_summary(store, &active.tree, active.thread, None)?,
                context: Some(assemble(
                    store,
                    &active.tree,
                    active.thread,
                    None,
                    Unsummarised::Skipped,
                )?),
                project: Some(active.tree.slug),
                thread: Some(active.thread_slug),
            })
        })
        .await
    }
}

/// The folder's active tree and thread; a thread deleted since counts as `main`.
pub(super) fn active(store: &Store, folder: &str) -> anyhow::Result<Option<Active>> {
    let workspace = store.workspace(folder)?;
    let Some(tree_id) = workspace.tree_id else { return Ok(None) };
    let tree = store.tree(tree_id)?;
    let pin = match workspace.pin_id {
        Some(pin) => Some(store.pin(pin)?).filter(|pin| pin.deleted_at_ms.is_none()),
        None => None,
    };
    Ok(Some(Active {
        tree,
        thread: pin.as_ref().map(|pin| pin.id),
        thread_slug: pin.map_or_else(|| ROOT_THREAD_SLUG.to_owned(), |pin| pin.slug),
    }))
}

/// The thread `thread_id` names (the active one when absent), with its id; ThreadMind's words
/// when there is none.
pub(super) fn named_thread(
    store: &Store,
    active: &Active,
    thread_id: Option<String>,
) -> anyhow::Result<(String, Option<PinId>)> {
    let thread_id = thread_id.unwrap_or_else(|| active.thread_slug.clone());
    let thread = chain::find_thread(store, &active.tree, &thread_id)?
        .ok_or_else(|| missing(format!("Thread \"{thread_id}\" not found")))?;
    Ok((thread_id, thread))
}

/// `context_get`'s or `stats_show`'s text for `thread` of `tree`, through `end` (its newest
/// message when absent).
fn threadmind_report(
    store: &Store,
    tree: &Tree,
    thread: Option<PinId>,
    end: Option<NodeId>,
    report: ThreadMindReport,
    unsummarised: Unsummarised,
) -> anyhow::Result<String> {
    let context = assemble(store, tree, thread, end, unsummarised)?;
    let stats = render::stats_by_thread(&summary_writes(store, tree)?);
    Ok(match report {
        ThreadMindReport::Context => render::context_text(&context, &stats),
        ThreadMindReport::Stats => {
            let threads = store.live_threads(tree.id)?.len() + 1;
            render::stats_text(&tree.title, threads, &context, &stats)
        }
    })
}

/// ThreadMind's assembled context of `thread`, through `end` (its newest message when absent).
fn assemble(
    store: &Store,
    tree: &Tree,
    thread: Option<PinId>,
    end: Option<NodeId>,
    unsummarised: Unsummarised,
) -> anyhow::Result<ThreadMindContext> {
    let sections = chain(store, tree, thread, end, unsummarised)?;
    Ok(render::assemble(&tree.system_context, &sections))
}

/// Whether live thread `pin` is `ancestor` or below it.
fn is_below(store: &Store, tree: &Tree, pin: PinId, ancestor: PinId) -> anyhow::Result<bool> {
    let pins = store.live_threads(tree.id)?;
    let mut current = Some(pin);
    let mut steps = 0;
    while let Some(id) = current {
        if id == ancestor {
            return Ok(true);
        }
        steps += 1;
        if steps > pins.len() + 1 {
            break;
        }
        current = pins.iter().find(|p| p.id == id).and_then(|p| p.parent_pin_id);
    }
    Ok(false)
}

fn sharing_name(sharing: Sharing) -> &'static str {
    match sharing {
        Sharing::Solo => "solo",
        Sharing::Team => "team",
    }
}

impl Pinloom {
    /// ThreadMind's `context_get` text for the chain of message `node_id`: its thread's context
    /// through that message ("copy as ThreadMind markdown", `pinloom context --node`).
    pub async fn threadmind_markdown(&self, node_id: i64) -> anyhow::Result<String> {
        self.threadmind_text(Target::Node(node_id), ThreadMindReport::Context).await
    }

    /// ThreadMind's `stats_show` text for the chain of message `node_id`.
    pub async fn threadmind_stats(&self, node_id: i64) -> anyhow::Result<String> {
        self.threadmind_text(Target::Node(node_id), ThreadMindReport::Stats).await
    }

    /// ThreadMind's `context_get` or `stats_show` text (`report`) for thread `thread_id` (`main`,
    /// a pin's slug or its number) of tree `tree_id`, as if it were active.
    pub async fn threadmind_thread_text(
        &self,
        tree_id: i64,
        thread_id: String,
        report: ThreadMindReport,
    ) -> anyhow::Result<String> {
        self.threadmind_text(Target::Thread(tree_id, thread_id), report).await
    }

    async fn threadmind_text(
        &self,
        target: Target,
        report: ThreadMindReport,
    ) -> anyhow::Result<String> {
        self.read("could not assemble the ThreadMind text", move |store| {
            let (tree, thread, end) = match target {
                Target::Node(node) => {
                    let (tree, thread) = node_thread(store, NodeId(node))?;
                    (tree, thread, Some(NodeId(node)))
                }
                Target::Thread(tree, thread_id) => {
                    let tree = store.tree(pinloom_store::TreeId(tree))?;
                    let thread = thread_by_reference(store, &tree, &thread_id)?;
                    (tree, thread, None)
                }
            };
            // Pinloom's own renderings name an ancestor without a summary.
            threadmind_report(store, &tree, thread, end, report, Unsummarised::Named)
        })
        .await
    }

    /// The newest live message of a thread of `tree_id` named by its ThreadMind id (`main`, a
    /// pin's slug, or a pin's number): what `pinloom context --thread` plans for.
    pub async fn thread_end(&self, tree_id: i64, thread_id: String) -> anyhow::Result<Option<i64>> {
        self.read("could not find the thread", move |store| {
            let tree = store.tree(pinloom_store::TreeId(tree_id))?;
            let thread = thread_by_reference(store, &tree, &thread_id)?;
            Ok(store.newest_in_thread(tree.id, thread)?.map(|node| node.0))
        })
        .await
    }

    /// The pin whose sub-thread `thread_id` names in tree `tree_id` (`main`, a pin's slug or
    /// number); `None` for the tree's main thread.
    pub async fn thread_pin(&self, tree_id: i64, thread_id: String) -> anyhow::Result<Option<i64>> {
        self.read("could not find the thread", move |store| {
            let tree = store.tree(pinloom_store::TreeId(tree_id))?;
            Ok(thread_by_reference(store, &tree, &thread_id)?.map(|pin| pin.0))
        })
        .await
    }

    /// Where `text` goes to continue a thread of `tree_id` named by its ThreadMind id (`main`, a
    /// pin's slug, or a pin's number): after its newest live message, or as the first message of
    /// a pin's sub-thread (or of the tree) that has none yet.
    pub async fn thread_send_target(
        &self,
        tree_id: i64,
        thread_id: String,
        text: String,
    ) -> anyhow::Result<SendTarget> {
        self.read("could not find the thread", move |store| {
            let tree = store.tree(pinloom_store::TreeId(tree_id))?;
            let thread = thread_by_reference(store, &tree, &thread_id)?;
            let end = store.newest_in_thread(tree.id, thread)?.map(|node| node.0);
            Ok(match (end, thread) {
                (Some(end), _) => {
                    SendTarget::Thread { tree_id, parent_id: Some(end), text, images: Vec::new() }
                }
                (None, Some(pin)) => {
                    SendTarget::Pin { pin_id: pin.0, parent_id: None, text, images: Vec::new() }
                }
                (None, None) => {
                    SendTarget::Thread { tree_id, parent_id: None, text, images: Vec::new() }
                }
            })
        })
        .await
    }

    /// The number of the tree `reference` names: a number is a tree's number, a global id a
    /// global id, and anything else a ThreadMind project id (a slug). Each is only what it looks
    /// like: a tree a team named "1", or named after another tree's global id, is never taken
    /// for tree 1 or for that tree (a slug made only of digits or shaped like an id is reached
    /// through its number).
    pub async fn tree_by_reference(&self, reference: String) -> anyhow::Result<i64> {
        self.read("could not find the tree", move |store| {
            let reference = reference.trim();
            let found = if !reference.is_empty() && reference.bytes().all(|b| b.is_ascii_digit()) {
                let number = reference.parse::<i64>().ok();
                match number.map(|number| store.tree(pinloom_store::TreeId(number))) {
                    Some(Ok(tree)) => Some(tree.id.0),
                    _ => None,
                }
            } else if looks_like_global_id(reference) {
                store.tree_by_global_id(reference)?.map(|tree| tree.0)
            } else {
                store.tree_by_slug(reference)?.map(|tree| tree.id.0)
            };
            found.ok_or_else(|| {
                missing(format!(
                    "there is no tree \"{reference}\"; `pinloom tree` lists them (number, project id, title, size, global id)"
                ))
            })
        })
        .await
    }
}

/// Whether `reference` is shaped like a global id (a UUID: 36 characters of hex digits and
/// dashes in the 8-4-4-4-12 groups).
fn looks_like_global_id(reference: &str) -> bool {
    let groups: Vec<&str> = reference.split('-').collect();
    groups.iter().map(|group| group.len()).eq([8, 4, 4, 4, 12])
        && groups.iter().all(|group| group.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// What a ThreadMind text is for: a message, or a thread of a tree.
enum Target {
    Node(i64),
    Thread(i64, String),
}

/// A thread of `tree` by its ThreadMind id (`main`, a pin's slug) or its pin's number.
fn thread_by_reference(
    store: &Store,
    tree: &Tree,
    reference: &str,
) -> anyhow::Result<Option<PinId>> {
    if let Some(thread) = chain::find_thread(store, tree, reference)? {
        return Ok(thread);
    }
    match reference.parse::<i64>() {
        Ok(number) if store.pin(PinId(number)).is_ok_and(|pin| pin.tree_id == tree.id) => {
            Ok(Some(PinId(number)))
        }
        _ => Err(missing(format!(
            "tree {} has no thread \"{reference}\"; `pinloom tree {}` lists them",
            tree.id.0, tree.id.0
        ))),
    }
}

fn node_thread(store: &Store, node: NodeId) -> anyhow::Result<(Tree, Option<PinId>)> {
    let node = store.node(node)?;
    Ok((store.tree(node.tree_id)?, node.pin_id))
}
