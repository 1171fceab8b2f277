//! Ollama's native `/api/chat`: its body (with the window it must be told), its image rule and
//! which of its models see (by the same names as an OpenAI-compatible server's).

use std::borrow::Cow;

use serde::Serialize;
use serde_json::{Value, json};

use super::FamilyRules;
use super::openai::{openai_tools, sees_by_name};
use super::parts::{arguments_value, image_data, joined_text, role_name};
use crate::plan::Role;
use crate::profile::{ModelProfile, RoleRules};
use crate::render::ChatRequest;
use crate::snapshot::{Part, ToolDefinition};
use crate::tokens::{Calibration, Tokenizer};

/// Ollama.
pub(super) struct Ollama;

impl FamilyRules for Ollama {
    fn role_rules(&self) -> RoleRules {
        RoleRules::default()
    }

    fn default_tokenizer(&self) -> Tokenizer {
        Tokenizer::Estimate(Calibration::LOCAL_START)
    }

    /// The vision models Ollama serves encode an image as a fixed grid; 576 tokens is LLaVA's (a
    /// 24 × 24 grid), the largest of the common ones, so a plan leaves room rather than runs over.
    fn image_tokens(&self, _: u32, _: u32) -> u32 {
        576
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
        serde_json::to_string(&ollama_body(request, openai_tools(request, tools), profile))
            .unwrap_or_default()
    }
}

#[derive(Serialize)]
struct OllamaBody<'a> {
    messages: Vec<OllamaMessage<'a>>,
    model: &'a str,
    options: OllamaOptions,
    stream: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Value>,
}

#[derive(Serialize)]
struct OllamaMessage<'a> {
    content: Cow<'a, str>,
    /// Images in base64, which Ollama takes beside the text rather than as parts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    images: Vec<&'a str>,
    role: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<Value>,
}

#[derive(Serialize)]
struct OllamaOptions {
    num_ctx: u32,
}

fn ollama_body<'a>(
    request: &'a ChatRequest,
    tools: Vec<Value>,
    profile: &'a ModelProfile,
) -> OllamaBody<'a> {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if let Some(system) = &request.system {
        messages.push(OllamaMessage {
            content: Cow::Borrowed(system),
            images: Vec::new(),
            role: "system",
            tool_calls: Vec::new(),
        });
    }
    for m in &request.messages {
        if m.role == Role::Tool {
            for p in &m.parts {
                if let Part::ToolResult { content, .. } = p {
                    messages.push(OllamaMessage {
                        content: Cow::Borrowed(content),
                        images: Vec::new(),
                        role: "tool",
                        tool_calls: Vec::new(),
                    });
                }
            }
            continue;
        }
        let tool_calls = m
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::ToolCall { name, arguments, .. } => Some(
                    json!({"function": {"name": name, "arguments": arguments_value(arguments)}}),
                ),
                _ => None,
            })
            .collect();
        messages.push(OllamaMessage {
            content: joined_text(&m.parts),
            images: m.parts.iter().filter_map(image_data).map(|(_, data)| data).collect(),
            role: role_name(m.role),
            tool_calls,
        });
    }
    OllamaBody {
        messages,
        model: &profile.model,
        // Always sent: without it Ollama silently truncates to its default (engine_anchors §3).
        options: OllamaOptions { num_ctx: profile.context_window },
        stream: true,
        tools,
    }
}
