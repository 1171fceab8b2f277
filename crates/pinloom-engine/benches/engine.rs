//! W1–W3 of research/engine_anchors.md §6, on inputs generated here (deterministic, nothing
//! downloaded). Numbers go to benches/README.md; there are no timing asserts.

#![allow(clippy::unwrap_used)] // a benchmark's setup failing should stop it loudly

#[path = "engine/compaction.rs"]
mod compaction;
#[path = "engine/small_budgets.rs"]
mod small_budgets;

use std::hint::black_box;

use criterion::{Criterion, criterion_group};
use pinloom_engine::family::request_body;
use pinloom_engine::incremental::append_node;
use pinloom_engine::plan::{ContextPlan, PruneReason, SliceKind};
use pinloom_engine::planner::plan;
use pinloom_engine::profile::{ModelProfile, ProviderFamily, RoleRules};
use pinloom_engine::render::chat_request;
use pinloom_engine::settings::{Settings, TruncationStrategy};
use pinloom_engine::snapshot::{
    Anchor, Author, CachedCount, Compaction, NodeId, NodeRecord, ParentEdge, Part, PinId,
    PinRecord, Snapshot, SummaryRecord, ThreadRef, TreeInfo,
};
use pinloom_engine::tokens::Tokenizer;

/// A deterministic pseudo-random generator (xorshift), so every run sees the same text.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

const WORDS: &[&str] = &[
    "the",
    "context",
    "engine",
    "keeps",
    "a",
    "thread",
    "of",
    "messages",
    "within",
    "budget",
    "while",
    "summaries",
    "of",
    "ancestor",
    "pins",
    "stay",
    "short",
    "and",
    "anchors",
    "verbatim",
    "tokens",
    "are",
    "counted",
    "once",
    "per",
    "node",
    "model",
    "reply",
    "tree",
    "branch",
];

fn prose(rng: &mut Rng, bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 16);
    let mut sentence = 0;
    while s.len() < bytes {
        let w = WORDS[(rng.next() % WORDS.len() as u64) as usize];
        if sentence == 0 {
            let mut c = w.chars();
            if let Some(f) = c.next() {
                s.extend(f.to_uppercase());
                s.push_str(c.as_str());
            }
        } else {
            s.push_str(w);
        }
        sentence += 1;
        if sentence > 8 + (rng.next() % 10) as usize {
            s.push_str(". ");
            sentence = 0;
        } else {
            s.push(' ');
        }
    }
    s
}

fn code(rng: &mut Rng, bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 64);
    let mut n = 0u64;
    while s.len() < bytes {
        n += 1;
        let a = WORDS[(rng.next() % WORDS.len() as u64) as usize];
        let b = WORDS[(rng.next() % WORDS.len() as u64) as usize];
        s.push_str(&format!(
            "fn {a}_{b}_{n}(input: &[u8], limit: usize) -> Result<Vec<u32>, Error> {{\n    \
             let mut out = Vec::with_capacity(limit);\n    for (i, byte) in input.iter().enumerate() {{\n        \
             if i >= limit {{ break; }}\n        out.push(u32::from(*byte) * {} + {});\n    }}\n    Ok(out)\n}}\n\n",
            rng.next() % 97,
            rng.next() % 1000
        ));
    }
    s
}

/// A linear thread of `n` messages of about `bytes` each, with counts cached for `tokenizer`.
fn thread(n: usize, bytes: usize, tokenizer: Tokenizer) -> Snapshot {
    let mut rng = Rng(0x5eed);
    let mut nodes = Vec::with_capacity(n);
    for i in 0..n {
        let edge =
            if i == 0 { ParentEdge::Root } else { ParentEdge::Continuation(NodeId(i as u64)) };
        let author = if i % 2 == 0 { Author::Human } else { Author::Model };
        let mut node = NodeRecord::text(i as u64 + 1, edge, author, &prose(&mut rng, bytes));
        let tokens = tokenizer.count_u32(node.parts[0].text());
        node.cached_tokens =
            [CachedCount { tokenizer: tokenizer.id(), tokens }].into_iter().collect();
        nodes.push(node);
    }
    Snapshot {
        tree: TreeInfo {
            title: "bench".into(),
            system_context: "Be precise.".into(),
            ..TreeInfo::default()
        },
        active: NodeId(n as u64),
        nodes,
        ..Snapshot::default()
    }
}

/// The naive baseline (what LangChain's trim_messages and LlamaIndex's buffers do): re-tokenize
/// every message on every call, newest first, until the budget is spent.
fn naive_trim(snapshot: &Snapshot, budget: u64) -> usize {
    let mut used = 0u64;
    let mut kept = 0;
    for node in snapshot.nodes.iter().rev() {
        let t: u64 =
            node.parts.iter().map(|p: &Part| Tokenizer::O200k.count(p.text())).sum::<u64>() + 4;
        if used + t > budget {
            break;
        }
        used += t;
        kept += 1;
    }
    kept
}

fn w1(c: &mut Criterion) {
    let snapshot = thread(10_000, 400, Tokenizer::O200k);
    let mut profile = ModelProfile::shipped(ProviderFamily::OpenAiCompatible, "gpt-4o");
    profile.context_window = 128_000 + profile.reserve;
    let settings = Settings::default();
    let mut g = c.benchmark_group("W1_plan_10k_messages_128k");
    g.bench_function("cached_counts", |b| {
        b.iter(|| black_box(plan(black_box(&snapshot), &profile, &settings).unwrap()))
    });
    g.bench_function("naive_retokenize_every_call", |b| {
        b.iter(|| black_box(naive_trim(black_box(&snapshot), 128_000)))
    });
    g.finish();
}

/// o200k counting of 4 MB of prose and of code, by the counter Pinloom uses (quicktok-v1) and by
/// bpe-openai, the one it replaced, in the same run: the ratio is the reason for the choice.
fn w2(c: &mut Criterion) {
    let mut rng = Rng(42);
    let prose_text = prose(&mut rng, 4_000_000);
    let code_text = code(&mut rng, 4_000_000);
    // The dictionaries load once, outside the timing; the counts must agree before timing.
    for text in [&prose_text, &code_text] {
        assert_eq!(Tokenizer::O200k.count(text) as usize, bpe_openai::o200k_base().count(text));
    }
    let mut g = c.benchmark_group("W2_o200k_count_4MB");
    g.sample_size(10);
    for (kind, text) in [("prose", &prose_text), ("code", &code_text)] {
        g.throughput(criterion::Throughput::Bytes(text.len() as u64));
        g.bench_function(format!("{kind}/quicktok"), |b| {
            b.iter(|| black_box(Tokenizer::O200k.count(black_box(text))))
        });
        g.bench_function(format!("{kind}/bpe-openai"), |b| {
            b.iter(|| black_box(bpe_openai::o200k_base().count(black_box(text))))
        });
    }
    g.finish();
}

/// The one-time cost of each counter: loading its vocabulary, measured in a fresh child process
/// each (a loaded vocabulary stays loaded), reported as the median of five.
fn w2_load(_c: &mut Criterion) {
    // Criterion's filter is not visible here: run only when asked for by name, or with no filter.
    let arguments: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    if !(arguments.is_empty() || arguments.iter().any(|filter| "W2_load".contains(filter.as_str())))
    {
        return;
    }
    let Ok(program) = std::env::current_exe() else { return };
    for which in ["quicktok", "bpe-openai"] {
        let mut micros: Vec<u64> = (0..5)
            .filter_map(|_| {
                let output = std::process::Command::new(&program)
                    .arg("--bench")
                    .env("PINLOOM_BENCH_LOAD_ONE", which)
                    .output()
                    .ok()?;
                String::from_utf8_lossy(&output.stdout).trim().parse().ok()
            })
            .collect();
        micros.sort_unstable();
        if let Some(median) = micros.get(micros.len() / 2) {
            println!(
                "W2_load/o200k/{which}: median {:.1} ms of {}",
                *median as f64 / 1000.0,
                micros.len()
            );
        }
    }
}

fn w3(c: &mut Criterion) {
    let base = thread(1_000, 900, Tokenizer::O200k);
    let settings = Settings::default();
    let mut g = c.benchmark_group("W3_append_2KB_and_body");
    let mut rng = Rng(7);
    let message = prose(&mut rng, 2_048);
    let families: [(&str, ProviderFamily, Option<RoleRules>); 5] = [
        ("openai", ProviderFamily::OpenAiCompatible, None),
        ("mistral", ProviderFamily::OpenAiCompatible, Some(RoleRules::mistral())),
        ("anthropic", ProviderFamily::Anthropic, None),
        ("gemini", ProviderFamily::Gemini, None),
        ("ollama", ProviderFamily::Ollama, None),
    ];
    for (name, family, rules) in families {
        let mut profile = ModelProfile::shipped(family, "bench-model");
        profile.context_window = 400_000;
        profile.tokenizer = Tokenizer::O200k;
        if let Some(r) = rules {
            profile.role_rules = r;
        }
        let made = plan(&base, &profile, &settings).unwrap();
        let mut snapshot = base.clone();
        snapshot.nodes.push(NodeRecord::text(
            1_001,
            ParentEdge::Continuation(NodeId(1_000)),
            Author::Human,
            &message,
        ));
        snapshot.active = NodeId(1_001);
        g.bench_function(name, |b| {
            b.iter_batched(
                || made.clone(),
                |mut p| {
                    append_node(&mut p, &snapshot, &profile, &settings).unwrap();
                    black_box(request_body(&p, &snapshot, &profile))
                },
                criterion::BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

/// W4, the provider's prompt cache over a 200-turn conversation: how much of each request is a
/// byte-for-byte prefix of the request before it (what a prefix cache can reuse), with
/// truncateMiddle cutting in steps, truncateMiddle message by message, and rollingWindow. Not a
/// timing: a share, printed for benches/README.md (criterion's filter `W4` runs it alone).
fn w4(c: &mut Criterion) {
    let whole = thread(400, 600, Tokenizer::O200k);
    let mut profile = ModelProfile::shipped(ProviderFamily::OpenAiCompatible, "gpt-4o");
    profile.context_window = 16_000 + profile.reserve; // truncation starts near turn 50
    let strategies: [(&str, TruncationStrategy, u32); 3] = [
        ("truncateMiddle, 25 % steps", TruncationStrategy::TruncateMiddle, 25),
        ("truncateMiddle, message by message", TruncationStrategy::TruncateMiddle, 0),
        ("rollingWindow", TruncationStrategy::RollingWindow, 0),
    ];
    let mut g = c.benchmark_group("W4_prompt_cache_prefix_200_turns");
    for (name, truncation, step) in strategies {
        let settings =
            Settings { truncation, truncation_step_percent: step, ..Settings::default() };
        let (mut reused, mut sent, mut truncated_turns) = (0usize, 0usize, 0usize);
        let (mut reused_truncated, mut sent_truncated) = (0usize, 0usize);
        let mut previous = String::new();
        for turn in 1..=200u64 {
            let mut snapshot = whole.clone();
            snapshot.nodes.truncate(turn as usize * 2 - 1); // the person's message of this turn
            snapshot.active = NodeId(turn * 2 - 1);
            let made = plan(&snapshot, &profile, &settings).unwrap();
            let body = request_body(&made, &snapshot, &profile);
            let prefix = body
                .bytes()
                .zip(previous.bytes())
                .take_while(|(now, before)| now == before)
                .count();
            reused += prefix;
            sent += body.len();
            if made.marker.is_some() {
                truncated_turns += 1;
                reused_truncated += prefix;
                sent_truncated += body.len();
            }
            previous = body;
        }
        println!(
            "W4 {name}: {:.1} % of all request bytes repeat the previous request's start; \
             {:.1} % over the {truncated_turns} truncated turns",
            100.0 * reused as f64 / sent as f64,
            100.0 * reused_truncated as f64 / sent_truncated.max(1) as f64,
        );
        let snapshot = whole.clone();
        g.bench_function(name, |b| b.iter(|| black_box(plan(&snapshot, &profile, &settings))));
    }
    g.finish();
}

/// W5, economy in the style of the ContextBranch study: a 20-turn conversation that digresses
/// five times into three side questions about a passage of the last answer. Linear, every
/// side question and everything after it carries the whole history; with pins, each digression
/// is a sub-thread that carries the root thread's summary and the anchor, and the main thread
/// never carries the digressions. The summary of each pin is written once, when the pin opens
/// (what Pinloom now does): its cost, the summariser reading the root thread up to the anchor
/// and writing the summary, is counted once per pin. Every main answer states a fact (a figure);
/// the side questions need all the facts stated before their anchor, so the summary carries them
/// and each side request is checked to hold every one. The headline keeps the summary as large
/// as its depth budget allows (800 tokens), the conservative case; a second run with summaries
/// of half the budget shows how the figure moves with their size. Tokens exact (o200k), no
/// truncation. Not a timing: totals printed for benches/README.md.
fn w5(c: &mut Criterion) {
    let settings = Settings::default();
    let full = w5_economy(settings.depth_budgets[0], None);
    let half = w5_economy(settings.depth_budgets[0] / 2, None);
    // The variant: a 16,384-token window whose tree compacts the main thread automatically at a
    // fifth of the budget, keeping the last 2 turns, its summaries 800 tokens like the pins'.
    let compacting = MainCompaction {
        window: 16_384,
        at_percent: 20,
        keep_turns: 2,
        summary_tokens: settings.depth_budgets[0],
    };
    let compacted = w5_economy(settings.depth_budgets[0], Some(compacting));
    println!(
        "W5 with the main thread compacted automatically at 20 % of a 16,384-token window's \
         budget, keeping 2 turns: {} compactions",
        compacted.compactions
    );
    for (label, run) in [
        ("summaries at their budget (800)", &full),
        ("summaries at half (400)", &half),
        ("summaries at 800, main thread compacted", &compacted),
    ] {
        let fewer = |pins: u64, lines: u64| 100.0 * (1.0 - pins as f64 / lines as f64);
        println!(
            "W5 {label}: all {} requests: linear {} tokens, pins {} ({:.1} % fewer); with the {} \
             summaries written once per pin ({} tokens read and written): pins {} ({:.1} % fewer); \
             the {} side questions: linear {}, pins {} ({:.1} % fewer); {} facts checked",
            run.requests,
            run.linear_total,
            run.pinned_total,
            fewer(run.pinned_total, run.linear_total),
            run.pins,
            run.summariser,
            run.pinned_total + run.summariser,
            fewer(run.pinned_total + run.summariser, run.linear_total),
            run.side_requests,
            run.linear_side,
            run.pinned_side,
            fewer(run.pinned_side, run.linear_side),
            run.facts_checked,
        );
    }
    let mut g = c.benchmark_group("W5_economy_pins_vs_linear");
    let profile = w5_profile();
    g.bench_function("plan_last_side_question_with_pins", |b| {
        b.iter(|| black_box(plan(&full.pinned, &profile, &settings).unwrap()))
    });
    g.finish();
}

/// What one run of W5 sent.
struct Economy {
    /// Compactions of the main thread (W5's variant).
    compactions: u64,
    requests: u64,
    side_requests: u64,
    pins: u64,
    linear_total: u64,
    pinned_total: u64,
    linear_side: u64,
    pinned_side: u64,
    /// The summariser's tokens: each pin's summary request (the root thread up to the anchor,
    /// and the instruction) and the summary it wrote.
    summariser: u64,
    facts_checked: u64,
    /// The pinned tree at the end, for the timing.
    pinned: Snapshot,
}

fn w5_profile() -> ModelProfile {
    let mut profile = ModelProfile::shipped(ProviderFamily::OpenAiCompatible, "gpt-4o");
    profile.context_window = 400_000;
    profile
}

/// The main thread compacted as a tree set to compact automatically does it, for W5's variant.
#[derive(Clone, Copy)]
struct MainCompaction {
    /// The model's window (the share is of its budget).
    window: u32,
    /// The share of the budget the history fills before it is compacted, in percent.
    at_percent: u64,
    /// The turns kept verbatim.
    keep_turns: usize,
    /// The compaction summary's size (it keeps every fact of its span).
    summary_tokens: u32,
}

/// W5 with summaries of `summary_tokens` each (at most the depth budget), and, with `compact`,
/// the main thread compacted on the way (each main request then checked for every fact too).
fn w5_economy(summary_tokens: u32, compact: Option<MainCompaction>) -> Economy {
    const MAIN_TURNS: u64 = 20;
    const DIGRESS_EVERY: u64 = 4;
    const SIDE_TURNS: u64 = 3;
    // What the summariser is told besides the thread (the shipped instruction's length).
    const INSTRUCTION_TOKENS: u64 = 80;
    let tokenizer = Tokenizer::O200k;
    let mut rng = Rng(0xec0);
    let mut profile = w5_profile();
    if let Some(compact) = compact {
        profile.context_window = compact.window;
    }
    let settings = Settings::default();
    // The main thread's messages (id, tokens, the turn whose fact an answer states), and the
    // compaction in effect on it.
    let mut main_thread: Vec<(NodeId, u64, Option<u64>)> = Vec::new();
    let mut main_compaction: Option<Compaction> = None;
    let fact = |turn: u64| {
        format!("Fact {turn}: the gauge at mile {} read {} cm.", turn * 7, turn * 13 + 5)
    };
    let node = |id: u64, edge: ParentEdge, author: Author, text: &str| {
        let mut node = NodeRecord::text(id, edge, author, text);
        node.cached_tokens =
            [CachedCount { tokenizer: tokenizer.id(), tokens: tokenizer.count_u32(text) }]
                .into_iter()
                .collect();
        node
    };
    let base = Snapshot {
        tree: TreeInfo {
            title: "economy".into(),
            system_context: "Be precise.".into(),
            ..TreeInfo::default()
        },
        ..Snapshot::default()
    };
    let (mut linear, mut pinned) = (base.clone(), base);
    let mut run = Economy {
        compactions: 0,
        requests: 0,
        side_requests: 0,
        pins: 0,
        linear_total: 0,
        pinned_total: 0,
        linear_side: 0,
        pinned_side: 0,
        summariser: 0,
        facts_checked: 0,
        pinned: Snapshot::default(),
    };
    let mut id = 0u64;
    let mut main_last: Option<NodeId> = None; // the main thread's newest message (pinned tree)
    let mut linear_last: Option<NodeId> = None;
    let mut root_transcript_tokens = 0u64;
    let request = |snapshot: &mut Snapshot, active: NodeId| -> ContextPlan {
        snapshot.active = active;
        plan(snapshot, &profile, &settings).unwrap()
    };
    for turn in 1..=MAIN_TURNS {
        for (author, bytes) in [(Author::Human, 300), (Author::Model, 900)] {
            id += 1;
            let mut text = prose(&mut rng, bytes);
            if author == Author::Model {
                text = format!("{} {text}", fact(turn));
            }
            root_transcript_tokens += tokenizer.count(&text) + 2;
            let edge =
                |last: Option<NodeId>| last.map_or(ParentEdge::Root, ParentEdge::Continuation);
            linear.nodes.push(node(id, edge(linear_last), author, &text));
            pinned.nodes.push(node(id, edge(main_last), author, &text));
            (linear_last, main_last) = (Some(NodeId(id)), Some(NodeId(id)));
            main_thread.push((
                NodeId(id),
                tokenizer.count(&text) + 4,
                (author == Author::Model).then_some(turn),
            ));
            if author == Author::Human {
                let sent_linear = request(&mut linear, NodeId(id));
                // The linear history is never cut either: the comparison is of whole histories.
                assert!(sent_linear.pruned_report().is_empty());
                let sent_linear = sent_linear.used;
                pinned.compaction = main_compaction.clone();
                let mut sent_pinned = request(&mut pinned, NodeId(id));
                if let Some(compact) = compact {
                    let history = main_thread.len() - 1;
                    if compaction::due(&sent_pinned, compact.at_percent)
                        && history > 2 * compact.keep_turns + 1
                    {
                        let end = history - 2 * compact.keep_turns;
                        let facts: Vec<String> = main_thread[..end]
                            .iter()
                            .filter_map(|(.., turn)| turn.map(fact))
                            .collect();
                        let text = compaction::summary(
                            &mut rng,
                            tokenizer,
                            &facts,
                            compact.summary_tokens,
                        );
                        // The summariser reads the span whole: it fits its window.
                        let span: u64 =
                            main_thread[..end].iter().map(|(_, tokens, _)| tokens).sum();
                        run.summariser += span + INSTRUCTION_TOKENS + tokenizer.count(&text);
                        run.compactions += 1;
                        main_compaction = Some(Compaction {
                            id: i64::try_from(run.compactions).unwrap(),
                            up_to: main_thread[end - 1].0,
                            text,
                            written_by: "the summariser".into(),
                            stale: None,
                        });
                        pinned.compaction = main_compaction.clone();
                        sent_pinned = request(&mut pinned, NodeId(id));
                    }
                    let body = request_body(&sent_pinned, &pinned, &profile);
                    for fact in (1..turn).map(fact) {
                        assert!(
                            body.contains(fact.as_str()),
                            "{fact} is missing from a main request"
                        );
                        run.facts_checked += 1;
                    }
                }
                pinned.compaction = None;
                // Every main message is there, or in the compaction: nothing was cut.
                assert!(
                    sent_pinned
                        .pruned_report()
                        .iter()
                        .all(|cut| cut.reason == PruneReason::Compacted)
                );
                run.requests += 1;
                run.linear_total += u64::from(sent_linear);
                run.pinned_total += u64::from(sent_pinned.used);
            }
        }
        if turn % DIGRESS_EVERY != 0 {
            continue;
        }
        let anchored = main_last.unwrap();
        let pin = PinId(turn);
        run.pins += 1;
        pinned.pins.push(PinRecord {
            id: pin,
            parent_thread: ThreadRef::Root,
            title: "a side question".into(),
            anchor: Some(Anchor { text: "the passage asked about".into(), range: (0, 23) }),
            hangs_off: None,
            closed: false,
            result: None,
        });
        // The summary keeps every fact stated so far, then prose up to its size.
        let facts: Vec<String> = (1..=turn).map(fact).collect();
        let mut summary_text = format!("{} {}", facts.join(" "), prose(&mut rng, 6_000));
        while tokenizer.count(&summary_text) > u64::from(summary_tokens) {
            summary_text.truncate(summary_text.len() - 40);
        }
        assert!(
            facts.iter().all(|fact| summary_text.contains(fact.as_str())),
            "the summary fits the facts"
        );
        run.summariser +=
            root_transcript_tokens + INSTRUCTION_TOKENS + tokenizer.count(&summary_text);
        pinned.summaries.push(SummaryRecord::written(
            ThreadRef::Root,
            anchored,
            settings.depth_budgets[0],
            &summary_text,
        ));
        let mut side_last: Option<NodeId> = None;
        for _ in 0..SIDE_TURNS {
            for (author, bytes) in [(Author::Human, 300), (Author::Model, 900)] {
                id += 1;
                let text = prose(&mut rng, bytes);
                linear.nodes.push(node(
                    id,
                    ParentEdge::Continuation(linear_last.unwrap()),
                    author,
                    &text,
                ));
                linear_last = Some(NodeId(id));
                let edge = match side_last {
                    None => ParentEdge::Pin { parent: anchored, pin },
                    Some(last) => ParentEdge::Continuation(last),
                };
                pinned.nodes.push(node(id, edge, author, &text));
                side_last = Some(NodeId(id));
                if author == Author::Human {
                    let sent_linear = u64::from(request(&mut linear, NodeId(id)).used);
                    let sent = request(&mut pinned, NodeId(id));
                    // The required facts: the anchor, and every fact stated before it, which
                    // the summary carries.
                    assert!(sent.included().any(|s| s.kind == SliceKind::Anchor));
                    assert!(sent.pruned_report().is_empty());
                    let body = chat_request(&sent, &pinned, &profile).system.unwrap_or_default();
                    for fact in &facts {
                        assert!(
                            body.contains(fact.as_str()),
                            "{fact} is missing from a side request"
                        );
                        run.facts_checked += 1;
                    }
                    run.requests += 1;
                    run.side_requests += 1;
                    run.linear_total += sent_linear;
                    run.linear_side += sent_linear;
                    run.pinned_total += u64::from(sent.used);
                    run.pinned_side += u64::from(sent.used);
                }
            }
        }
    }
    run.pinned = pinned;
    run
}

/// W6, compaction against truncation on a long thread with planted facts (see
/// `compaction.rs`). Not a timing but for the plan of the last request: totals printed for
/// benches/README.md.
fn w6(c: &mut Criterion) {
    let percent = |part: u64, whole: u64| 100.0 * part as f64 / whole.max(1) as f64;
    let mut last = None;
    for summary_tokens in [2_048, 1_024] {
        let (truncated, compacted, snapshot) = compaction::w6_runs(summary_tokens);
        for (name, run) in [("truncation", &truncated), ("compaction", &compacted)] {
            println!(
                "W6 {name} (summaries of {summary_tokens}): {} tokens sent over the 120 requests \
                 ({} with the summariser's {} for {} compactions); {:.1} % of the facts due \
                 carried; the last request: {} tokens, {} of 119 facts",
                run.sent,
                run.sent + run.summariser,
                run.summariser,
                run.compactions,
                percent(run.facts_carried, run.facts_due),
                run.last_sent,
                run.last_facts,
            );
        }
        last = Some(snapshot);
    }
    let snapshot = last.unwrap();
    let mut profile = ModelProfile::shipped(ProviderFamily::OpenAiCompatible, "gpt-4o");
    profile.context_window = 16_384;
    let settings = Settings::default();
    let mut g = c.benchmark_group("W6_compaction_vs_truncation");
    g.bench_function("plan_last_request_compacted", |b| {
        b.iter(|| black_box(plan(&snapshot, &profile, &settings).unwrap()))
    });
    g.finish();
}

/// W7, small budgets (see `small_budgets.rs`): facts kept by truncateMiddle and by the newest
/// messages that fit, at a quarter, a half and three quarters of each conversation. Counts only,
/// for benches/README.md.
fn w7(_: &mut Criterion) {
    for (percent, step) in [(25, 25), (50, 25), (75, 25), (75, 0)] {
        let kept = small_budgets::w7_at(percent, step);
        let share = |part: u64| 100.0 * part as f64 / kept.facts.max(1) as f64;
        println!(
            "W7 at {percent} % of each conversation, steps of {step} %: {} facts due; \
             truncateMiddle kept {:.1} %, the newest messages that fit {:.1} %; {} plans found \
             the budget small; {} kept a first reply without its question",
            kept.facts,
            share(kept.pinloom),
            share(kept.newest),
            kept.small,
            kept.split_starts,
        );
    }
}

criterion_group!(benches, w1, w2, w2_load, w3, w4, w5, w6, w7);

fn main() {
    // A child of `w2_load`: load one vocabulary, say how long it took, and stop.
    if let Ok(which) = std::env::var("PINLOOM_BENCH_LOAD_ONE") {
        let started = std::time::Instant::now();
        let tokens = match which.as_str() {
            "quicktok" => Tokenizer::O200k.count("x") as usize,
            _ => bpe_openai::o200k_base().count("x"),
        };
        println!("{}", started.elapsed().as_micros() + u128::from(tokens == 0));
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
