//! OpenAI's Chat Completions, and every server shaped like it (OpenRouter, Mistral, LM Studio,
//! vLLM, llama.cpp's server): its body, its tools, its image rule and which of its models see.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::{Value, json};

use super::FamilyRules;
use super::parts::{image_data, joined_text, pixels, role_name, to_tokens, tool_values};
use crate::plan::Role;
use crate::profile::{ModelProfile, RoleRules};
use crate::render::ChatRequest;
use crate::snapshot::{Part, ToolDefinition};
use crate::tokens::Tokenizer;

/// OpenAI-compatible servers.
pub(super) struct OpenAi;

impl FamilyRules for OpenAi {
    fn role_rules(&self) -> RoleRules {
        RoleRules::default()
    }

    fn default_tokenizer(&self) -> Tokenizer {
        Tokenizer::O200k
    }

    /// Scaled to fit 2048 × 2048, then its shorter side to 768; 85 tokens plus 170 for each
    /// 512-pixel tile (high detail, which `auto` picks for any image larger than one tile, so a
    /// plan never counts less than is sent).
    fn image_tokens(&self, width: u32, height: u32) -> u32 {
        let (w, h) = pixels(width, height);
        let fit = (2048.0 / w.max(h)).min(1.0);
        let (w, h) = (w * fit, h * fit);
        let shorter = (768.0 / w.min(h)).min(1.0);
        let (w, h) = (w * shorter, h * shorter);
        let tiles = (w / 512.0).ceil() * (h / 512.0).ceil();
        to_tokens(85.0 + 170.0 * tiles)
    }

    fn sees_images(&self, model: &str) -> bool {
        sees_by_name(model)
    }

    fn body_text(
        &self,
        request: &ChatRequest,
        tools: &[ToolDefinition],
        profile: &ModelProfile,
    ) -> String {
        serde_json::to_string(&openai_body(request, openai_tools(request, tools), profile))
            .unwrap_or_default()
    }
}

/// Tools as OpenAI's functions (Ollama takes the same).
pub(super) fn openai_tools(request: &ChatRequest, tools: &[ToolDefinition]) -> Vec<Value> {
    tool_values(tools, &request.tools, |name, description, parameters| {
        json!({
            "type": "function",
            "function": {"name": name, "description": description, "parameters": parameters}
        })
    })
}

/// Whether a model an OpenAI-compatible server or Ollama serves takes images, by its name:
/// OpenAI's GPT-4o, GPT-4.1, GPT-5, o1, o3 and o4-mini (not o1-mini, o1-preview or o3-mini) and
/// GPT-4 Turbo, and the open vision models by their usual names (LLaVA, Llama 3.2 Vision, Gemma 3
/// from 4B up, Qwen-VL, Pixtral, MiniCPM-V, Moondream, Mistral Small 3.1 and later). A model not
/// named here is taken not to see: sending it an image would fail at the provider, or worse, be
/// dropped without a word by a local server.
pub(super) fn sees_by_name(model: &str) -> bool {
    let name = model.to_ascii_lowercase();
    let name = name.rsplit('/').next().unwrap_or(&name);
    let openai = ["gpt-4o", "gpt-4.1", "gpt-4-turbo", "gpt-5", "o3", "o4", "chatgpt-4o"];
    let open = [
        "llava",
        "bakllava",
        "llama3.2-vision",
        "llama-3.2-11b-vision",
        "llama-3.2-90b-vision",
        "llama4",
        "qwen2-vl",
        "qwen2.5-vl",
        "qwen2.5vl",
        "qwen3-vl",
        "qwen-vl",
        "pixtral",
        "minicpm-v",
        "moondream",
        "granite3.2-vision",
        "mistral-small3.1",
        "mistral-small3.2",
        "mistral-small-3.1",
        "mistral-small-3.2",
        "gemini",
        "claude-3",
        "claude-sonnet",
        "claude-opus",
        "claude-haiku",
    ];
    // Gemma 3 sees from 4B up, whether named `gemma3:12b` (Ollama) or
    // `gemma-3-12b-it-Q4_K_M.gguf` (a llama.cpp file); its 1B and its 3n do not.
    let squashed: String = name.chars().filter(char::is_ascii_alphanumeric).collect();
    let gemma3_sees = squashed.starts_with("gemma3")
        && !squashed.starts_with("gemma31b")
        && !squashed.starts_with("gemma3n");
    // o1-mini, o1-preview and o3-mini take text only.
    let text_only = ["o1-mini", "o1-preview", "o3-mini"];
    let named =
        openai.iter().chain(&open).any(|prefix| name.starts_with(prefix)) || name.starts_with("o1");
    (named && !text_only.iter().any(|prefix| name.starts_with(prefix)))
        || gemma3_sees
        || name.contains("vision")
        || name.contains("-vl")
}

#[derive(Serialize)]
struct OpenAiBody<'a> {
    messages: Vec<OpenAiMessage<'a>>,
    model: &'a str,
    stream: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Value>,
}

#[derive(Serialize)]
struct OpenAiMessage<'a> {
    /// `null` for an assistant turn that only calls tools.
    content: Option<OpenAiContent<'a>>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    prefix: bool,
    role: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<OpenAiToolCall<'a>>,
}

/// A message's content: its text, or a list of parts when it carries images.
#[derive(Serialize)]
#[serde(untagged)]
enum OpenAiContent<'a> {
    Text(Cow<'a, str>),
    Parts(Vec<OpenAiContentPart<'a>>),
}

#[derive(Serialize)]
#[serde(untagged)]
enum OpenAiContentPart<'a> {
    Image {
        image_url: OpenAiImageUrl,
        #[serde(rename = "type")]
        kind: &'static str,
    },
    Text {
        text: Cow<'a, str>,
        #[serde(rename = "type")]
        kind: &'static str,
    },
}

#[derive(Serialize)]
struct OpenAiImageUrl {
    url: String,
}

#[derive(Serialize)]
struct OpenAiToolCall<'a> {
    function: OpenAiFunction<'a>,
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
struct OpenAiFunction<'a> {
    arguments: &'a str,
    name: &'a str,
}

fn openai_body<'a>(
    request: &'a ChatRequest,
    tools: Vec<Value>,
    profile: &'a ModelProfile,
) -> OpenAiBody<'a> {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    let plain = |role: &'static str, content: Cow<'a, str>| OpenAiMessage {
        content: Some(OpenAiContent::Text(content)),
        prefix: false,
        role,
        tool_call_id: None,
        tool_calls: Vec::new(),
    };
    if let Some(system) = &request.system {
        messages.push(plain("system", Cow::Borrowed(system)));
    }
    let last = request.messages.len().saturating_sub(1);
    for (i, m) in request.messages.iter().enumerate() {
        if m.role == Role::Tool {
            // One tool message per result.
            for p in &m.parts {
                if let Part::ToolResult { call_id, content } = p {
                    messages.push(OpenAiMessage {
                        tool_call_id: Some(call_id),
                        ..plain("tool", Cow::Borrowed(content))
                    });
                }
            }
            continue;
        }
        let text = joined_text(&m.parts);
        let tool_calls: Vec<OpenAiToolCall<'a>> = m
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::ToolCall { id, name, arguments } => Some(OpenAiToolCall {
                    function: OpenAiFunction { arguments, name },
                    id,
                    kind: "function",
                }),
                _ => None,
            })
            .collect();
        let images: Vec<OpenAiContentPart<'a>> = m
            .parts
            .iter()
            .filter_map(image_data)
            .map(|(media_type, data)| OpenAiContentPart::Image {
                image_url: OpenAiImageUrl { url: format!("data:{media_type};base64,{data}") },
                kind: "image_url",
            })
            .collect();
        let content = if images.is_empty() {
            (tool_calls.is_empty() || !text.is_empty()).then_some(OpenAiContent::Text(text))
        } else {
            let mut parts = images;
            if !text.is_empty() {
                parts.push(OpenAiContentPart::Text { text, kind: "text" });
            }
            Some(OpenAiContent::Parts(parts))
        };
        messages.push(OpenAiMessage {
            content,
            prefix: i == last && request.prefix_last_assistant,
            role: role_name(m.role),
            tool_call_id: None,
            tool_calls,
        });
    }
    OpenAiBody { messages, model: &profile.model, stream: true, tools }
}
