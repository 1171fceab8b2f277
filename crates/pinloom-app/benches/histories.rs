//! A heavy user's ChatGPT export imported (issue 51): a generated `conversations.json` of 5,000
//! conversations (about 200 MB: each 15 turns of ~1 KB questions and ~1 KB answers, with a
//! regenerated answer on every fifth turn), imported into a new database file, beside reading the
//! same file with serde_json alone (the same stream, a conversation at a time, each parsed into a
//! value and dropped) in the same process. And the peak memory of the import beside the largest
//! conversation's size. Three runs each, alternating; medians. No timing asserts: figures go to
//! benches/README.md.
//!
//! `cargo bench -p pinloom-app --bench histories`

#![allow(clippy::unwrap_used)] // a benchmark's setup failing should stop it loudly

use std::io::{BufReader, BufWriter, Write};
use std::time::{Duration, Instant};

use pinloom_app::Pinloom;
use serde::de::{SeqAccess, Visitor};
use serde_json::{Value, json};

mod common;
use common::message;

const CONVERSATIONS: usize = 5_000;
const TURNS: usize = 15;
const RUNS: usize = 3;

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("conversations.json");
    let largest = write_export(&export);
    let size = std::fs::metadata(&export).unwrap().len();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (mut imports, mut readings) = (Vec::new(), Vec::new());
    let mut peak_growth = 0_u64;
    for run in 0..RUNS {
        let started = Instant::now();
        read_with_serde_json(&export);
        readings.push(started.elapsed());

        let data = dir.path().join(format!("run-{run}"));
        let before = peak_kib();
        let started = Instant::now();
        let report = runtime.block_on(async {
            let pinloom = Pinloom::open(data.clone()).await.unwrap();
            pinloom.import_file(export.clone(), |_| {}).await.unwrap()
        });
        imports.push(started.elapsed());
        assert_eq!(report.trees.len(), CONVERSATIONS, "{:?}", report.notes.first());
        peak_growth = peak_growth.max(peak_kib().saturating_sub(before));
    }
    let ms = |d: Duration| d.as_secs_f64() * 1_000.0;
    let (import, reading) = (median(imports), median(readings));
    println!(
        "{CONVERSATIONS} conversations, {:.0} MB; largest conversation {:.0} KB",
        size as f64 / (1 << 20) as f64,
        largest as f64 / 1024.0
    );
    println!(
        "import {:.0} ms, serde_json alone {:.0} ms: {:.2}x (goal <= 1.5x)",
        ms(import),
        ms(reading),
        import.as_secs_f64() / reading.as_secs_f64()
    );
    println!(
        "peak memory grew by {:.0} MB during the first import (goal <= 2 x {:.0} KB + 64 MB)",
        peak_growth as f64 / 1024.0,
        largest as f64 / 1024.0
    );
}

/// Writes the export, a conversation at a time; returns the largest conversation's size.
fn write_export(path: &std::path::Path) -> usize {
    let mut out = BufWriter::new(std::fs::File::create(path).unwrap());
    out.write_all(b"[").unwrap();
    let mut largest = 0;
    for index in 0..CONVERSATIONS {
        if index > 0 {
            out.write_all(b",").unwrap();
        }
        let text = serde_json::to_vec(&conversation(index)).unwrap();
        largest = largest.max(text.len());
        out.write_all(&text).unwrap();
    }
    out.write_all(b"]").unwrap();
    out.flush().unwrap();
    largest
}

/// A conversation as ChatGPT's export writes one: a root without a message, then question and
/// answer nodes, every fifth answer regenerated beside the first.
fn conversation(index: usize) -> Value {
    let id = |n: usize| format!("{index:08x}-{n:04x}-4000-8000-000000000000");
    let mut mapping = serde_json::Map::new();
    let root = id(0);
    let mut parent = root.clone();
    let mut nodes: Vec<(String, Option<String>, Value)> = vec![(root.clone(), None, Value::Null)];
    let mut next = 1;
    for turn in 0..TURNS {
        let asked = id(next);
        next += 1;
        let question =
            format!("{} {}", message(index * 100 + turn), message(index * 100 + turn + 50));
        nodes.push((
            asked.clone(),
            Some(parent.clone()),
            said(&asked, "user", &question, index, next),
        ));
        let mut answer = id(next);
        next += 1;
        let reply =
            format!("{} {}", message(index * 100 + turn + 1), message(index * 100 + turn + 51));
        nodes.push((
            answer.clone(),
            Some(asked.clone()),
            said(&answer, "assistant", &reply, index, next),
        ));
        if turn % 5 == 4 {
            let again = id(next);
            next += 1;
            nodes.push((
                again.clone(),
                Some(asked.clone()),
                said(&again, "assistant", &reply, index, next),
            ));
            answer = again;
        }
        parent = answer;
    }
    for (key, parent, message) in &nodes {
        let children: Vec<&String> =
            nodes.iter().filter(|(_, p, _)| p.as_ref() == Some(key)).map(|(k, _, _)| k).collect();
        mapping.insert(
            key.clone(),
            json!({ "id": key, "message": message, "parent": parent, "children": children }),
        );
    }
    let conversation_id = format!("{index:08x}-0000-4000-8000-00000000c0de");
    json!({
        "title": format!("Rivers {index}"), "create_time": 1_700_000_000.0 + index as f64,
        "update_time": 1_700_000_500.0 + index as f64, "mapping": mapping, "moderation_results": [],
        "current_node": parent, "conversation_id": conversation_id, "id": conversation_id,
        "default_model_slug": "gpt-4o"
    })
}

fn said(id: &str, role: &str, text: &str, index: usize, step: usize) -> Value {
    json!({
        "id": id, "author": { "role": role, "name": null, "metadata": {} },
        "create_time": 1_700_000_000.0 + index as f64 + step as f64, "update_time": null,
        "content": { "content_type": "text", "parts": [text] }, "status": "finished_successfully",
        "end_turn": true, "weight": 1.0, "metadata": { "model_slug": "gpt-4o" }, "recipient": "all"
    })
}

/// The baseline: the file read with serde_json alone, the same way (an array streamed, each
/// conversation parsed into a value).
fn read_with_serde_json(path: &std::path::Path) {
    struct Each;
    impl<'de> Visitor<'de> for Each {
        type Value = usize;
        fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            formatter.write_str("an array")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
            let mut count = 0;
            while let Some(conversation) = seq.next_element::<Value>()? {
                std::hint::black_box(&conversation);
                count += 1;
            }
            Ok(count)
        }
    }
    let file = BufReader::with_capacity(1 << 16, std::fs::File::open(path).unwrap());
    let mut deserializer = serde_json::Deserializer::from_reader(file);
    let count = serde::Deserializer::deserialize_seq(&mut deserializer, Each).unwrap();
    assert_eq!(count, CONVERSATIONS);
}

/// This process's peak resident memory so far, in KiB (Linux's VmHWM).
fn peak_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|line| line.starts_with("VmHWM:"))?.to_owned();
            line.split_whitespace().nth(1)?.parse().ok()
        })
        .unwrap_or(0)
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}
