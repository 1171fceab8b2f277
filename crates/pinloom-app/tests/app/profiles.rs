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
        sampling: Default::default(),
        assembly: Default::default(),
        prices: None,
        imported_from: None,
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
    let negative_price = pinloom_app::Prices { input_per_million: -3.0, ..Default::default() };
    let error =
        refused(&pinloom, ModelProfile { prices: Some(negative_price), ..local_llama() }).await;
    assert_eq!(
        error.message,
        "Llama at home: prices are US dollars per million tokens, from 0 to 10000; clear them for a \
         model without a price"
    );

    assert_eq!(pinloom.model_profiles().await.unwrap(), before, "nothing saved");
}

#[tokio::test]
async fn sampling_and_assembly_are_kept_checked_and_used_by_the_plan() {
    let dir = tempfile::tempdir().unwrap();
    let pinloom = Pinloom::open(dir.path().to_owned()).await.unwrap();
    let mut profile = local_llama();
    profile.context_window = 200;
    profile.reserve = 40;
    profile.sampling.temperature = Some(0.3);
    // The longest reply is the reply limit: what the plan keeps free and the request asks for.
    profile.sampling.max_output_tokens = Some(30);
    profile.assembly.truncation = Some("rollingWindow".into());
    profile.assembly.minimum_recent_nodes = Some(2);
    let saved = pinloom.save_model_profile(profile.clone()).await.unwrap();
    assert_eq!(saved.sampling, profile.sampling);
    assert_eq!(saved.assembly, profile.assembly);

    let tree =
        pinloom.create_tree("Rivers".into(), pinloom_app::json::TreeMode::Dialogue).await.unwrap();
    let mut parent = None;
    for turn in 0..12 {
        let text = format!("Turn {turn}: the river carries silt past the bend and drops it.");
        parent = Some(pinloom.append_message(tree.id, parent, text).await.unwrap().id);
    }
    let plan = pinloom.preview(parent.unwrap(), saved.name.clone(), None).await.unwrap();
    assert!(plan.truncated);
    assert_eq!((plan.reply_limit, plan.available), (30, 170));
    let body: serde_json::Value = serde_json::from_str(plan.request_body()).unwrap();
    // Ollama takes the reply limit as `num_predict`.
    assert_eq!(body["options"]["num_predict"], 30, "the request asks for what the plan kept free");
    let first = plan.slices.iter().find(|slice| slice.preview.starts_with("Turn 0:")).unwrap();
    assert!(!first.included, "a rolling window drops the oldest, the thread's start included");
    let mut middle = saved.clone();
    middle.assembly.truncation = None;
    let kept_start = pinloom.preview_unsaved(parent.unwrap(), middle).await.unwrap();
    let first =
        kept_start.slices.iter().find(|slice| slice.preview.starts_with("Turn 0:")).unwrap();
    // 170 tokens is a small budget: truncateMiddle gives its start up for the newest turns too,
    // and says so.
    assert!(!first.included && kept_start.small_budget.is_some(), "{:?}", kept_start.small_budget);
    assert!(
        plan.request_body().contains("\"temperature\":0.3")
            || plan.request_body().contains("\"temperature\": 0.3"),
        "{}",
        plan.request_body()
    );

    for (bad, says) in [
        (
            ModelProfile {
                sampling: pinloom_app::json::SamplingSettings {
                    temperature: Some(3.0),
                    ..Default::default()
                },
                ..local_llama()
            },
            "temperature of 3 is outside 0 to 2",
        ),
        (
            ModelProfile {
                assembly: pinloom_app::json::AssemblySettings {
                    truncation: Some("random".into()),
                    ..Default::default()
                },
                ..local_llama()
            },
            "unknown truncation \"random\"",
        ),
        (
            ModelProfile {
                assembly: pinloom_app::json::AssemblySettings {
                    depth_budgets: Some(vec![800, -1]),
                    ..Default::default()
                },
                ..local_llama()
            },
            "summary budgets must be",
        ),
        (
            ModelProfile {
                sampling: pinloom_app::json::SamplingSettings {
                    max_output_tokens: Some(0),
                    ..Default::default()
                },
                ..local_llama()
            },
            "at least 1 and less than the window",
        ),
    ] {
        let error = refused(&pinloom, bad).await;
        assert_eq!(error.code, ErrorCode::InvalidInput);
        assert!(error.message.contains(says), "{}", error.message);
    }
}

#[tokio::test]
async fn a_model_is_offered_the_counting_of_its_family() {
    let dir = tempfile::tempdir().unwrap();
    let pinloom = Pinloom::open(dir.path().to_owned()).await.unwrap();
    let counting = |provider: &str, model: &str| pinloom.profile_counting(provider, model);
    // Listed models keep the catalog's counter; local servers' open models get their family's.
    assert_eq!(counting("openai", "gpt-4o-mini").as_deref(), Some("o200k"));
    assert_eq!(counting("anthropic", "claude-sonnet-4-20250514").as_deref(), Some("claude"));
    assert_eq!(counting("vllm", "meta-llama/Llama-3.1-8B-Instruct").as_deref(), Some("llama3"));
    assert_eq!(counting("lmstudio", "qwen2.5-7b-instruct").as_deref(), Some("qwen"));
    assert_eq!(counting("llamacpp", "gpt-oss-20b").as_deref(), Some("o200k"));
    // Nothing is offered where Pinloom does not know: the person's choice stays.
    assert_eq!(counting("vllm", "mistralai/Mistral-Nemo-Instruct-2407"), None);
    assert_eq!(counting("openrouter", "meta-llama/llama-3.1-8b-instruct"), None, "not local");
    assert_eq!(counting("no-such-provider", "llama3"), None);
    // And what is offered is a counting a profile may be saved with.
    let choices = pinloom.profile_choices();
    assert!(choices.tokenizers.iter().any(|name| name == "llama3"));
    assert!(choices.tokenizers.iter().any(|name| name == "qwen"));
}
