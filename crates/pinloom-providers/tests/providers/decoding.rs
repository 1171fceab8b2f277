//! The decoders on every recorded stream split at every byte: the text, the finish and the
//! usage never depend on where the network cut the bytes.

use pinloom_providers::decode::{Decoder, JsonLines, decode_chunks, decode_fuzz_case};
use pinloom_providers::wire::ProviderId;

use crate::fixture;

/// Decodes `bytes` whole, then split in two at every position, then in 1-byte pieces, and checks
/// every run says the same.
fn same_at_every_split(provider: ProviderId, name: &str, json_lines: bool) -> String {
    let bytes = fixture(name);
    let decode = |chunks: Vec<Vec<u8>>| {
        let mut decoder = Decoder::new(provider, "model", false, None);
        let transcript = decode_chunks(&mut decoder, chunks, json_lines);
        (transcript, decoder.usage, decoder.finish_reason)
    };
    let whole = decode(vec![bytes.clone()]);
    assert!(whole.0.error.is_none(), "{name}: {:?}", whole.0.error);
    assert!(whole.0.finished, "{name}");
    for cut in 1..bytes.len() {
        let split = decode(vec![bytes[..cut].to_vec(), bytes[cut..].to_vec()]);
        assert_eq!(split, whole, "{name} split at byte {cut}");
    }
    let bytewise = decode(bytes.iter().map(|byte| vec![*byte]).collect());
    assert_eq!(bytewise, whole, "{name} one byte at a time");
    whole.0.text
}

#[test]
fn openai_stream_decodes_the_same_at_every_split() {
    let text = same_at_every_split(
        ProviderId::OpenAi,
        "openai-chat-completions-stream-usage.recorded.sse.txt",
        false,
    );
    assert!(text.starts_with("I'm unable"));
}

#[test]
fn anthropic_streams_decode_the_same_at_every_split() {
    assert_eq!(
        same_at_every_split(ProviderId::Anthropic, "anthropic-messages-stream.txt", false),
        "Hello!"
    );
}

#[test]
fn gemini_streams_decode_the_same_at_every_split_crlf_and_utf8_included() {
    let text = same_at_every_split(
        ProviderId::Gemini,
        "gemini-streamGenerateContent-sse-usage.recorded.txt",
        false,
    );
    assert_eq!(text, "The capital of Wyoming is **Cheyenne**.\n");
    let text = same_at_every_split(
        ProviderId::Gemini,
        "gemini-streamGenerateContent-sse.cookbook.txt",
        false,
    );
    assert!(text.contains("冒险伙伴"));
}

#[test]
fn ollama_streams_decode_the_same_at_every_split() {
    assert_eq!(
        same_at_every_split(
            ProviderId::Ollama,
            "ollama-chat-stream.ndjson.reconstructed.txt",
            true
        ),
        "The"
    );
}

#[test]
fn json_lines_rejoin_a_character_cut_inside_its_bytes() {
    let line = "{\"message\":{\"content\":\"冒险\"},\"done\":false}\n".as_bytes();
    let cut = line.iter().position(|byte| *byte >= 0x80).unwrap() + 1;
    let mut lines = JsonLines::default();
    assert!(lines.push(&line[..cut]).is_empty());
    assert_eq!(
        lines.push(&line[cut..]),
        vec![String::from_utf8(line[..line.len() - 1].to_vec()).unwrap()]
    );
    assert_eq!(lines.finish(), None);
}

#[test]
fn arbitrary_bytes_never_panic_a_decoder() {
    // A small deterministic sweep through the fuzz targets' own entry point; `cargo fuzz` runs
    // the same function without limits (docs/developing.md, "Fuzzing the stream decoders").
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let alphabet = b"data: {}[]\":,\n\r event error choices delta content 0123 \xff\xfe DONE";
    let mut decoded_text = 0;
    for round in 0..2_000 {
        let mut bytes = Vec::new();
        for _ in 0..(round % 97) {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            bytes.push(alphabet[(seed % alphabet.len() as u64) as usize]);
        }
        for provider in
            [ProviderId::OpenAi, ProviderId::Anthropic, ProviderId::Gemini, ProviderId::Ollama]
        {
            let transcript = decode_fuzz_case(provider, &bytes);
            decoded_text += usize::from(!transcript.text.is_empty());
        }
    }
    // Valid frames are rare in random bytes; what matters is that none of this panicked.
    assert!(decoded_text < 8_000);
}

#[test]
fn a_decoder_never_prints_the_key_it_blanks() {
    let decoder = Decoder::new(ProviderId::OpenAi, "gpt-4o", false, Some(crate::KEY));
    assert!(!format!("{decoder:?}").contains(crate::KEY));
}

#[test]
fn a_continuations_tokens_and_their_alternatives_are_decoded_at_every_split() {
    let name = "llama-cpp-python-completions-logprobs.recorded.sse.txt";
    let bytes = fixture(name);
    let decode = |chunks: Vec<Vec<u8>>| {
        let mut decoder = Decoder::new(ProviderId::LlamaCpp, "tiny", true, None);
        let transcript = decode_chunks(&mut decoder, chunks, false);
        (transcript.text, decoder.tokens)
    };
    let (text, tokens) = decode(vec![bytes.clone()]);
    assert_eq!(text, "7Katj");
    let spelled: String = tokens.iter().map(|token| token.token.as_str()).collect();
    assert_eq!(spelled, text, "the tokens spell the text");
    // The first token was the fourth likeliest; its alternatives come most likely first.
    assert_eq!(tokens[0].token, "7");
    assert!((tokens[0].logprob - -4.413447380065918).abs() < 1e-12);
    let firsts: Vec<&str> = tokens[0].top.iter().map(|(token, _)| token.as_str()).collect();
    assert_eq!(firsts, ["M", "l", "at", "7"]);
    for cut in 1..bytes.len() {
        let split = decode(vec![bytes[..cut].to_vec(), bytes[cut..].to_vec()]);
        assert_eq!(split, (text.clone(), tokens.clone()), "{name} split at byte {cut}");
    }
}

#[test]
fn tokens_in_the_chat_shape_and_ollamas_are_decoded_and_a_chat_reply_keeps_none() {
    // llama.cpp's own server's completions endpoint, as its README documents the shape.
    let frame = r#"{"choices":[{"text":" river","index":0,"logprobs":{"content":[{"id":1,"token":" river","logprob":-0.5,"bytes":[32],"top_logprobs":[{"id":2,"token":" stream","logprob":-1.5},{"id":1,"token":" river","logprob":-0.5}]}]},"finish_reason":null}]}"#;
    let mut decoder = Decoder::new(ProviderId::LlamaCpp, "model", true, None);
    decoder.event("", frame).unwrap();
    assert_eq!(decoder.tokens.len(), 1);
    assert_eq!(decoder.tokens[0].top[0].0, " river", "most likely first");
    // Ollama's generate stream.
    let line = r#"{"response":" bend","done":false,"logprobs":[{"token":" bend","logprob":-0.2,"top_logprobs":[{"token":" bend","logprob":-0.2},{"token":" turn","logprob":-2.0}]}]}"#;
    let mut decoder = Decoder::new(ProviderId::Ollama, "model", true, None);
    decoder.line(line).unwrap();
    assert_eq!(decoder.tokens[0].top.len(), 2);
    // A chat reply is not a loom's continuation: its tokens are not kept.
    let chat = r#"{"choices":[{"delta":{"content":"Hi"},"logprobs":{"content":[{"token":"Hi","logprob":-0.1,"top_logprobs":[]}]},"finish_reason":null}]}"#;
    let mut decoder = Decoder::new(ProviderId::OpenAi, "model", false, None);
    decoder.event("", chat).unwrap();
    assert!(decoder.tokens.is_empty());
    // Garbage where the tokens should be is no error and no tokens.
    let odd = r#"{"choices":[{"text":"x","logprobs":{"tokens":[1,2],"token_logprobs":"no"}}]}"#;
    let mut decoder = Decoder::new(ProviderId::Vllm, "model", true, None);
    assert_eq!(decoder.event("", odd).unwrap().text, "x");
    assert!(decoder.tokens.is_empty());
}
