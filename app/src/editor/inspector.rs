//! The inspector: a form for what is selected. A node gets its label, the
//! fields its kind is known for (model, credential, prompts), its whole
//! config as JSON (checked as you type, applied when it reads), timeout,
//! retries and breakpoints; an edge its condition or route; nothing
//! selected, the graph's name, description and state channels. Fields
//! apply when they change (on blur or Enter), each change one undo step.

use heddle_engine::GraphDocument;
use heddle_engine::NodeId;
use heddle_engine::format::{NodeSpec, StateSchema};
use heddle_engine::kinds::BuiltinKind;
use heddle_engine::validate::Problem;
use leptos::prelude::*;

use super::channels::ChannelTable;
use super::config_form::{Choices, ConfigForm};
use super::edge_form::EdgeForm;
use super::gestures::Gestures;
use super::group_form::SelectionForm;
use super::retention::RetentionFields;
use super::state::Editor;
use super::subgraph_source::{SubAgentSources, SubgraphSource};
use crate::secrets::list_secrets;

/// Changes the node `id` with `edit`.
fn edit_node(editor: Editor, id: &NodeId, edit: impl FnOnce(&mut NodeSpec)) {
    editor.change(|document| {
        if let Some(node) = document.nodes.iter_mut().find(|node| &node.id == id) {
            edit(node);
        }
    });
}

#[component]
pub fn Inspector(
    editor: Editor,
    /// Whether the pointer is down on the canvas (the form waits for it).
    gestures: Gestures,
    /// The server's tools and models, for the pickers.
    catalog: Resource<Result<heddle_engine::Catalog, crate::error::AppError>>,
    /// The validator's problems, shown at the fields they concern.
    problems: Memo<Vec<Problem>>,
) -> impl IntoView {
    // The pickers' choices: the server's tools and models, the user's secrets.
    let secrets = Resource::new(|| (), |_| list_secrets());
    let tools = Signal::derive(move || {
        catalog
            .get()
            .and_then(Result::ok)
            .map(|catalog| catalog.tool_names())
            .unwrap_or_default()
    });
    let models = Signal::derive(move || {
        catalog
            .get()
            .and_then(Result::ok)
            .map(|c| c.models)
            .unwrap_or_default()
    });
    let secret_names = Signal::derive(move || {
        secrets
            .get()
            .and_then(Result::ok)
            .map(|list| {
                list.into_iter()
                    .map(|secret| secret.name)
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    });
    let choices = Choices {
        tools,
        models,
        secrets: secret_names,
    };
    // The lists are drawn in the browser only, once the page is live: they
    // are invisible suggestions, and drawn from two resources on the server
    // they could differ from the browser's first render (a page opening
    // slowly hit a hydration error there).
    let live = RwSignal::new(false);
    Effect::new(move |_| live.set(true));
    let lists = move || {
        if !live.get() {
            return ().into_any();
        }
        let models = models.get();
        let names = secret_names.get();
        let tool_names = tools.get();
        view! {
            <datalist id="heddle-tools">
                {tool_names.into_iter().map(|name| view! { <option value=name></option> }).collect_view()}
            </datalist>
            <datalist id="heddle-models">
                {models.into_iter().map(|name| view! { <option value=name></option> }).collect_view()}
            </datalist>
            <datalist id="heddle-secrets">
                {names.into_iter().map(|name| view! { <option value=name></option> }).collect_view()}
            </datalist>
        }
        .into_any()
    };
    // What the form is for. It follows the selection once a press has
    // settled: a node pressed to be dragged is selected at once (its ring
    // shows), and its form, about a frame's worth of work, waits for an
    // idle moment after the drop instead of stalling the drag's first
    // frames or the drop's.
    Effect::new(move |_| super::config_form::prepare_forms());
    let shown = Memo::new(move |previous: Option<&Shown>| {
        let now = editor.selected.with(|selected| match selected.len() {
            0 => match editor.selected_edge.get() {
                Some(edge) => Shown::Edge(edge),
                None => Shown::Graph,
            },
            1 => selected
                .iter()
                .next()
                .cloned()
                .map_or(Shown::Graph, Shown::Node),
            many => Shown::Nodes(many),
        });
        match previous {
            Some(previous) if !gestures.settled.get() => previous.clone(),
            _ => now,
        }
    });
    // Another thing shown opens at the top of its form (its label first),
    // not scrolled as far down as the last one was. A problem's button
    // that goes to a field scrolls there after this.
    Effect::new(move |was: Option<Shown>| {
        let now = shown.get();
        #[cfg(feature = "hydrate")]
        if was.as_ref().is_some_and(|was| *was != now)
            && let Some(panel) = document().query_selector(".inspector").ok().flatten()
        {
            panel.set_scroll_top(0);
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = was;
        now
    });
    // One variant per kind of form: going from one to another draws it
    // anew, never rebuilding one form's elements into another's (type-
    // erased components are all one type), which would carry over their
    // scroll, sizes and open sections.
    let form = move || {
        use leptos::either::EitherOf4;
        match shown.get() {
            Shown::Node(id) => editor
                .nodes
                .with(|nodes| nodes.iter().find(|node| node.id.get_value() == id).copied())
                .map(|node| {
                    EitherOf4::A(view! { <NodeForm editor spec=node.spec problems choices /> })
                }),
            Shown::Nodes(count) => Some(EitherOf4::B(view! { <SelectionForm editor count /> })),
            Shown::Edge(edge) => Some(EitherOf4::C(view! { <EdgeForm editor edge catalog /> })),
            Shown::Graph => Some(EitherOf4::D(view! { <GraphForm editor /> })),
        }
    };
    view! {
        {lists}
        {form}
    }
}

/// What the inspector shows a form for.
#[derive(Clone, Debug, PartialEq)]
enum Shown {
    Node(NodeId),
    /// Several nodes: how many.
    Nodes(usize),
    Edge(heddle_engine::EdgeId),
    Graph,
}

#[component]
fn NodeForm(
    editor: Editor,
    spec: RwSignal<NodeSpec>,
    problems: Memo<Vec<Problem>>,
    choices: Choices,
) -> impl IntoView {
    let id = spec.with_untracked(|spec| spec.id.clone());
    let kind = spec.with_untracked(|spec| spec.kind.clone());
    let summary = BuiltinKind::from_name(&kind).map_or("A kind this server adds.", |k| k.summary());
    let read_only = !editor.can_edit;

    let label_id = id.clone();
    let set_label = move |event: leptos::ev::Event| {
        let label = event_target_value(&event);
        edit_node(editor, &label_id, |node| {
            node.label = label.trim().to_string()
        });
    };

    // The settings every kind shares come a frame after the rest, so the
    // form's first part fits the idle moment it is drawn in after a drop.
    let settled = RwSignal::new(cfg!(not(feature = "hydrate")));
    #[cfg(feature = "hydrate")]
    request_animation_frame(move || {
        let _ = settled.try_set(true);
    });

    view! {
        <section class="inspector-section" aria-label="Node" data-form-node=id.to_string()>
            <h2 class="inspector-title">{kind.clone()}</h2>
            <p class="inspector-doc">{summary}</p>
            <label class="field">
                <span class="field-label">"Label"</span>
                <input name="label" prop:value=move || spec.with(|s| s.label.clone()) placeholder=id.to_string() on:change=set_label readonly=read_only />
            </label>
            <p class="field-hint">"Id " <code>{id.to_string()}</code></p>
            {(kind == BuiltinKind::Subgraph.name()).then(|| view! { <SubgraphSource editor spec /> })}
            {(kind == BuiltinKind::Agent.name()).then(|| view! { <SubAgentSources editor spec /> })}
            <ConfigForm editor spec problems choices />
            {move || settled.get().then(|| view! { <SharedSettings editor spec /> })}
        </section>
    }
}

/// The settings every kind shares: timeout, attempts, breakpoints.
#[component]
fn SharedSettings(editor: Editor, spec: RwSignal<NodeSpec>) -> impl IntoView {
    let id = spec.with_untracked(|spec| spec.id.clone());
    let read_only = !editor.can_edit;
    let timeout_id = id.clone();
    let set_timeout_ms = move |event: leptos::ev::Event| {
        let text = event_target_value(&event);
        let value = text.trim().parse::<u64>().ok().filter(|ms| *ms > 0);
        edit_node(editor, &timeout_id, |node| node.timeout_ms = value);
    };
    let retry_id = id.clone();
    let set_retries = move |event: leptos::ev::Event| {
        let attempts = event_target_value(&event)
            .trim()
            .parse::<u32>()
            .unwrap_or(1);
        edit_node(editor, &retry_id, |node| {
            node.retry = (attempts > 1).then(|| {
                let mut policy = node.retry.clone().unwrap_or_else(default_retry);
                policy.max_attempts = attempts;
                policy
            });
        });
    };
    let before_id = id.clone();
    let after_id = id.clone();
    view! {
        <div class="field-row">
            <label class="field">
                <span class="field-label">"Timeout (ms)"</span>
                <input name="timeout_ms" type="number" min="0" prop:value=move || spec.with(|s| s.timeout_ms.map(|ms| ms.to_string()).unwrap_or_default()) on:change=set_timeout_ms readonly=read_only />
            </label>
            <label class="field">
                <span class="field-label">"Attempts"</span>
                <input name="attempts" type="number" min="1" max="20" prop:value=move || spec.with(|s| s.retry.as_ref().map_or(1, |r| r.max_attempts).to_string()) on:change=set_retries readonly=read_only />
            </label>
        </div>
        <label class="check">
            <input type="checkbox" prop:checked=move || spec.with(|s| s.interrupt_before) disabled=read_only
                on:change=move |event| { let on = event_target_checked(&event); edit_node(editor, &before_id, |node| node.interrupt_before = on); } />
            "Pause before this node (breakpoint)"
        </label>
        <label class="check">
            <input type="checkbox" prop:checked=move || spec.with(|s| s.interrupt_after) disabled=read_only
                on:change=move |event| { let on = event_target_checked(&event); edit_node(editor, &after_id, |node| node.interrupt_after = on); } />
            "Pause after this node"
        </label>
    }
}

/// The engine's default retry policy (backoff, jitter), for two attempts.
fn default_retry() -> heddle_engine::format::RetryPolicy {
    serde_json::from_value(serde_json::json!({"max_attempts": 2}))
        .expect("a literal retry policy reads")
}

#[component]
fn GraphForm(editor: Editor) -> impl IntoView {
    let read_only = !editor.can_edit;
    let skeleton = editor.skeleton;
    let state_error = RwSignal::new(None::<String>);
    let set_text = move |apply: fn(&mut GraphDocument, String)| {
        move |event: leptos::ev::Event| {
            let text = event_target_value(&event);
            editor.change(|document| apply(document, text));
        }
    };
    let apply_state = move |event: leptos::ev::Event| {
        let text = event_target_value(&event);
        match serde_json::from_str::<StateSchema>(&text) {
            Ok(state) => {
                state_error.set(None);
                editor.change(|document| document.state = state);
            }
            Err(error) => state_error.set(Some(format!("not a state schema: {error}"))),
        }
    };
    view! {
        <section class="inspector-section" aria-label="Graph settings">
            <h2 class="inspector-title">"Graph"</h2>
            // The problems list is far below the graph's settings: what
            // stops a run is said up here, one press from its fixes.
            {move || {
                let (errors, warnings) = (editor.errors.get(), editor.warnings.get());
                (errors + warnings > 0).then(|| {
                    let text = match (errors, warnings) {
                        (1, _) => "1 problem stops this graph from running.".to_string(),
                        (0, 1) => "It runs; 1 warning is worth a read.".to_string(),
                        (0, warnings) => format!("It runs; {warnings} warnings are worth a read."),
                        (errors, _) => format!("{errors} problems stop this graph from running."),
                    };
                    view! {
                        <p class="graph-problems-note" class:warnings-only={errors == 0}
                            data-testid="graph-problems-note">
                            <span>{text}</span>
                            <button type="button" class="button button-small"
                                on:click=move |_| super::problems::focus_first_fix()>"Show them"</button>
                        </p>
                    }
                })
            }}
            <label class="field">
                <span class="field-label">"Name"</span>
                <input name="graph-name" prop:value=move || skeleton.with(|d| d.name.clone()) readonly=read_only
                    on:change=set_text(|document, text| document.name = text.trim().to_string()) />
            </label>
            <label class="field">
                <span class="field-label">"Description"</span>
                <textarea name="graph-description" rows="3" prop:value=move || skeleton.with(|d| d.description.clone()) readonly=read_only
                    on:change=set_text(|document, text| document.description = text.trim().to_string())></textarea>
            </label>
            <ChannelTable editor />
            <fieldset class="field-group" aria-label="Limits of a run">
                <legend class="field-label">"Limits of a run"</legend>
                <div class="field-row">
                    <label class="field">
                        <span class="field-label">"Steps"</span>
                        <input name="max_steps" type="number" min="1" readonly=read_only
                            prop:value=move || skeleton.with(|d| d.limits.max_steps.to_string())
                            on:change=move |event| {
                                if let Ok(steps) = event_target_value(&event).trim().parse::<u32>() && steps > 0 {
                                    editor.change(|document| document.limits.max_steps = steps);
                                }
                            } />
                    </label>
                    <label class="field">
                        <span class="field-label">"Tokens"</span>
                        <input name="max_tokens" type="number" min="1" placeholder="none" readonly=read_only
                            prop:value=move || skeleton.with(|d| d.limits.max_tokens.map(|n| n.to_string()).unwrap_or_default())
                            on:change=move |event| {
                                let budget = event_target_value(&event).trim().parse::<u64>().ok().filter(|n| *n > 0);
                                editor.change(|document| document.limits.max_tokens = budget);
                            } />
                    </label>
                    <label class="field">
                        <span class="field-label">"Cost (US$)"</span>
                        <input name="max_cost" type="number" min="0" step="0.01" placeholder="none" readonly=read_only
                            prop:value=move || skeleton.with(|d| d.limits.max_cost.map(|n| n.to_string()).unwrap_or_default())
                            on:change=move |event| {
                                let budget = event_target_value(&event).trim().parse::<f64>().ok().filter(|n| n.is_finite() && *n > 0.0);
                                editor.change(|document| document.limits.max_cost = budget);
                            } />
                    </label>
                </div>
                <span class="field-hint">"A run that takes more steps, or whose model calls use more tokens or cost more, stops with an error naming the limit."</span>
            </fieldset>
            <RetentionFields editor />
            <details class="form-more form-advanced">
                <summary>"Advanced: the channels as JSON"</summary>
                <label class="field">
                    <span class="field-label">"State channels (JSON)"</span>
                    <textarea class="mono" name="graph-state" rows="8" readonly=read_only spellcheck="false"
                        prop:value=move || skeleton.with(|d| serde_json::to_string_pretty(&d.state).unwrap_or_default())
                        on:change=apply_state></textarea>
                    {move || state_error.get().map(|error| view! { <span class="field-error" role="alert">{error}</span> })}
                </label>
            </details>
        </section>
    }
}
