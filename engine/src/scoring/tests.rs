//! Each scorer on values made for it: what passes, what fails and why, and
//! the problems a scorer's definition is refused for, at their fields.

use serde_json::{Value, json};

use super::{Example, Observed, Score, ScorerSpec, ToolCallMade};
use crate::usage::UsageTotals;

fn scorer(spec: Value) -> super::Scorer {
    ScorerSpec::from_value(&spec)
        .unwrap_or_else(|error| panic!("{error}"))
        .compile()
        .unwrap_or_else(|errors| panic!("{errors:?}"))
}

fn problems(spec: Value) -> Vec<String> {
    match ScorerSpec::from_value(&spec) {
        Err(error) => vec![error.to_string()],
        Ok(spec) => match spec.compile() {
            Ok(_) => Vec::new(),
            Err(errors) => errors.iter().map(ToString::to_string).collect(),
        },
    }
}

fn score(spec: Value, output: Value, reference: Option<Value>) -> Score {
    let input = json!({});
    let example = Example {
        input: &input,
        reference: reference.as_ref(),
    };
    scorer(spec).score(&example, &Observed::new(output, UsageTotals::default()))
}

#[test]
fn exact_compares_values_numbers_by_value_and_texts_as_asked() {
    let answer = json!({"answer": "Paris", "n": 1});
    let spec = json!({"kind": "exact"});
    assert_eq!(
        score(
            spec.clone(),
            answer.clone(),
            Some(json!({"answer": "Paris", "n": 1.0}))
        )
        .value,
        1.0
    );
    let wrong = score(
        spec,
        answer.clone(),
        Some(json!({"answer": "Lyon", "n": 1})),
    );
    assert_eq!(wrong.value, 0.0);
    assert!(
        wrong.reason.contains("Lyon") && wrong.reason.contains("Paris"),
        "{}",
        wrong.reason
    );

    let loose = json!({"kind": "exact", "of": "output.answer", "expected": "reference.answer",
                       "ignore_case": true, "trim": true});
    assert_eq!(
        score(
            loose.clone(),
            json!({"answer": " paris\n"}),
            Some(json!({"answer": "Paris"}))
        )
        .value,
        1.0
    );
    let strict = json!({"kind": "exact", "of": "output.answer", "expected": "reference.answer"});
    assert_eq!(
        score(
            strict,
            json!({"answer": " paris"}),
            Some(json!({"answer": "Paris"}))
        )
        .value,
        0.0
    );
    // No reference: a clear zero, not a match of null with null.
    let none = score(json!({"kind": "exact"}), Value::Null, None);
    assert_eq!(none.value, 0.0);
    assert!(none.reason.contains("no reference"), "{}", none.reason);
}

#[test]
fn contains_looks_in_texts_and_lists() {
    let text = json!({"kind": "contains", "of": "output.reply", "text": "refund"});
    assert_eq!(
        score(
            text.clone(),
            json!({"reply": "Your refund is on its way"}),
            None
        )
        .value,
        1.0
    );
    let missing = score(text, json!({"reply": "Thanks"}), None);
    assert_eq!(missing.value, 0.0);
    assert!(
        missing.reason.contains("\"refund\" not found"),
        "{}",
        missing.reason
    );

    let ignoring =
        json!({"kind": "contains", "of": "output.reply", "text": "REFUND", "ignore_case": true});
    assert_eq!(
        score(ignoring, json!({"reply": "a refund"}), None).value,
        1.0
    );

    let from_reference =
        json!({"kind": "contains", "of": "output.tags", "expected": "reference.tag"});
    assert_eq!(
        score(
            from_reference.clone(),
            json!({"tags": ["a", "b"]}),
            Some(json!({"tag": "b"}))
        )
        .value,
        1.0
    );
    assert_eq!(
        score(
            from_reference,
            json!({"tags": ["a", "b"]}),
            Some(json!({"tag": "c"}))
        )
        .value,
        0.0
    );
}

#[test]
fn regex_matches_texts_and_refuses_patterns_that_do_not_compile_or_are_too_big() {
    let order = json!({"kind": "regex", "of": "output.id", "pattern": "^order-[0-9]{4}$"});
    assert_eq!(
        score(order.clone(), json!({"id": "order-1042"}), None).value,
        1.0
    );
    let wrong = score(order, json!({"id": "order-42"}), None);
    assert_eq!(wrong.value, 0.0);
    assert!(wrong.reason.contains("does not match"), "{}", wrong.reason);

    let broken = problems(json!({"kind": "regex", "pattern": "(unclosed"}));
    assert_eq!(broken.len(), 1);
    assert!(broken[0].starts_with("pattern: "), "{broken:?}");
    // A pattern that compiles to more than its budget is refused, not built.
    let huge = problems(json!({"kind": "regex", "pattern": "\\w{500}\\w{500}"}));
    assert!(huge.iter().any(|p| p.starts_with("pattern: ")), "{huge:?}");
    let long = problems(json!({"kind": "regex", "pattern": "a".repeat(1_001)}));
    assert!(
        long.iter().any(|p| p.contains("longer than 1000")),
        "{long:?}"
    );
}

#[test]
fn json_schema_names_where_a_value_does_not_fit() {
    let spec = json!({"kind": "json_schema", "of": "output.order", "schema": {
        "type": "object", "required": ["items"],
        "properties": {"items": {"type": "array", "items": {"type": "object",
            "properties": {"price": {"type": "number", "minimum": 0}}}}}}});
    assert_eq!(
        score(
            spec.clone(),
            json!({"order": {"items": [{"price": 3}]}}),
            None
        )
        .value,
        1.0
    );
    let bad = score(
        spec,
        json!({"order": {"items": [{"price": 3}, {"price": -1}]}}),
        None,
    );
    assert_eq!(bad.value, 0.0);
    assert!(bad.reason.contains("$.items[1].price"), "{}", bad.reason);

    let refused =
        problems(json!({"kind": "json_schema", "schema": {"type": "string", "pattern": "x"}}));
    assert!(
        refused.iter().any(|p| p.starts_with("schema.pattern")),
        "{refused:?}"
    );
}

#[test]
fn an_expression_scores_true_false_or_a_share_and_nothing_else() {
    let share = json!({"kind": "expression", "expr": "len(output.topics) / 4"});
    let half = score(share, json!({"topics": ["a", "b"]}), None);
    assert_eq!(half.value, 0.5);
    let holds =
        json!({"kind": "expression", "expr": "output.total == reference.total && tokens == 0"});
    assert_eq!(
        score(holds, json!({"total": 3}), Some(json!({"total": 3}))).value,
        1.0
    );
    let out_of_range = score(
        json!({"kind": "expression", "expr": "len(output.topics)"}),
        json!({"topics": ["a", "b"]}),
        None,
    );
    assert_eq!(out_of_range.value, 0.0);
    assert!(
        out_of_range.reason.contains("from 0 to 1"),
        "{}",
        out_of_range.reason
    );
    let text = score(
        json!({"kind": "expression", "expr": "output.name"}),
        json!({"name": "x"}),
        None,
    );
    assert_eq!(text.value, 0.0);

    let unparsable = problems(json!({"kind": "expression", "expr": "len(("}));
    assert!(unparsable[0].starts_with("expr: "), "{unparsable:?}");
}

fn observed_trajectory() -> Observed {
    let call = |name: &str, arguments: Value| ToolCallMade {
        name: name.into(),
        arguments,
        by: "agent".into(),
    };
    Observed {
        nodes: [
            "start",
            "plan",
            "research/search",
            "research/search",
            "write",
        ]
        .map(String::from)
        .to_vec(),
        tool_calls: vec![
            call("search", json!({"q": "rust", "limit": 5})),
            call("calculator", json!({"expression": "2+2"})),
        ],
        ..Observed::default()
    }
}

fn trajectory(spec: Value) -> Score {
    let input = json!({});
    let example = Example {
        input: &input,
        reference: None,
    };
    scorer(spec).score(&example, &observed_trajectory())
}

#[test]
fn a_trajectory_in_order_counts_the_expected_steps_found_in_order() {
    let all =
        trajectory(json!({"kind": "trajectory", "nodes": ["plan", "research/search", "write"]}));
    assert_eq!(all.value, 1.0, "{}", all.reason);
    let swapped = trajectory(json!({"kind": "trajectory", "nodes": ["write", "plan"]}));
    assert_eq!(swapped.value, 0.5, "{}", swapped.reason);
    let missing = trajectory(json!({"kind": "trajectory", "nodes": ["plan", "review", "write"]}));
    assert!((missing.value - 2.0 / 3.0).abs() < 1e-9);
    assert!(
        missing.reason.contains("`review` is missing"),
        "{}",
        missing.reason
    );
    // Tools by name, and by the arguments they must include.
    let tools = trajectory(json!({"kind": "trajectory", "tools": [
        {"name": "search", "arguments": {"q": "rust"}},
        {"name": "calculator", "arguments": {"expression": "2+3"}}]}));
    assert_eq!(tools.value, 0.5);
    assert!(
        tools.reason.contains("`calculator` is missing"),
        "{}",
        tools.reason
    );
}

#[test]
fn a_trajectory_in_any_order_or_exactly() {
    let any = trajectory(json!({"kind": "trajectory", "order": "any_order",
                                "nodes": ["write", "plan", "research/search", "research/search"]}));
    assert_eq!(any.value, 1.0);
    // Each expectation takes its own step: a third search is not there.
    let thrice = trajectory(json!({"kind": "trajectory", "order": "any_order",
                                   "nodes": ["research/search", "research/search", "research/search"]}));
    assert!((thrice.value - 2.0 / 3.0).abs() < 1e-9);

    let exact = trajectory(json!({"kind": "trajectory", "order": "exact",
        "nodes": ["start", "plan", "research/search", "research/search", "write"]}));
    assert_eq!(exact.value, 1.0);
    let fewer = trajectory(
        json!({"kind": "trajectory", "order": "exact", "nodes": ["start", "plan", "write"]}),
    );
    assert_eq!(fewer.value, 3.0 / 5.0);
    assert!(
        fewer.reason.contains("2 more than expected"),
        "{}",
        fewer.reason
    );
}

#[test]
fn thresholds_on_tokens_cost_and_latency() {
    let observed = Observed {
        usage: UsageTotals {
            calls: 2,
            prompt_tokens: 800,
            completion_tokens: 300,
            cost_usd: 0.02,
            ..UsageTotals::default()
        },
        latency_ms: 1_500,
        ..Observed::default()
    };
    let input = json!({});
    let example = Example {
        input: &input,
        reference: None,
    };
    let check = |spec: Value| scorer(spec).score(&example, &observed);
    assert_eq!(
        check(json!({"kind": "threshold", "metric": "tokens", "max": 1100})).value,
        1.0
    );
    let over = check(json!({"kind": "threshold", "metric": "tokens", "max": 1000}));
    assert_eq!(over.value, 0.0);
    assert!(
        over.reason.contains("1100 tokens, over 1000"),
        "{}",
        over.reason
    );
    assert_eq!(
        check(json!({"kind": "threshold", "metric": "cost_usd", "max": 0.01})).value,
        0.0
    );
    assert_eq!(
        check(json!({"kind": "threshold", "metric": "latency_ms", "max": 2000})).value,
        1.0
    );
    assert_eq!(
        problems(json!({"kind": "threshold", "metric": "tokens", "max": -1})),
        ["max: must be a number of 0 or more"]
    );
}

#[test]
fn definitions_are_refused_at_the_field_that_is_wrong() {
    assert_eq!(problems(json!({"kind": "exact", "of": "output."})).len(), 1);
    assert!(problems(json!({"kind": "exact", "of": "output."}))[0].starts_with("of: "));
    let unknown = problems(json!({"kind": "exact", "off": "output"}));
    assert!(unknown[0].contains("unknown field `off`"), "{unknown:?}");
    let kind = problems(json!({"kind": "vibes"}));
    assert!(kind[0].contains("unknown variant `vibes`"), "{kind:?}");
    let both = problems(json!({"kind": "contains", "text": "a", "expected": "reference"}));
    assert_eq!(both, ["text: give `text` or `expected`, not both"]);
    let empty = problems(json!({"kind": "trajectory"}));
    assert_eq!(empty, ["nodes: give the nodes or the tools expected"]);
    let arguments = problems(
        json!({"kind": "trajectory", "tools": [{"name": "a"}, {"name": "", "arguments": 3}]}),
    );
    assert_eq!(
        arguments,
        [
            "tools[1].name: is empty",
            "tools[1].arguments: must be an object of the fields the call must have"
        ]
    );
    let named = problems(json!({"kind": "regex", "name": " ", "pattern": "("}));
    assert_eq!(named.len(), 2, "{named:?}");
    // A name, or the kind's.
    assert_eq!(
        scorer(json!({"kind": "regex", "pattern": "a"})).name(),
        "regex"
    );
    assert_eq!(
        scorer(json!({"kind": "regex", "name": "has an a", "pattern": "a"})).name(),
        "has an a"
    );
}

/// A model that replies `content` and remembers what it was asked.
struct Grader {
    content: Result<String, crate::model::ModelError>,
    asked: std::sync::Mutex<Vec<crate::model::ChatRequest>>,
}

impl crate::model::ChatModel for Grader {
    fn name(&self) -> &str {
        "grader"
    }

    fn chat<'a>(
        &'a self,
        request: crate::model::ChatRequest,
        _deltas: &'a (dyn Fn(crate::model::Delta) + Send + Sync),
    ) -> crate::model::ModelFuture<'a> {
        self.asked.lock().unwrap().push(request);
        let content = self.content.clone();
        Box::pin(async move {
            content.map(|content| crate::model::ChatReply {
                content,
                tool_calls: Vec::new(),
                usage: crate::model::Usage {
                    prompt_tokens: 30,
                    completion_tokens: 7,
                    cached_tokens: 0,
                },
                model: "grader".into(),
                finish_reason: Some("stop".into()),
            })
        })
    }
}

fn grader(content: Result<&str, crate::model::ModelError>) -> Grader {
    Grader {
        content: content.map(str::to_string),
        asked: std::sync::Mutex::new(Vec::new()),
    }
}

async fn judged(model: &Grader, output: Value) -> super::Judged {
    let input = json!({"question": "What is 6 * 7?"});
    let reference = json!({"answer": "42"});
    let example = Example {
        input: &input,
        reference: Some(&reference),
    };
    scorer(json!({"kind": "judge", "of": "output.answer", "rubric": "gives the right product"}))
        .score_with(
            &example,
            &Observed::new(output, UsageTotals::default()),
            model,
        )
        .await
}

#[tokio::test]
async fn a_judge_asks_its_model_for_a_verdict_and_checks_the_reply() {
    let model = grader(Ok(r#"{"score": 0.5, "reason": "half right"}"#));
    let verdict = judged(&model, json!({"answer": "42, or 43"})).await;
    assert_eq!(verdict.score.value, 0.5);
    assert_eq!(verdict.score.reason, "half right");
    assert_eq!(verdict.usage.calls, 1);
    assert_eq!(verdict.usage.tokens(), 37);
    // It was asked for a verdict's shape, shown the rubric, the input,
    // the reference and the answer.
    let asked = model.asked.lock().unwrap()[0].clone();
    assert!(matches!(
        &asked.format,
        crate::model::ReplyFormat::Schema(schema) if schema.name == "verdict"
    ));
    let shown: Value = serde_json::from_str(&asked.messages[1].content).unwrap();
    assert_eq!(shown["rubric"], "gives the right product");
    assert_eq!(shown["answer"], "42, or 43");
    assert_eq!(shown["reference"], r#"{"answer":"42"}"#);
    assert!(shown["input"].as_str().unwrap().contains("6 * 7"));

    // A score out of range, a reply that does not read, a failed call:
    // 0, with why.
    for (reply, why) in [
        (
            Ok(r#"{"score": 7, "reason": "great"}"#),
            "not between 0 and 1",
        ),
        (Ok("Looks good to me!"), "does not read"),
        (
            Err(crate::model::ModelError::Server("overloaded".into())),
            "the judge's model failed",
        ),
    ] {
        let verdict = judged(&grader(reply), json!({"answer": "42"})).await;
        assert_eq!(verdict.score.value, 0.0);
        assert!(
            verdict.score.reason.contains(why),
            "{}",
            verdict.score.reason
        );
    }

    // What the judge reads is cut: a huge answer is sent shortened.
    let model = grader(Ok(r#"{"score": 1, "reason": "ok"}"#));
    judged(&model, json!({"answer": "x".repeat(100_000)})).await;
    let shown: Value =
        serde_json::from_str(&model.asked.lock().unwrap()[0].messages[1].content).unwrap();
    assert_eq!(
        shown["answer"].as_str().unwrap().chars().count(),
        super::judge::MAX_QUOTED + 1
    );
}

#[test]
fn offline_a_judge_looks_for_the_rubrics_terms_and_says_it_is_offline() {
    // Quoted phrases are the terms when there are any.
    assert_eq!(
        super::judge::terms_of(r#"Says "14 days" and "Refund", politely."#),
        ["14 days", "refund"]
    );
    // Otherwise the uncommon words of four letters or more.
    assert_eq!(
        super::judge::terms_of("The answer should mention the refund window and apologise"),
        ["mention", "refund", "window", "apologise"]
    );
    let spec = json!({"kind": "judge", "rubric": r#"mentions "refund" and "14 days""#});
    let half = score(spec.clone(), json!("A refund is possible."), None);
    assert_eq!(half.value, 0.5);
    assert!(half.reason.starts_with("offline judge"), "{}", half.reason);
    assert!(half.reason.contains("missing: 14 days"), "{}", half.reason);
    assert_eq!(
        score(spec, json!("Your REFUND comes within 14 days."), None).value,
        1.0
    );
    let nothing = score(
        json!({"kind": "judge", "rubric": "is it ok?"}),
        json!("yes"),
        None,
    );
    assert_eq!(nothing.value, 0.0);
    assert!(nothing.reason.contains("no terms"), "{}", nothing.reason);

    // Refused at their fields.
    assert_eq!(
        problems(json!({"kind": "judge", "rubric": "  "})),
        ["rubric: is empty: say what a good answer does"]
    );
    assert_eq!(
        problems(json!({"kind": "judge", "rubric": "x".repeat(4_001), "model": ""})),
        ["rubric: is longer than 4000 characters", "model: is empty"]
    );
    assert!(problems(json!({"kind": "judge"}))[0].contains("rubric"));
}

#[test]
fn a_script_scores_a_share_a_yes_or_no_or_a_score_with_its_reason() {
    let output = json!({"answer": "Paris is the capital", "n": 3});
    let reference = Some(json!({"answer": "Paris"}));
    let share = json!({"kind": "script",
        "source": "let words = output.answer.split(' '); if words.len() > 2 { 0.5 } else { 1.0 }"});
    let got = score(share, output.clone(), reference.clone());
    assert_eq!(got.value, 0.5);
    assert_eq!(got.reason, "the script gave 0.5");
    let yes = json!({"kind": "script", "source": "output.answer.contains(reference.answer)"});
    assert_eq!(score(yes, output.clone(), reference.clone()).value, 1.0);
    let said = json!({"kind": "script", "name": "short",
        "source": "#{score: if output.n < 5 { 0.8 } else { 0.1 }, reason: `n is ${output.n}`}"});
    let got = score(said, output.clone(), None);
    assert_eq!((got.value, got.reason.as_str()), (0.8, "n is 3"));
}

#[test]
fn a_script_that_fails_or_gives_no_score_scores_zero_saying_why() {
    let output = json!({"answer": "x"});
    for (source, says) in [
        ("2", "the script gave 2; a score is from 0 to 1"),
        (
            "\"fine\"",
            "it must give a number from 0 to 1, true or false, or #{score, reason}",
        ),
        ("#{reason: \"no score\"}", "it must give a number"),
        ("throw \"bad answer\"", "bad answer"),
        ("output.nope.deeper", "the script failed"),
    ] {
        let got = score(
            json!({"kind": "script", "source": source}),
            output.clone(),
            None,
        );
        assert_eq!(got.value, 0.0, "{source}");
        assert!(got.reason.contains(says), "{source}: {}", got.reason);
    }
}

#[test]
fn a_script_never_runs_unbounded() {
    let output = json!({});
    let spin = json!({"kind": "script", "source": "loop {}", "max_operations": 10_000});
    let got = score(spin, output.clone(), None);
    assert_eq!(got.value, 0.0);
    assert!(
        got.reason.contains("more than 10000 operations"),
        "{}",
        got.reason
    );
    let slow = json!({"kind": "script", "source": "loop {}", "max_operations": 100_000_000, "timeout_ms": 20});
    let got = score(slow, output, None);
    assert!(got.reason.contains("longer than 20 ms"), "{}", got.reason);
    // Nothing outside the sandbox: no modules, no eval; refused before
    // anything runs.
    for source in ["import \"std\" as s; 1", "eval(\"1\")"] {
        let refused = problems(json!({"kind": "script", "source": source}));
        assert!(
            refused[0].starts_with("source: the script does not compile"),
            "{refused:?}"
        );
    }
}

#[test]
fn a_scripts_problems_are_named_at_their_fields() {
    assert_eq!(
        problems(json!({"kind": "script", "source": "let = ;"}))[0]
            .split(':')
            .next(),
        Some("source")
    );
    let limits = problems(
        json!({"kind": "script", "source": "1", "max_operations": 0, "timeout_ms": 60_000}),
    );
    assert_eq!(limits.len(), 2, "{limits:?}");
    assert!(limits[0].starts_with("max_operations: "), "{limits:?}");
    assert!(limits[1].starts_with("timeout_ms: "), "{limits:?}");
}

#[cfg(feature = "runtime")]
#[tokio::test]
async fn a_script_scored_in_a_registry_runs_on_its_script_pool() {
    let registry = crate::Registry::new();
    let output = json!({"answer": "Paris"});
    let reference = json!({"answer": "Paris"});
    let input = json!({});
    let example = Example {
        input: &input,
        reference: Some(&reference),
    };
    let scorer = scorer(json!({"kind": "script",
        "source": "if output.answer == reference.answer { #{score: 1, reason: \"same\"} } else { 0 }"}));
    let judged = scorer
        .score_in(
            &example,
            &Observed::new(output, UsageTotals::default()),
            &registry,
        )
        .await;
    assert_eq!(
        (judged.score.value, judged.score.reason.as_str()),
        (1.0, "same")
    );
}
