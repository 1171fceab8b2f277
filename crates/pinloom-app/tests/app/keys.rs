//! API keys reach the provider in a header and nowhere else: not the database, its write-ahead
//! log, the plan shown to the person, nor an error message; keys saved from the window go to the
//! keyring and are reported without their value. Runs in a child process, because the key comes
//! from the environment and a test must not change its own process's environment.

use pinloom_app::json::{ModelProfile, TreeMode};
use pinloom_app::{ApiError, Connections, ErrorCode, Pinloom};
use pinloom_providers::keys::KeyringBackend;
use pinloom_test_server::{Answer, Server};

use crate::wire::{listen, says};

const CHILD: &str = "PINLOOM_APP_KEYS_CHILD";
const SECRET: &str = "sk-proj-PINLOOM-TEST-SECRET-0123456789";

#[test]
fn keys_never_leave_the_request_header() {
    // In a fresh session keyring (`keyctl session -`, package keyutils), so the kernel keyring the
    // child saves to touches none of the machine's keys.
    let output = std::process::Command::new("keyctl")
        .args(["session", "-"])
        .arg(std::env::current_exe().unwrap())
        .args(["keys::key_child", "--exact", "--ignored", "--nocapture", "--test-threads=1"])
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
    let connections = Connections {
        keyring: KeyringBackend::Kernel,
        keyring_service: format!("dev.pinloom.test.{}", std::process::id()),
        retry: pinloom_providers::retry::RetryPolicy::never(),
        ..Connections::default()
    };
    let pinloom = Pinloom::open_with(dir.path().to_owned(), connections).await.unwrap();
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
