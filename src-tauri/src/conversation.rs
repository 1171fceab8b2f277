//! The conversation loop's commands: threads and pins to show, sending with the reply streamed
//! over a channel, stopping a reply, previews, comparison and the budget panel. Each adapts one
//! application-layer use case.

use pinloom_app::json::{
    AncestorView, BackgroundRequestView, CompactionView, CompareReach, Comparison,
    DeletedThreadView, Exchange, FanOut, LaneAnswer, ModelProfile, NodeView, PinView, PlanView,
    RequestView, SendTarget, SliceView, SummaryView, ThreadMessage, ThreadView, TreeSpending,
};
use pinloom_app::{ApiError, FanOutLane, NodeAction, Receipt, ReplyEvent, RequestDiff};
use serde::Serialize;
use tauri::State;
use tauri::ipc::Channel;

use crate::state::AppState;

/// The person has started writing in a composer: the vocabularies a written message is counted
/// with load now, on a thread of their own, so its send does not wait for them (the window does
/// not load them at start: one only read holds neither).
#[tauri::command]
#[specta::specta]
pub(crate) async fn counters_load_ahead(state: State<'_, AppState>) -> Result<(), ApiError> {
    state.pinloom()?.load_counters_ahead();
    Ok(())
}

/// A piece of a reply as it streams to the window.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase", rename_all_fields = "camelCase", tag = "kind")]
pub(crate) enum ReplyPiece {
    /// More text.
    Text {
        /// The text.
        text: String,
    },
    /// The provider is busy; Pinloom tries again after a wait.
    Retrying {
        /// The try about to be made.
        attempt: u32,
        /// Seconds it waits first.
        wait_seconds: f64,
        /// Why.
        reason: String,
    },
    /// What has arrived so far is saved in the database: a crash now loses nothing before it.
    Saved {
        /// How many characters are saved.
        characters: u32,
    },
}

/// A piece of one model's reply in a fan-out, or that model's answer once it ends.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase", rename_all_fields = "camelCase", tag = "kind")]
pub(crate) enum LanePiece {
    /// A piece of the reply of the model at `lane`.
    Piece {
        /// The model's place among those asked, from 0.
        lane: u32,
        /// The piece.
        piece: ReplyPiece,
    },
    /// The model at `answer.lane` is done: its reply, or why there is none.
    Answered {
        /// What it answered (boxed: a whole exchange beside a piece of text).
        answer: Box<LaneAnswer>,
    },
}

/// Forwards the reply's events to the window's channel until the sender is dropped.
fn forward(channel: Channel<ReplyPiece>) -> tokio::sync::mpsc::UnboundedSender<ReplyEvent> {
    forward_as(channel, |piece| piece)
}

/// Forwards the reply's events to the window's channel, each wrapped by `wrap`, until the sender
/// is dropped.
fn forward_as<T: tauri::ipc::IpcResponse + Send + 'static>(
    channel: Channel<T>,
    wrap: impl Fn(ReplyPiece) -> T + Send + 'static,
) -> tokio::sync::mpsc::UnboundedSender<ReplyEvent> {
    let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel();
    tauri::async_runtime::spawn(async move {
        while let Some(event) = receiver.recv().await {
            let piece = match event {
                ReplyEvent::Text(text) => ReplyPiece::Text { text },
                ReplyEvent::Retrying { attempt, wait, reason } => {
                    ReplyPiece::Retrying { attempt, wait_seconds: wait.as_secs_f64(), reason }
                }
                ReplyEvent::Saved { characters } => {
                    ReplyPiece::Saved { characters: u32::try_from(characters).unwrap_or(u32::MAX) }
                }
            };
            // A closed window stops listening; the reply is still saved.
            if channel.send(wrap(piece)).is_err() {
                break;
            }
        }
    });
    sender
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn thread_view(
    state: State<'_, AppState>,
    tree_id: i64,
    node_id: Option<i64>,
) -> Result<ThreadView, ApiError> {
    Ok(state.pinloom()?.thread_view(tree_id, node_id).await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn pin_view(
    state: State<'_, AppState>,
    pin_id: i64,
    node_id: Option<i64>,
) -> Result<ThreadView, ApiError> {
    Ok(state.pinloom()?.pin_view(pin_id, node_id).await?)
}

/// Messages `first` to `first + count` of the thread ending at message `end_id`: the page
/// before or after those a column has.
#[tauri::command]
#[specta::specta]
pub(crate) async fn thread_page(
    state: State<'_, AppState>,
    end_id: i64,
    first: u32,
    count: u32,
) -> Result<Vec<ThreadMessage>, ApiError> {
    Ok(state.pinloom()?.thread_page(end_id, first, count).await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn reply_start(
    state: State<'_, AppState>,
    target: SendTarget,
    profile: String,
    request_id: u32,
    on_piece: Channel<ReplyPiece>,
) -> Result<Exchange, ApiError> {
    let pinloom = state.pinloom()?.clone();
    let cancel = state.streaming.start(request_id)?;
    let events = forward(on_piece);
    let result = pinloom.reply_to(target, profile, events, cancel).await;
    state.streaming.finish(request_id);
    Ok(result?)
}

/// Asks for 2–8 answers to one prompt at once (several models, or samples of one), each reply
/// streaming on `on_piece` tagged with its lane; `request_ids[lane]` stops that lane alone
/// through `reply_stop`.
#[tauri::command]
#[specta::specta]
pub(crate) async fn reply_fan_out(
    state: State<'_, AppState>,
    prompt: SendTarget,
    profiles: Vec<String>,
    request_ids: Vec<u32>,
    on_piece: Channel<LanePiece>,
) -> Result<FanOut, ApiError> {
    if profiles.len() != request_ids.len() {
        return Err(ApiError::invalid_input(
            "each model sent to needs a request id of its own to be stopped by",
        ));
    }
    let pinloom = state.pinloom()?.clone();
    let tokens = state.streaming.start_all(&request_ids)?;
    let lanes = profiles
        .into_iter()
        .zip(tokens)
        .enumerate()
        .map(|(lane, (profile, cancel))| {
            let lane = u32::try_from(lane).unwrap_or(u32::MAX);
            FanOutLane {
                profile,
                events: forward_as(on_piece.clone(), move |piece| LanePiece::Piece { lane, piece }),
                cancel,
            }
        })
        .collect();
    let answered = |answer: &LaneAnswer| {
        // A closed window stops listening; the replies are still saved.
        let _ = on_piece.send(LanePiece::Answered { answer: Box::new(answer.clone()) });
    };
    let result = pinloom.fan_out(prompt, lanes, answered).await;
    for request_id in request_ids {
        state.streaming.finish(request_id);
    }
    Ok(result?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn reply_stop(
    state: State<'_, AppState>,
    request_id: u32,
) -> Result<(), ApiError> {
    if let Some(token) = state.streaming.lock().get(&request_id) {
        token.cancel();
    }
    Ok(())
}

/// Pins a passage; `profile` (the window's chosen model) writes the summaries the pin's first
/// send needs, in the background, when the tree names no summariser.
#[tauri::command]
#[specta::specta]
#[allow(clippy::too_many_arguments)] // one argument per field the window sends
pub(crate) async fn pin_create(
    state: State<'_, AppState>,
    node_id: i64,
    start: u32,
    end: u32,
    text: String,
    title: String,
    profile: Option<String>,
) -> Result<PinView, ApiError> {
    Ok(state.pinloom()?.open_pin(node_id, start, end, text, title, profile).await?)
}

/// What a pin knows of its ancestry under `profile`; summaries not written yet start in the
/// background.
#[tauri::command]
#[specta::specta]
pub(crate) async fn pin_ancestry(
    state: State<'_, AppState>,
    pin_id: i64,
    profile: String,
) -> Result<Vec<AncestorView>, ApiError> {
    Ok(state.pinloom()?.pin_ancestry(pin_id, profile, true).await?)
}

/// The person's own summary of a thread up to a message: sends use it from now on.
#[tauri::command]
#[specta::specta]
pub(crate) async fn summary_write(
    state: State<'_, AppState>,
    tree_id: i64,
    pin_id: Option<i64>,
    up_to: i64,
    text: String,
) -> Result<SummaryView, ApiError> {
    Ok(state.pinloom()?.write_own_summary(tree_id, pin_id, up_to, text).await?)
}

/// The summariser writes a thread's summary again, now; sends use it from then on.
#[tauri::command]
#[specta::specta]
pub(crate) async fn summary_regenerate(
    state: State<'_, AppState>,
    tree_id: i64,
    pin_id: Option<i64>,
    up_to: i64,
    budget: u32,
    profile: String,
) -> Result<SummaryView, ApiError> {
    Ok(state.pinloom()?.regenerate_summary(tree_id, pin_id, up_to, budget, profile).await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn pin_close(
    state: State<'_, AppState>,
    pin_id: i64,
    result: String,
) -> Result<PinView, ApiError> {
    Ok(state.pinloom()?.close_pin(pin_id, result).await?)
}

/// A result for the pin written by `profile` from its thread, for the person to edit before
/// closing the pin with it; nothing is saved.
#[tauri::command]
#[specta::specta]
pub(crate) async fn pin_result_suggest(
    state: State<'_, AppState>,
    pin_id: i64,
    profile: String,
) -> Result<String, ApiError> {
    Ok(state.pinloom()?.suggest_pin_result(pin_id, None, profile).await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn threads_deleted(
    state: State<'_, AppState>,
    tree_id: i64,
) -> Result<Vec<DeletedThreadView>, ApiError> {
    Ok(state.pinloom()?.deleted_threads(tree_id).await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn thread_restore(
    state: State<'_, AppState>,
    pin_id: i64,
) -> Result<Vec<PinView>, ApiError> {
    Ok(state.pinloom()?.restore_thread(pin_id).await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn node_mark(
    state: State<'_, AppState>,
    node_id: i64,
    action: NodeAction,
) -> Result<NodeView, ApiError> {
    Ok(state.pinloom()?.mark_node(node_id, action).await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn context_preview(
    state: State<'_, AppState>,
    node_id: i64,
    profile: String,
    draft: Option<String>,
) -> Result<PlanView, ApiError> {
    // Without the request body: it is as long as the context (600 KB for a long thread), and the
    // page would parse and hold it on every refresh of the preview; `context_request` reads it
    // when the person shows the request.
    Ok(state.pinloom()?.preview(node_id, profile, draft).await?.without_body())
}

/// Where the request `context_preview` shows goes and its body, read when the person shows it.
#[tauri::command]
#[specta::specta]
pub(crate) async fn context_request(
    state: State<'_, AppState>,
    node_id: i64,
    profile: String,
) -> Result<RequestView, ApiError> {
    Ok(state.pinloom()?.preview_request(node_id, profile).await?)
}

/// The slices `first..first + count` of the plan `context_preview` shows for `node_id` under
/// `profile`, one line each: the members of a folded run.
#[tauri::command]
#[specta::specta]
pub(crate) async fn context_slices(
    state: State<'_, AppState>,
    node_id: i64,
    profile: String,
    first: u32,
    count: u32,
) -> Result<Vec<SliceView>, ApiError> {
    Ok(state.pinloom()?.preview_slices(node_id, profile, first, count).await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn context_preview_unsaved(
    state: State<'_, AppState>,
    node_id: i64,
    profile: ModelProfile,
) -> Result<PlanView, ApiError> {
    Ok(state.pinloom()?.preview_unsaved(node_id, profile).await?)
}

/// What reply `node_id`'s request was planned to hold, what was sent, and what the provider
/// counted; `None` for a message without one.
#[tauri::command]
#[specta::specta]
pub(crate) async fn reply_receipt(
    state: State<'_, AppState>,
    node_id: i64,
) -> Result<Option<Receipt>, ApiError> {
    Ok(state.pinloom()?.receipt(node_id).await?)
}

/// The requests Pinloom made on its own for tree `tree_id` (summaries, condensations,
/// compactions, suggested results), newest first, at most `limit`, without their bodies.
#[tauri::command]
#[specta::specta]
pub(crate) async fn requests_list(
    state: State<'_, AppState>,
    tree_id: i64,
    limit: u32,
) -> Result<Vec<BackgroundRequestView>, ApiError> {
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    Ok(state.pinloom()?.background_requests(Some(tree_id), limit, false).await?)
}

/// Compacts the thread of message `node_id` on its path to it, keeping the last `keep` turns
/// (the tree's setting when absent): the summariser writes the summary that stands for the rest.
#[tauri::command]
#[specta::specta]
pub(crate) async fn thread_compact(
    state: State<'_, AppState>,
    node_id: i64,
    keep: Option<u32>,
    profile: String,
) -> Result<CompactionView, ApiError> {
    Ok(state.pinloom()?.compact(node_id, keep, profile).await?)
}

/// Undoes compaction `id`: its messages are sent as they are again.
#[tauri::command]
#[specta::specta]
pub(crate) async fn compaction_undo(state: State<'_, AppState>, id: i64) -> Result<(), ApiError> {
    Ok(state.pinloom()?.undo_compaction(id).await?)
}

/// Background request `id` with its body as sent, when the person opens it.
#[tauri::command]
#[specta::specta]
pub(crate) async fn request_read(
    state: State<'_, AppState>,
    id: i64,
) -> Result<BackgroundRequestView, ApiError> {
    Ok(state.pinloom()?.background_request(id).await?)
}

/// How reply `node_id`'s request differs from the one before it on its path.
#[tauri::command]
#[specta::specta]
pub(crate) async fn request_diff(
    state: State<'_, AppState>,
    node_id: i64,
) -> Result<RequestDiff, ApiError> {
    Ok(state.pinloom()?.request_diff(node_id).await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn nodes_compare(
    state: State<'_, AppState>,
    left: i64,
    right: i64,
    profile: String,
    reach: CompareReach,
) -> Result<Comparison, ApiError> {
    Ok(state.pinloom()?.compare(left, right, profile, reach).await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn profiles_list(
    state: State<'_, AppState>,
) -> Result<Vec<ModelProfile>, ApiError> {
    Ok(state.pinloom()?.model_profiles().await?)
}

/// Enables a model profile that came with an imported file.
#[tauri::command]
#[specta::specta]
pub(crate) async fn profile_enable(
    state: State<'_, AppState>,
    name: String,
) -> Result<ModelProfile, ApiError> {
    Ok(state.pinloom()?.enable_model_profile(name).await?)
}

/// Deletes the model profile named `name`.
#[tauri::command]
#[specta::specta]
pub(crate) async fn profile_delete(
    state: State<'_, AppState>,
    name: String,
) -> Result<(), ApiError> {
    Ok(state.pinloom()?.delete_model_profile(name).await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn profile_save(
    state: State<'_, AppState>,
    profile: ModelProfile,
) -> Result<ModelProfile, ApiError> {
    Ok(state.pinloom()?.save_model_profile(profile).await?)
}

/// What tree `tree_id` cost: its replies and the requests made on their own.
#[tauri::command]
#[specta::specta]
pub(crate) async fn tree_spending(
    state: State<'_, AppState>,
    tree_id: i64,
) -> Result<TreeSpending, ApiError> {
    Ok(state.pinloom()?.tree_spending(tree_id).await?)
}
