//! A continuation's tokens: asked of the server, kept with the reply, shown with their
//! probabilities and alternatives, and branched from.

use pinloom_app::ApiError;
use pinloom_app::json::ReplyTokens;
use pinloom_test_server::{Answer, Server};

use crate::wire::{continue_locally, essay, pinloom_with};

/// A generated token: its text, its log-probability, and the likeliest tokens at its place.
type Generated<'a> = (&'a str, f64, &'a [(&'a str, f64)]);

/// A completion stream of `tokens`, in the completions endpoint's own shape (OpenAI's, vLLM's,
/// llama-cpp-python's).
fn stream_with_logprobs(tokens: &[Generated<'_>]) -> Vec<u8> {
    let mut out = String::new();
    for (token, logprob, top) in tokens {
        let top: serde_json::Map<String, serde_json::Value> =
            top.iter().map(|(text, lp)| ((*text).to_owned(), serde_json::json!(lp))).collect();
        let chunk = serde_json::json!({
            "id": "cmpl-1", "object": "text_completion", "model": "local-model",
            "choices": [{"index": 0, "text": token, "finish_reason": null, "logprobs": {
                "tokens": [token], "token_logprobs": [logprob], "top_logprobs": [top],
            }}]
        });
        out.push_str(&format!("data: {chunk}\n\n"));
    }
    out.push_str(
        "data: {\"choices\":[{\"index\":0,\"text\":\"\",\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
    );
    out.into_bytes()
}

#[tokio::test]
async fn a_continuations_tokens_are_kept_shown_and_branched_from() {
    let stream = stream_with_logprobs(&[
        (" slowly", -0.3, &[(" slowly", -0.3), (" quietly", -1.6), (" on", -2.5)]),
        (" seaward", -0.9, &[(" down", -0.7), (" seaward", -0.9)]),
    ]);
    let server = Server::start(vec![Answer::sse(&stream, 0)]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let (_, opening) = essay(&pinloom, "The river wound").await;
    let reply = continue_locally(&pinloom, opening.id).await.reply.message;
    assert_eq!(reply.text, " slowly seaward");
    assert_eq!(server.seen()[0].json()["logprobs"], 5, "the server was asked for five a place");

    let ReplyTokens::Shown { tokens } = pinloom.reply_tokens(reply.id).await.unwrap() else {
        panic!("the tokens were kept with the reply, and spell it");
    };
    let texts: Vec<&str> = tokens.iter().map(|token| token.text.as_str()).collect();
    assert_eq!(texts, [" slowly", " seaward"]);
    assert!((tokens[1].probability - (-0.9_f64).exp()).abs() < 1e-9);
    let second: Vec<&str> = tokens[1].alternatives.iter().map(|a| a.text.as_str()).collect();
    assert_eq!(second, [" down", " seaward"], "most likely first");

    // Choosing " down" at the second token branches there: the text up to it, then the choice,
    // beside the continuation and marked as the person's.
    let branch = pinloom.branch_at_token(reply.id, 1, " down".into()).await.unwrap();
    assert_eq!(branch.message.text, " slowly down");
    assert_eq!(branch.message.parent_id, Some(opening.id));
    assert_eq!(branch.edited_from, Some(reply.id));

    let refused =
        ApiError::from(pinloom.branch_at_token(reply.id, 7, " x".into()).await.unwrap_err());
    assert!(refused.message.contains("has 2 tokens with probabilities"), "{}", refused.message);
    let refused =
        ApiError::from(pinloom.branch_at_token(opening.id, 0, " x".into()).await.unwrap_err());
    assert!(refused.message.contains("only a model's continuation"), "{}", refused.message);
    // The branch is the person's text: it has no tokens of its own until it is continued.
    assert_eq!(pinloom.reply_tokens(branch.message.id).await.unwrap(), ReplyTokens::None);
}
