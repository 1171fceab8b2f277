//! Keys in a real OS keyring: the Linux kernel keyring, in a fresh session keyring made by
//! `keyctl session -` (package keyutils) so the test touches none of the machine's keys. The
//! Secret Service backend is the same `keyring` API behind another credential builder.

use pinloom_providers::keys::{Keyring, KeyringBackend};
use pinloom_providers::{ApiKey, ProviderId};

const CHILD: &str = "PINLOOM_KEYRING_CHILD";

#[test]
fn pasted_keys_are_trimmed_and_implausible_ones_refused() {
    assert_eq!(ApiKey::new("  sk-abc\n"), ApiKey::new("sk-abc"));
    assert!(ApiKey::new("").is_none());
    assert!(ApiKey::new("   ").is_none());
    assert!(ApiKey::new("sk-abc sk-def").is_none(), "two words are a bad paste");
    assert_eq!(format!("{:?}", ApiKey::new("sk-secret").unwrap()), "ApiKey(hidden)");
}

/// Runs in a fresh session keyring: saves, reads, replaces and deletes a key.
#[cfg(target_os = "linux")]
#[test]
#[ignore]
fn keyring_child() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let ring = Keyring::new("dev.pinloom.test", KeyringBackend::Kernel);
    assert_eq!(ring.load(ProviderId::Anthropic).unwrap(), None);
    let first = ApiKey::new("sk-ant-first-0123456789").unwrap();
    ring.save(ProviderId::Anthropic, &first).unwrap();
    assert_eq!(ring.load(ProviderId::Anthropic).unwrap(), Some(first));
    let second = ApiKey::new("sk-ant-second-0123456789").unwrap();
    ring.save(ProviderId::Anthropic, &second).unwrap();
    assert_eq!(ring.load(ProviderId::Anthropic).unwrap(), Some(second.clone()));
    assert_eq!(ring.load(ProviderId::OpenAi).unwrap(), None, "one entry per provider");
    // The parent removed ANTHROPIC_API_KEY, so `find` reads the keyring.
    assert_eq!(ring.find(ProviderId::Anthropic).unwrap(), Some(second));
    assert_eq!(ring.find(ProviderId::Ollama).unwrap(), None, "a local server takes no key");
    ring.delete(ProviderId::Anthropic).unwrap();
    ring.delete(ProviderId::Anthropic).unwrap();
    assert_eq!(ring.load(ProviderId::Anthropic).unwrap(), None);
    println!("keyring round trip passed");
}

#[cfg(target_os = "linux")]
#[test]
fn keys_round_trip_through_the_kernel_keyring() {
    let exe = std::env::current_exe().unwrap();
    let output = std::process::Command::new("keyctl")
        .args(["session", "-"])
        .arg(exe)
        .args(["--exact", "keys::keyring_child", "--ignored", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap_or_else(|error| panic!("keyctl could not run ({error}): install keyutils (apt-get install keyutils); ./dev test does"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("keyring round trip passed"),
        "the child test did not run: {stdout}\n{stderr}"
    );
}
