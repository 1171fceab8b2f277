//! Summaries written by a model: one thread's path, asked for at a token budget. The engine plans
//! with summaries at the depth budgets ([800, 500, 300, 150] by default); this asks a model for
//! one, with the system text placed as the model takes it (natively or injected) like any other
//! request. Storing it, with the summariser's name and the size of what it summarised, is the
//! store's part.

use pinloom_engine::profile::ModelProfile;
use pinloom_engine::render::single_turn;

use crate::error::ProviderError;
use crate::wire::{Endpoint, Sampling, Task, WireRequest, build};

/// The instruction a summariser gets; `{budget}` is replaced by the token budget.
pub const SUMMARY_INSTRUCTION: &str = "You write the summary of a conversation thread that a \
later model will read instead of the thread itself. Keep the goal, the decisions and their \
reasons, facts and figures, open questions, and any passage the person quoted; drop pleasantries \
and repetition. Write plain prose, in the thread's language, in at most {budget} tokens.";

/// The instruction that condenses a summary written on purpose (by the person, an agent, a file)
/// that is longer than the budget it is used at; `{budget}` is replaced by the budget.
pub const CONDENSE_INSTRUCTION: &str = "You are given a summary of a conversation thread that is \
longer than the room it must fit. Rewrite it in at most {budget} tokens, keeping its goal, \
decisions, facts, figures and open questions, in its own language and voice; add nothing that \
is not in it. Write plain prose.";

/// The request that asks `profile`'s model at `endpoint` to summarise `thread` (the path's
/// messages as text) in at most `budget` tokens, following `instruction` (usually
/// [`SUMMARY_INSTRUCTION`]; a person may write their own), in which `{budget}` becomes the budget.
/// The reply is capped at the budget, so an overlong summary stops rather than overruns; send it
/// with [`Provider::stream`](crate::Provider::stream).
pub fn summary_request(
    endpoint: &Endpoint,
    profile: &ModelProfile,
    instruction: &str,
    thread: &str,
    budget: u32,
) -> Result<WireRequest, ProviderError> {
    let instruction = instruction.replace("{budget}", &budget.to_string());
    let request = single_turn(&instruction, thread, profile);
    let sampling = Sampling { max_output_tokens: Some(budget), ..Sampling::default() };
    build(endpoint, profile, sampling, Task::Chat { request: &request, tools: &[] })
}
