//! The home page: the user's graphs, and the button that makes a new one.

use leptos::form::ActionForm;
use leptos::prelude::*;
use leptos_meta::Title;

use crate::components::{Dialog, ErrorView, GraphPreview};
use crate::examples::{ExampleSummary, UseExample, list_examples};
use crate::graphs::{CreateGraph, list_graphs};

mod import;
mod list;

use self::import::ImportButton;
use self::list::GraphList;

/// Lists the graphs, most recently changed first.
#[component]
pub fn HomePage() -> impl IntoView {
    let create = ServerAction::<CreateGraph>::new();
    let use_example = ServerAction::<UseExample>::new();
    let refresh = RwSignal::new(0u32);
    let graphs = Resource::new(move || refresh.get(), |_| list_graphs());
    let examples = Resource::new(|| (), |_| list_examples());

    view! {
        <Title text="Graphs" />
        <section class="page">
            <div class="page-head">
                <div>
                    <h1>"Graphs"</h1>
                    <p class="page-sub">"Agent graphs you build, run and share."</p>
                </div>
                {view! {
                    <div class="page-actions">
                        <ImportButton />
                        <NewGraphButton create />
                    </div>
                }
                    .into_any()}
            </div>
            <CreateError create />
            <ErrorBoundary fallback=|errors| view! { <ErrorView errors /> }>
                <Transition fallback=ListSkeleton>
                    {move || Suspend::new(async move {
                        graphs
                            .await
                            .map(|list| {
                                if list.is_empty() {
                                    view! { <EmptyGraphs create /> }.into_any()
                                } else {
                                    view! { <GraphList graphs=list refresh /> }.into_any()
                                }
                            })
                    })}
                </Transition>
            </ErrorBoundary>
            <Gallery examples use_example />
        </section>
    }
}

/// Examples to start from. Each card is a form, so it works before the
/// wasm has loaded; once it has, a click opens a preview first (what the
/// graph looks like, what it does) and only "Use this example" copies it.
#[component]
fn Gallery(
    examples: Resource<Result<Vec<ExampleSummary>, crate::error::AppError>>,
    use_example: ServerAction<UseExample>,
) -> impl IntoView {
    let pending = use_example.pending();
    let preview = RwSignal::new(None::<ExampleSummary>);
    view! {
        <section class="gallery" id="gallery" aria-labelledby="gallery-title">
            <h2 id="gallery-title">"Start from an example"</h2>
            <p class="page-sub">
                "Each runs as it is on the built-in offline model: no key, no network."
            </p>
            <Transition fallback=|| view! { <div class="gallery-grid" aria-busy="true"></div> }>
                {move || Suspend::new(async move {
                    examples
                        .await
                        .map(|list| {
                            view! {
                                <ul class="gallery-grid">
                                    {list
                                        .into_iter()
                                        .map(|example| {
                                            let shown = example.clone();
                                            let open = move |event: leptos::ev::MouseEvent| {
                                                event.prevent_default();
                                                preview.set(Some(shown.clone()));
                                            };
                                            view! {
                                                <li>
                                                    <ActionForm action=use_example attr:class="example-card-form">
                                                        <input type="hidden" name="slug" value=example.slug.clone() />
                                                        <button class="example-card" type="submit" disabled=pending on:click=open>
                                                            <span class="example-name">{example.name}</span>
                                                            <span class="example-description">{example.description}</span>
                                                            <span class="example-meta">
                                                                {format!("{} nodes", example.node_count)}
                                                            </span>
                                                        </button>
                                                    </ActionForm>
                                                </li>
                                            }
                                        })
                                        .collect_view()}
                                </ul>
                            }
                        })
                })}
            </Transition>
            {move || preview.get().map(|example| view! { <ExamplePreview example use_example close=preview /> })}
        </section>
    }
}

/// An example before it is copied: its picture, what it does, and the one
/// button that makes it yours.
#[component]
fn ExamplePreview(
    example: ExampleSummary,
    use_example: ServerAction<UseExample>,
    close: RwSignal<Option<ExampleSummary>>,
) -> impl IntoView {
    let pending = use_example.pending();
    let cancel = NodeRef::<leptos::html::Button>::new();
    // Focus moves into the dialog, so Tab works at once.
    Effect::new(move |_| {
        if let Some(button) = cancel.get() {
            let _ = button.focus();
        }
    });
    view! {
        <Dialog on_close=Callback::new(move |()| close.set(None)) labelled_by="example-preview-title" class="example-preview">
            <h2 id="example-preview-title">{example.name.clone()}</h2>
            <p class="page-sub">{example.description.clone()}</p>
            // It scrolls when the graph is wide, so it takes the focus:
            // the arrow keys scroll it too.
            <div class="example-preview-picture" tabindex="0" role="group"
                aria-label=format!("The graph of {}", example.name)>
                <GraphPreview document=example.document.clone() />
            </div>
            <p class="field-hint">{format!("{} nodes · runs on the offline model", example.node_count)}</p>
            <div class="dialog-actions">
                <button type="button" class="button" node_ref=cancel on:click=move |_| close.set(None)>"Cancel"</button>
                <ActionForm action=use_example attr:class="inline-form">
                    <input type="hidden" name="slug" value=example.slug.clone() />
                    <button class="button button-primary" type="submit" disabled=pending>
                        {move || if pending.get() { "Copying…" } else { "Use this example" }}
                    </button>
                </ActionForm>
            </div>
        </Dialog>
    }
}

/// "New graph": a chat agent that runs as it is, an empty canvas, or an
/// example. A disclosure and forms, so it works before the wasm has loaded.
#[component]
fn NewGraphButton(create: ServerAction<CreateGraph>) -> impl IntoView {
    let pending = create.pending();
    let menu = NodeRef::<leptos::html::Details>::new();
    // As a menu: Escape closes it, back on its button; the arrows, Home
    // and End go along its choices (Down on the button opens it).
    let keys = move |event: leptos::ev::KeyboardEvent| {
        let Some(menu) = menu.get_untracked() else {
            return;
        };
        let key = event.key();
        if key == "Escape" {
            menu.set_open(false);
            if let Ok(Some(summary)) = menu.query_selector("summary")
                && let Ok(summary) = wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(summary)
            {
                let _ = summary.focus();
            }
            return;
        }
        let step = |at: Option<usize>, count: usize| -> Option<usize> {
            match key.as_str() {
                "ArrowDown" => Some(at.map_or(0, |at| (at + 1) % count)),
                "ArrowUp" => Some(at.map_or(count - 1, |at| (at + count - 1) % count)),
                "Home" if at.is_some() => Some(0),
                "End" if at.is_some() => Some(count - 1),
                _ => None,
            }
        };
        if !matches!(key.as_str(), "ArrowDown" | "ArrowUp" | "Home" | "End") {
            return;
        }
        event.prevent_default();
        menu.set_open(true);
        focus_in(&menu, "new-graph-choice", step);
    };
    // A click anywhere outside the menu closes it, as menus do.
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::JsCast;
        let listener = window_event_listener(leptos::ev::pointerdown, move |event| {
            let Some(menu) = menu.get_untracked() else {
                return;
            };
            let inside = event
                .target()
                .and_then(|target| target.dyn_into::<web_sys::Node>().ok())
                .is_some_and(|target| menu.contains(Some(&target)));
            if !inside && menu.open() {
                menu.set_open(false);
            }
        });
        on_cleanup(move || listener.remove());
    }
    view! {
        <details class="new-graph" node_ref=menu on:keydown=keys>
            <summary class="button button-primary" role="button">
                <span class="button-icon" aria-hidden="true">"+"</span>
                {move || if pending.get() { "Creating…" } else { "New graph" }}
            </summary>
            <div class="new-graph-menu">
                <NewGraphChoices create />
            </div>
        </details>
    }
}

/// Focuses one of the elements of `within` of class `class`: `pick`
/// is told which of them has the focus now (if one does) and how many
/// there are, and says which to focus.
fn focus_in(
    within: &web_sys::Element,
    class: &str,
    pick: impl Fn(Option<usize>, usize) -> Option<usize>,
) {
    use wasm_bindgen::JsCast;
    let found = within.get_elements_by_class_name(class);
    let items: Vec<web_sys::HtmlElement> = (0..found.length())
        .filter_map(|at| found.item(at)?.dyn_into().ok())
        .collect();
    if items.is_empty() {
        return;
    }
    let active = document().active_element();
    let at = items.iter().position(|item| {
        let item: &web_sys::Element = item;
        active.as_ref() == Some(item)
    });
    if let Some(item) = pick(at, items.len()).and_then(|to| items.get(to)) {
        let _ = item.focus();
    }
}

/// The ways to start a graph, as buttons.
#[component]
fn NewGraphChoices(create: ServerAction<CreateGraph>) -> impl IntoView {
    let pending = create.pending();
    let choice = move |template: &'static str, title: &'static str, text: &'static str| {
        view! {
            <ActionForm action=create attr:class="new-graph-form">
                <input type="hidden" name="template" value=template />
                <button type="submit" class="new-graph-choice" disabled=pending>
                    <span class="choice-title">{title}</span>
                    <span class="choice-text">{text}</span>
                </button>
            </ActionForm>
        }
    };
    view! {
        {choice(
            "chat-agent",
            "Chat agent",
            "Start, an agent and an end, with the conversation kept on its thread. Runs as it is; tick tools to give it some.",
        )}
        {choice("empty", "Empty graph", "A blank canvas, to place nodes yourself.")}
        <a
            class="new-graph-choice"
            href="#gallery"
            on:click=|event| {
                // Following the link closes the menu it sits in.
                #[cfg(feature = "hydrate")]
                {
                    use wasm_bindgen::JsCast;
                    if let Some(menu) = event
                        .target()
                        .and_then(|target| target.dyn_into::<web_sys::Element>().ok())
                        .and_then(|target| target.closest("details").ok().flatten())
                    {
                        let _ = menu.remove_attribute("open");
                    }
                }
                #[cfg(not(feature = "hydrate"))]
                let _ = event;
            }
        >
            <span class="choice-title">"From an example"</span>
            <span class="choice-text">"Routers, approvals, memory, supervisors: see them below."</span>
        </a>
    }
}

/// Says why the last "New graph" failed, if it did.
#[component]
fn CreateError(create: ServerAction<CreateGraph>) -> impl IntoView {
    move || {
        create.value().get().and_then(Result::err).map(|error| {
            view! {
                <p class="notice notice-error" role="alert">
                    "Could not create the graph: " {error.to_string()}
                </p>
            }
        })
    }
}

/// What a first-time user sees: what a graph is and how to make one.
#[component]
fn EmptyGraphs(create: ServerAction<CreateGraph>) -> impl IntoView {
    view! {
        <div class="empty-state empty-state-boxed">
            <svg class="empty-illustration" viewBox="0 0 120 64" aria-hidden="true">
                <rect x="4" y="8" width="32" height="20" rx="5" />
                <rect x="84" y="8" width="32" height="20" rx="5" />
                <rect x="44" y="38" width="32" height="20" rx="5" />
                <path d="M36 18 H84 M20 28 C20 48 30 48 44 48 M100 28 C100 48 90 48 76 48" />
            </svg>
            <h2>"No graphs yet"</h2>
            <p>
                "A graph wires model calls, tools, conditions and people into an agent. "
                "Start with a chat agent that runs as it is, or a blank canvas."
            </p>
            <div class="new-graph-inline">
                <NewGraphChoices create />
            </div>
        </div>
    }
}

/// Grey rows in the list's shape while it loads, so nothing jumps.
#[component]
fn ListSkeleton() -> impl IntoView {
    view! {
        <ul class="graph-list" aria-busy="true" aria-label="Loading graphs">
            {(0..3).map(|_| view! { <li class="graph-row skeleton"></li> }).collect_view()}
        </ul>
    }
}
