//! Model profiles on a real database file: seeded from the catalog once, then edited, extended
//! and deleted by the person, with refusals that say what to fix.

use pinloom_app::json::ModelProfile;
use pinloom_app::{ApiError, ErrorCode, Pinloom};

fn local_llama() -> ModelProfile {
    ModelProfile {
        name: "Llama at home".into(),
        provider: "ollama".into(),
        model_id: "llama3.2".into(),
        base_url: Some("http://192.168.1.20:11434/".into()),
        context_window: 16_384,
        reserve: 2_048,
        native_system: true,
        completion_endpoint: true,
        tokenizer: "other".into(),
        agent_system_prompt: "Answer in French.".into(),
    }
}

async fn refused(pinloom: &Pinloom, profile: ModelProfile) -> ApiError {
    ApiError::from(pinloom.save_model_profile(profile).await.unwrap_err())
}

#[tokio::test]
async fn a_new_database_starts_with_the_catalogs_models() {
    let dir = tempfile::tempdir().unwrap();
    let pinloom = Pinloom::open(dir.path().to_owned()).await.unwrap();
    let profiles = pinloom.model_profiles().await.unwrap();
    assert_eq!(profiles.len(), pinloom_providers::catalog::SHIPPED.len());
    let sonnet = profiles.iter().find(|p| p.name == "claude-sonnet-4 (Anthropic)").unwrap();
    assert_eq!((sonnet.context_window, sonnet.reserve), (200_000, 8_192), "seed 004's budget");
    assert_eq!((sonnet.provider.as_str(), sonnet.tokenizer.as_str()), ("anthropic", "claude"));
    let o1_mini = profiles.iter().find(|p| p.model_id == "o1-mini").unwrap();
    assert!(!o1_mini.native_system, "o1-mini gets its system context injected");
    let instruct = profiles.iter().find(|p| p.model_id == "gpt-3.5-turbo-instruct").unwrap();
    assert!(instruct.completion_endpoint);
}

#[tokio::test]
async fn edits_and_deletions_survive_reopening_and_are_not_reseeded() {
    let dir = tempfile::tempdir().unwrap();
    {
        let pinloom = Pinloom::open(dir.path().to_owned()).await.unwrap();
        let saved = pinloom.save_model_profile(local_llama()).await.unwrap();
        assert_eq!(saved.base_url.as_deref(), Some("http://192.168.1.20:11434"));
        let mut gpt = pinloom
            .model_profiles()
            .await
            .unwrap()
            .into_iter()
            .find(|p| p.model_id == "gpt-4o")
            .unwrap();
        gpt.reserve = 16_000;
        pinloom.save_model_profile(gpt).await.unwrap();
        pinloom.delete_model_profile("o1-mini (OpenAI)".into()).await.unwrap();
    }
    let pinloom = Pinloom::open(dir.path().to_owned()).await.unwrap();
    let profiles = pinloom.model_profiles().await.unwrap();
    assert!(
        profiles
            .iter()
            .any(|p| p.name == "Llama at home" && p.agent_system_prompt == "Answer in French.")
    );
    assert_eq!(profiles.iter().find(|p| p.model_id == "gpt-4o").unwrap().reserve, 16_000);
    assert!(!profiles.iter().any(|p| p.model_id == "o1-mini"), "a deleted profile stays deleted");
    let error =
        ApiError::from(pinloom.delete_model_profile("o1-mini (OpenAI)".into()).await.unwrap_err());
    assert_eq!(error.code, ErrorCode::NotFound);
}

#[tokio::test]
async fn bad_profiles_are_refused_with_what_to_fix_and_nothing_changes() {
    let dir = tempfile::tempdir().unwrap();
    let pinloom = Pinloom::open(dir.path().to_owned()).await.unwrap();
    let before = pinloom.model_profiles().await.unwrap();

    let reserve_too_big = ModelProfile { reserve: 16_384, ..local_llama() };
    let error = refused(&pinloom, reserve_too_big).await;
    assert_eq!(error.code, ErrorCode::InvalidInput);
    assert!(
        error.message.contains("reserve (16384) must be smaller than the context window (16384)"),
        "{}",
        error.message
    );

    let error =
        refused(&pinloom, ModelProfile { provider: "openia".into(), ..local_llama() }).await;
    assert!(
        error.message.contains("unknown provider \"openia\"") && error.message.contains("openai"),
        "{}",
        error.message
    );

    let error = refused(&pinloom, ModelProfile { model_id: " ".into(), ..local_llama() }).await;
    assert!(error.message.contains("model id is empty"), "{}", error.message);

    let error = refused(&pinloom, ModelProfile { tokenizer: "gpt2".into(), ..local_llama() }).await;
    assert!(error.message.contains("unknown tokenizer \"gpt2\""), "{}", error.message);

    let error = refused(
        &pinloom,
        ModelProfile { base_url: Some("localhost:11434".into()), ..local_llama() },
    )
    .await;
    assert!(error.message.contains("must start with http://"), "{}", error.message);

    let error =
        refused(&pinloom, ModelProfile { context_window: 0, reserve: 0, ..local_llama() }).await;
    assert!(error.message.contains("at least 1 token"), "{}", error.message);

    // A negative number typed in a form reaches the checks and is refused in words.
    let negative = r#"{"name":"x","provider":"ollama","modelId":"m","baseUrl":null,"contextWindow":-5,"reserve":0,"nativeSystem":true,"completionEndpoint":false,"tokenizer":"other","agentSystemPrompt":""}"#;
    let negative: ModelProfile = serde_json::from_str(negative).unwrap();
    let error = refused(&pinloom, negative).await;
    assert_eq!(error.code, ErrorCode::InvalidInput);
    assert!(error.message.contains("context window cannot be negative (-5)"), "{}", error.message);
    let error = refused(&pinloom, ModelProfile { reserve: -1, ..local_llama() }).await;
    assert!(error.message.contains("reply reserve cannot be negative"), "{}", error.message);

    assert_eq!(pinloom.model_profiles().await.unwrap(), before, "nothing saved");
}
