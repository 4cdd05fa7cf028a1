//! The chat panel, for graphs whose input is a conversation: pick one of
//! the graph's threads or start a new one, read its messages (tool calls
//! and their results folded), send a message (which starts a run on the
//! thread), and watch the reply stream in as the model writes it (a
//! fan-out's instances in a bubble each).

use std::collections::HashMap;

use heddle_engine::format::ChannelType;
use heddle_engine::ids::ThreadId;
use heddle_engine::model::{ChatMessage, Role};
use heddle_engine::run::{RunStatus, run_of_input_message};
use leptos::prelude::*;
use serde_json::{Map, Value, json};

mod earlier;

use super::interrupt::InterruptForms;
use super::turns::is_question;
use super::{input_fields, short_id};
use crate::components::Markdown;
use crate::components::when;
use crate::editor::state::Editor;
use crate::live::{NodeState, NodeStats, Watch};
use crate::runs::StartRequest;
use crate::runs::ThreadInfo;

/// How many of a fan-out's instances stream in bubbles of their own.
const STREAMING_INSTANCES: usize = 4;

#[component]
pub fn ChatTab(
    editor: Editor,
    watch: Watch,
    graph_id: String,
    can_run: bool,
    /// Set while a conversation shows (the panel grows for it).
    talking: RwSignal<bool>,
) -> impl IntoView {
    let channel = Memo::new(move |_| {
        input_fields(editor)
            .into_iter()
            .find(|field| field.ty == ChannelType::Messages)
            .map(|field| field.channel)
            .unwrap_or_else(|| "messages".into())
    });
    let threads = RwSignal::new(Vec::<ThreadInfo>::new());
    // The thread shown: the watched run's, else the one picked.
    let picked = RwSignal::new(None::<ThreadId>);
    let messages = RwSignal::new(Vec::<ChatMessage>::new());
    // The message just sent, shown until the thread has it.
    let sent = RwSignal::new(None::<String>);
    let draft = RwSignal::new(String::new());
    let error = RwSignal::new(None::<String>);
    // For people who do not see the conversation: the reply to what they
    // sent is read out once it has come (not a conversation's history
    // when it is opened).
    let asked = StoredValue::new(false);
    let heard = RwSignal::new(String::new());
    Effect::new(move |_| {
        let reply = messages.with(|messages| {
            messages
                .last()
                .filter(|message| message.role == Role::Assistant && !message.content.is_empty())
                .cloned()
        });
        if let Some(reply) = reply
            && asked.get_value()
        {
            asked.set_value(false);
            heard.set(format!(
                "{}: {}",
                said_by(editor, &reply),
                opening_words(&reply.content, MOST_READ_OUT)
            ));
        }
    });
    Effect::new(move |_| {
        let shows = picked.with(Option::is_some)
            || sent.with(Option::is_some)
            || messages.with(|messages| !messages.is_empty());
        talking.set(shows);
    });
    Effect::new(move |_| {
        if let Some(thread) = watch.thread.get() {
            picked.set(Some(thread));
        }
    });
    // A graph opened again goes on with its latest conversation, once:
    // after that, what the person picks (a new one included) stays.
    let resumed = StoredValue::new(false);
    // The threads, and the picked thread's messages, again whenever the
    // watched run changes status (a reply finished, a pause).
    {
        let graph_id = graph_id.clone();
        let status = move || watch.status.get();
        Effect::new(move |_| {
            let _ = status();
            let thread = picked.get();
            let channel = channel.get();
            let graph_id = graph_id.clone();
            leptos::task::spawn_local(async move {
                if let Ok(list) = crate::live::api::threads(&graph_id).await {
                    let fresh = thread.is_none()
                        && sent.try_get_untracked().flatten().is_none()
                        && !resumed.try_get_value().unwrap_or(true);
                    let latest = latest_thread(&list);
                    resumed.try_set_value(true);
                    let _ = threads.try_set(list);
                    if fresh && let Some(latest) = latest {
                        // Picking it runs this again, for its messages.
                        let _ = picked.try_set(Some(latest));
                        return;
                    }
                }
                let loaded = match thread.clone() {
                    Some(thread) => crate::live::api::thread(&thread)
                        .await
                        .map(|answer| {
                            serde_json::from_value::<Vec<ChatMessage>>(
                                answer.state[&channel].clone(),
                            )
                            .unwrap_or_default()
                        })
                        .unwrap_or_default(),
                    None => Vec::new(),
                };
                // Another conversation picked meanwhile (New pressed while
                // this one loaded): these messages are not its.
                if picked.try_get_untracked().as_ref() != Some(&thread) {
                    return;
                }
                let arrived = loaded
                    .iter()
                    .rev()
                    .find(|message| message.role == Role::User && message.name.is_none())
                    .map(|message| message.content.clone());
                if sent
                    .try_get_untracked()
                    .flatten()
                    .is_some_and(|text| Some(text) == arrived)
                {
                    let _ = sent.try_set(None);
                }
                let _ = messages.try_set(loaded);
            });
        });
    }
    // What is being written: a node's words, or, for a fanned-out node,
    // each instance's in a bubble of its own (never interleaved).
    let streaming = move || -> Vec<(Option<String>, String)> {
        if watch.cursor.get().is_some() {
            return Vec::new();
        }
        watch.view.with(|view| {
            let mut running: Vec<&String> = view
                .nodes
                .iter()
                .filter(|(_, state)| **state == NodeState::Running)
                .map(|(node, _)| node)
                .collect();
            running.sort();
            for node in running {
                let Some(stats) = view.stats.get(node) else {
                    continue;
                };
                let name = editor.name_of(node);
                // Named by the node that writes: a graph with a planner and
                // specialists says which one is talking.
                if !stats.streamed.is_empty() {
                    return vec![(Some(name), stats.streamed.clone())];
                }
                let instances: Vec<(Option<String>, String)> = stats
                    .instances
                    .iter()
                    .filter(|(_, instance)| {
                        instance.state == NodeState::Running && !instance.streamed.is_empty()
                    })
                    .take(STREAMING_INSTANCES)
                    .map(|(i, instance)| {
                        (
                            Some(instance_title(&name, *i, instance.item.as_deref())),
                            instance.streamed.clone(),
                        )
                    })
                    .collect();
                if !instances.is_empty() {
                    return instances;
                }
            }
            Vec::new()
        })
    };
    let busy = move || watch.status.get() == Some(RunStatus::Running);
    // Once the watched run is over, a fan-out's instances stay readable,
    // folded under the answer: each with its item and what it wrote (the
    // conversation keeps only what the graph put in it).
    // A memo: the messages drawn around it are drawn again only when it
    // changes, not on every event of the run.
    // A thread whose run is not watched (the page opened again, another
    // conversation picked) shows its newest run's, read from its log.
    let restored = RwSignal::new(None::<(ThreadId, Folds)>);
    {
        let graph_id = graph_id.clone();
        Effect::new(move |_| {
            let (Some(thread), watched) = (picked.get(), watch.thread.get()) else {
                return;
            };
            if watched.as_ref() == Some(&thread)
                || restored
                    .with_untracked(|shown| shown.as_ref().is_some_and(|(t, _)| t == &thread))
            {
                return;
            }
            let graph_id = graph_id.clone();
            leptos::task::spawn_local(async move {
                let newest = crate::live::api::runs(&graph_id)
                    .await
                    .ok()
                    .and_then(|runs| runs.into_iter().find(|run| run.thread_id == thread));
                let folds = match newest {
                    Some(run) if run.status.is_final() => crate::live::api::log(&run.id)
                        .await
                        .map(|log| turn_folds(editor, &log.view_at(None)))
                        .unwrap_or_default(),
                    _ => Folds::default(),
                };
                let _ = restored.try_set(Some((thread, folds)));
            });
        });
    }
    // Earlier turns' folds seen on this page, by thread and turn (how many
    // of the person's questions came up to it): kept as a turn is
    // followed by the next, so an earlier answer still says where it was
    // routed.
    let kept = StoredValue::new(HashMap::<(ThreadId, usize), Folds>::new());
    let kept_changed = RwSignal::new(0u64);
    // Those not followed on this page are read back from their runs.
    earlier::read_back(
        editor,
        picked,
        messages,
        move || watch.log.with(|log| log.run_id.clone()),
        kept,
        kept_changed,
    );
    let fanned = Memo::new(move |_| -> Folds {
        if busy() || watch.cursor.get().is_some() {
            return Folds::default();
        }
        let shown = picked.get();
        // A new conversation has said nothing yet: no run's folds are its
        // (a run opened by its address has no thread known to the page).
        if shown.is_none() {
            return Folds::default();
        }
        if watch.thread.get() != shown {
            return restored.with(|restored| match (restored, &shown) {
                (Some((thread, folds)), Some(shown)) if thread == shown => folds.clone(),
                _ => Folds::default(),
            });
        }
        watch.view.with(|view| turn_folds(editor, view))
    });
    // The turn of the run watched, when its question names it: the Trace's
    // Earlier watches an earlier turn's run, whose routes are that turn's,
    // not the newest's (they were drawn under the newest question).
    let watched_turn = move || {
        let run = watch.log.with(|log| log.run_id.clone())?;
        messages.with(|all| turn_of_run(all, &run))
    };
    // Whether the run watched is the newest turn's (or one being asked).
    let newest_watched = move || {
        sent.with(Option::is_some)
            || watched_turn().is_none_or(|turn| turn == messages.with(|all| questions(all)))
    };
    // The watched run's folds are kept under its turn, so the newest turn
    // still says where it was routed while an earlier one is watched.
    Effect::new(move |_| {
        let folds = fanned.get();
        if folds == Folds::default() {
            return;
        }
        let (Some(thread), Some(turn)) = (picked.get_untracked(), watched_turn()) else {
            return;
        };
        kept.update_value(|kept| {
            kept.insert((thread, turn), folds);
        });
    });
    // The newest turn stays in view: its question at the top, the reply
    // growing under it; sending follows again.
    let list = NodeRef::<leptos::html::Ol>::new();
    let follow = super::follow_turn::follow_turn(list);
    let sending = StoredValue::new(false);
    Effect::new(move |_| {
        messages.track();
        // The folds drawn among the messages too: read back from their
        // runs after the messages (the chat opened again from the Trace),
        // they pushed the newest reply down, out of sight.
        kept_changed.track();
        fanned.track();
        let just_sent = sent.with(Option::is_some);
        let _ = streaming();
        // Following again once per message sent, not at each word of its
        // reply (the person may have scrolled up meanwhile).
        let sent_now = just_sent && !sending.get_value();
        sending.set_value(just_sent);
        follow(sent_now);
    });
    // Why the watched run failed, said where the reply would have been.
    let failure = move || {
        watch
            .view
            .with(|view| (view.status == Some(RunStatus::Failed)).then(|| view.error.clone()))
            .flatten()
    };
    let asked_during = StoredValue::new(None::<heddle_engine::RunId>);
    let shown = use_context::<crate::editor::persist::Persistence>();
    let send = {
        let graph_id = graph_id.clone();
        move || {
            let text = draft.get_untracked();
            if text.trim().is_empty() {
                return;
            }
            let mut input = Map::new();
            input.insert(
                channel.get_untracked(),
                json!([{"role": "user", "content": text.trim()}]),
            );
            let options = StartRequest {
                input: Value::Object(input),
                thread_id: picked.get_untracked(),
                ..StartRequest::default()
            };
            // The turn answered so far keeps where it was routed (and its
            // instances) once this one is asked.
            if let Some(thread) = picked.get_untracked() {
                let folds = fanned.get_untracked();
                if folds != Folds::default() {
                    let turn = messages.with_untracked(|all| questions(&all[..turn_start(all)]));
                    kept.update_value(|kept| {
                        kept.insert((thread, turn), folds);
                    });
                    kept_changed.update(|n| *n += 1);
                }
            }
            // The run watched as it was asked: until the new one is, its
            // folds are the turn before's (kept above), not this one's.
            asked_during.set_value(watch.log.with_untracked(|log| log.run_id.clone()));
            // Show the message at once; the thread's copy replaces it.
            sent.set(Some(text.trim().to_string()));
            asked.set_value(true);
            draft.set(String::new());
            let graph_id = graph_id.clone();
            let typed = text.trim().to_string();
            leptos::task::spawn_local(async move {
                match crate::live::api::start_run(&graph_id, shown, options).await {
                    Ok(run) => {
                        error.set(None);
                        picked.set(Some(run.thread_id.clone()));
                        super::start::follow(&run);
                    }
                    Err(refusal) => {
                        // Nothing was sent: the message goes back to the box.
                        sent.set(None);
                        if draft.get_untracked().is_empty() {
                            draft.set(typed);
                        }
                        error.set(Some(refusal.explain(|node| editor.label_of(node))));
                    }
                }
            });
        }
    };
    let send_on_enter = {
        let send = send.clone();
        move |event: leptos::ev::KeyboardEvent| {
            if event.key() == "Enter" && !event.shift_key() {
                event.prevent_default();
                send();
            }
        }
    };
    view! {
        <div class="chat" data-testid="chat">
            <div class="chat-threads">
                <label class="field field-inline">
                    <span>"Conversation"</span>
                    <select data-testid="chat-thread" on:change=move |event| {
                        let value = event_target_value(&event);
                        picked.set((!value.is_empty()).then(|| ThreadId::from(value)));
                    }>
                        <option value="" selected=move || picked.get().is_none()>"New conversation"</option>
                        <For each=move || threads.get() key=|thread| (thread.id.clone(), thread.runs, thread.tokens, thread.updated_at.clone()) let:thread>
                            {
                                let id = thread.id.clone();
                                let runs = if thread.runs == 1 { "1 run".to_string() } else { format!("{} runs", thread.runs) };
                                let name = thread.title.clone().unwrap_or_else(|| format!("Conversation {}", short_id(thread.id.as_str())));
                                let used = if thread.tokens > 0 {
                                    format!(
                                        " · {} tokens · {}",
                                        super::usage::tokens(thread.tokens),
                                        super::usage::cost(thread.cost_usd)
                                    )
                                } else {
                                    String::new()
                                };
                                let updated = thread.updated_at.clone();
                                let label = move || format!("{name} · {runs}{used} · {}", when(&updated));
                                view! {
                                    <option value=id.to_string() selected=move || picked.get().as_ref() == Some(&id)>{label}</option>
                                }
                            }
                        </For>
                    </select>
                </label>
                {move || picked.with(Option::is_some).then(|| view! {
                    <button type="button" class="button button-small" data-testid="chat-new"
                        title="Start a new conversation"
                        on:click=move |_| {
                            picked.set(None);
                            messages.set(Vec::new());
                        }>"New"</button>
                })}
            </div>
            <ol class="chat-messages" data-testid="chat-messages" node_ref=list tabindex="0" aria-label="Messages">
                {move || (messages.with(Vec::is_empty) && sent.with(Option::is_none)).then(|| view! {
                    <li class="empty-note">"No messages yet. Say something to start a conversation."</li>
                })}
                // The instances' work came between the person's question and
                // the answer made of it: their fold sits there, not after.
                {move || {
                    kept_changed.track();
                    // The question just sent, until the thread has it: the
                    // newest turn's, so its folds go after it (the run may
                    // end before the thread is read again).
                    let pending = sent.get();
                    let mut before = messages.get();
                    let after = match pending {
                        Some(_) => Vec::new(),
                        None => before.split_off(turn_start(&before)),
                    };
                    let thread = picked.get();
                    let current = questions(&before) + usize::from(pending.is_some());
                    // Asked, and the new run not yet watched: the folds the
                    // page has are the turn before's, drawn with it.
                    let stale = pending.is_some()
                        && watch.log.with(|log| log.run_id.clone()) == asked_during.get_value();
                    // The run watched is an earlier turn's (the Trace's
                    // Earlier): its folds go with its own question, and the
                    // newest turn's are those kept of it, if any.
                    let watched = if pending.is_some() { None } else { watched_turn() };
                    let newest_watched = newest_watched();
                    // An earlier turn's folds go after its question, as the
                    // newest turn's do.
                    let mut asked = 0;
                    let before = before
                        .into_iter()
                        .map(|message| {
                            let question = is_question(&message);
                            let drawn = message_view(editor, message);
                            if !question {
                                return (drawn, None);
                            }
                            asked += 1;
                            let earlier = if watched == Some(asked) && asked < current {
                                Some(fanned.get())
                            } else {
                                thread
                                    .as_ref()
                                    .filter(|_| asked < current)
                                    .and_then(|thread| {
                                        kept.with_value(|kept| kept.get(&(thread.clone(), asked)).cloned())
                                    })
                            };
                            (drawn, earlier.map(folds_view))
                        })
                        .collect_view();
                    let newest = (!stale && newest_watched).then(|| fanned.get());
                    let kept_newest = (!newest_watched)
                        .then(|| {
                            thread.as_ref().and_then(|thread| {
                                kept.with_value(|kept| kept.get(&(thread.clone(), current)).cloned())
                            })
                        })
                        .flatten();
                    (
                        before,
                        pending.map(|text| message_view(editor, ChatMessage::new(Role::User, text))),
                        newest.as_ref().map(|folds| folds.routes.clone().into_iter().map(route_view).collect_view()),
                        newest.as_ref().map(|folds| folds.fans.clone().into_iter().map(instances_view).collect_view()),
                        kept_newest.as_ref().map(|folds| (
                            folds.routes.clone().into_iter().map(route_view).collect_view(),
                            folds.fans.clone().into_iter().map(instances_view).collect_view(),
                        )),
                        after.into_iter().map(|message| message_view(editor, message)).collect_view(),
                        // A run not followed here (the conversation picked
                        // again) says why it failed as a followed one does.
                        (failure().is_none()).then(|| newest.and_then(|folds| folds.failure)).flatten().map(failure_view),
                        kept_newest.and_then(|folds| folds.failure).map(failure_view),
                    )
                }}
                {move || streaming().into_iter().map(|(who, text)| view! {
                    <li class="chat-message role-assistant streaming" data-testid="chat-streaming">
                        <span class="chat-role">{who.unwrap_or_else(|| "assistant".to_string())}</span>
                        <p>{text}</p>
                    </li>
                }).collect_view()}
                {move || failure().filter(|_| newest_watched()).map(|why| view! {
                    <li class="chat-message chat-failure" role="alert" data-testid="chat-failure">
                        <span class="chat-role">"the run failed"</span>
                        // Read as one sentence: "the run failed: …".
                        <span class="visually-hidden">": "</span>
                        <p><crate::components::CodeSpans text=editor.named(&why) /></p>
                    </li>
                })}
            </ol>
            <InterruptForms watch editor can_run />
            {can_run.then(|| view! {
                <form class="chat-compose" on:submit=move |event| { event.prevent_default(); send(); }>
                    <textarea rows="2" placeholder="Message (Enter to send, Shift+Enter for a new line)"
                        aria-label="Message" data-testid="chat-input" data-first-stop=""
                        prop:value=move || draft.get()
                        on:input=move |event| draft.set(event_target_value(&event))
                        on:keydown=send_on_enter></textarea>
                    <button type="submit" class="button button-primary" data-testid="chat-send"
                        disabled=move || busy() || draft.with(|d| d.trim().is_empty())>"Send"</button>
                </form>
            })}
            {move || error.get().map(|message| view! { <p class="inline-error" role="alert">{message}</p> })}
            <div class="visually-hidden" role="status" aria-live="polite" aria-atomic="true"
                data-testid="chat-announcer">{move || heard.get()}</div>
        </div>
    }
}

/// Where the latest turn's work begins: just after the person's last
/// message (a node's prompt is signed, the person's is not).
fn turn_start(messages: &[ChatMessage]) -> usize {
    messages
        .iter()
        .rposition(is_question)
        .map_or(0, |at| at + 1)
}

/// The number of the turn (how many questions came up to it) whose
/// question started run `run`.
fn turn_of_run(messages: &[ChatMessage], run: &heddle_engine::RunId) -> Option<usize> {
    messages
        .iter()
        .filter(|message| is_question(message))
        .position(|message| {
            message
                .id
                .as_deref()
                .and_then(run_of_input_message)
                .as_ref()
                == Some(run)
        })
        .map(|at| at + 1)
}

/// How many of `messages` the person wrote.
fn questions(messages: &[ChatMessage]) -> usize {
    messages
        .iter()
        .filter(|message| is_question(message))
        .count()
}

/// An earlier turn's folds: its routes, then its instances, and why its
/// run failed when it did (the conversation keeps no answer for it).
fn folds_view(folds: Folds) -> impl IntoView {
    (
        folds.routes.into_iter().map(route_view).collect_view(),
        folds.fans.into_iter().map(instances_view).collect_view(),
        folds.failure.map(failure_view),
    )
}

/// Why a turn's run failed, where its answer would have been.
fn failure_view(why: String) -> impl IntoView {
    view! {
        <li class="chat-message chat-failure" data-testid="chat-failure-earlier">
            <span class="chat-role">"the run failed"</span>
            // Read as one sentence: "the run failed: …".
            <span class="visually-hidden">": "</span>
            <p><crate::components::CodeSpans text=why /></p>
        </li>
    }
}

/// What a run did between the question and its answer that the
/// conversation does not keep: the routes its nodes chose, and its
/// fanned-out nodes, by name, each with its instances: who (the node, the
/// instance and its item) and what it wrote, or why it failed.
#[derive(Clone, Debug, Default, PartialEq)]
struct Folds {
    /// Who chose, where it led, and whether it was the chooser's
    /// `otherwise` (no route fit).
    routes: Vec<(String, String, bool)>,
    fans: Vec<(String, Vec<(String, String)>)>,
    /// Why the run failed, nodes named as the canvas names them.
    failure: Option<String>,
}

/// A turn's folds as its run `view` stands: [`folds`], and its failure.
fn turn_folds(editor: Editor, view: &crate::live::RunView) -> Folds {
    let failure = (view.status == Some(RunStatus::Failed))
        .then(|| view.error.as_deref().map(|why| editor.named(why)))
        .flatten();
    Folds {
        failure,
        ..folds(editor, &view.stats)
    }
}

fn folds(editor: Editor, stats: &HashMap<String, NodeStats>) -> Folds {
    // "Triage → Billing (billing)": where the route led, by the edge that
    // carries it, when one does.
    let mut routes: Vec<(String, String, bool)> = stats
        .iter()
        .filter_map(|(node, stats)| {
            let route = stats.route.clone()?;
            let to = editor.edges.with_untracked(|edges| {
                edges
                    .iter()
                    .find(|edge| {
                        edge.from.as_str() == node && edge.route.as_deref() == Some(&route)
                    })
                    .map(|edge| editor.name_of(edge.to.as_str()))
            });
            Some((
                editor.name_of(node),
                to.map_or(route.clone(), |to| format!("{to} ({route})")),
                stats.otherwise,
            ))
        })
        .collect();
    routes.sort();
    let mut fans: Vec<(String, Vec<(String, String)>)> = stats
        .iter()
        .filter(|(_, stats)| stats.instances.values().any(|i| !i.streamed.is_empty()))
        .map(|(node, stats)| {
            let name = editor.name_of(node);
            let instances = stats
                .instances
                .iter()
                .map(|(i, instance)| {
                    let who = instance_title(&name, *i, instance.item.as_deref());
                    let said = match (&instance.error, instance.streamed.is_empty()) {
                        (Some(error), true) => format!("failed: {error}"),
                        _ => instance.streamed.clone(),
                    };
                    (who, said)
                })
                .collect();
            (name, instances)
        })
        .collect();
    fans.sort();
    Folds {
        routes,
        fans,
        failure: None,
    }
}

/// A route a node chose, said where it was chosen: "Triage sent it to
/// Billing (billing)"; ", its otherwise: no route fit" when the model's
/// reply named none.
fn route_view((node, route, otherwise): (String, String, bool)) -> impl IntoView {
    view! {
        <li class="chat-message chat-route" data-testid="chat-route">
            {format!("{node} sent it to ")}<strong>{route}</strong>
            {otherwise.then_some(", its otherwise: no route fit")}
        </li>
    }
}

/// A fanned-out node's instances, folded: each with its item and what it
/// wrote.
fn instances_view((node, instances): (String, Vec<(String, String)>)) -> impl IntoView {
    view! {
        <li class="chat-message chat-instances" data-testid="chat-instances">
            <details class="chat-fold" on:toggle=show_opened>
                <summary>{format!("{node}: {} instances", instances.len())}</summary>
                <ol class="chat-instance-list">
                    {instances.into_iter().map(|(who, said)| view! {
                        <li>
                            <span class="chat-role">{who}</span>
                            <p>{said}</p>
                        </li>
                    }).collect_view()}
                </ol>
            </details>
        </li>
    }
}

/// The most of a reply read out; the rest is in the conversation.
const MOST_READ_OUT: usize = 300;

/// The conversation last spoken in, if any.
fn latest_thread(threads: &[ThreadInfo]) -> Option<ThreadId> {
    threads
        .iter()
        .max_by(|a, b| a.updated_at.cmp(&b.updated_at))
        .map(|thread| thread.id.clone())
}

/// A fanned-out instance as the chat names it: "Research #2 · heat pumps".
fn instance_title(node: &str, instance: u32, item: Option<&str>) -> String {
    match item {
        Some(item) => format!("{node} #{} · {item}", instance + 1),
        None => format!("{node} #{}", instance + 1),
    }
}

/// The first line of `text`, cut to `most` characters with an ellipsis.
fn opening_words(text: &str, most: usize) -> String {
    let line = text.trim().lines().next().unwrap_or_default();
    match line.char_indices().nth(most) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None if line.len() < text.trim().len() => format!("{line} …"),
        None => line.to_string(),
    }
}

/// Scrolls a fold just opened into view, as much of it as fits (it opens
/// at the foot of the messages, below what shows).
fn show_opened(event: leptos::ev::Event) {
    use wasm_bindgen::JsCast;
    let Some(fold) = event
        .target()
        .and_then(|target| target.dyn_into::<web_sys::HtmlDetailsElement>().ok())
    else {
        return;
    };
    if fold.open() {
        let options = web_sys::ScrollIntoViewOptions::new();
        options.set_block(web_sys::ScrollLogicalPosition::Start);
        fold.scroll_into_view_with_scroll_into_view_options(&options);
    }
}

/// What a message is, as its class names it: a user message a node
/// wrote (signed with its id) is that node's `prompt`.
fn role_of(message: &ChatMessage) -> &'static str {
    match message.role {
        Role::System => "system",
        Role::User if message.name.is_some() => "prompt",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

/// Who a message is from, as a person reads it: a node's prompt and a
/// signed reply by the node's label, anything else by its role.
fn said_by(editor: Editor, message: &ChatMessage) -> String {
    match (message.role, &message.name) {
        (Role::User, Some(node)) => format!("{}'s prompt", editor.name_of(node)),
        (Role::Assistant, Some(node)) => editor.name_of(node),
        _ => role_of(message).to_string(),
    }
}

/// One message: text, with tool calls and tool results folded. A user
/// message a node wrote (an `llm` node's prompt, signed with its id) is
/// that node's, not the person's: it is named and drawn as such.
fn message_view(editor: Editor, message: ChatMessage) -> impl IntoView {
    let role = role_of(&message);
    let said_by = said_by(editor, &message);
    let calls = message.tool_calls.clone();
    let body = match message.role {
        Role::Tool => view! {
            <details class="chat-fold">
                <summary>{format!("Result of {}", message.name.clone().unwrap_or_else(|| "a tool".into()))}</summary>
                <pre tabindex="0" class="json">{message.content.clone()}</pre>
            </details>
        }
        .into_any(),
        // A system message (a memory's summary of what came before, a
        // prompt) and a node's own prompt are folded to their first words:
        // they are context, not talk.
        _ if matches!(role, "system" | "prompt") => view! {
            <details class="chat-fold">
                <summary>{opening_words(&message.content, 80)}</summary>
                <p>{message.content.clone()}</p>
            </details>
        }
        .into_any(),
        // A reply is read as Markdown (safely: no HTML of its own).
        Role::Assistant => view! { <Markdown text=message.content.clone() /> }.into_any(),
        _ => view! { <p>{message.content.clone()}</p> }.into_any(),
    };
    // A question says which run it started: its reply's trace is a press
    // away.
    let trace = is_question(&message)
        .then(|| message.id.as_deref().and_then(run_of_input_message))
        .flatten()
        .map(|run| view! { <super::turns::TurnTraceButton run /> });
    view! {
        <li class=format!("chat-message role-{role}")>
            <span class="chat-role">{said_by}{trace}</span>
            {(!message.content.is_empty() || message.role == Role::Tool).then_some(body)}
            {calls.into_iter().map(|call| {
                let arguments = serde_json::from_str::<Value>(&call.arguments)
                    .map(|value| serde_json::to_string_pretty(&value).unwrap_or_default())
                    .unwrap_or(call.arguments.clone());
                view! {
                    <details class="chat-fold">
                        <summary>{format!("Called {}", call.name)}</summary>
                        <pre tabindex="0" class="json">{arguments}</pre>
                    </details>
                }
            }).collect_view()}
        </li>
    }
}

#[cfg(test)]
mod tests {
    use heddle_engine::model::{ChatMessage, Role};

    use super::{opening_words, turn_of_run};

    #[test]
    fn a_run_is_the_turn_whose_question_started_it() {
        let said = |role: Role, id: &str| ChatMessage {
            id: Some(id.to_string()),
            ..ChatMessage::new(role, "…")
        };
        let messages = [
            said(Role::User, "input-run-a-0-0"),
            said(Role::Assistant, "msg-run-a-1-0-0"),
            said(Role::User, "input-run-b-0-0"),
            said(Role::Assistant, "msg-run-b-1-0-0"),
        ];
        assert_eq!(turn_of_run(&messages, &"run-a".into()), Some(1));
        assert_eq!(turn_of_run(&messages, &"run-b".into()), Some(2));
        assert_eq!(turn_of_run(&messages, &"run-c".into()), None);
    }

    #[test]
    fn a_folded_message_shows_its_first_line_cut_on_a_character() {
        assert_eq!(
            opening_words("Summary: they asked about refunds.", 80),
            "Summary: they asked about refunds."
        );
        assert_eq!(opening_words("First line\nsecond line", 80), "First line …");
        assert_eq!(opening_words(&"é".repeat(100), 3), "ééé…");
        assert_eq!(opening_words("  \n ", 10), "");
    }
}
