//! A graph's page: its name and version, the canvas, and its details.
//!
//! The visual editor (read-only for viewers) with the run in progress
//! shown live on it, the save status, sharing for the owner.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::{use_params, use_query_map};
use leptos_router::params::Params;

use crate::access::Role;
use leptos::form::ActionForm;

use heddle_engine::GraphDocument;

use crate::components::{
    ErrorView, LocalTime, NotFoundView, PublishControl, ShareDialog, TriggersPanel,
};
use crate::editor::GraphEditor;
use crate::editor::persist::{Persistence, SaveState};
use crate::editor::state::Editor;
use crate::error::AppError;
use crate::graphs::{CopyGraph, GraphDetail, get_graph, run_to_show};
use crate::http_status::set_http_status;
use crate::live::{Link, Watch};
use crate::publishing::Live;
use crate::run_panel::announcer::RunAnnouncer;
use crate::run_panel::{PanelState, RunPanel};
use crate::runs::list_runs;

#[derive(Params, Clone, Debug, PartialEq)]
struct GraphParams {
    id: Option<String>,
}

/// `/graphs/:id`. Going from one graph's page to another's (a link to a
/// subgraph's saved graph) makes the page afresh: the old one, its editor,
/// listeners and title, goes whole, rather than being patched into the new
/// one's (which left the old title's reading of a disposed editor in the
/// page's title, and its listeners reading disposed signals).
#[component]
pub fn GraphPage() -> impl IntoView {
    let params = use_params::<GraphParams>();
    let id = move || {
        params
            .read()
            .as_ref()
            .ok()
            .and_then(|params| params.id.clone())
            .unwrap_or_default()
    };
    view! {
        <For each=move || [id()] key=|id| id.clone() let:id>
            <GraphPageOf id />
        </For>
    }
}

/// One graph's page, for the graph `id` it was made for.
#[component]
fn GraphPageOf(id: String) -> impl IntoView {
    let graph = Resource::new(move || id.clone(), get_graph);

    view! {
        <ErrorBoundary fallback=|errors| {
            view! {
                <Title text="Graph not available" />
                <section class="page">
                    <ErrorView errors />
                </section>
            }
        }>
            <Suspense fallback=|| view! { <p class="loading">"Loading graph…"</p> }>
                {move || Suspend::new(async move {
                    match graph.await {
                        Ok(opened) => {
                            Ok(view! { <GraphView detail=opened.graph role=opened.role /> }.into_any())
                        }
                        Err(AppError::NotFound { .. }) => {
                            set_http_status(404);
                            Ok(view! { <GraphNotFound /> }.into_any())
                        }
                        Err(AppError::Gone(why)) => {
                            set_http_status(410);
                            Ok(view! {
                                <NotFoundView title="Your access has ended" explanation=sentence(&why) code="410" />
                            }
                            .into_any())
                        }
                        Err(error) => {
                            set_http_status(error.status_code());
                            Err(error)
                        }
                    }
                })}
            </Suspense>
        </ErrorBoundary>
    }
}

#[component]
fn GraphView(detail: GraphDetail, role: Role) -> impl IntoView {
    let GraphDetail {
        id,
        name: _,
        version,
        created_at,
        updated_at,
        document,
    } = detail;
    let id = id.to_string();
    let Ok(document) = GraphDocument::from_json(&document) else {
        return view! {
            <section class="page">
                <p class="notice notice-error" role="alert">
                    "This graph's stored document does not read; export it to inspect it."
                </p>
            </section>
        }
        .into_any();
    };
    let editor = Editor::new(document, role.can_edit());
    let persistence = Persistence::new(editor, id.clone(), version);
    // Whatever starts a run on this page runs the version on screen.
    provide_context(persistence);
    // The server renders the title as plain text: leptos_meta reads it after
    // the page's reactive owner may be gone (leptos#3729), so a signal read
    // there can panic under a multi-threaded runtime. In the browser it
    // follows renames. leptos_meta may read it once more as the page is
    // left for another graph's, when this editor is gone: it then reads
    // nothing rather than a disposed signal.
    let title = move || {
        editor
            .skeleton
            .try_with(|document| document.name.clone())
            .unwrap_or_default()
    };
    #[cfg(feature = "hydrate")]
    let page_title = TextProp::from(title);
    #[cfg(not(feature = "hydrate"))]
    let page_title = TextProp::from(
        editor
            .skeleton
            .with_untracked(|document| document.name.clone()),
    );
    let watch = Watch::new();
    watch_runs(id.clone(), watch);
    let copy = ServerAction::<CopyGraph>::new();
    let share_id = id.clone();
    let history_id = id.clone();
    let evaluations_id = id.clone();
    let triggers_id = id.clone();
    let run_id = id.clone();
    let copy_id = id.clone();
    let editor_id = id.clone();
    let panel_id = id.clone();
    // What the bar says: a field being typed in counts as a change from
    // its first key, though the graph changes only as it is applied.
    let status = Signal::derive(move || match persistence.status.get() {
        SaveState::Saved if persistence.typing.get() => SaveState::Unsaved,
        status => status,
    });
    let live = Live::new(id.clone());
    let sharing = RwSignal::new(false);
    let panel = PanelState::new();
    let run_to = role
        .can_edit()
        .then(|| Callback::new(move |node: heddle_engine::NodeId| panel.run_to(node.as_str())));
    view! {
        <Title text=page_title />
        <div class="graph-page">
            <div class="graph-bar">
                <nav class="breadcrumb" aria-label="Breadcrumb">
                    <a href="/">"Graphs"</a>
                    <span aria-hidden="true">"/"</span>
                </nav>
                <h1 class="graph-title">{title}</h1>
                <span class="badge" title="Every save makes a new version" data-testid="version">
                    {move || format!("v{}", persistence.version.get())}
                </span>
                <span class="badge role-badge" title=role.describe() data-testid="role">
                    {role.as_str()}
                </span>
                <PublishControl live saved=persistence.version
                    settled=Signal::derive(move || matches!(status.get(), SaveState::Saved))
                    can_edit=role.can_edit() />
                {role.can_edit().then(|| view! {
                    <span class="save-status" data-testid="save-status" data-state=move || match status.get() {
                        SaveState::Saved => "saved",
                        SaveState::Unsaved | SaveState::Saving => "pending",
                        SaveState::Conflict { .. } => "conflict",
                        SaveState::Failed(_) => "failed",
                    }>
                        <span class="dot" aria-hidden="true"></span>
                        {move || status.get().label()}
                    </span>
                })}
                <RunStatus watch />
                <RunAnnouncer watch editor />
                <span class="graph-bar-spacer"></span>
                {role.can_edit().then(move || view! { <RunButton graph_id=run_id watch editor panel /> })}
                {(role == Role::Owner).then(|| view! {
                    <button class="button" type="button" data-testid="share"
                        aria-haspopup="dialog" on:click=move |_| sharing.set(true)>"Share"</button>
                })}
                // The owner has the graph already (Duplicate is on the graphs
                // page); a copy is for the people it was shared with, while
                // their access lasts.
                {(role != Role::Owner).then(|| view! {
                    <ActionForm action=copy attr:class="inline-form">
                        <input type="hidden" name="id" value=copy_id />
                        <button class="button" type="submit"
                            disabled=move || copy.pending().get() || watch.link.get() == Link::Revoked>"Make a copy"</button>
                    </ActionForm>
                })}
            </div>
            {move || sharing.get().then(|| view! { <ShareDialog graph_id=share_id.clone() open=sharing /> })}
            {move || (watch.link.get() == Link::Revoked).then(|| view! {
                <p class="notice notice-error graph-notice" role="alert" data-testid="access-ended">
                    "Your access to this graph ended: the owner revoked the link or your role. "
                    "Nothing here updates any more."
                </p>
            })}
            <GraphEditor
                editor
                persistence
                graph_id=editor_id
                live=watch.view
                dock=move || view! { <RunPanel editor watch panel graph_id=panel_id.clone() can_run=role.can_edit() /> }
                run_to=run_to
                publication=live
            >
                <RunHistory graph_id=history_id watch />
                <crate::evaluations::EvaluationsPanel graph_id=evaluations_id editor
                    version=persistence.version can_edit=role.can_edit()
                    experiment_runs=watch.experiment_runs />
                <TriggersPanel graph_id=triggers_id can_edit=role.can_edit() />
                <details class="document">
                    <summary>"Details"</summary>
                    <dl class="facts">
                        <dt>"Created"</dt>
                        <dd><LocalTime at=created_at /></dd>
                        <dt>"Updated"</dt>
                        <dd><LocalTime at=updated_at /></dd>
                        <dt>"Id"</dt>
                        <dd class="mono">{id}</dd>
                    </dl>
                </details>
            </GraphEditor>
        </div>
    }
    .into_any()
}

/// Follows the graph's runs live over the websocket, in the browser; with
/// `?run=<id>&step=<n>` in the address (a shared link to a moment of a
/// run), shows that run as it stood after step `n` instead.
fn watch_runs(graph_id: String, watch: Watch) {
    let query = use_query_map();
    let pinned = query.with_untracked(|query| {
        let run = query.get("run").filter(|run| !run.is_empty())?;
        let step = query.get("step").and_then(|step| step.parse::<u32>().ok());
        Some((run, step))
    });
    #[cfg(feature = "hydrate")]
    Effect::new(move |started: Option<()>| {
        use crate::live::socket::Follow;
        if started.is_some() {
            return;
        }
        let graph_id = graph_id.clone();
        let pinned = pinned.clone();
        leptos::task::spawn_local(async move {
            let follow = match pinned {
                Some((run, Some(step))) => Follow::Replay {
                    run: run.into(),
                    step: Some(step),
                },
                Some((run, None)) => Follow::Live {
                    first: Some(run.into()),
                },
                None => Follow::Live {
                    first: run_to_show(graph_id.clone())
                        .await
                        .ok()
                        .flatten()
                        .map(Into::into),
                },
            };
            crate::live::socket::watch(graph_id, follow, watch);
        });
    });
    #[cfg(not(feature = "hydrate"))]
    let _ = (graph_id, watch, run_to_show, pinned);
}

/// The watched run's status, for everyone on the page.
#[component]
fn RunStatus(watch: Watch) -> impl IntoView {
    // Which run it is, for a test or a script reading the page.
    let run = Memo::new(move |_| {
        watch
            .log
            .with(|log| log.run_id.as_ref().map(ToString::to_string))
    });
    move || {
        let status = watch.view.with(|view| view.status)?;
        let (text, state) = match watch.cursor.get() {
            Some(step) => (format!("Replay at step {step}"), "replay"),
            None => (format!("Run {}", status.as_str()), status.as_str()),
        };
        Some(view! {
            <span class=format!("run-pill run-{state}") data-testid="run-status" data-status=state
                data-run=move || run.get()>
                {text}
            </span>
        })
    }
}

/// Runs the graph, or stops the run in progress; the page follows it like
/// any watcher. A graph that takes input is not started empty: a chat
/// graph opens its chat, another its input form, with the focus in it; a
/// graph without inputs starts at once.
#[component]
fn RunButton(graph_id: String, watch: Watch, editor: Editor, panel: PanelState) -> impl IntoView {
    let error = RwSignal::new(None::<String>);
    let shown = use_context::<Persistence>();
    let running = move || watch.status.get() == Some(heddle_engine::run::RunStatus::Running);
    // Once the problems are fixed, what Run said about them goes.
    Effect::new(move |_| {
        if editor.errors.get() == 0 {
            error.set(None);
        }
    });
    let act = move |_| {
        let graph_id = graph_id.clone();
        let current = watch.view.with_untracked(|view| view.run_id.clone());
        let stopping = running();
        let errors = editor.errors.get_untracked();
        if !stopping && errors > 0 {
            // The server would refuse it: the list says what to fix, and
            // the keyboard goes there.
            error.set(Some(if errors == 1 {
                "Fix the problem first (see Problems).".to_string()
            } else {
                format!("Fix the {errors} problems first (see Problems).")
            }));
            crate::editor::problems::focus_first_fix();
            return;
        }
        if !stopping {
            let fields = crate::run_panel::input_fields(editor);
            let chat = fields
                .iter()
                .any(|field| field.ty == heddle_engine::format::ChannelType::Messages);
            if chat || !fields.is_empty() {
                error.set(None);
                panel.open.set(true);
                let (tab, first) = if chat {
                    (crate::run_panel::Tab::Chat, "[data-testid=chat-input]")
                } else {
                    (
                        crate::run_panel::Tab::Run,
                        ".run-form input, .run-form textarea, .run-form select",
                    )
                };
                panel.tab.set(tab);
                focus_when_there(first);
                return;
            }
        }
        leptos::task::spawn_local(async move {
            let result = match (stopping, current) {
                (true, Some(run_id)) => crate::live::api::cancel_run(&run_id).await,
                _ => crate::live::api::start_run(&graph_id, shown, Default::default())
                    .await
                    .map(|run| crate::run_panel::start::follow(&run)),
            };
            error.set(
                result
                    .err()
                    .map(|refusal| refusal.explain(|node| editor.label_of(node))),
            );
        });
    };
    view! {
        <button
            class="button"
            class:button-primary=move || !running()
            class:button-danger=running
            type="button"
            on:click=act
            data-testid="run"
        >
            {move || if running() { "Stop" } else { "Run" }}
        </button>
        {move || error.get().map(|message| view! {
            <span class="inline-error run-refusal" role="alert" title=message.clone()>{message.clone()}</span>
        })}
    }
}

/// Puts the focus on the first element `selector` finds, once the panel
/// that holds it is drawn (two frames on).
fn focus_when_there(selector: &'static str) {
    request_animation_frame(move || {
        request_animation_frame(move || crate::components::focus_first(selector))
    });
}

/// The graph's runs: status, who, when, how long; opening one replays it.
#[component]
fn RunHistory(graph_id: String, watch: Watch) -> impl IntoView {
    let open = RwSignal::new(false);
    let status = move || watch.status.get();
    let list_id = graph_id.clone();
    let runs = Resource::new(
        move || (open.get(), status()),
        move |(open, _)| {
            let graph_id = list_id.clone();
            async move {
                if open {
                    let usage = crate::runs::usage_of_graph(graph_id.clone()).await.ok();
                    list_runs(graph_id).await.map(|runs| (runs, usage))
                } else {
                    Ok((Vec::new(), None))
                }
            }
        },
    );
    view! {
        <details class="history" on:toggle=move |event| {
            open.set(event_target::<web_sys::HtmlDetailsElement>(&event).open());
        }>
            <summary>"Runs"</summary>
            <Transition fallback=|| view! { <p class="loading">"Loading runs…"</p> }>
                {move || Suspend::new(async move {
                    let (list, usage) = runs.await.unwrap_or_default();
                    if list.is_empty() {
                        return view! { <p class="empty-note">"No runs yet."</p> }.into_any();
                    }
                    view! {
                        {usage.map(|usage| view! { <crate::run_panel::usage::UsageChart usage /> })}
                        <ul class="version-list run-list">
                            {list.into_iter().map(|summary| {
                                let href = format!("?run={}", summary.id);
                                let duration = summary.duration();
                                let origin = summary.origin.describe(summary.origin_label.as_deref());
                                let input = crate::runs::input_summary(&summary.input);
                                view! {
                                    <li class="version-row" data-run=summary.id.to_string()>
                                        <span class=format!("run-pill run-{}", summary.status)>{summary.status.as_str()}</span>
                                        <span class="version-meta">
                                            {input.map(|input| view! { <span class="run-input" title="Its input">{input}</span> })}
                                            <LocalTime at=summary.created_at.clone() />
                                            {summary.started_by.map(|who| format!(" · {who}"))}
                                            {duration.map(|took| format!(" · {took}"))}
                                            {crate::run_panel::usage::summary(&summary.usage).map(|used| view! {
                                                <span class="run-usage-tag" data-testid="run-usage-tag">{format!(" · {used}")}</span>
                                            })}
                                            {summary.forked_from.map(|fork| view! {
                                                <span class="origin-tag fork-tag" title="Went on from another run's step, with edits">
                                                    {format!("fork of {} at step {}", crate::run_panel::short_id(fork.run_id.as_str()), fork.step)}
                                                </span>
                                            })}
                                            {origin.map(|origin| view! {
                                                <span class="origin-tag" title=origin_title(summary.origin)>{origin}</span>
                                            })}
                                        </span>
                                        <a class="button button-small" href=href rel="external">"Open"</a>
                                    </li>
                                }
                            }).collect_view()}
                        </ul>
                    }
                    .into_any()
                })}
            </Transition>
        </details>
    }
}

/// What a run's origin tag says of it on hover.
fn origin_title(origin: crate::runs::RunOrigin) -> &'static str {
    match origin {
        crate::runs::RunOrigin::Experiment => {
            "An example of an experiment: it ran the version the experiment chose"
        }
        _ => "Started from outside the editor: it ran the published version",
    }
}

/// A message as a sentence: capitalised, with a full stop.
fn sentence(text: &str) -> String {
    let mut chars = text.chars();
    let first = chars
        .next()
        .map(|c| c.to_uppercase().collect::<String>())
        .unwrap_or_default();
    let rest = chars.as_str();
    let stop = if rest.ends_with('.') { "" } else { "." };
    format!("{first}{rest}{stop}")
}

/// A link to a graph that does not exist (any more).
#[component]
fn GraphNotFound() -> impl IntoView {
    view! {
        <NotFoundView
            title="Graph not found"
            explanation="No graph has this address. It may have been deleted, or the link is incomplete."
        />
    }
}
