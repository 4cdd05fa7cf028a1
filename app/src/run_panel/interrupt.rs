//! Answering a paused run, where it paused: approve or reject a model's
//! tool calls (editing their arguments first, if need be), answer a
//! question in words, or go on past a breakpoint. Answering resumes the
//! run, and the canvas goes on animating it.

use heddle_engine::format::ChannelType;
use heddle_engine::model::ToolCall;
use heddle_engine::run::{Interrupt, InterruptWhen};
use leptos::prelude::*;
use serde_json::{Value, json};

use super::show_json;
use crate::editor::state::Editor;
use crate::live::Watch;

/// What kind of answer a pause wants, read from its payload.
#[derive(Clone, Debug, PartialEq)]
pub enum Ask {
    /// A `human` node: approve these calls or not.
    Approval {
        prompt: String,
        calls: Vec<ToolCall>,
    },
    /// A breakpoint: go on.
    Breakpoint { before: bool },
    /// A question (an `ask` node), answered into channel `answer`.
    Question { prompt: String, answer: String },
    /// Something else: answer with JSON.
    Other,
}

impl Ask {
    pub fn of(interrupt: &Interrupt) -> Ask {
        if interrupt.when != InterruptWhen::During {
            return Ask::Breakpoint {
                before: interrupt.when == InterruptWhen::Before,
            };
        }
        let payload = &interrupt.payload;
        let prompt = payload["prompt"].as_str().unwrap_or_default().to_string();
        if payload["kind"] == "approval" {
            let calls = serde_json::from_value(payload["tool_calls"].clone()).unwrap_or_default();
            return Ask::Approval { prompt, calls };
        }
        if payload["prompt"].is_string() {
            let answer = payload["answer"].as_str().unwrap_or_default().to_string();
            return Ask::Question { prompt, answer };
        }
        Ask::Other
    }
}

/// The answer forms of the watched run's pauses (editors only). The
/// graph's channels say what an answer is: yes or no for a boolean, a
/// number for a number, words otherwise.
#[component]
pub fn InterruptForms(watch: Watch, editor: Editor, can_run: bool) -> impl IntoView {
    let interrupts = move || {
        if watch.cursor.get().is_some() {
            return Vec::new();
        }
        watch.view.with(|view| view.interrupts.clone())
    };
    move || {
        interrupts()
            .into_iter()
            .map(|interrupt| view! { <InterruptForm watch editor interrupt can_run /> })
            .collect_view()
    }
}

/// Resumes the watched run's thread with `value`.
fn answer(watch: Watch, value: Value, error: RwSignal<Option<String>>, pending: RwSignal<bool>) {
    pending.set(true);
    leptos::task::spawn_local(async move {
        let run_id = watch.log.with_untracked(|log| log.run_id.clone());
        let thread = match (watch.thread.get_untracked(), run_id) {
            (Some(thread), _) => Ok(thread),
            (None, Some(run_id)) => crate::live::api::run(&run_id)
                .await
                .map(|run| run.thread_id),
            (None, None) => {
                pending.set(false);
                return;
            }
        };
        let result = match thread {
            Ok(thread) => crate::live::api::resume(&thread, value).await,
            Err(refusal) => Err(refusal),
        };
        error.set(result.err().map(|refusal| refusal.to_string()));
        pending.set(false);
    });
}

#[component]
fn InterruptForm(
    watch: Watch,
    editor: Editor,
    interrupt: Interrupt,
    can_run: bool,
) -> impl IntoView {
    let error = RwSignal::new(None::<String>);
    let pending = RwSignal::new(false);
    let node = interrupt.node.to_string();
    // Named as the canvas names the node; a pause inside its subgraph or
    // one of its sub-agents also says which child and which of its nodes
    // asks.
    let where_ = {
        let mut named = editor.name_of(&node);
        // Down through each child that paused inside another.
        let mut inside = &interrupt.payload[heddle_engine::kinds::PAUSED_CHILD];
        for _ in 0..heddle_engine::kinds::MAX_DEPTH {
            if !inside.is_object() {
                break;
            }
            for hop in [&inside["child"], &inside["node"]] {
                if let Some(hop) = hop.as_str() {
                    named = format!("{named} › {hop}");
                }
            }
            inside = &inside["checkpoint"]["interrupts"][0]["payload"]
                [heddle_engine::kinds::PAUSED_CHILD];
        }
        named
    };
    let body = match Ask::of(&interrupt) {
        Ask::Approval { prompt, calls } => {
            let edited: Vec<RwSignal<String>> = calls
                .iter()
                .map(|call| RwSignal::new(call.arguments.clone()))
                .collect();
            let reason = RwSignal::new(String::new());
            let calls_for_approve = calls.clone();
            let edited_for_approve = edited.clone();
            let approve = move |_| {
                let mut changed = false;
                let mut calls = calls_for_approve.clone();
                for (call, text) in calls.iter_mut().zip(&edited_for_approve) {
                    let text = text.get_untracked();
                    if serde_json::from_str::<Value>(&text).is_err() {
                        error.set(Some(format!(
                            "the arguments of `{}` are not JSON",
                            call.name
                        )));
                        return;
                    }
                    changed |= text != call.arguments;
                    call.arguments = text;
                }
                let value = if changed {
                    json!({"approved": true, "tool_calls": calls})
                } else {
                    json!({"approved": true})
                };
                answer(watch, value, error, pending);
            };
            let reject = move |_| {
                let reason = reason.get_untracked();
                let value = if reason.trim().is_empty() {
                    json!({"approved": false})
                } else {
                    json!({"approved": false, "reason": reason})
                };
                answer(watch, value, error, pending);
            };
            view! {
                <p class="interrupt-prompt">{prompt}</p>
                <ul class="tool-calls">
                    {calls.into_iter().zip(edited).map(|(call, text)| view! {
                        <li class="tool-call">
                            <span class="tool-call-name">{call.name.clone()}</span>
                            <textarea class="json-input" rows="2" spellcheck="false"
                                aria-label=format!("Arguments of {}", call.name)
                                readonly=!can_run
                                prop:value=move || text.get()
                                on:input=move |event| text.set(event_target_value(&event))></textarea>
                        </li>
                    }).collect_view()}
                </ul>
                {can_run.then(|| view! {
                    <div class="form-actions">
                        <button type="button" class="button button-primary" data-testid="approve"
                            disabled=move || pending.get() on:click=approve>"Approve"</button>
                        <input type="text" placeholder="Why not (optional)" aria-label="Reason to reject"
                            on:input=move |event| reason.set(event_target_value(&event)) />
                        <button type="button" class="button button-danger" data-testid="reject"
                            disabled=move || pending.get() on:click=reject>"Reject"</button>
                    </div>
                })}
            }
            .into_any()
        }
        Ask::Breakpoint { before } => {
            let text = if before {
                format!("Paused before `{node}` (a breakpoint).")
            } else {
                format!("Paused after `{node}` (a breakpoint).")
            };
            view! {
                <p class="interrupt-prompt">{text}</p>
                {can_run.then(|| view! {
                    <div class="form-actions">
                        <button type="button" class="button button-primary" data-testid="continue"
                            disabled=move || pending.get()
                            on:click=move |_| answer(watch, Value::Null, error, pending)>"Continue"</button>
                    </div>
                })}
            }
            .into_any()
        }
        Ask::Question {
            prompt,
            answer: channel,
        } => {
            let ty = editor.skeleton.with_untracked(|document| {
                document
                    .state
                    .channels
                    .get(&channel)
                    .map(|channel| channel.ty)
            });
            let form = can_run.then(|| question_form(watch, ty, error, pending));
            view! {
                <p class="interrupt-prompt">{prompt}</p>
                {form}
            }
            .into_any()
        }
        Ask::Other => {
            let text = RwSignal::new(String::new());
            let payload = show_json(&interrupt.payload, 2000);
            view! {
                <pre tabindex="0" class="json">{payload}</pre>
                {can_run.then(|| view! {
                    <textarea class="json-input" rows="3" spellcheck="false" aria-label="Answer (JSON)"
                        placeholder="JSON" on:input=move |event| text.set(event_target_value(&event))></textarea>
                    <div class="form-actions">
                        <button type="button" class="button button-primary" disabled=move || pending.get()
                            on:click=move |_| {
                                match serde_json::from_str::<Value>(&text.get_untracked()) {
                                    Ok(value) => answer(watch, value, error, pending),
                                    Err(e) => error.set(Some(format!("the answer is not JSON: {e}"))),
                                }
                            }>"Send answer"</button>
                    </div>
                })}
            }
            .into_any()
        }
    };
    view! {
        <section class="interrupt" data-testid="interrupt" data-node=node.clone()>
            <h3>{format!("Waiting at {where_}")}</h3>
            {body}
            {move || error.get().map(|message| view! { <p class="inline-error" role="alert">{message}</p> })}
        </section>
    }
}

/// The answer form of a question, by the type of the channel it fills.
fn question_form(
    watch: Watch,
    ty: Option<ChannelType>,
    error: RwSignal<Option<String>>,
    pending: RwSignal<bool>,
) -> AnyView {
    match ty {
        Some(ChannelType::Boolean) => view! {
            <div class="form-actions">
                <button type="button" class="button button-primary" data-testid="answer-yes"
                    disabled=move || pending.get()
                    on:click=move |_| answer(watch, Value::Bool(true), error, pending)>"Yes"</button>
                <button type="button" class="button" data-testid="answer-no"
                    disabled=move || pending.get()
                    on:click=move |_| answer(watch, Value::Bool(false), error, pending)>"No"</button>
            </div>
        }
        .into_any(),
        Some(ty @ (ChannelType::Number | ChannelType::Integer)) => {
            let text = RwSignal::new(String::new());
            let send = move || {
                let raw = text.get_untracked();
                let parsed = if ty == ChannelType::Integer {
                    raw.trim().parse::<i64>().ok().map(Value::from)
                } else {
                    raw.trim().parse::<f64>().ok().map(Value::from)
                };
                match parsed {
                    Some(value) => answer(watch, value, error, pending),
                    None => error.set(Some(if ty == ChannelType::Integer {
                        "the answer must be a whole number".to_string()
                    } else {
                        "the answer must be a number".to_string()
                    })),
                }
            };
            view! {
                <form class="form-actions" on:submit=move |event| { event.prevent_default(); send(); }>
                    <input type="number" step=if ty == ChannelType::Integer { "1" } else { "any" }
                        aria-label="Your answer" data-testid="answer-number"
                        on:input=move |event| text.set(event_target_value(&event)) />
                    <button type="submit" class="button button-primary" data-testid="answer"
                        disabled=move || pending.get() || text.with(|t| t.trim().is_empty())>"Send answer"</button>
                </form>
            }
            .into_any()
        }
        _ => {
            let text = RwSignal::new(String::new());
            view! {
                <textarea rows="2" aria-label="Your answer" data-testid="answer-text"
                    on:input=move |event| text.set(event_target_value(&event))></textarea>
                <div class="form-actions">
                    <button type="button" class="button button-primary" data-testid="answer"
                        disabled=move || pending.get() || text.with(|t| t.trim().is_empty())
                        on:click=move |_| answer(watch, Value::String(text.get_untracked()), error, pending)>
                        "Send answer"
                    </button>
                </div>
            }
            .into_any()
        }
    }
}

#[cfg(test)]
mod tests {
    use heddle_engine::run::Interrupt;
    use serde_json::json;

    use super::Ask;

    fn interrupt(when: &str, payload: serde_json::Value) -> Interrupt {
        serde_json::from_value(json!({"node": "gate", "task": 0, "when": when, "payload": payload}))
            .unwrap()
    }

    #[test]
    fn pauses_are_read_by_what_they_ask() {
        let approval = interrupt(
            "during",
            json!({"kind": "approval", "prompt": "Approve?", "tool_calls": [{"id": "c1", "name": "calculator", "arguments": "{\"expression\": \"6*7\"}"}]}),
        );
        let Ask::Approval { prompt, calls } = Ask::of(&approval) else {
            panic!("an approval");
        };
        assert_eq!(
            (prompt.as_str(), calls[0].name.as_str()),
            ("Approve?", "calculator")
        );
        assert_eq!(
            Ask::of(&interrupt(
                "during",
                json!({"prompt": "Refund?", "answer": "approved"})
            )),
            Ask::Question {
                prompt: "Refund?".into(),
                answer: "approved".into()
            }
        );
        assert_eq!(
            Ask::of(&interrupt("before", json!(null))),
            Ask::Breakpoint { before: true }
        );
        assert_eq!(Ask::of(&interrupt("during", json!({"x": 1}))), Ask::Other);
    }
}
