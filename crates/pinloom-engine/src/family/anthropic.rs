//! Anthropic's Messages: its body (with cache breakpoints), its tools, its image rule and which
//! of its models see.

use serde::Serialize;
use serde_json::{Value, json};

use super::FamilyRules;
use super::parts::{Turn, arguments_value, pixels, push_merged, to_tokens, tool_values};
use crate::plan::Role;
use crate::profile::{ModelProfile, RoleRules};
use crate::render::ChatRequest;
use crate::snapshot::{Part, ToolDefinition};
use crate::tokens::{Calibration, Tokenizer};

/// Anthropic.
pub(super) struct Anthropic;

impl FamilyRules for Anthropic {
    fn role_rules(&self) -> RoleRules {
        RoleRules { first_user: true, ..RoleRules::default() }
    }

    fn default_tokenizer(&self) -> Tokenizer {
        Tokenizer::Estimate(Calibration::ANTHROPIC_START)
    }

    fn marks_cache_breakpoints(&self) -> bool {
        true
    }

    /// Scaled so its long edge is at most 1568 and it has at most 1.15 megapixels;
    /// width × height / 750.
    fn image_tokens(&self, width: u32, height: u32) -> u32 {
        let (w, h) = pixels(width, height);
        let edge = (1568.0 / w.max(h)).min(1.0);
        let pixels = (1_150_000.0 / (w * h)).sqrt().min(1.0);
        let scale = edge.min(pixels);
        to_tokens((w * scale * h * scale / 750.0).ceil())
    }

    /// Every Claude from the 3 family on.
    fn sees_images(&self, model: &str) -> bool {
        let name = model.to_ascii_lowercase();
        let name = name.rsplit('/').next().unwrap_or(&name);
        !name.starts_with("claude-2") && !name.starts_with("claude-instant")
    }

    fn body_text(
        &self,
        request: &ChatRequest,
        tools: &[ToolDefinition],
        profile: &ModelProfile,
    ) -> String {
        serde_json::to_string(&anthropic_body(request, anthropic_tools(request, tools), profile))
            .unwrap_or_default()
    }
}

fn anthropic_tools(request: &ChatRequest, tools: &[ToolDefinition]) -> Vec<Value> {
    tool_values(
        tools,
        &request.tools,
        |name, description, schema| json!({"name": name, "description": description, "input_schema": schema}),
    )
}

#[derive(Serialize)]
struct AnthropicBody<'a> {
    max_tokens: u32,
    messages: Vec<Turn<AnthropicBlock<'a>>>,
    model: &'a str,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<AnthropicSystem<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Value>,
}

/// Anthropic's system field: a string, or one text block carrying a cache breakpoint.
#[derive(Serialize)]
#[serde(untagged)]
enum AnthropicSystem<'a> {
    Text(&'a str),
    Cached([CachedText<'a>; 1]),
}

#[derive(Serialize)]
struct CachedText<'a> {
    cache_control: CacheControl,
    text: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
}

/// Anthropic's breakpoint: everything up to and including the block is cached for five minutes.
#[derive(Serialize, Clone, Copy)]
struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
}

const EPHEMERAL: CacheControl = CacheControl { kind: "ephemeral" };

#[derive(Serialize)]
#[serde(untagged)]
enum AnthropicBlock<'a> {
    Text {
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
        text: &'a str,
        #[serde(rename = "type")]
        kind: &'static str,
    },
    ToolUse {
        id: &'a str,
        input: Value,
        name: &'a str,
        #[serde(rename = "type")]
        kind: &'static str,
    },
    ToolResult {
        content: &'a str,
        tool_use_id: &'a str,
        #[serde(rename = "type")]
        kind: &'static str,
    },
    Image {
        source: AnthropicImageSource<'a>,
        #[serde(rename = "type")]
        kind: &'static str,
    },
}

#[derive(Serialize)]
struct AnthropicImageSource<'a> {
    data: &'a str,
    media_type: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
}

fn anthropic_body<'a>(
    request: &'a ChatRequest,
    tools: Vec<Value>,
    profile: &'a ModelProfile,
) -> AnthropicBody<'a> {
    let mut messages: Vec<Turn<AnthropicBlock<'a>>> = Vec::with_capacity(request.messages.len());
    for m in &request.messages {
        let role = if m.role == Role::Assistant { "assistant" } else { "user" };
        let blocks = m
            .parts
            .iter()
            .map(|p| match p {
                Part::Text(text) => {
                    AnthropicBlock::Text { cache_control: None, text, kind: "text" }
                }
                Part::ToolCall { id, name, arguments } => AnthropicBlock::ToolUse {
                    id,
                    input: arguments_value(arguments),
                    name,
                    kind: "tool_use",
                },
                Part::ToolResult { call_id, content } => AnthropicBlock::ToolResult {
                    content,
                    tool_use_id: call_id,
                    kind: "tool_result",
                },
                Part::Image { media_type, data } => AnthropicBlock::Image {
                    source: AnthropicImageSource { data, media_type, kind: "base64" },
                    kind: "image",
                },
            })
            .collect();
        push_merged(&mut messages, role, blocks);
    }
    let system = request.system.as_deref().map(|text| {
        if profile.cache_breakpoints {
            AnthropicSystem::Cached([CachedText { cache_control: EPHEMERAL, text, kind: "text" }])
        } else {
            AnthropicSystem::Text(text)
        }
    });
    if profile.cache_breakpoints {
        // The newest turn before the prompt ends the prefix the next request repeats; the
        // system breakpoint covers the tools and the system text when no turn does yet.
        let before_prompt = messages.len().checked_sub(2).and_then(|i| messages.get_mut(i));
        if let Some(turn) = before_prompt
            && let Some(AnthropicBlock::Text { cache_control, .. }) = turn
                .content
                .iter_mut()
                .rev()
                .find(|block| matches!(block, AnthropicBlock::Text { .. }))
        {
            *cache_control = Some(EPHEMERAL);
        }
    }
    AnthropicBody {
        max_tokens: profile.reserve,
        messages,
        model: &profile.model,
        stream: true,
        system,
        tools,
    }
}
