//! The error every front end receives: a closed code to branch on and a message to show.

use pinloom_providers::ProviderError;
use pinloom_store::StoreError;
use serde::Serialize;

/// What kind of failure an [`ApiError`] is. Front ends branch on this, never on the message.
///
/// A code is added only when a front end treats it differently from the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub enum ErrorCode {
    /// The request was refused because of what the person typed; show it beside the input.
    InvalidInput,
    /// What was asked for does not exist (any more); refresh the view.
    NotFound,
    /// The database cannot be used (not a database, written by a newer Pinloom, or not openable);
    /// nothing else will work until the person acts on the message.
    DatabaseUnusable,
    /// A provider needs a key that is missing or was refused, or the keyring cannot be used: offer
    /// the provider's key settings.
    ProviderKey,
    /// A provider could not be reached or is busy (rate limit, overload, outage, timeout): the
    /// same request may work later, so offer to try again.
    ProviderUnavailable,
    /// A provider refused the request for a reason the person must act on (model not found,
    /// context too long, no credit, no completion endpoint): show the message.
    ProviderRefused,
    /// The context does not fit the model's budget and the tree's settings refuse to cut it
    /// (stop at the limit), or what may never be cut is over the budget: the message names what
    /// to exclude; offer the inspector, where it is listed.
    ContextOverBudget,
    /// The person stopped it.
    Cancelled,
    /// Git could not do what a sync needs (git missing, the remote unreachable or refusing, the
    /// sync folder written by a newer Pinloom): show the message; nothing saved here was lost.
    SyncFailed,
    /// Anything else: a bug or an environment failure.
    Internal,
}

/// A failure as it crosses to a front end: `{ code, message }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type, thiserror::Error)]
#[error("{message}")]
pub struct ApiError {
    /// What kind of failure it is.
    pub code: ErrorCode,
    /// What happened and what to do, for a person to read.
    pub message: String,
}

impl From<anyhow::Error> for ApiError {
    fn from(error: anyhow::Error) -> ApiError {
        let code = error
            .chain()
            .find_map(|cause| {
                if let Some(api) = cause.downcast_ref::<ApiError>() {
                    return Some(api.code);
                }
                if let Some(provider) = cause.downcast_ref::<ProviderError>() {
                    return Some(code_of_provider_error(provider));
                }
                cause.downcast_ref::<StoreError>().map(code_of_store_error)
            })
            .unwrap_or(ErrorCode::Internal);
        // `{:#}` joins the context chain ("could not add the message: tree 3 does not exist"), so
        // the person sees both what was being done and why it failed.
        ApiError { code, message: format!("{error:#}") }
    }
}

impl ApiError {
    /// A refusal because of what the person typed.
    pub fn invalid_input(message: impl Into<String>) -> ApiError {
        ApiError { code: ErrorCode::InvalidInput, message: message.into() }
    }

    /// Something asked for that is not there (any more).
    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError { code: ErrorCode::NotFound, message: message.into() }
    }
}

fn code_of_provider_error(error: &ProviderError) -> ErrorCode {
    // Every kind named, so a new one is decided here rather than defaulted.
    match error {
        ProviderError::WrongKey { .. }
        | ProviderError::MissingKey { .. }
        | ProviderError::KeyUnusable { .. }
        | ProviderError::KeyringUnavailable { .. } => ErrorCode::ProviderKey,
        ProviderError::Cancelled => ErrorCode::Cancelled,
        ProviderError::HttpClient { .. } => ErrorCode::Internal,
        ProviderError::RateLimited { .. }
        | ProviderError::Overloaded { .. }
        | ProviderError::Server { .. }
        | ProviderError::Unreachable { .. }
        | ProviderError::TimedOut { .. }
        | ProviderError::ReplyTooLong { .. }
        | ProviderError::StreamBroken { .. }
        | ProviderError::Malformed { .. } => ErrorCode::ProviderUnavailable,
        // An error inside a stream is retried as its cause would be; one that would not be is
        // the provider refusing.
        ProviderError::InStream { cause } => {
            if cause.retry().is_some() {
                ErrorCode::ProviderUnavailable
            } else {
                ErrorCode::ProviderRefused
            }
        }
        ProviderError::NoCredit { .. }
        | ProviderError::ContextTooLong { .. }
        | ProviderError::SystemUnsupported { .. }
        | ProviderError::ModelNotFound { .. }
        | ProviderError::Rejected { .. }
        | ProviderError::NoCompletionEndpoint { .. }
        | ProviderError::CompletionEndpointOff { .. }
        | ProviderError::ClosedWithoutReply { .. } => ErrorCode::ProviderRefused,
    }
}

fn code_of_store_error(error: &StoreError) -> ErrorCode {
    match error {
        StoreError::InvalidInput(_) | StoreError::TooDeep { .. } => ErrorCode::InvalidInput,
        StoreError::NotFound { .. } | StoreError::NoSuchProfile(_) | StoreError::Deleted { .. } => {
            ErrorCode::NotFound
        }
        // A cycle of parent links is damage in the file, not something the person typed.
        StoreError::Cycle { .. } | StoreError::BrokenTree { .. } => ErrorCode::Internal,
        StoreError::Open { .. }
        | StoreError::NotADatabase { .. }
        | StoreError::ForeignDatabase { .. }
        | StoreError::NewerSchema { .. } => ErrorCode::DatabaseUnusable,
        StoreError::Sqlite(_) => ErrorCode::Internal,
    }
}

#[cfg(test)]
mod tests {
    use anyhow::Context;
    use pinloom_providers::ProviderError;
    use pinloom_store::StoreError;

    use super::{ApiError, ErrorCode};

    #[test]
    fn store_errors_keep_their_code_under_context() {
        let error = Err::<(), _>(StoreError::NotFound { kind: "tree", id: 7 })
            .context("could not open the tree")
            .unwrap_err();
        let api = ApiError::from(error);
        assert_eq!(api.code, ErrorCode::NotFound);
        assert_eq!(
            api.message,
            "could not open the tree: tree 7 does not exist; it may have been deleted"
        );
    }

    #[test]
    fn provider_errors_say_whether_to_fix_the_key_try_again_or_read() {
        let code = |error: ProviderError| ApiError::from(anyhow::Error::new(error)).code;
        let missing = ProviderError::MissingKey { provider: "OpenAI", env: String::new() };
        assert_eq!(code(missing), ErrorCode::ProviderKey);
        let busy = ProviderError::Overloaded { provider: "Anthropic", detail: String::new() };
        assert_eq!(code(busy), ErrorCode::ProviderUnavailable);
        assert_eq!(
            code(ProviderError::NoCompletionEndpoint { provider: "Gemini" }),
            ErrorCode::ProviderRefused
        );
        assert_eq!(code(ProviderError::Cancelled), ErrorCode::Cancelled);
    }

    #[test]
    fn unclassified_errors_are_internal() {
        let api = ApiError::from(anyhow::anyhow!("disk on fire"));
        assert_eq!(api.code, ErrorCode::Internal);
    }

    #[test]
    fn crosses_as_code_and_message_json() {
        let api = ApiError::invalid_input("type a message first");
        let json = serde_json::to_value(&api).unwrap();
        assert_eq!(
            json,
            serde_json::json!({ "code": "invalidInput", "message": "type a message first" })
        );
    }
}
