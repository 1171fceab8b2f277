//! A continuation's tokens, as the loom shows them: each generated token with its probability
//! and the likeliest others at its place; choosing another branches the document there.

use pinloom_providers::TokenChoice;
use pinloom_store::{Author, NodeId};

use crate::base::pinloom::Pinloom;
use crate::error::ApiError;
use crate::json::{NodeView, TokenAlternative, TokenView};

impl Pinloom {
    /// The tokens reply `node_id` was generated as, with their probabilities and alternatives;
    /// none when its provider reported none (it was not asked, or does not say).
    pub async fn reply_tokens(&self, node_id: i64) -> anyhow::Result<Option<Vec<TokenView>>> {
        let kept = self
            .read("could not read the reply's tokens", move |store| {
                Ok(store.reply_tokens(NodeId(node_id))?)
            })
            .await?;
        let Some(choices) = read_tokens(kept) else { return Ok(None) };
        Ok(Some(choices.into_iter().map(token_view).collect()))
    }

    /// Branches reply `node_id` at its token `index`: a new sibling with the reply's text up to
    /// that token and `alternative` in its place, marked as yours (you chose the token), which a
    /// continuation then goes on from. Refused when the reply has no tokens there, or its text
    /// is no longer the one its tokens spell.
    pub async fn branch_at_token(
        &self,
        node_id: i64,
        index: u32,
        alternative: String,
    ) -> anyhow::Result<NodeView> {
        if alternative.is_empty() {
            return Err(ApiError::invalid_input("choose a token to branch with").into());
        }
        let (text, tokens) = self
            .read("could not branch the reply", move |store| {
                let node = store.node(NodeId(node_id))?;
                if node.author != Author::Model {
                    return Err(ApiError::invalid_input(
                        "only a model's continuation has tokens to branch at",
                    )
                    .into());
                }
                Ok((node.text, store.reply_tokens(NodeId(node_id))?))
            })
            .await?;
        let tokens = read_tokens(tokens).unwrap_or_default();
        let index = usize::try_from(index).unwrap_or(usize::MAX);
        if index >= tokens.len() {
            return Err(ApiError::invalid_input(format!(
                "this continuation has {} tokens with probabilities, so none at place {}; hover \
                 one of them to branch there",
                tokens.len(),
                index + 1
            ))
            .into());
        }
        let before: String = tokens[..index].iter().map(|token| token.token.as_str()).collect();
        if !text.starts_with(&before) {
            return Err(ApiError::invalid_input(
                "this continuation's text is not the one its tokens spell (a token split inside \
                 a character); edit it by hand instead",
            )
            .into());
        }
        self.edit_reply(node_id, format!("{before}{alternative}")).await
    }
}

/// The tokens kept for a reply, as stored. Pinloom wrote them itself; unreadable ones read as
/// none rather than failing a view.
fn read_tokens(kept: Option<String>) -> Option<Vec<TokenChoice>> {
    serde_json::from_str(&kept?).ok()
}

fn token_view(choice: TokenChoice) -> TokenView {
    TokenView {
        probability: choice.logprob.exp(),
        alternatives: choice
            .top
            .into_iter()
            .map(|(text, logprob)| TokenAlternative { text, probability: logprob.exp() })
            .collect(),
        text: choice.token,
    }
}
