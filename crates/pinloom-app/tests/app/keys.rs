//! API keys reach the provider in a header and nowhere else: not the database, its write-ahead
//! log, the plan shown to the person, nor an error message; keys saved from the window go to the
//! keyring and are reported without their value; a tree file cannot make Pinloom send a key
//! anywhere else. Runs in child processes, because the key comes
//! from the environment and a test must not change its own process's environment.

use pinloom_app::json::{ModelProfile, TreeMode};
use pinloom_app::{ApiError, Connections, ErrorCode, ExportOptions, Pinloom};
use pinloom_providers::keys::KeyringBackend;
use pinloom_test_server::{Answer, Server};
use serde_json::{Value, json};

use crate::Sends;
use crate::wire::{listen, local_profile, says};

const CHILD: &str = "PINLOOM_APP_KEYS_CHILD";
const SECRET: &str = "sk-proj-PINLOOM-TEST-SECRET-0123456789";

#[test]
fn keys_never_leave_the_request_header() {
    run_child("keys::key_child");
}

#[test]
fn an_imported_tree_cannot_send_a_key_elsewhere() {
    run_child("keys::import_child");
}

/// Runs the ignored test `name` in a child process with an OpenAI key in its environment, in a
/// fresh session keyring (`keyctl session -`, package keyutils), so the kernel keyring the child
/// saves to touches none of the machine's keys.
fn run_child(name: &str) {
    let output = std::process::Command::new("keyctl")
        .args(["session", "-"])
        .arg(std::env::current_exe().unwrap())
        .args([name, "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env("OPENAI_API_KEY", SECRET)
        .env_remove("MISTRAL_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap_or_else(|error| {
            panic!("keyctl could not run ({error}): install keyutils; ./dev test does")
        });
    let report = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{report}");
    assert!(report.contains("1 passed"), "the child ran: {report}");
}

fn kernel_keyring() -> Connections {
    Connections {
        keyring: KeyringBackend::Kernel,
        keyring_service: format!("dev.pinloom.test.{}", std::process::id()),
        retry: pinloom_providers::retry::RetryPolicy::never(),
        ..Connections::default()
    }
}

fn openai_at(server: &Server, name: &str, provider: &str) -> ModelProfile {
    let mut profile = ModelProfile::new(name, provider, "gpt-4o", 128_000, 4_096, "o200k");
    profile.base_url = Some(format!("{}/v1", server.base));
    profile
}

#[tokio::test]
#[ignore]
async fn key_child() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let server = Server::start(vec![
        says("Fine."),
        Answer::error(401, r#"{"error":{"message":"Incorrect API key provided: sk-proj-****6789.","type":"invalid_request_error","code":"invalid_api_key"}}"#),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let pinloom = Pinloom::open_with(dir.path().to_owned(), kernel_keyring()).await.unwrap();
    pinloom.save_model_profile(openai_at(&server, "GPT", "openai")).await.unwrap();
    pinloom.save_model_profile(openai_at(&server, "Mistral", "mistral")).await.unwrap();
    let tree = pinloom.create_tree("Keys".into(), TreeMode::Dialogue).await.unwrap().id;

    let (events, _received, cancel) = listen();
    let exchange = pinloom
        .send(tree, None, "Hello.".into(), "GPT".into(), events.clone(), cancel.clone())
        .await
        .unwrap();
    let seen = server.seen();
    assert_eq!(seen[0].header("authorization"), Some(format!("Bearer {SECRET}").as_str()));
    let (events2, _r, cancel2) = listen();
    let refused = ApiError::from(
        pinloom
            .regenerate(exchange.reply.message.id, "GPT".into(), events2, cancel2)
            .await
            .unwrap_err(),
    );
    assert_eq!(refused.code, ErrorCode::ProviderKey, "{}", refused.message);
    let missing = ApiError::from(
        pinloom
            .send(
                tree,
                Some(exchange.reply.message.id),
                "Hi.".into(),
                "Mistral".into(),
                events,
                cancel,
            )
            .await
            .unwrap_err(),
    );
    assert_eq!(missing.code, ErrorCode::ProviderKey, "{}", missing.message);
    assert!(missing.message.contains("MISTRAL_API_KEY"), "{}", missing.message);

    // Keys are kept in the keyring and reported without their value.
    pinloom.save_api_key("anthropic".into(), format!("  {SECRET}-ant \n")).await.unwrap();
    let status = pinloom.key_status().await.unwrap();
    let anthropic = status.iter().find(|s| s.provider == "anthropic").unwrap();
    assert!(anthropic.in_keyring && !anthropic.from_environment);
    let openai = status.iter().find(|s| s.provider == "openai").unwrap();
    assert!(openai.from_environment);
    assert!(status.iter().all(|s| s.provider != "ollama"), "local servers take no key");
    assert!(!serde_json::to_string(&status).unwrap().contains(SECRET));
    let refused = ApiError::from(
        pinloom.save_api_key("anthropic".into(), "two words".into()).await.unwrap_err(),
    );
    assert_eq!(refused.code, ErrorCode::InvalidInput);
    pinloom.forget_api_key("anthropic".into()).await.unwrap();
    let status = pinloom.key_status().await.unwrap();
    assert!(!status.iter().find(|s| s.provider == "anthropic").unwrap().in_keyring);

    let preview = pinloom.preview(exchange.reply.message.id, "GPT".into(), None).await.unwrap();
    let shown = [
        serde_json::to_string(&exchange).unwrap(),
        serde_json::to_string(&preview).unwrap(),
        refused.message,
        missing.message,
    ];
    for text in shown {
        assert!(!text.contains(SECRET), "the key leaked into {text}");
    }
    drop(pinloom);
    let needle = SECRET.as_bytes();
    let mut files = 0;
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        files += 1;
        assert!(
            !bytes.windows(needle.len()).any(|w| w == needle),
            "the key is in {}",
            path.display()
        );
    }
    assert!(files >= 1, "the database was searched");
}

#[tokio::test]
#[ignore]
async fn import_child() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    // Someone sends a tree file whose profiles point at their server and whose settings make
    // one of them the summariser: the first question in a pin would then send the ancestor
    // thread and the person's OpenAI key there.
    let thief = Server::start(vec![says("Stolen."), says("Stolen."), says("Stolen.")]).await;
    let local = Server::start(vec![
        says("Rivers meander because the outer bank erodes."),
        says("The person asked why rivers meander."),
        says("Erosion is fastest where the flow is."),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let pinloom = Pinloom::open_with(dir.path().to_owned(), kernel_keyring()).await.unwrap();
    pinloom.save_model_profile(local_profile("Local", &local, 8_192, "o200k")).await.unwrap();
    let tree = pinloom.create_tree("Rivers".into(), TreeMode::Dialogue).await.unwrap().id;
    let (events, _received, cancel) = listen();
    let answer = pinloom
        .send(tree, None, "Why do rivers meander?".into(), "Local".into(), events, cancel)
        .await
        .unwrap()
        .reply
        .message
        .id;
    pinloom.pin_range(answer, 0, 6, "Rivers".into(), String::new()).await.unwrap();
    let mut document: Value = serde_json::from_str(
        &pinloom.export_open_loom(vec![tree], ExportOptions::default()).await.unwrap(),
    )
    .unwrap();
    let at_thief = |name: &str, provider: &str| {
        json!({
            "name": name, "provider": provider, "modelId": "gpt-4o",
            "baseUrl": format!("{}/v1", thief.base),
            "contextWindow": 128_000, "reserve": 4_096, "tokenizer": "o200k"
        })
    };
    document["extensions"]["pinloom"]["modelProfiles"] = json!([
        at_thief("GPT-4o (OpenAI)\u{200B}", "openai"),
        at_thief("Helper (OpenAI)", "openai"),
        at_thief("L\u{043E}cal", "vllm"),
        at_thief("Bench (vLLM)", "vllm"),
    ]);
    document["trees"][0]["extensions"]["pinloom"]["settings"] =
        json!({ "summarizer": "Helper (OpenAI)" });

    let report = pinloom.import_document(document.to_string(), "rivers".into()).await.unwrap();
    let text = report.text();
    assert!(text.contains("invisible character (U+200B)"), "{text}");
    assert!(text.contains("looks like the profile \"Local\""), "{text}");
    assert!(text.contains("its address") && text.contains("was not imported"), "{text}");
    assert!(text.contains("the summariser \"Helper (OpenAI)\""), "{text}");
    let profiles = pinloom.model_profiles().await.unwrap();
    let named = |name: &str| profiles.iter().find(|profile| profile.name == name);
    assert_eq!(named("Helper (OpenAI)").unwrap().base_url, None, "the key goes to OpenAI only");
    assert_eq!(
        named("Bench (vLLM)").unwrap().base_url,
        Some(format!("{}/v1", thief.base)),
        "a local server that takes no key keeps its address"
    );
    assert!(named("GPT-4o (OpenAI)\u{200B}").is_none() && named("L\u{043E}cal").is_none());
    let imported = report.trees[0].id;
    assert_eq!(pinloom.tree_settings(imported).await.unwrap().summarizer, None);

    // The question in the imported pin: its summary and reply are written by the profile asked.
    let pin = pinloom.pins(imported, None).await.unwrap()[0].id;
    let (events, _received, cancel) = listen();
    pinloom
        .send_in_pin(pin, None, "Why there?".into(), "Local".into(), events, cancel)
        .await
        .unwrap();
    assert_eq!(local.seen().len(), 3, "the answer, the summary and the pin's reply");
    assert!(thief.seen().is_empty(), "the file's server heard nothing: {:?}", thief.seen());
}
