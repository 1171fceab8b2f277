//! What an image costs and which models see one: each provider counts an image by its own rule,
//! from the image's size in pixels, not from its bytes.

use crate::family::ProviderFamily;

/// The tokens an image of `width` × `height` pixels takes in a request of `family`, by the rule
/// each provider documents:
///
/// - OpenAI (and the servers shaped like it): scaled to fit 2048 × 2048, then its shorter side to
///   768; 85 tokens plus 170 for each 512-pixel tile (high detail, which `auto` picks for any
///   image larger than one tile, so a plan never counts less than is sent).
/// - Anthropic: scaled so its long edge is at most 1568 and it has at most 1.15 megapixels;
///   width × height / 750.
/// - Gemini: 258 when both sides are at most 384; otherwise 258 for each 768-pixel tile.
/// - Ollama: the vision models it serves encode an image as a fixed grid; 576 tokens is LLaVA's
///   (a 24 × 24 grid), the largest of the common ones, so a plan leaves room rather than runs
///   over.
pub fn image_tokens(family: ProviderFamily, width: u32, height: u32) -> u32 {
    let (w, h) = (f64::from(width.max(1)), f64::from(height.max(1)));
    match family {
        ProviderFamily::OpenAiCompatible => {
            let fit = (2048.0 / w.max(h)).min(1.0);
            let (w, h) = (w * fit, h * fit);
            let shorter = (768.0 / w.min(h)).min(1.0);
            let (w, h) = (w * shorter, h * shorter);
            let tiles = (w / 512.0).ceil() * (h / 512.0).ceil();
            to_tokens(85.0 + 170.0 * tiles)
        }
        ProviderFamily::Anthropic => {
            let edge = (1568.0 / w.max(h)).min(1.0);
            let pixels = (1_150_000.0 / (w * h)).sqrt().min(1.0);
            let scale = edge.min(pixels);
            to_tokens((w * scale * h * scale / 750.0).ceil())
        }
        ProviderFamily::Gemini => {
            if w <= 384.0 && h <= 384.0 {
                258
            } else {
                to_tokens((w / 768.0).ceil() * (h / 768.0).ceil() * 258.0)
            }
        }
        ProviderFamily::Ollama => 576,
    }
}

fn to_tokens(value: f64) -> u32 {
    // The rules above stay far below u32::MAX for any size a u32 can name.
    value.clamp(0.0, f64::from(u32::MAX)) as u32
}

/// Whether `model` of `family` takes images, as far as its name tells: every Claude from the 3
/// family on, every Gemini, OpenAI's GPT-4o, GPT-4.1, GPT-5, o1, o3 and o4-mini (not o1-mini,
/// o1-preview or o3-mini) and GPT-4 Turbo, and the open vision models by their usual names (LLaVA, Llama 3.2 Vision,
/// Gemma 3 from 4B up, Qwen-VL, Pixtral, MiniCPM-V, Moondream, Mistral Small 3.1 and later).
/// A model not named here is taken not to see: sending it an image would fail at the provider,
/// or worse, be dropped without a word by a local server.
pub fn sees_images(family: ProviderFamily, model: &str) -> bool {
    let name = model.to_ascii_lowercase();
    let name = name.rsplit('/').next().unwrap_or(&name);
    match family {
        ProviderFamily::Anthropic => {
            !name.starts_with("claude-2") && !name.starts_with("claude-instant")
        }
        ProviderFamily::Gemini => name.starts_with("gemini"),
        ProviderFamily::OpenAiCompatible | ProviderFamily::Ollama => {
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
            let named = openai.iter().chain(&open).any(|prefix| name.starts_with(prefix))
                || name.starts_with("o1");
            (named && !text_only.iter().any(|prefix| name.starts_with(prefix)))
                || gemma3_sees
                || name.contains("vision")
                || name.contains("-vl")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_provider_counts_by_its_documented_rule() {
        use ProviderFamily::*;
        // OpenAI's worked examples: 1024×1024 → 768×768, 4 tiles, 765 tokens; 2048×4096 →
        // 1024×2048 → 768×1536, 6 tiles, 1105 tokens; a small image is one tile, 255.
        assert_eq!(image_tokens(OpenAiCompatible, 1024, 1024), 765);
        assert_eq!(image_tokens(OpenAiCompatible, 2048, 4096), 1105);
        assert_eq!(image_tokens(OpenAiCompatible, 200, 100), 255);
        // Anthropic: 1000×1000 is under both limits, 1,000,000 / 750 = 1334; a large photo is
        // scaled to about 1.15 megapixels, about 1,534 tokens.
        assert_eq!(image_tokens(Anthropic, 1000, 1000), 1334);
        let large = image_tokens(Anthropic, 4000, 3000);
        assert!((1530..=1540).contains(&large), "{large}");
        // Gemini: small images are 258; 1000×800 is 2×2 tiles.
        assert_eq!(image_tokens(Gemini, 384, 300), 258);
        assert_eq!(image_tokens(Gemini, 1000, 800), 4 * 258);
        assert_eq!(image_tokens(Ollama, 4000, 3000), 576);
    }

    #[test]
    fn vision_is_told_by_the_model_name() {
        use ProviderFamily::*;
        assert!(sees_images(OpenAiCompatible, "gpt-4o-mini"));
        assert!(sees_images(OpenAiCompatible, "openai/gpt-4.1"));
        assert!(!sees_images(OpenAiCompatible, "gpt-3.5-turbo"));
        assert!(!sees_images(OpenAiCompatible, "o1-mini"));
        assert!(!sees_images(OpenAiCompatible, "o3-mini-2025-01-31"));
        assert!(sees_images(OpenAiCompatible, "o3"));
        assert!(sees_images(OpenAiCompatible, "o4-mini"));
        assert!(sees_images(Anthropic, "claude-sonnet-4-20250514"));
        assert!(!sees_images(Anthropic, "claude-2.1"));
        assert!(sees_images(Gemini, "gemini-2.0-flash"));
        assert!(sees_images(Ollama, "llava:13b"));
        assert!(sees_images(Ollama, "gemma3:12b"));
        assert!(!sees_images(Ollama, "gemma3:1b"));
        assert!(sees_images(OpenAiCompatible, "gemma-3-12b-it-Q4_K_M.gguf"));
        assert!(!sees_images(OpenAiCompatible, "gemma-3-1b-it-Q8_0.gguf"));
        assert!(!sees_images(Ollama, "llama3.1:8b"));
        assert!(sees_images(OpenAiCompatible, "Qwen2.5-VL-7B-Instruct"));
        assert!(!sees_images(OpenAiCompatible, "qwen2.5-7b-instruct"));
    }
}
