//! What Pinloom's headless session adds to ThreadMind's tools: a thread's messages with their
//! numbers, pinning a passage of one (a sub-thread that knows its anchor), closing a pin with its
//! result, the model profiles, and the context a model would be sent, with what was cut and why.

use pinloom_store::{Author, NodeId, ROOT_THREAD_SLUG, Workspace};

use super::session::{NO_PROJECT, ThreadMindSession, active, missing, named_thread, refuse};
use super::{chain, thread_list};
use crate::base::pinloom::Pinloom;
use crate::base::words::{counted, plural};
use crate::error::ApiError;
use crate::json::{PlanFormat, PlanView, Provenance};
use crate::runtime::now_ms;

impl ThreadMindSession {
    /// The messages of `thread_id` (the active thread when absent) on its newest branch, each
    /// with its number, author and the pins opened on it.
    pub async fn thread_messages(&self, thread_id: Option<String>) -> anyhow::Result<String> {
        self.run(false, move |store, folder| {
            let active = active(store, folder)?.ok_or_else(|| refuse(NO_PROJECT))?;
            let (thread_id, thread) = named_thread(store, &active, thread_id)?;
            let path = chain::thread_path(store, &active.tree, thread, None)?;
            if path.is_empty() {
                return Ok(format!("Thread \"{thread_id}\" has no messages yet."));
            }
            let mut out = format!("Thread \"{thread_id}\" ({} messages):", path.len());
            for node in &path {
                let who = match node.author {
                    Author::Human => "user",
                    Author::Model => "assistant",
                    Author::Tool => "tool",
                };
                let mut notes = Vec::new();
                if node.excluded {
                    notes.push("excluded from context".to_owned());
                }
                let pins: Vec<String> = store
                    .pins_anchored_in(node.id)?
                    .into_iter()
                    .map(|pin| format!("\"{}\"", pin.slug))
                    .collect();
                if !pins.is_empty() {
                    notes.push(format!("pinned as {}", pins.join(", ")));
                }
                let notes = if notes.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", notes.join("; "))
                };
                out.push_str(&format!("\n\n#{} {who}{notes}:\n{}", node.id.0, node.text));
            }
            Ok(out)
        })
        .await
    }

    /// Pins `passage` of message `node_id` and opens its sub-thread, made active. `start` (in
    /// UTF-16 units, as a browser selection counts) chooses among several occurrences.
    pub async fn pin_create(
        &self,
        node_id: i64,
        passage: String,
        start: Option<u32>,
        title: Option<String>,
    ) -> anyhow::Result<String> {
        self.run(true, move |store, folder| {
            let active = active(store, folder)?.ok_or_else(|| refuse(NO_PROJECT))?;
            let node = store.node(NodeId(node_id))?;
            if node.tree_id != active.tree.id {
                let tree = store.tree(node.tree_id)?;
                return Err(refuse(format!(
                    "message {node_id} is in project \"{}\", not the active one; switch to it with project_switch first",
                    tree.slug
                )));
            }
            let length = passage.encode_utf16().count() as u32;
            let start = match start {
                Some(start) => start,
                None => {
                    let found = occurrences(&node.text, &passage);
                    match found.as_slice() {
                        [only] => *only,
                        [] => {
                            return Err(refuse(format!(
                                "message {node_id} does not contain {passage:?}; copy the passage exactly as the message has it"
                            )));
                        }
                        several => {
                            return Err(refuse(format!(
                                "{passage:?} appears {} times in message {node_id} (at UTF-16 offsets {}); pass `start` to choose one",
                                several.len(),
                                several.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
                            )));
                        }
                    }
                }
            };
            let pin = store.pin_range(
                node.id,
                start,
                start.saturating_add(length),
                &passage,
                title.as_deref().unwrap_or(""),
                now_ms(),
            )?;
            store.set_workspace(
                folder,
                Workspace { tree_id: Some(active.tree.id), pin_id: Some(pin.id) },
                now_ms(),
            )?;
            let parent = chain::thread_slug(store, pin.parent_pin_id)?;
            let list = thread_list(store, &active.tree, Some(pin.id))?;
            Ok(format!(
                "Pinned {passage:?} of message {node_id} as thread \"{}\" under \"{parent}\".\n\n{list}",
                pin.slug
            ))
        })
        .await
    }

    /// Closes pin `thread_id` (the active thread when absent) with its result, which its parent
    /// thread then shows; closing again replaces the result.
    pub async fn pin_close(
        &self,
        thread_id: Option<String>,
        result: String,
    ) -> anyhow::Result<String> {
        self.run(true, move |store, folder| {
            let active = active(store, folder)?.ok_or_else(|| refuse(NO_PROJECT))?;
            let thread_id = thread_id.unwrap_or(active.thread_slug);
            if thread_id == ROOT_THREAD_SLUG {
                return Err(refuse(
                    "the main thread is not a pin and has no parent to hand a result to; close one of its sub-threads",
                ));
            }
            let pin = store
                .pin_by_slug(active.tree.id, &thread_id)?
                .ok_or_else(|| missing(format!("Thread \"{thread_id}\" not found")))?;
            let pin = store.close_pin(pin.id, result.trim(), now_ms())?;
            let parent = chain::thread_slug(store, pin.parent_pin_id)?;
            Ok(format!("Thread \"{thread_id}\" closed; its result now shows in \"{parent}\"."))
        })
        .await
    }

    /// The model profiles a context can be assembled under.
    pub async fn profile_list(&self) -> anyhow::Result<String> {
        let profiles = self.pinloom.model_profiles().await?;
        if profiles.is_empty() {
            return Ok("No model profiles. Add one in Pinloom's budget panel.".to_owned());
        }
        Ok(profiles
            .iter()
            .map(|profile| {
                let summary = format!(
                    "{} {}, window {} tokens, {} kept for the reply",
                    profile.provider, profile.model_id, profile.context_window, profile.reserve
                );
                match &profile.imported_from {
                    // The file's words, quoted as what they are: it cannot be used until enabled.
                    Some(file) => format!(
                        "- {:?} (came with the file {file:?}; not enabled, so nothing is planned \
                         for or sent to it until the person enables it in Pinloom): {summary}",
                        profile.name
                    ),
                    None => format!("- {}: {summary}", profile.name),
                }
            })
            .collect::<Vec<_>>()
            .join("\n"))
    }

    /// What a send from message `node_id` (the newest of `thread_id`, or of the active thread)
    /// would carry under model profile `profile` (the first by name when absent), and what was
    /// cut to fit and why. Nothing is sent.
    pub async fn context_assemble(
        &self,
        thread_id: Option<String>,
        node_id: Option<i64>,
        profile: Option<String>,
        format: PlanFormat,
    ) -> anyhow::Result<String> {
        let node = match node_id {
            Some(node) => node,
            None => {
                self.run(false, move |store, folder| {
                    let active = active(store, folder)?.ok_or_else(|| refuse(NO_PROJECT))?;
                    let (thread_id, thread) = named_thread(store, &active, thread_id)?;
                    let newest = store.newest_in_thread(active.tree.id, thread)?.ok_or_else(|| {
                        refuse(format!(
                            "thread \"{thread_id}\" has no messages yet: a plan is made for a message; context_get shows its summaries"
                        ))
                    })?;
                    Ok(newest.0)
                })
                .await?
            }
        };
        // An agent must not read a refused plan as a request that is fine: the refusal comes
        // back as an error result, carrying the report (what to exclude) or the plan.
        let (text, refused) = self.pinloom.plan_output(node, profile, format).await?;
        if refused {
            return Err(ApiError {
                code: crate::error::ErrorCode::ContextOverBudget,
                message: text,
            }
            .into());
        }
        Ok(text)
    }
}

impl Pinloom {
    /// What a send from message `node_id` would carry under model profile `profile` (the first
    /// by name when absent), shown as `format`. Nothing is sent.
    pub async fn plan_text(
        &self,
        node_id: i64,
        profile: Option<String>,
        format: PlanFormat,
    ) -> anyhow::Result<String> {
        Ok(self.plan_output(node_id, profile, format).await?.0)
    }

    /// [`Pinloom::plan_text`], and whether the plan is refused (the profile stops at the limit
    /// and the context does not fit). A refused plan has no request: `Request` fails with the
    /// refusal.
    pub(in crate::threadmind) async fn plan_output(
        &self,
        node_id: i64,
        profile: Option<String>,
        format: PlanFormat,
    ) -> anyhow::Result<(String, bool)> {
        let profile = match profile {
            Some(profile) => profile,
            // The first the person uses: never one that came with a file and is not enabled.
            None => self
                .model_profiles()
                .await?
                .into_iter()
                .find(|profile| profile.imported_from.is_none())
                .map(|profile| profile.name)
                .ok_or_else(|| {
                    refuse("there are no model profiles: add one in Pinloom's budget panel")
                })?,
        };
        let plan = self.preview(node_id, profile, None).await?;
        let refused = plan.refusal.is_some();
        let text = match format {
            PlanFormat::Report => plan_report(&plan),
            PlanFormat::Plan => serde_json::to_string_pretty(&plan)?,
            // A refused plan has no request: saying so is the answer, never a body.
            PlanFormat::Request => match &plan.refusal {
                Some(refusal) => {
                    return Err(ApiError {
                        code: crate::error::ErrorCode::ContextOverBudget,
                        message: format!("no request: {refusal}"),
                    }
                    .into());
                }
                None => plan.body.unwrap_or_default(),
            },
        };
        Ok((text, refused))
    }
}

/// What the report says of how the request was assembled: a compaction of the thread's older
/// part, task frames.
fn assembly_notes(plan: &PlanView) -> String {
    let mut notes = String::new();
    if let Some(compaction) = &plan.compaction {
        notes.push_str(&match (&compaction.stale, compaction.first) {
            (Some(why), _) => format!(
                "\nThe compaction up to message #{} is stale: it was {why}, so the messages are \
                 sent as they are; compact the thread again (`pinloom compact`) or undo it \
                 (`pinloom uncompact {}`).\n",
                compaction.up_to, compaction.id
            ),
            (None, first) => format!(
                "\nMessages #{}–#{} ({}) are compacted into {} tokens by {}{}: `pinloom uncompact \
                 {}` sends them as they are again.\n",
                first.unwrap_or(compaction.up_to),
                compaction.up_to,
                compaction.messages,
                compaction.tokens,
                compaction.written_by,
                compaction
                    .reason
                    .as_ref()
                    .map(|reason| format!(" (the summary is left out: {reason})"))
                    .unwrap_or_default(),
                compaction.id
            ),
        });
    }
    if let Some(frames) = &plan.task_frames {
        notes.push_str(&format!(
            "\nAssembled as task frames (the tree's settings): the main thread stands as its goal, \
             its first message, in at most {} % of the budget; the summaries of the threads above \
             in at most {} %; closed sibling pins' results in at most {} %; the thread itself has \
             the rest.\n",
            frames.root_goal_percent, frames.path_summaries_percent, frames.sibling_results_percent
        ));
    }
    notes
}

/// A plan as text: the budget, what the message knows of its ancestry, what goes in, and what
/// was cut and why, the first to be cut first.
fn plan_report(plan: &PlanView) -> String {
    let mut out = format!(
        "Context for message {} under \"{}\": {} of {} tokens ({}); {} kept free for the reply, \
         which is what the request asks for at most.\n",
        plan.node_id, plan.profile, plan.used, plan.available, plan.tokenizer, plan.reply_limit
    );
    if let Some(refusal) = &plan.refusal {
        out.push_str(&format!(
            "\nRefused: {refusal}\nNothing is sent. What follows is what truncation would keep.\n"
        ));
    }
    if let Some(warning) = &plan.provider_cut {
        out.push_str(&format!("\nWarning: {warning}\n"));
    }
    out.push_str(&assembly_notes(plan));
    if !plan.ancestry.is_empty() {
        out.push_str("\nWhat it knows of its ancestry, root first:\n");
        for ancestor in &plan.ancestry {
            out.push_str(&format!("  - {}\n", describe_ancestor(ancestor)));
        }
    }
    out.push_str("\nIncluded, in the order sent:\n");
    // Search hits are listed last in the plan and sent right before the prompt.
    let included: Vec<_> = plan.slices.iter().filter(|slice| slice.included).collect();
    let (recalled, rest): (Vec<_>, Vec<_>) =
        included.into_iter().partition(|slice| slice.kind == "searchResult");
    let prompt_at = rest.iter().position(|slice| slice.kind == "prompt").unwrap_or(rest.len());
    let in_order = rest[..prompt_at].iter().chain(&recalled).chain(&rest[prompt_at..]).copied();
    for slice in in_order {
        let kept = if slice.kept { " [kept]" } else { "" };
        let cut =
            slice.cut_from.map(|whole| format!(" [cut from {whole} tokens]")).unwrap_or_default();
        out.push_str(&format!("  - {}{kept}{cut}\n", describe_slice(slice)));
    }
    let mut cut: Vec<_> = plan.slices.iter().filter(|slice| !slice.included).collect();
    // The engine cuts the highest priority number first; within one, the plan's order.
    cut.sort_by_key(|slice| std::cmp::Reverse(slice.priority));
    if cut.is_empty() {
        out.push_str("\nNothing was cut.\n");
    } else {
        out.push_str("\nCut, by priority (the highest number is cut first; 1 and 2 never are):\n");
        for slice in cut {
            let reason = slice.reason.as_deref().unwrap_or("unknown");
            out.push_str(&format!("  - {} — {reason}\n", describe_slice(slice)));
        }
    }
    if plan.omitted_messages > 0 && plan.small_budget.is_none() {
        out.push_str(&format!(
            "\nA marker stands for {} messages left out of the middle.\n",
            plan.omitted_messages
        ));
    }
    if plan.kept_start > 0 {
        out.push_str(&format!(
            "The thread's first {} kept: truncateMiddle keeps the start of a thread (where its \
             question is usually asked) before the older middle.\n",
            counted(plan.kept_start as usize, "message is", "messages are")
        ));
    }
    if let Some(room) = plan.small_budget {
        out.push_str(&format!(
            "\nThe budget is small ({room} tokens for the history beside what is never cut): \
             truncateMiddle left out {} messages and sent the newest that fit, with no marker, \
             kept start or step, each of which would have cost a recent turn.\n",
            plan.omitted_messages
        ));
    } else if let Some(tokens) = plan.start_given_up {
        out.push_str(&format!(
            "The thread's first turn ({tokens} tokens) is not kept: truncateMiddle keeps it only \
             whole, and only when it fits in a quarter of the history's room; the newest \
             messages have that room instead.\n"
        ));
    }
    let unused = plan.available.saturating_sub(plan.used);
    if let Some(step) = &plan.step_cut {
        out.push_str(&format!(
            "{unused} tokens are left unused: truncateMiddle cuts in steps of {} tokens (a share \
             of the history's room), so the start of the request stays the same from one send to \
             the next and the provider's prompt cache keeps hitting; the step left out {} ({} \
             tokens) that would have fitted. A step of 0 fills the budget instead: the tree's \
             settings or the model's Budget → Cut in steps of, or `pinloom settings --tree T \
             --step 0`.\n",
            step.step_tokens,
            plural(step.messages as usize, "message"),
            step.tokens
        ));
    }
    if plan.missing_summaries > 0 {
        out.push_str(&format!(
            "\n{} not written yet: the summariser writes {} before a send, and a send that \
             cannot wait carries the listed stand-ins.\n",
            counted(plan.missing_summaries as usize, "summary is", "summaries are"),
            if plan.missing_summaries == 1 { "it" } else { "them" }
        ));
    }
    if plan.refusal.is_none() {
        out.push_str(&format!("\nRequest: POST {}", plan.url));
    }
    out
}

/// One line of the report's list of slices: what, where from, tokens and priority, the start of
/// its text; a folded run says how many messages it stands for and which.
fn describe_slice(slice: &crate::json::SliceView) -> String {
    let many = match slice.source.as_str() {
        "node" => "messages".to_owned(),
        "annotation" => "notes".to_owned(),
        "retrieval" | "addedSearchHit" => "search hits".to_owned(),
        "picked" => "picked messages".to_owned(),
        "pickedSummary" => "picked branches' summaries".to_owned(),
        other => format!("{other}s"),
    };
    let source = match (slice.source_id, slice.count) {
        (Some(first), count) if count > 1 => {
            let last = slice.last_source_id.map_or(String::new(), |last| format!("–#{last}"));
            format!("{count} {many}, #{first}{last}")
        }
        (Some(id), _) => format!("{} {id}", slice.source),
        (None, count) if count > 1 => format!("{count} {many}"),
        (None, _) => slice.source.clone(),
    };
    let preview: String = slice.preview.split_whitespace().collect::<Vec<_>>().join(" ");
    let preview: String = preview.chars().take(60).collect();
    // The kind already says where settings, attachments, summaries and anchors come from;
    // what needs saying is that the person put a slice there by hand.
    let whose = match slice.provenance {
        Provenance::AddedByPerson => ", added by you",
        _ => "",
    };
    let what = if slice.count > 1 { "from" } else { "" };
    let preview = if what.is_empty() { preview } else { format!("{what} {preview}") };
    format!(
        "{} ({source}{whose}), {} tokens, priority {}: {preview}",
        slice.kind, slice.tokens, slice.priority
    )
}

/// One ancestor thread as the report lists it.
fn describe_ancestor(ancestor: &crate::json::AncestorView) -> String {
    use crate::json::{AncestorState, SummaryAuthor};
    let place = match ancestor.distance {
        1 => "the parent thread".to_owned(),
        n => format!("{n} threads up"),
    };
    let whose = |writer: Option<SummaryAuthor>| match writer {
        Some(SummaryAuthor::Person) => "your summary".to_owned(),
        Some(SummaryAuthor::Agent) => "an agent's summary".to_owned(),
        Some(SummaryAuthor::File) => "the imported file's summary".to_owned(),
        Some(SummaryAuthor::Model) | None => match &ancestor.summarizer {
            Some(model) => format!("the summary {model} wrote"),
            None => "a summary".to_owned(),
        },
    };
    let whole = if ancestor.whole_thread { " (of the whole thread)" } else { "" };
    let what = match ancestor.state {
        AncestorState::Summary => format!("{}{whole}", whose(ancestor.written_by)),
        AncestorState::Fitted => format!(
            "{}{whole}, {} tokens as written, fitted to its budget by {}",
            whose(ancestor.written_by),
            ancestor.written_tokens.unwrap_or(0),
            ancestor.summarizer.as_deref().unwrap_or("the summariser")
        ),
        AncestorState::Cut => format!(
            "{}{whole}, {} tokens as written, cut at a sentence to fit its budget{}",
            whose(ancestor.written_by),
            ancestor.written_tokens.unwrap_or(0),
            if ancestor.pending { " (a fitted one is being written)" } else { "" }
        ),
        AncestorState::Excerpt => format!(
            "{}; its last messages before the branching point, verbatim",
            ancestor.unavailable.as_deref().unwrap_or("summary not available")
        ),
        AncestorState::RootGoal => "its first message, the goal (task frames)".to_owned(),
    };
    let sent = match &ancestor.reason {
        None => format!("{} tokens sent", ancestor.tokens),
        Some(reason) => format!("left out ({reason}), {} tokens", ancestor.tokens),
    };
    format!(
        "\u{201c}{}\u{201d} ({place}, budget {}): {what}; {sent}",
        ancestor.title, ancestor.budget
    )
}

/// Where `passage` starts in `text`, in UTF-16 units, for every occurrence.
fn occurrences(text: &str, passage: &str) -> Vec<u32> {
    if passage.is_empty() {
        return Vec::new();
    }
    text.match_indices(passage)
        .map(|(byte, _)| text[..byte].encode_utf16().count() as u32)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{describe_slice, occurrences};
    use crate::json::{Provenance, SliceView};

    fn line(kind: &str, source_id: Option<i64>, count: u32, last: Option<i64>) -> SliceView {
        SliceView {
            kind: kind.into(),
            source: "node".into(),
            provenance: Provenance::Path,
            source_id,
            priority: 9,
            tokens: 31_621,
            included: false,
            reason: Some("truncated".into()),
            cut_from: None,
            kept: false,
            preview: "Bend river levee".into(),
            exclude_to_fit: false,
            count,
            first: 4,
            last_source_id: last,
        }
    }

    #[test]
    fn a_folded_line_says_how_many_messages_it_stands_for_and_which() {
        assert_eq!(
            describe_slice(&line("oldHistory", Some(3), 307, Some(309))),
            "oldHistory (307 messages, #3–#309), 31621 tokens, priority 9: from Bend river levee"
        );
        assert_eq!(
            describe_slice(&line("oldHistory", Some(3), 1, None)),
            "oldHistory (node 3), 31621 tokens, priority 9: Bend river levee"
        );
    }

    #[test]
    fn occurrences_count_utf16_units() {
        assert_eq!(occurrences("🌊 bank, bank", "bank"), [3, 9]);
        assert_eq!(occurrences("abc", ""), Vec::<u32>::new());
    }
}
