//! What the engine and the providers are handed, made from what the store holds: node records with
//! their edges and cached counts, model profiles with their learned calibration, endpoints and
//! sampling, and the token counts written with every node.

use anyhow::{Context, anyhow};
use pinloom_engine::profile::ModelProfile;
use pinloom_engine::snapshot::{self as engine, CachedCount, NodeRecord, ParentEdge};
use pinloom_engine::tokens::{Calibration, Tokenizer};
use pinloom_providers::catalog::{self, TokenizerFamily};
use pinloom_providers::{Endpoint, ProviderId, Sampling};
use pinloom_store as store;

use crate::error::ApiError;
use crate::json::SamplingSettings;

/// The exact tokenizers, under the family names the store keeps their counts by. The estimating
/// families are not stored: an estimate is a function of the text's length and of the model's
/// calibration, which changes as replies teach it, so it is made when planning.
pub(crate) const EXACT_FAMILIES: [(&str, Tokenizer); 4] = [
    ("o200k", Tokenizer::O200k),
    ("cl100k", Tokenizer::Cl100k),
    ("llama3", Tokenizer::Llama3),
    ("qwen", Tokenizer::Qwen),
];

/// The families counted whenever a message is written: the two most profiles use. The open
/// models' counts are made the first time a plan for such a model needs them, and stored then
/// (`Conversation`), so a person without local models pays nothing for them.
pub(crate) const COUNTED_WHEN_WRITTEN: [(&str, Tokenizer); 2] =
    [EXACT_FAMILIES[0], EXACT_FAMILIES[1]];

/// Loads the vocabularies written messages are counted with, each on a thread of its own, and
/// waits for both: a batch of messages (an import, a sync) counts with both at once, and each
/// load is mostly checking its table snapshot, which two cores do side by side.
pub(crate) fn load_written_counters() {
    std::thread::scope(|scope| {
        for (_, tokenizer) in COUNTED_WHEN_WRITTEN {
            scope.spawn(move || {
                if let Err(error) = tokenizer.load_ahead() {
                    tracing::warn!("{error}; its counts fall back to one token a byte");
                }
            });
        }
    });
}

/// The stored family name of an exact tokenizer.
pub(crate) fn exact_family(tokenizer: Tokenizer) -> Option<&'static str> {
    EXACT_FAMILIES.iter().find(|(_, exact)| *exact == tokenizer).map(|(name, _)| *name)
}

/// A node's stored counts (as written with it) as the engine's tokenizers.
pub(crate) fn stored_counts(counts: &[(String, u64)]) -> Vec<(Tokenizer, u64)> {
    counts
        .iter()
        .filter_map(|(family, tokens)| {
            EXACT_FAMILIES
                .iter()
                .find(|(name, _)| name == family)
                .map(|(_, tokenizer)| (*tokenizer, *tokens))
        })
        .collect()
}

/// The counts stored with a node when it is written: one per family counted then, summed over its
/// parts as the engine counts them (tool calls by their arguments, results by their content).
pub(crate) fn token_counts(parts: &[store::Part]) -> Vec<(String, u64)> {
    let parts: Vec<engine::Part> = parts.iter().cloned().map(into_engine_part).collect();
    COUNTED_WHEN_WRITTEN
        .iter()
        .map(|(name, tokenizer)| {
            let tokens = parts.iter().map(|part| u64::from(tokenizer.count_u32(part.text()))).sum();
            ((*name).to_owned(), tokens)
        })
        .collect()
}

/// A stored part as the engine's, moved: a long path's text is not copied again.
fn into_engine_part(part: store::Part) -> engine::Part {
    match part {
        store::Part::Text { text } => engine::Part::Text(text),
        store::Part::ToolCall { id, name, arguments } => {
            engine::Part::ToolCall { id, name, arguments }
        }
        store::Part::ToolResult { call_id, content } => {
            engine::Part::ToolResult { call_id, content }
        }
    }
}

pub(crate) fn engine_author(author: store::Author) -> engine::Author {
    match author {
        store::Author::Human => engine::Author::Human,
        store::Author::Model => engine::Author::Model,
        store::Author::Tool => engine::Author::Tool,
    }
}

pub(crate) fn engine_node(id: store::NodeId) -> engine::NodeId {
    // Row ids are positive; a negative one would be damage, and maps far from any real id.
    engine::NodeId(u64::try_from(id.0).unwrap_or(u64::MAX))
}

pub(crate) fn engine_pin(id: store::PinId) -> engine::PinId {
    engine::PinId(u64::try_from(id.0).unwrap_or(u64::MAX))
}

pub(crate) fn engine_thread(pin: Option<store::PinId>) -> engine::ThreadRef {
    pin.map_or(engine::ThreadRef::Root, |pin| engine::ThreadRef::Pin(engine_pin(pin)))
}

/// The record of `node`, which follows `previous` on its path: a pin edge where the thread
/// changes, a continuation otherwise. `counts` are its stored exact counts.
pub(crate) fn node_record(
    node: store::PathStep,
    previous: Option<(engine::NodeId, Option<store::PinId>)>,
    counts: &[(Tokenizer, u64)],
) -> NodeRecord {
    let edge = match previous {
        None => ParentEdge::Root,
        Some((parent, thread)) => match node.pin_id {
            Some(pin) if Some(pin) != thread => ParentEdge::Pin { parent, pin: engine_pin(pin) },
            _ => ParentEdge::Continuation(parent),
        },
    };
    NodeRecord {
        id: engine_node(node.id),
        edge,
        author: engine_author(node.author),
        parts: match node.content {
            store::StepContent::Text(text) => vec![engine::Part::Text(text)],
            store::StepContent::Parts(parts) => parts.into_iter().map(into_engine_part).collect(),
        },
        created_at_ms: node.created_at_ms,
        excluded: node.excluded,
        // The store refuses a path through a soft-deleted node.
        pruned: false,
        bookmarked: node.bookmarked,
        include_annotation: false,
        kept: node.kept,
        cached_tokens: counts
            .iter()
            .map(|(tokenizer, tokens)| CachedCount {
                tokenizer: tokenizer.id(),
                tokens: u32::try_from(*tokens).unwrap_or(u32::MAX),
            })
            .collect(),
    }
}

/// Annotations enter the engine's chain as nodes of their own; their ids live above every row id
/// so the two can never meet, and the report maps them back.
pub(crate) const ANNOTATION_ID_BASE: u64 = 1 << 62;

/// A model profile as the engine, the providers and the calibration need it.
#[derive(Debug, Clone)]
pub(crate) struct ModelChoice {
    /// The profile's name (calibrations and summaries are kept under it).
    pub(crate) name: String,
    pub(crate) provider: ProviderId,
    pub(crate) endpoint: Endpoint,
    pub(crate) engine: ModelProfile,
    pub(crate) sampling: Sampling,
    /// Whether the model can continue a document (buffer mode).
    pub(crate) completion: bool,
    /// How contexts for it are assembled, where the tree does not say.
    pub(crate) assembly: crate::json::AssemblySettings,
    /// What it costs, when the person entered prices.
    pub(crate) prices: Option<crate::json::Prices>,
}

impl ModelChoice {
    /// This choice with one send's sampling over the profile's: a temperature from 0 to 2, a
    /// top-p from 0 to 1, a reply limit of at least one token and less than the window (the
    /// plan keeps it free, as it keeps the profile's).
    pub(crate) fn tuned(mut self, sampling: &SamplingSettings) -> Result<ModelChoice, ApiError> {
        if let Some(temperature) = sampling.temperature {
            if !(0.0..=2.0).contains(&temperature) {
                return Err(ApiError::invalid_input(format!(
                    "temperature {temperature} is out of range: give one from 0 to 2"
                )));
            }
            self.sampling.temperature = Some(temperature);
        }
        if let Some(top_p) = sampling.top_p {
            if !(0.0..=1.0).contains(&top_p) {
                return Err(ApiError::invalid_input(format!(
                    "top_p {top_p} is out of range: give one from 0 to 1"
                )));
            }
            self.sampling.top_p = Some(top_p);
        }
        if let Some(limit) = sampling.max_output_tokens {
            let window = self.engine.context_window;
            let limit = u32::try_from(limit).ok().filter(|limit| (1..window).contains(limit));
            let Some(limit) = limit else {
                return Err(ApiError::invalid_input(format!(
                    "max_tokens must be at least 1 and less than {}'s window of {window} tokens",
                    self.name
                )));
            };
            self.sampling.max_output_tokens = Some(limit);
            self.engine.reserve = limit;
        }
        Ok(self)
    }

    /// The choice a stored profile makes, its estimate corrected by the learned calibration.
    pub(crate) fn from_record(
        record: &store::ModelProfile,
        calibration: Option<u32>,
    ) -> anyhow::Result<ModelChoice> {
        let provider = ProviderId::from_name(&record.provider).ok_or_else(|| {
            ApiError::invalid_input(format!(
                "the profile {} names an unknown provider \"{}\"; edit it in its Budget",
                record.name, record.provider
            ))
        })?;
        let family = TokenizerFamily::from_name(&record.tokenizer).ok_or_else(|| {
            ApiError::invalid_input(format!(
                "the profile {} names an unknown tokenizer \"{}\"; edit it in its Budget",
                record.name, record.tokenizer
            ))
        })?;
        // The engine's rules by model name (role rules, overhead) stay; the stored numbers win.
        let sampling = sampling_from_json(&record.sampling_json).with_context(|| {
            format!("the profile {} has unreadable sampling settings", record.name)
        })?;
        let mut engine = catalog::profile(provider, &record.model_id);
        engine.context_window = record.context_window;
        // The reply limit is one number: the longest reply when the profile sets one, else the
        // reserve. The plan keeps it free and the request asks for exactly it.
        engine.reserve = sampling.max_output_tokens.unwrap_or(record.reserve);
        engine.native_system = record.native_system;
        engine.system_prompt = record.agent_system_prompt.clone();
        engine.tokenizer = match (family.tokenizer(), calibration) {
            (Tokenizer::Estimate(_), Some(milli)) => {
                Tokenizer::Estimate(Calibration { milli_chars_per_token: milli })
            }
            (tokenizer, _) => tokenizer,
        };
        let assembly: crate::json::AssemblySettings =
            serde_json::from_str(&record.settings_json).unwrap_or_default();
        if let Some(on) = assembly.cache_breakpoints {
            engine.cache_breakpoints = on;
        }
        if let Some(sees) = assembly.sees_images {
            engine.sees_images = sees;
        }
        let endpoint = match &record.base_url {
            Some(url) => Endpoint::at(provider, url),
            None => Endpoint::new(provider),
        };
        Ok(ModelChoice {
            name: record.name.clone(),
            provider,
            endpoint,
            engine,
            sampling,
            completion: record.completion_endpoint,
            assembly,
            // Unreadable prices read as none: a cost left out is better than a wrong one.
            prices: record.prices_json.as_deref().and_then(|json| serde_json::from_str(json).ok()),
        })
    }
}

/// Sampling as profiles store it (the JSON of [`SamplingSettings`]), as the providers send it.
fn sampling_from_json(text: &str) -> anyhow::Result<Sampling> {
    let stored: SamplingSettings = serde_json::from_str(text)?;
    let max_output_tokens = match stored.max_output_tokens {
        None => None,
        Some(max) => Some(
            u32::try_from(max)
                .map_err(|_| anyhow!("maxOutputTokens must be a whole number of tokens"))?,
        ),
    };
    Ok(Sampling { temperature: stored.temperature, top_p: stored.top_p, max_output_tokens })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_counts_equal_what_the_engine_counts() {
        let parts = vec![
            store::Part::Text { text: "Rivers meander.".into() },
            store::Part::ToolCall {
                id: "c1".into(),
                name: "search".into(),
                arguments: r#"{"q":"oxbow"}"#.into(),
            },
        ];
        let counts = token_counts(&parts);
        let names: Vec<&str> = counts.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, ["o200k", "cl100k"]);
        let expected =
            Tokenizer::O200k.count("Rivers meander.") + Tokenizer::O200k.count(r#"{"q":"oxbow"}"#);
        assert_eq!(counts[0].1, expected);
    }

    #[test]
    fn sampling_fields_are_optional_and_checked() {
        let sampling = sampling_from_json(r#"{"temperature":0.5,"maxOutputTokens":256}"#).unwrap();
        assert_eq!(sampling.temperature, Some(0.5));
        assert_eq!(sampling.max_output_tokens, Some(256));
        assert_eq!(sampling_from_json("{}").unwrap(), Sampling::default());
        assert!(sampling_from_json(r#"{"maxOutputTokens":-3}"#).is_err());
    }
}
