//! Shipped model defaults and Ollama discovery against a server answering as Ollama does.

use pinloom_engine::tokens::Tokenizer;
use pinloom_providers::ollama::{DEFAULT_WINDOW_CAP, local_model};
use pinloom_providers::retry::RetryPolicy;
use pinloom_providers::wire::{Endpoint, ProviderId};
use pinloom_providers::{Timeouts, catalog};

use crate::{fixture_text, provider_with};
use pinloom_test_server::{Answer, Server};

#[test]
fn seed_004_budgets_ship_for_its_five_models() {
    let cases = [
        (ProviderId::Anthropic, "claude-sonnet-4-20250514", 200_000, 8_192),
        (ProviderId::Anthropic, "claude-opus-4-1", 200_000, 8_192),
        (ProviderId::OpenAi, "gpt-4o", 128_000, 4_096),
        (ProviderId::Gemini, "gemini-2.0-flash", 1_000_000, 8_192),
        (ProviderId::Mistral, "mistral-large-latest", 128_000, 4_096),
    ];
    for (provider, model, window, reserve) in cases {
        let profile = catalog::profile(provider, model);
        assert_eq!((profile.context_window, profile.reserve), (window, reserve), "{model}");
        assert!(profile.native_system, "{model}");
    }
    let unknown = catalog::profile(ProviderId::OpenRouter, "someone/new-model");
    assert_eq!(
        (unknown.context_window, unknown.reserve),
        (100_000, 8_192),
        "seed 004's unknown default"
    );
}

#[test]
fn the_catalog_knows_injection_tokenizers_and_completion_support() {
    assert!(!catalog::profile(ProviderId::OpenAi, "o1-mini").native_system);
    assert!(!catalog::profile(ProviderId::Gemini, "gemma-3-27b-it").native_system);
    assert_eq!(catalog::profile(ProviderId::OpenAi, "gpt-4o-mini").tokenizer, Tokenizer::O200k);
    assert_eq!(
        catalog::profile(ProviderId::OpenAi, "gpt-3.5-turbo-instruct").tokenizer,
        Tokenizer::Cl100k
    );
    assert!(matches!(
        catalog::profile(ProviderId::Anthropic, "claude-sonnet-4").tokenizer,
        Tokenizer::Estimate(_)
    ));
    assert!(catalog::completion_supported(ProviderId::OpenAi, "gpt-3.5-turbo-instruct"));
    assert!(!catalog::completion_supported(ProviderId::OpenAi, "gpt-4o"));
    assert!(!catalog::completion_supported(ProviderId::Anthropic, "claude-sonnet-4"));
    assert!(catalog::completion_supported(ProviderId::Ollama, "llama3.2"));
    assert_eq!(
        catalog::find(ProviderId::OpenAi, "gpt-4o-mini-2024-07-18").unwrap().model,
        "gpt-4o-mini",
        "longest prefix first"
    );
}

#[tokio::test]
async fn ollama_models_are_discovered_with_their_windows() {
    let tags = fixture_text("ollama-tags-response.json");
    let show = fixture_text("ollama-show-response.converted.json");
    let server = Server::start(vec![
        Answer::error(200, &tags),
        Answer::error(200, &show),
        Answer::error(200, r#"{"model_info":{"general.architecture":"qwen2","qwen2.context_length":131072},"parameters":"num_ctx 16384\nstop \"<|im_end|>\"","template":"{{ .Prompt }}","capabilities":["completion","tools"]}"#),
    ])
    .await;
    let provider = provider_with(Timeouts::default(), RetryPolicy::never());
    let models =
        provider.ollama_models(&Endpoint::at(ProviderId::Ollama, &server.base)).await.unwrap();
    let seen = server.seen();
    assert_eq!((seen[0].method.as_str(), seen[0].path.as_str()), ("GET", "/api/tags"));
    assert_eq!(seen[1].path, "/api/show");
    assert_eq!(seen[1].json()["model"], "deepseek-r1:latest");
    assert_eq!(models.len(), 2);
    // The docs' show answer: llama with an 8,192 trained context, no num_ctx parameter.
    assert_eq!(models[0].name, "deepseek-r1:latest");
    assert_eq!((models[0].context_window, models[0].trained_context), (8_192, Some(8_192)));
    assert!(models[0].native_system, "its template places {{{{ .System }}}}");
    // A Modelfile's num_ctx wins over the trained context; a template without .System injects.
    assert_eq!((models[1].context_window, models[1].trained_context), (16_384, Some(131_072)));
    assert!(!models[1].native_system);
    let profile = models[1].profile();
    assert_eq!(profile.context_window, 16_384);
    assert!(profile.reserve <= 4_096);
}

#[test]
fn a_large_trained_context_is_capped_until_the_person_raises_it() {
    let show = serde_json::json!({"model_info": {"general.architecture": "llama", "llama.context_length": 131072}});
    let model = local_model("llama3.1:8b", &show);
    assert_eq!(model.context_window, DEFAULT_WINDOW_CAP);
    assert_eq!(model.trained_context, Some(131_072));
}

#[tokio::test]
async fn ollama_discovery_errors_are_actionable() {
    let server = Server::start(vec![Answer::error(200, "<html>not ollama</html>")]).await;
    let provider = provider_with(Timeouts::default(), RetryPolicy::never());
    let error =
        provider.ollama_models(&Endpoint::at(ProviderId::Ollama, &server.base)).await.unwrap_err();
    assert_eq!(error.code(), "malformedStream");
    assert!(error.to_string().contains("/api/tags"), "{error}");
}
