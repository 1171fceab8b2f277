//! A continuation's tokens, as the loom shows them: each generated token with its probability
//! and the likeliest others at its place; choosing another branches the document there.

use pinloom_providers::TokenChoice;
use pinloom_store::{Author, NodeId, ReplyToken};

use crate::base::pinloom::Pinloom;
use crate::error::ApiError;
use crate::json::{NodeView, ReplyTokens, TokenAlternative, TokenView};

impl Pinloom {
    /// The tokens reply `node_id` was generated as, with their probabilities and alternatives:
    /// none when its provider reported none (it was not asked, or does not say), and said when
    /// they do not spell the reply's text.
    pub async fn reply_tokens(&self, node_id: i64) -> anyhow::Result<ReplyTokens> {
        let (text, tokens) = self
            .read("could not read the reply's tokens", move |store| {
                let node = store.node(NodeId(node_id))?;
                Ok((node.text, store.reply_tokens(NodeId(node_id))?))
            })
            .await?;
        Ok(match tokens {
            None => ReplyTokens::None,
            Some(tokens) if !spell(&tokens, &text) => ReplyTokens::Mismatch,
            Some(tokens) => {
                ReplyTokens::Shown { tokens: tokens.into_iter().map(token_view).collect() }
            }
        })
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
        let tokens = tokens.unwrap_or_default();
        if !spell(&tokens, &text) {
            return Err(ApiError::invalid_input(
                "this continuation's text is not the one its tokens spell (a token split inside \
                 a character); edit it by hand instead",
            )
            .into());
        }
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
        self.edit_reply(node_id, format!("{before}{alternative}")).await
    }
}

/// Whether `tokens` spell `text` exactly: the one check of it, for the loom's view and for a
/// branch. They may not, when a token ends inside a character (its bytes split between two).
fn spell(tokens: &[ReplyToken], text: &str) -> bool {
    let mut rest = text;
    tokens.iter().all(|token| match rest.strip_prefix(token.token.as_str()) {
        Some(after) => {
            rest = after;
            true
        }
        None => false,
    }) && rest.is_empty()
}

/// A token as its provider reported it, as the store keeps it.
pub(in crate::conversation) fn kept_token(choice: TokenChoice) -> ReplyToken {
    ReplyToken { token: choice.token, logprob: choice.logprob, top: choice.top }
}

fn token_view(token: ReplyToken) -> TokenView {
    TokenView {
        probability: token.logprob.exp(),
        alternatives: token
            .top
            .into_iter()
            .map(|(text, logprob)| TokenAlternative { text, probability: logprob.exp() })
            .collect(),
        text: token.token,
    }
}

#[cfg(test)]
mod tests {
    use pinloom_store::ReplyToken;

    use super::spell;

    fn tokens(texts: &[&str]) -> Vec<ReplyToken> {
        texts
            .iter()
            .map(|text| ReplyToken { token: (*text).to_owned(), logprob: -0.5, top: Vec::new() })
            .collect()
    }

    #[test]
    fn tokens_spell_a_text_only_whole_and_in_order() {
        assert!(spell(&tokens(&[" The", " tide", " ran"]), " The tide ran"));
        assert!(spell(&tokens(&[]), ""));
        // A token ending inside a character comes as a replacement character.
        assert!(!spell(&tokens(&[" caf", "\u{fffd}"]), " café"));
        assert!(!spell(&tokens(&[" The", " tide"]), " The tide ran"), "a text longer");
        assert!(!spell(&tokens(&[" The", " tide", " ran"]), " The tide"), "a text shorter");
        assert!(!spell(&tokens(&[" tide", " The"]), " The tide"), "out of order");
    }
}
