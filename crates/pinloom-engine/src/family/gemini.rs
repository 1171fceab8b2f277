//! Gemini's generateContent: its body, its tools, its image rule and which of its models see.

use serde::Serialize;
use serde_json::{Value, json};

use super::FamilyRules;
use super::parts::{Turn, arguments_value, pixels, push_merged, to_tokens, tool_values};
use crate::plan::Role;
use crate::profile::{ModelProfile, RoleRules};
use crate::render::ChatRequest;
use crate::snapshot::{Part, ToolDefinition};
use crate::tokens::{Calibration, Tokenizer};

/// Gemini.
pub(super) struct Gemini;

impl FamilyRules for Gemini {
    fn role_rules(&self) -> RoleRules {
        RoleRules { first_user: true, ..RoleRules::default() }
    }

    fn default_tokenizer(&self) -> Tokenizer {
        Tokenizer::Estimate(Calibration::GEMINI_START)
    }

    /// 258 when both sides are at most 384; otherwise 258 for each 768-pixel tile.
    fn image_tokens(&self, width: u32, height: u32) -> u32 {
        let (w, h) = pixels(width, height);
        if w <= 384.0 && h <= 384.0 {
            258
        } else {
            to_tokens((w / 768.0).ceil() * (h / 768.0).ceil() * 258.0)
        }
    }

    /// Every Gemini.
    fn sees_images(&self, model: &str) -> bool {
        let name = model.to_ascii_lowercase();
        name.rsplit('/').next().unwrap_or(&name).starts_with("gemini")
    }

    fn body_text(
        &self,
        request: &ChatRequest,
        tools: &[ToolDefinition],
        _: &ModelProfile,
    ) -> String {
        serde_json::to_string(&gemini_body(request, gemini_tools(request, tools)))
            .unwrap_or_default()
    }
}

fn gemini_tools(request: &ChatRequest, tools: &[ToolDefinition]) -> Vec<Value> {
    tool_values(
        tools,
        &request.tools,
        |name, description, parameters| json!({"name": name, "description": description, "parameters": parameters}),
    )
}

#[derive(Serialize)]
struct GeminiBody<'a> {
    contents: Vec<GeminiTurn<'a>>,
    #[serde(rename = "systemInstruction", skip_serializing_if = "Option::is_none")]
    system_instruction: Option<GeminiSystem<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Value>,
}

#[derive(Serialize)]
struct GeminiTurn<'a> {
    parts: Vec<GeminiPart<'a>>,
    role: &'static str,
}

#[derive(Serialize)]
struct GeminiSystem<'a> {
    parts: [GeminiText<'a>; 1],
}

#[derive(Serialize)]
struct GeminiText<'a> {
    text: &'a str,
}

#[derive(Serialize)]
#[serde(untagged)]
enum GeminiPart<'a> {
    Text(GeminiText<'a>),
    Call {
        #[serde(rename = "functionCall")]
        function_call: GeminiCall<'a>,
    },
    Response {
        #[serde(rename = "functionResponse")]
        function_response: GeminiResponse<'a>,
    },
    Inline {
        #[serde(rename = "inlineData")]
        inline_data: GeminiBlob<'a>,
    },
}

#[derive(Serialize)]
struct GeminiBlob<'a> {
    data: &'a str,
    #[serde(rename = "mimeType")]
    mime_type: &'a str,
}

#[derive(Serialize)]
struct GeminiCall<'a> {
    args: Value,
    name: &'a str,
}

#[derive(Serialize)]
struct GeminiResponse<'a> {
    name: &'a str,
    response: GeminiResult<'a>,
}

#[derive(Serialize)]
struct GeminiResult<'a> {
    content: &'a str,
}

fn gemini_body(request: &ChatRequest, tools: Vec<Value>) -> GeminiBody<'_> {
    let mut names: Vec<(&str, &str)> = Vec::new();
    let mut turns: Vec<Turn<GeminiPart<'_>>> = Vec::with_capacity(request.messages.len());
    for m in &request.messages {
        let role = if m.role == Role::Assistant { "model" } else { "user" };
        let mut parts = Vec::with_capacity(m.parts.len());
        for p in &m.parts {
            parts.push(match p {
                Part::Text(text) => GeminiPart::Text(GeminiText { text }),
                Part::ToolCall { id, name, arguments } => {
                    names.push((id.as_str(), name.as_str()));
                    GeminiPart::Call {
                        function_call: GeminiCall { args: arguments_value(arguments), name },
                    }
                }
                Part::ToolResult { call_id, content } => {
                    let name = names.iter().find(|(id, _)| id == call_id).map_or("", |(_, n)| n);
                    GeminiPart::Response {
                        function_response: GeminiResponse {
                            name,
                            response: GeminiResult { content },
                        },
                    }
                }
                Part::Image { media_type, data } => {
                    GeminiPart::Inline { inline_data: GeminiBlob { data, mime_type: media_type } }
                }
            });
        }
        push_merged(&mut turns, role, parts);
    }
    let contents =
        turns.into_iter().map(|turn| GeminiTurn { parts: turn.content, role: turn.role }).collect();
    let tools =
        if tools.is_empty() { tools } else { vec![json!({ "functionDeclarations": tools })] };
    GeminiBody {
        contents,
        system_instruction: request
            .system
            .as_deref()
            .map(|text| GeminiSystem { parts: [GeminiText { text }] }),
        tools,
    }
}
