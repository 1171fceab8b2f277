//! Ancestor-thread summaries, written ahead of need and never at the cost of a send.
//!
//! A summary of an ancestor thread covers it only up to the node the next thread hangs off, which
//! never changes, so it can be written once, early: when a pin is opened, every summary its first
//! send will need is written in the background, under the summariser and budgets then in force
//! (`Pinloom::prepare_pin`). A send that finds one still being written waits for that write
//! (never starts a second), within [`SUMMARY_WAIT`]; one that finds none starts it and waits the
//! same way. A summariser that fails, or is too slow, never fails the send: the plan carries the
//! thread's last messages instead (the engine's excerpt, labelled "summary not available"), and
//! the summary is tried again in the background ([`RETRY_AFTER`]).
//!
//! A summary written on purpose (by the person, an agent, a file) that is longer than the budget
//! it is used at is condensed by the summariser from its own text into a *fitted* version, kept
//! beside it; until then the engine cuts it at a sentence.
//!
//! Every write or failure is announced on [`SummaryJobs::landed`], so the window shows a summary
//! the moment it lands.

use std::time::{Duration, Instant};

use anyhow::Context;
use futures_util::FutureExt;
use futures_util::future::join_all;
use pinloom_engine::snapshot::FuseSource;
use pinloom_providers::WireRequest;
use pinloom_providers::summary::{CONDENSE_INSTRUCTION, summary_request};
use pinloom_store::{
    Author, BackgroundRequest, NodeId, PinId, RequestKind, Store, SummaryAuthor, SummaryKey,
    SummaryWrite, TreeId,
};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::base::engine_inputs::ModelChoice;
use crate::base::one_shot::Answer;
use crate::base::pinloom::Pinloom;
use crate::base::plan::{Planned, ProfileRef};
use crate::base::summary_jobs::{JobState, Outcome, SummaryJob};
use crate::error::ApiError;
use crate::json::{SummaryView, SummaryWriting, TreeSettings};
use crate::runtime::{blocking, now_ms};

/// What ends a summary that came back over its budget and was cut to fit.
pub const CUT_SUMMARY_NOTE: &str = " […summary cut to its budget]";

/// The longest a send waits for the summaries it needs before it goes with what it has (the
/// threads' last messages in place of the summaries not written by then).
pub(in crate::conversation) const SUMMARY_WAIT: Duration = Duration::from_secs(30);

/// When a failed summary is tried again in the background, after each failure in turn; a send
/// that needs it later tries again too.
pub(in crate::conversation) const RETRY_AFTER: [Duration; 3] =
    [Duration::from_secs(30), Duration::from_secs(120), Duration::from_secs(600)];

/// A failure this recent is not tried again by a send (it would only wait for the same failure);
/// the background retries go on.
const FRESH_FAILURE: Duration = Duration::from_secs(60);

impl Pinloom {
    /// Told the id of a tree whenever one of its summaries is written or fails: the window
    /// refreshes what shows them.
    pub fn summaries_landed(&self) -> broadcast::Receiver<i64> {
        self.summary_jobs.landed.subscribe()
    }

    /// The plan for answering `node` under `profile`, with the ancestor summaries it lacks written
    /// first ([`Pinloom::write_missing_summaries`]) and the plan made again when any was awaited;
    /// for a fused answer, the answers chosen to fuse after its own context.
    pub(in crate::conversation) async fn plan_writing_summaries(
        &self,
        node: NodeId,
        profile: &ProfileRef,
        fuse: &[FuseSource],
        cancel: &CancellationToken,
    ) -> anyhow::Result<Planned> {
        let planned = self.plan_fusing(node, profile, fuse.to_vec()).await?;
        if planned.plan.missing_summaries.is_empty()
            || self.write_missing_summaries(&planned, cancel).await? == 0
        {
            return Ok(planned);
        }
        // The first plan's path goes back to the cache before the second checks it out.
        drop(planned);
        self.plan_fusing(node, profile, fuse.to_vec()).await
    }

    /// Writes every summary `planned` lacks through the tree's summariser (the profile being
    /// sent to when none is set), waiting for writes already under way rather than starting
    /// others, for at most [`SUMMARY_WAIT`]. `cancel` (the person's Stop) ends the wait; the
    /// writes go on. Returns how many it waited for: the plan is made again then, with what was
    /// written, or with why not. A failure is not an error here (the plan carries the thread's
    /// last messages, and the summary is tried again later).
    pub(in crate::conversation) async fn write_missing_summaries(
        &self,
        planned: &Planned,
        cancel: &CancellationToken,
    ) -> anyhow::Result<usize> {
        let summarizer =
            planned.settings.summarizer.clone().unwrap_or_else(|| planned.choice.name.clone());
        let writes: Vec<Outcome> = missing_jobs(planned, &summarizer)
            .into_iter()
            .filter_map(|job| self.start_summary(job, Retry::Unless(FRESH_FAILURE)))
            .collect();
        if writes.is_empty() {
            return Ok(0);
        }
        let writes_started = writes.len();
        let all = join_all(writes);
        tokio::select! {
            () = cancel.cancelled() => {
                Err(anyhow::Error::new(pinloom_providers::ProviderError::Cancelled)
                    .context("stopped while the ancestor summaries were being written"))
            }
            finished = tokio::time::timeout(SUMMARY_WAIT, all) => Ok(match finished {
                Ok(outcomes) => outcomes.len(),
                // Too slow: the send goes with the threads' last messages, saying they are
                // being written; the writes go on.
                Err(_) => writes_started,
            }),
        }
    }

    /// Starts writing the summaries a first send in pin `pin_id` will need, in the background,
    /// with the tree's summariser, else `profile` (the model the window has chosen), else the
    /// model that wrote the pinned message, unless the tree writes them only when asked (or
    /// never). Nothing waits for them; each is announced on [`Pinloom::summaries_landed`] as it
    /// lands.
    pub async fn prepare_pin(&self, pin_id: i64, profile: Option<String>) -> anyhow::Result<()> {
        let this = self.clone();
        let chosen = blocking(move || this.summarizer_for_pin(PinId(pin_id), profile))
            .await
            .context("could not choose a summariser for the new pin")?;
        let Some((planning_profile, summarizer)) = chosen else { return Ok(()) };
        let planned = self.plan_first_in_pin(PinId(pin_id), &planning_profile).await?;
        let jobs = missing_jobs(&planned, &summarizer);
        drop(planned);
        self.start_summaries(jobs);
        Ok(())
    }

    /// What pin `pin_id` knows of its ancestry under `profile` (the window's chosen model): every
    /// ancestor thread with what a send from the pin carries of it. With `prepare`, summaries
    /// not written yet are started in the background (the window asks when it shows a pin).
    pub async fn pin_ancestry(
        &self,
        pin_id: i64,
        profile: String,
        prepare: bool,
    ) -> anyhow::Result<Vec<crate::json::AncestorView>> {
        let planned = self
            .plan_first_in_pin(PinId(pin_id), &profile)
            .await
            .context("could not read what the pin knows")?;
        let views = crate::base::plan::ancestry_views(&planned);
        let summarizer = planned.settings.summarizer.clone().unwrap_or(profile);
        let prepare = prepare && planned.settings.summary_writing == SummaryWriting::WhenPinned;
        let jobs = if prepare { missing_jobs(&planned, &summarizer) } else { Vec::new() };
        drop(planned);
        self.start_summaries(jobs);
        Ok(views)
    }

    /// Pins the passage `start..end` of message `node_id` as [`Pinloom::pin_range`] does, and
    /// starts writing the summaries the pin's first send will need, in the background, with
    /// `profile` (the window's chosen model) where the tree names no summariser.
    pub async fn open_pin(
        &self,
        node_id: i64,
        start: u32,
        end: u32,
        text: String,
        title: String,
        profile: Option<String>,
    ) -> anyhow::Result<crate::json::PinView> {
        let pin = self.pin_range(node_id, start, end, text, title).await?;
        self.prepare_pin_in_background(pin.id, profile);
        Ok(pin)
    }

    /// [`Pinloom::prepare_pin`] on a task of its own: what opening a pin starts and never waits
    /// for. A failure is logged; the first send writes what is still missing.
    pub fn prepare_pin_in_background(&self, pin_id: i64, profile: Option<String>) {
        let this = self.clone();
        tokio::spawn(async move {
            if let Err(error) = this.prepare_pin(pin_id, profile).await {
                tracing::warn!(pin = pin_id, error = %format!("{error:#}"), "could not prepare a new pin's summaries");
            }
        });
    }

    /// The profile to plan pin `pin`'s first send under and the summariser to write its
    /// summaries with; `None` when nothing says which model to use, or when the tree's summaries
    /// are not written as a pin opens. Runs on a blocking thread.
    fn summarizer_for_pin(
        &self,
        pin: PinId,
        profile: Option<String>,
    ) -> anyhow::Result<Option<(String, String)>> {
        let store = &self.store;
        let pin = store.pin(pin)?;
        let settings = TreeSettings::of_tree(store, pin.tree_id)?;
        if settings.summary_writing != SummaryWriting::WhenPinned {
            // Written when asked in the pin, or never: nothing starts as it opens.
            return Ok(None);
        }
        let writer = match pin.anchor_node_id {
            Some(anchor) => store
                .ancestor_path(anchor)?
                .iter()
                .rev()
                .find(|node| node.author == Author::Model)
                .and_then(|node| node.model.clone())
                .filter(|name| store.profile(name).is_ok()),
            None => None,
        };
        let planning = profile.or_else(|| settings.summarizer.clone()).or(writer);
        Ok(planning.map(|planning| {
            let summarizer = settings.summarizer.clone().unwrap_or_else(|| planning.clone());
            (planning, summarizer)
        }))
    }

    /// Starts each of `jobs` in the background (see [`Pinloom::start_summary`]); nothing waits.
    fn start_summaries(&self, jobs: Vec<SummaryJob>) {
        for job in jobs {
            self.start_summary(job, Retry::Unless(FRESH_FAILURE));
        }
    }

    /// Starts `job` unless it is under way (its write is returned to wait for) or, with
    /// `Retry::Unless(age)`, failed less than `age` ago (`None`: nothing to wait for).
    pub(in crate::conversation) fn start_summary(
        &self,
        job: SummaryJob,
        retry: Retry,
    ) -> Option<Outcome> {
        let mut jobs = self.summary_jobs.lock();
        let attempts = match jobs.get(&job) {
            Some(JobState::Writing { outcome, .. }) => return Some(outcome.clone()),
            Some(JobState::Failed { at, attempts, .. }) => {
                if let Retry::Unless(age) = retry
                    && at.elapsed() < age
                {
                    return None;
                }
                *attempts
            }
            None => 0,
        };
        let this = self.clone();
        let running = job.clone();
        let cancel = CancellationToken::new();
        let stop = cancel.clone();
        let handle = tokio::spawn(async move {
            let result = this
                .summarise_and_store(&running, false, &stop)
                .await
                .map(|_| ())
                .map_err(|error| format!("{error:#}"));
            if stop.is_cancelled() {
                // Stopped on purpose: kept in the list of requests, not tried again.
                this.summary_jobs.lock().remove(&running);
                this.snapshot_cache.forget_plans();
                let _ = this.summary_jobs.landed.send(running.tree.0);
            } else {
                this.summary_written(running, &result, attempts);
            }
            result
        });
        let outcome: Outcome = async move {
            handle.await.unwrap_or_else(|error| Err(format!("the summary's task stopped: {error}")))
        }
        .boxed()
        .shared();
        jobs.insert(job.clone(), JobState::Writing { outcome: outcome.clone(), cancel });
        drop(jobs);
        // A plan kept from before says "not written yet"; from now on it is being written.
        self.snapshot_cache.forget_plans();
        let _ = self.summary_jobs.landed.send(job.tree.0);
        Some(outcome)
    }

    /// Stops the summaries of tree `tree` being written that no open pin needs any more: a pin
    /// closed or deleted before anything was asked in it, when no other open pin hangs at the
    /// same place (or below one that does). Each stopped request is kept in the list of requests,
    /// said to be cancelled.
    pub(in crate::conversation) async fn cancel_unneeded_summaries(
        &self,
        tree: TreeId,
    ) -> anyhow::Result<()> {
        let pending: Vec<SummaryJob> = self
            .summary_jobs
            .lock()
            .iter()
            .filter(|(job, state)| job.tree == tree && matches!(state, JobState::Writing { .. }))
            .map(|(job, _)| job.clone())
            .collect();
        if pending.is_empty() {
            return Ok(());
        }
        let store = self.store.clone();
        let unneeded = blocking(move || -> anyhow::Result<Vec<SummaryJob>> {
            let mut unneeded = Vec::new();
            for job in pending {
                let anchored = store.pins_anchored_in(job.up_to)?;
                let mut needed = false;
                for pin in anchored.iter().filter(|pin| pin.parent_pin_id == job.thread) {
                    if open_at_or_below(&store, pin)? {
                        needed = true;
                        break;
                    }
                }
                if !needed {
                    unneeded.push(job);
                }
            }
            Ok(unneeded)
        })
        .await?;
        let jobs = self.summary_jobs.lock();
        for job in &unneeded {
            if let Some(JobState::Writing { cancel, .. }) = jobs.get(job) {
                cancel.cancel();
            }
        }
        Ok(())
    }

    /// Records how `job` ended, announces it, and schedules the next try after a failure.
    fn summary_written(&self, job: SummaryJob, result: &Result<(), String>, attempts: usize) {
        let tree = job.tree.0;
        {
            let mut jobs = self.summary_jobs.lock();
            match result {
                Ok(()) => {
                    jobs.remove(&job);
                }
                Err(message) => {
                    tracing::warn!(tree, error = %message, "an ancestor summary could not be written");
                    jobs.insert(
                        job.clone(),
                        JobState::Failed {
                            message: message.clone(),
                            at: Instant::now(),
                            attempts: attempts + 1,
                        },
                    );
                    if let Some(&wait) = RETRY_AFTER.get(attempts) {
                        let this = self.clone();
                        tokio::spawn(async move {
                            tokio::time::sleep(wait).await;
                            let still_failed = matches!(
                                this.summary_jobs.lock().get(&job),
                                Some(JobState::Failed { .. })
                            );
                            if still_failed {
                                this.start_summary(job, Retry::Now);
                            }
                        });
                    }
                }
            }
        }
        self.snapshot_cache.forget_plans();
        let _ = self.summary_jobs.landed.send(tree);
    }

    /// Asks the summariser for `job`'s summary and stores it (`chosen` when the person asked for
    /// it); `None` when there was nothing to write (the summary to condense was replaced or
    /// deleted meanwhile). `cancel` stops the request.
    async fn summarise_and_store(
        &self,
        job: &SummaryJob,
        chosen: bool,
        cancel: &CancellationToken,
    ) -> anyhow::Result<Option<pinloom_store::Summary>> {
        let this = self.clone();
        let reading = job.clone();
        let (summarizer, input, instruction) = blocking(move || {
            let summarizer = this.model_choice(&reading.summarizer)?;
            let settings = TreeSettings::of_tree(&this.store, reading.tree)?;
            // What the process writes on its own stops at the tree's daily limit; what the
            // person asked for does not.
            if !chosen
                && let Some(refused) =
                    settings.daily_limit_refusal(&this.store, reading.tree, now_ms())?
            {
                return Err(refused.into());
            }
            let (input, instruction) = match reading.condense {
                Some(source) => {
                    let Some(summary) = this.store.summary_by_id(source)? else {
                        return Ok((summarizer, None, String::new()));
                    };
                    (
                        SummaryInput::Condense { source, text: summary.text },
                        CONDENSE_INSTRUCTION.to_owned(),
                    )
                }
                None => (
                    SummaryInput::Thread {
                        transcript: thread_transcript(
                            &this.store,
                            reading.up_to,
                            &summarizer,
                            reading.budget,
                        )?,
                    },
                    settings.summary_instruction().to_owned(),
                ),
            };
            Ok((summarizer, Some(input), instruction))
        })
        .await
        .context("could not read what the summary is written from")?;
        let Some(input) = input else { return Ok(None) };
        let key = self.key_for(summarizer.provider).await?;
        let written = self
            .summarise(job, &summarizer, &instruction, input.text(), key.as_ref(), cancel)
            .await
            .with_context(|| format!("{} could not write it", summarizer.name))?;
        let store = self.store.clone();
        let snapshot_cache = self.snapshot_cache.clone();
        let job = job.clone();
        let tokenizer = summarizer.engine.tokenizer;
        blocking(move || {
            let write = SummaryWrite {
                chosen,
                ..SummaryWrite::model(
                    &written,
                    input.text().encode_utf16().count() as u64,
                    tokenizer.count(input.text()),
                    now_ms(),
                )
            };
            let stored = match &input {
                SummaryInput::Thread { .. } => {
                    let key = SummaryKey {
                        tree_id: job.tree,
                        pin_id: job.thread,
                        path_end: Some(job.up_to),
                        budget: Some(job.budget),
                        summarizer: job.summarizer.clone(),
                        fitted_from: None,
                    };
                    Some(store.set_summary(&key, &write)?)
                }
                SummaryInput::Condense { source, text } => {
                    store.set_fitted_summary(*source, text, job.budget, &job.summarizer, &write)?
                }
            };
            snapshot_cache.forget_plans();
            Ok(stored)
        })
        .await
        .context("could not save the summary")
    }

    /// Asks `summarizer` for `job`'s summary of `input`, until `cancel`. The request is kept,
    /// whatever its outcome, with what it was for, its tokens, cost and time (`pinloom requests`).
    async fn summarise(
        &self,
        job: &SummaryJob,
        summarizer: &ModelChoice,
        instruction: &str,
        input: &str,
        key: Option<&pinloom_providers::ApiKey>,
        cancel: &CancellationToken,
    ) -> anyhow::Result<String> {
        let budget = job.budget;
        let wire =
            summary_request(&summarizer.endpoint, &summarizer.engine, instruction, input, budget)?;
        let tokenizer = summarizer.engine.tokenizer;
        let planned = tokenizer.count(instruction) + tokenizer.count(input);
        // A summary is the process's own work, not the person's send: the person's Stop does not
        // end it; only `cancel` does, when no open pin needs it any more.
        let asked = self.ask_once(&wire, key, cancel).await;
        let written = match asked.answer() {
            Answer::Failed(_) if cancel.is_cancelled() => Err(
                "cancelled: the pins it was for were closed or deleted before anything was asked \
                 in them"
                    .to_owned(),
            ),
            Answer::Failed(error) | Answer::BrokenOff(error) => Err(error.to_string()),
            Answer::Empty => Err("the summariser answered with nothing".to_owned()),
            Answer::Text(text) => Ok(fit_summary(tokenizer, text, budget)),
        };
        let outcome = Sent {
            reply: asked.reply(),
            failure: written.as_ref().err().cloned(),
            started_at_ms: asked.started_at_ms,
            planned,
        };
        let purpose = Purpose {
            tree: job.tree,
            kind: match (job.condense, job.compaction) {
                (Some(_), _) => RequestKind::Condensation,
                (None, true) => RequestKind::Compaction,
                (None, false) => RequestKind::Summary,
            },
            thread: job.thread,
            up_to: job.up_to,
        };
        self.keep_request(purpose, summarizer, &wire, outcome).await;
        // A provider's failure goes on typed, so that its kind reaches the front end.
        match asked.sent {
            Err(error) => Err(error.into()),
            Ok(pinloom_providers::Reply { interruption: Some(interruption), .. }) => {
                Err(interruption.into())
            }
            Ok(_) => written.map_err(anyhow::Error::msg),
        }
    }

    /// Keeps the request made to `summarizer` for `purpose`. Keeping it never fails the work it
    /// served: a database that refuses is said in the log.
    pub(in crate::conversation) async fn keep_request(
        &self,
        purpose: Purpose,
        summarizer: &ModelChoice,
        wire: &WireRequest,
        sent: Sent<'_>,
    ) {
        let usage = sent.reply.map(|reply| reply.usage);
        let cost = match (&summarizer.prices, &usage) {
            (Some(prices), Some(usage)) => usage.input_tokens.and_then(|counted| {
                crate::base::cost::cost(*prices, counted, usage, usage.output_tokens)
            }),
            _ => None,
        };
        let request = BackgroundRequest {
            id: 0,
            tree_id: purpose.tree,
            kind: purpose.kind,
            model: summarizer.name.clone(),
            pin_id: purpose.thread,
            up_to: Some(purpose.up_to),
            planned_tokens: sent.planned,
            prompt_tokens: usage.as_ref().and_then(|usage| usage.input_tokens),
            reply_tokens: usage.as_ref().and_then(|usage| usage.output_tokens),
            cost_usd: cost.map(|cost| cost.total),
            started_at_ms: sent.started_at_ms,
            duration_ms: now_ms().saturating_sub(sent.started_at_ms),
            failure: sent.failure,
            body_json: Some(wire.body.to_string()),
        };
        let kept = self
            .write("could not keep the request", move |store| {
                Ok(store.log_background_request(&request)?)
            })
            .await;
        if let Err(error) = kept {
            tracing::warn!("{error:#}");
        }
    }

    /// Writes the person's own summary of thread `pin_id` (absent: the root thread) up to its
    /// message `up_to`: sends use it before any the summariser wrote for that point, fitted to
    /// each budget it is used at. The earlier text stays in the summary's log.
    pub async fn write_own_summary(
        &self,
        tree_id: i64,
        pin_id: Option<i64>,
        up_to: i64,
        text: String,
    ) -> anyhow::Result<SummaryView> {
        let text = text.trim().to_owned();
        if text.is_empty() {
            return Err(ApiError::invalid_input(
                "a summary cannot be empty: write one, or exclude the thread's messages instead",
            )
            .into());
        }
        let summary = self
            .write("could not save the summary", move |store| {
                let key = SummaryKey {
                    tree_id: TreeId(tree_id),
                    pin_id: pin_id.map(PinId),
                    path_end: Some(NodeId(up_to)),
                    budget: None,
                    summarizer: String::new(),
                    fitted_from: None,
                };
                let write = SummaryWrite::chosen(&text, SummaryAuthor::Person, now_ms());
                Ok(store.set_summary(&key, &write)?)
            })
            .await?;
        let _ = self.summary_jobs.landed.send(tree_id);
        Ok(summary.into())
    }

    /// Has the summariser write the summary of thread `pin_id` (absent: the root thread) up to
    /// `up_to` at `budget` again, now, and makes it the one sends use there, before any the
    /// person wrote earlier (which stays, in its log). `profile` is the summariser when the tree
    /// names none.
    pub async fn regenerate_summary(
        &self,
        tree_id: i64,
        pin_id: Option<i64>,
        up_to: i64,
        budget: u32,
        profile: String,
    ) -> anyhow::Result<SummaryView> {
        let thread = (TreeId(tree_id), pin_id.map(PinId));
        self.write_summary_now(thread, NodeId(up_to), budget, profile, false).await
    }

    /// Writes the summary of `thread` up to `up_to` at `budget` now, by the tree's summariser
    /// (`profile` when it names none), for a compaction when `compaction` says so.
    pub(in crate::conversation) async fn write_summary_now(
        &self,
        (tree, pin): (TreeId, Option<PinId>),
        up_to: NodeId,
        budget: u32,
        profile: String,
        compaction: bool,
    ) -> anyhow::Result<SummaryView> {
        let (tree_id, pin_id, up_to) = (tree.0, pin.map(|PinId(pin)| pin), up_to.0);
        if budget == 0 {
            return Err(
                ApiError::invalid_input("a summary's budget must be at least 1 token").into()
            );
        }
        let job = self
            .read("could not write the summary again", move |store| {
                let node = store.node(NodeId(up_to))?;
                if node.tree_id != TreeId(tree_id) || node.pin_id != pin_id.map(PinId) {
                    return Err(ApiError::invalid_input(format!(
                        "message {up_to} is not in the thread being summarised"
                    ))
                    .into());
                }
                let settings = TreeSettings::of_tree(store, TreeId(tree_id))?;
                Ok(SummaryJob {
                    tree: TreeId(tree_id),
                    thread: pin_id.map(PinId),
                    up_to: NodeId(up_to),
                    budget,
                    condense: None,
                    summarizer: settings.summarizer.unwrap_or(profile),
                    compaction,
                })
            })
            .await?;
        let summary = self
            .summarise_and_store(&job, true, &CancellationToken::new())
            .await
            .context("could not write the summary again")?
            .ok_or_else(|| anyhow::anyhow!("the summary was not written"))?;
        let _ = self.summary_jobs.landed.send(tree_id);
        Ok(summary.into())
    }

    /// The summaries written for thread `pin_id` (absent: the root thread), newest first.
    pub async fn summaries(
        &self,
        tree_id: i64,
        pin_id: Option<i64>,
    ) -> anyhow::Result<Vec<SummaryView>> {
        let summaries = self
            .read("could not read the summaries", move |store| {
                Ok(store.thread_summaries(TreeId(tree_id), pin_id.map(PinId))?)
            })
            .await?;
        Ok(summaries.into_iter().map(SummaryView::from).collect())
    }
}

/// What a background request was for: a summary of `thread` (`None`: the root thread) of
/// `tree` up to `up_to`, or its condensation.
pub(in crate::conversation) struct Purpose {
    pub(in crate::conversation) tree: TreeId,
    pub(in crate::conversation) kind: RequestKind,
    pub(in crate::conversation) thread: Option<PinId>,
    pub(in crate::conversation) up_to: NodeId,
}

/// The summaries `planned` lacks, each to be written by `summarizer`.
fn missing_jobs(planned: &Planned, summarizer: &str) -> Vec<SummaryJob> {
    SummaryJob::all_missing(planned.tree.id, &planned.plan.missing_summaries, summarizer)
}

/// How a background request went.
pub(in crate::conversation) struct Sent<'a> {
    /// The provider's reply, when there was one.
    pub(in crate::conversation) reply: Option<&'a pinloom_providers::Reply>,
    /// Why it failed, when it did.
    pub(in crate::conversation) failure: Option<String>,
    /// When it was sent.
    pub(in crate::conversation) started_at_ms: i64,
    /// The tokens Pinloom counted in what it sent.
    pub(in crate::conversation) planned: u64,
}

/// Whether [`Pinloom::start_summary`] tries a summary that failed again.
#[derive(Debug, Clone, Copy)]
pub(in crate::conversation) enum Retry {
    /// Yes.
    Now,
    /// Unless it failed less than this long ago.
    Unless(Duration),
}

/// What a summary is written from.
enum SummaryInput {
    /// The thread's messages.
    Thread { transcript: String },
    /// A chosen summary's text, to condense.
    Condense { source: i64, text: String },
}

impl SummaryInput {
    fn text(&self) -> &str {
        match self {
            SummaryInput::Thread { transcript } => transcript,
            SummaryInput::Condense { text, .. } => text,
        }
    }
}

/// A summary cut to its budget when the model overran it, ending with a visible note.
pub(in crate::conversation) fn fit_summary(
    tokenizer: pinloom_engine::tokens::Tokenizer,
    text: &str,
    budget: u32,
) -> String {
    if tokenizer.count(text) <= u64::from(budget) {
        return text.to_owned();
    }
    let room = u64::from(budget).saturating_sub(tokenizer.count(CUT_SUMMARY_NOTE));
    format!("{}{CUT_SUMMARY_NOTE}", tokenizer.head_within(text, room))
}

/// The messages of `up_to`'s thread up to it, as the transcript a summariser reads, leaving out
/// what the person excluded or deleted.
///
/// A thread longer than the summariser's window (a long root thread of an imported tree) starts
/// from the newest summary already written of it at an earlier point of this path, followed by
/// the messages since, so its start is carried by that summary rather than lost; the newest
/// messages that fit are kept when even that is too long, and, with no earlier summary, after a
/// line saying the start was left out.
fn thread_transcript(
    store: &Store,
    up_to: NodeId,
    summarizer: &ModelChoice,
    budget: u32,
) -> anyhow::Result<String> {
    let thread: Vec<pinloom_store::Node> = store
        .thread_tail(up_to)?
        .into_iter()
        .filter(|node| !node.excluded && node.pruned_at_ms.is_none())
        .collect();
    let whole = transcript_of(&thread);
    // Room for the transcript: the window, less the reply (the summary), the instruction and
    // the request's framing.
    let engine = &summarizer.engine;
    let tokenizer = engine.tokenizer;
    let room = u64::from(engine.context_window.saturating_sub(budget)).saturating_sub(1_024);
    if tokenizer.count(&whole) <= room {
        return Ok(whole);
    }
    let Some(first) = thread.first() else { return Ok(whole) };
    // The newest summary of this thread ending at one of its earlier messages on this path.
    let place = |end: NodeId| thread.iter().position(|node| node.id == end);
    let earlier = store
        .thread_summaries(first.tree_id, first.pin_id)?
        .into_iter()
        .filter(|summary| {
            summary.key.fitted_from.is_none()
                && summary.stale.is_none()
                && !summary.text.trim().is_empty()
        })
        .filter_map(|summary| {
            let at = place(summary.key.path_end?)?;
            (thread[at].id != up_to).then_some((at, summary))
        })
        .max_by_key(|(at, summary)| (*at, summary.updated_at_ms));
    if let Some((at, summary)) = earlier {
        let opening = format!(
            "[A summary of the thread up to an earlier point:]\n{}\n\n[What followed:]\n",
            summary.text.trim()
        );
        let since = transcript_of(&thread[at + 1..]);
        let left = room.saturating_sub(tokenizer.count(&opening));
        let since = if tokenizer.count(&since) <= left {
            since.as_str()
        } else {
            tokenizer.tail_within(&since, left).trim_start()
        };
        return Ok(format!("{opening}{since}"));
    }
    const LEFT_OUT: &str =
        "[The start of the thread is left out: it does not fit the summariser's window.]\n\n";
    let tail = tokenizer.tail_within(&whole, room.saturating_sub(tokenizer.count(LEFT_OUT)));
    Ok(format!("{LEFT_OUT}{}", tail.trim_start()))
}

/// Messages as a summariser reads them: who wrote each, then its text, a blank line between.
fn transcript_of(nodes: &[pinloom_store::Node]) -> String {
    let mut out = String::new();
    for node in nodes {
        let who = match node.author {
            Author::Human => "Person",
            Author::Model => "Model",
            Author::Tool => "Tool",
        };
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(who);
        out.push_str(": ");
        out.push_str(&node.text);
    }
    out
}

/// Whether `pin`, or a pin opened from it or below, is open (neither closed nor deleted): one a
/// summary of where it hangs is still written for.
fn open_at_or_below(store: &Store, pin: &pinloom_store::Pin) -> anyhow::Result<bool> {
    if pin.deleted_at_ms.is_some() {
        return Ok(false);
    }
    if pin.closed_at_ms.is_none() {
        return Ok(true);
    }
    for child in store.child_pins(pin.tree_id, Some(pin.id))? {
        if open_at_or_below(store, &child)? {
            return Ok(true);
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use pinloom_engine::tokens::Tokenizer;

    use super::{CUT_SUMMARY_NOTE, fit_summary};

    #[test]
    fn an_overlong_summary_is_cut_to_its_budget_with_a_note() {
        let long = "Meanders grow as the outer bank erodes. ".repeat(40);
        let fitted = fit_summary(Tokenizer::O200k, &long, 50);
        assert!(Tokenizer::O200k.count(&fitted) <= 50, "{fitted}");
        assert!(fitted.ends_with(CUT_SUMMARY_NOTE));
        assert!(fitted.starts_with("Meanders grow"));
        assert_eq!(fit_summary(Tokenizer::O200k, "Short.", 50), "Short.");
    }
}
