//! `pinloom models`, `pinloom keys` and `pinloom doctor`: the models a person can send to, the
//! keys they need, and whether this machine is ready, without the window.

use std::io::{IsTerminal, Read};

use clap::{Args, Subcommand, ValueEnum};
use pinloom_app::json::ModelProfile;
use pinloom_app::{ApiError, LOCAL_SERVERS_VARIABLE, Pinloom};

/// What `pinloom models` does; listing them when no action is given.
#[derive(Debug, Subcommand)]
pub(crate) enum ModelsAction {
    /// Add a model profile: checked as the window's budget panel checks one (a known provider
    /// and counter, a reply limit below the window). What is not given is what Pinloom knows of
    /// the model, or what its local server reports.
    Add {
        /// Its name, as `--model`/`-m` and `models default` take it.
        name: String,
        /// The provider: openai, anthropic, gemini, openrouter, mistral, or a local server:
        /// ollama, llamacpp, lmstudio, vllm (vllm for any other server that speaks OpenAI's
        /// chat API, with --url).
        #[arg(long)]
        provider: String,
        /// The model's id, as the provider names it (gpt-4o, claude-sonnet-4-5, llama3.2).
        #[arg(long)]
        model: String,
        #[command(flatten)]
        fields: ProfileFields,
    },
    /// Change a model profile: each option given changes one field.
    Edit {
        /// The profile's name.
        name: String,
        /// The provider.
        #[arg(long)]
        provider: Option<String>,
        /// The model's id.
        #[arg(long)]
        model: Option<String>,
        #[command(flatten)]
        fields: ProfileFields,
    },
    /// Delete a model profile (replies it wrote keep its name).
    Remove {
        /// The profile's name.
        name: String,
    },
    /// The model `ask`, `pin` and `context` use when none is named and the thread names none;
    /// shown when no name is given.
    Default {
        /// The profile's name.
        name: Option<String>,
    },
    /// Models the local servers on their usual ports (or in PINLOOM_LOCAL_SERVERS) offer that no
    /// profile names yet, each with the command that adds it.
    Found,
    /// Make a profile that came with an imported file yours: until then it is never sent to.
    Enable {
        /// The profile's name.
        name: String,
    },
}

/// The fields `models add` and `models edit` share.
#[derive(Debug, Args)]
pub(crate) struct ProfileFields {
    /// Where the provider listens (a local server's address, with /v1 for OpenAI's API).
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// The context window, in tokens.
    #[arg(long, value_name = "TOKENS")]
    window: Option<i64>,
    /// The most tokens a reply may have, kept free in every request (less than the window).
    #[arg(long, value_name = "TOKENS")]
    reply: Option<i64>,
    /// How its tokens are counted: o200k, cl100k, llama3, qwen, claude, gemini, or other (an
    /// estimate Pinloom calibrates from what the provider counts).
    #[arg(long)]
    tokenizer: Option<String>,
    /// The system text every request to it starts with.
    #[arg(long, value_name = "TEXT")]
    system: Option<String>,
    /// Whether it takes images (said when its name does not tell).
    #[arg(long, value_name = "yes|no")]
    sees_images: Option<YesNo>,
}

/// An answer to a yes-or-no option.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum YesNo {
    Yes,
    No,
}

/// What `pinloom keys` does.
#[derive(Debug, Subcommand)]
pub(crate) enum KeysAction {
    /// Which providers have a key, and whether from the environment or the OS keyring.
    List,
    /// Store a provider's key in the OS keyring, read from standard input (never an argument,
    /// which the shell's history would keep): `pinloom keys set anthropic < key.txt`, or type it.
    Set {
        /// The provider (anthropic, openai, gemini, …).
        provider: String,
        /// Refused: a key given here would stay in the shell's history.
        #[arg(hide = true)]
        key: Option<String>,
    },
    /// Remove a provider's key from the OS keyring.
    Forget {
        /// The provider.
        provider: String,
    },
}

/// Runs `pinloom models …`.
pub(crate) async fn models(
    pinloom: &Pinloom,
    action: Option<ModelsAction>,
    json: bool,
) -> anyhow::Result<String> {
    match action {
        None => list(pinloom, json).await,
        Some(ModelsAction::Add { name, provider, model, fields }) => {
            if pinloom.model_profiles().await?.iter().any(|profile| profile.name == name) {
                anyhow::bail!(ApiError::invalid_input(format!(
                    "there is a profile named {name:?} already: `pinloom models edit` changes it"
                )));
            }
            // A window the person gives is not asked of the server.
            let ask_server = fields.window.is_none();
            let url = fields.url.clone();
            let profile = pinloom.profile_known(name, provider, model, url, ask_server).await?;
            let saved = pinloom.save_model_profile(fields.apply(profile)).await?;
            Ok(format!("Added {}.\n{}", saved.name, described(&saved)))
        }
        Some(ModelsAction::Edit { name, provider, model, fields }) => {
            let profiles = pinloom.model_profiles().await?;
            let Some(mut profile) = profiles.into_iter().find(|profile| profile.name == name)
            else {
                anyhow::bail!(ApiError::not_found(format!(
                    "there is no model profile named {name:?}: `pinloom models` lists them"
                )));
            };
            if let Some(provider) = provider {
                profile.provider = provider;
            }
            if let Some(model) = model {
                profile.model_id = model;
            }
            let saved = pinloom.save_model_profile(fields.apply(profile)).await?;
            Ok(format!("Changed {}.\n{}", saved.name, described(&saved)))
        }
        Some(ModelsAction::Remove { name }) => {
            pinloom.delete_model_profile(name.clone()).await?;
            Ok(format!("Removed {name}."))
        }
        Some(ModelsAction::Default { name: Some(name) }) => {
            let chosen = pinloom.set_default_profile(name).await?;
            Ok(format!(
                "{} answers from now on when no model is named and the thread names none.",
                chosen.name
            ))
        }
        Some(ModelsAction::Default { name: None }) => Ok(match pinloom.default_profile().await? {
            Some(name) => name,
            None => "No default is chosen: a send uses the model of the thread's last reply, \
                     else the first by name that can answer (`pinloom models default NAME` \
                     chooses one)."
                .to_owned(),
        }),
        Some(ModelsAction::Found) => found(pinloom).await,
        Some(ModelsAction::Enable { name }) => {
            let enabled = pinloom.enable_model_profile(name).await?;
            Ok(format!(
                "{} is yours now: it may be sent to and chosen as the default.",
                enabled.name
            ))
        }
    }
}

impl ProfileFields {
    /// `profile` with what was given set on it.
    fn apply(self, mut profile: ModelProfile) -> ModelProfile {
        if let Some(url) = self.url {
            profile.base_url = Some(url).filter(|url| !url.trim().is_empty());
        }
        if let Some(window) = self.window {
            profile.context_window = window;
            // A known model's reserve may not fit a smaller window a local server runs it with.
            if self.reply.is_none() && profile.reserve >= window {
                profile.reserve = (window / 4).max(1);
            }
        }
        if let Some(reply) = self.reply {
            profile.reserve = reply;
            profile.sampling.max_output_tokens = None;
        }
        if let Some(tokenizer) = self.tokenizer {
            profile.tokenizer = tokenizer;
        }
        if let Some(system) = self.system {
            profile.agent_system_prompt = system;
        }
        if let Some(sees) = self.sees_images {
            profile.assembly.sees_images = Some(sees == YesNo::Yes);
        }
        profile
    }
}

/// A profile in one line: provider, model, where, window and reply limit.
fn described(profile: &ModelProfile) -> String {
    let at = profile.base_url.as_deref().map(|url| format!(" at {url}")).unwrap_or_default();
    format!(
        "{} {}{at}: {} tokens of window, replies up to {}, counted as {}",
        profile.provider,
        profile.model_id,
        profile.context_window,
        profile.sampling.max_output_tokens.unwrap_or(profile.reserve),
        profile.tokenizer
    )
}

/// `pinloom models`: every profile the person can send to, and whether it can answer now.
async fn list(pinloom: &Pinloom, json: bool) -> anyhow::Result<String> {
    let profiles = pinloom.model_profiles().await?;
    let ready = pinloom.models_ready().await?;
    let default = pinloom.default_profile().await?;
    if json {
        return Ok(serde_json::to_string_pretty(&serde_json::json!({
            "profiles": profiles,
            "ready": ready,
            "default": default,
        }))?);
    }
    Ok(profiles
        .iter()
        .map(|profile| {
            let state = if let Some(file) = &profile.imported_from {
                format!(
                    "came with {file}: `pinloom models enable {:?}` makes it yours",
                    profile.name
                )
            } else if ready.ready.contains(&profile.name) {
                "ready".to_owned()
            } else {
                ready
                    .waiting
                    .iter()
                    .find(|waiting| waiting.profile == profile.name)
                    .map_or_else(|| "not ready".to_owned(), |waiting| waiting.reason.clone())
            };
            let marked = if default.as_deref() == Some(profile.name.as_str()) {
                format!("{} (default)", profile.name)
            } else {
                profile.name.clone()
            };
            format!(
                "{marked}\t{}\t{}\t{} tokens\t{state}",
                profile.provider, profile.model_id, profile.context_window
            )
        })
        .collect::<Vec<_>>()
        .join("\n"))
}

/// `pinloom models found`: what the local servers offer, each with the command that adds it.
async fn found(pinloom: &Pinloom) -> anyhow::Result<String> {
    let found = pinloom.models_ready().await?.found;
    if found.is_empty() {
        return Ok(format!(
            "No local server answered on the usual ports (Ollama 11434, llama.cpp 8080, LM \
             Studio 1234, vLLM 8000); set {LOCAL_SERVERS_VARIABLE}=llamacpp=http://HOST:PORT/v1 \
             to look elsewhere, or add one with `pinloom models add NAME --provider P --model M \
             --url U`."
        ));
    }
    Ok(found
        .iter()
        .map(|found| {
            let profile = &found.profile;
            let url =
                profile.base_url.as_deref().map(|url| format!(" --url {url}")).unwrap_or_default();
            format!(
                "{}: {} ({} tokens of window)\n  pinloom models add {:?} --provider {} --model {:?}{url} --window {}",
                found.server,
                profile.model_id,
                profile.context_window,
                profile.name,
                profile.provider,
                profile.model_id,
                profile.context_window,
            )
        })
        .collect::<Vec<_>>()
        .join("\n"))
}

/// The sync passphrase: PINLOOM_SYNC_PASSPHRASE when set, else asked for without echo in a
/// terminal, else the first line of standard input.
pub(crate) fn read_passphrase() -> anyhow::Result<String> {
    if let Ok(passphrase) = std::env::var("PINLOOM_SYNC_PASSPHRASE")
        && !passphrase.is_empty()
    {
        return Ok(passphrase);
    }
    let unreadable = |error: std::io::Error| {
        ApiError::invalid_input(format!(
            "could not read the passphrase from standard input: {error}"
        ))
    };
    let line = if std::io::stdin().is_terminal() {
        rpassword::prompt_password("Sync passphrase: ").map_err(unreadable)?
    } else {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).map_err(unreadable)?;
        line
    };
    let passphrase = line.trim_end_matches(['\r', '\n']).to_owned();
    if passphrase.trim().is_empty() {
        anyhow::bail!(ApiError::invalid_input(
            "the passphrase is empty: type it when asked, or pipe it in (`pinloom sync --passphrase < file`)"
        ));
    }
    Ok(passphrase)
}

/// Runs `pinloom keys …`.
pub(crate) async fn keys(pinloom: &Pinloom, action: KeysAction) -> anyhow::Result<String> {
    match action {
        KeysAction::List => list_keys(pinloom).await,
        KeysAction::Set { key: Some(_), .. } => anyhow::bail!(ApiError::invalid_input(
            "a key given as an argument stays in the shell's history: nothing was stored; pipe \
             it in instead (`pinloom keys set PROVIDER < key.txt`) or type it when asked"
        )),
        KeysAction::Set { provider, key: None } => {
            let stdin = std::io::stdin();
            if stdin.is_terminal() {
                eprint!("Paste the {provider} key and press Enter: ");
            }
            let mut key = String::new();
            if stdin.is_terminal() {
                stdin.read_line(&mut key)
            } else {
                stdin.lock().read_to_string(&mut key)
            }
            .map_err(|error| {
                ApiError::invalid_input(format!(
                    "could not read the key from standard input: {error}"
                ))
            })?;
            let variable = pinloom
                .key_status()
                .await
                .unwrap_or_default()
                .into_iter()
                .find(|status| status.provider == provider)
                .map(|status| status.variable);
            match pinloom.save_api_key(provider.clone(), key).await {
                Ok(()) => Ok(format!("The {provider} key is in the OS keyring.")),
                Err(error) => {
                    let error = ApiError::from(error);
                    // The keyring's own words are long; what to do instead is what matters.
                    match (error.code, variable) {
                        (pinloom_app::ErrorCode::ProviderKey, Some(variable)) => {
                            anyhow::bail!(ApiError::invalid_input(format!(
                                "the OS keyring cannot be used here, nothing was stored: set \
                                 {variable} in the environment instead"
                            )))
                        }
                        _ => Err(error.into()),
                    }
                }
            }
        }
        KeysAction::Forget { provider } => {
            pinloom.forget_api_key(provider.clone()).await?;
            Ok(format!("The {provider} key is no longer in the OS keyring."))
        }
    }
}

/// `pinloom keys list`: where each provider's key comes from, never the key.
async fn list_keys(pinloom: &Pinloom) -> anyhow::Result<String> {
    Ok(pinloom
        .key_status()
        .await?
        .iter()
        .map(|status| {
            let source = match (status.from_environment, status.in_keyring, &status.problem) {
                (true, _, _) => format!("from {}", status.variable),
                (false, true, _) => "in the OS keyring".to_owned(),
                // The keyring's own words are long (the window shows them in Settings).
                (false, false, Some(_)) => {
                    format!("none: the OS keyring cannot be used here; set {}", status.variable)
                }
                (false, false, None) => format!(
                    "none: `pinloom keys set {}` or set {}",
                    status.provider, status.variable
                ),
            };
            format!("{}\t{source}", status.display_name)
        })
        .collect::<Vec<_>>()
        .join("\n"))
}

/// `pinloom doctor`: whether this machine can do what Pinloom does, and what to do where not.
pub(crate) async fn doctor(pinloom: &Pinloom) -> anyhow::Result<String> {
    let mut lines = vec![
        format!("database: {}", pinloom.database_path().display()),
        format!("schema: version {} (this build's)", pinloom_app::SCHEMA_VERSION),
    ];
    let keys = match pinloom.key_status().await {
        Ok(keys) => keys,
        Err(error) => {
            lines.push(format!("keyring: {}", ApiError::from(error).message));
            Vec::new()
        }
    };
    match keys.iter().find_map(|key| key.problem.as_ref()) {
        Some(_) => lines.push(
            "keyring: cannot be used here; keys come from the environment only \
             (`pinloom keys list` names each variable)"
                .to_owned(),
        ),
        None if !keys.is_empty() => lines.push("keyring: usable".to_owned()),
        None => {}
    }
    for key in keys.iter().filter(|key| key.from_environment || key.in_keyring) {
        let from = if key.from_environment { key.variable.as_str() } else { "the OS keyring" };
        lines.push(format!("key: {} from {from}", key.display_name));
    }
    let ready = pinloom.models_ready().await?;
    let default = pinloom.default_profile().await?;
    lines.push(format!(
        "models: {} ready, {} not; default: {}",
        ready.ready.len(),
        ready.waiting.len(),
        default.as_deref().unwrap_or("none chosen")
    ));
    lines.extend(ready.ready.iter().map(|name| format!("  ready: {name}")));
    // Profiles waiting for the same thing (a provider's key) are said once.
    let mut reasons: Vec<(&str, Vec<&str>)> = Vec::new();
    for waiting in &ready.waiting {
        match reasons.iter_mut().find(|(reason, _)| *reason == waiting.reason) {
            Some((_, names)) => names.push(&waiting.profile),
            None => reasons.push((&waiting.reason, vec![&waiting.profile])),
        }
    }
    for (reason, names) in reasons {
        lines.push(format!("  not ready: {}: {reason}", names.join(", ")));
    }
    if ready.found.is_empty() {
        lines.push(
            "local servers: none answered (`pinloom models found` says where it looked)".to_owned(),
        );
    }
    for found in &ready.found {
        lines.push(format!(
            "local server: {} offers {} (`pinloom models found` adds it)",
            found.server, found.profile.model_id
        ));
    }
    lines.push(match pinloom.git_version().await {
        Some(version) => format!("git: {version} (sync works)"),
        None => "git: not found; `pinloom sync` needs it (apt-get install git)".to_owned(),
    });
    Ok(lines.join("\n"))
}
