//! The home page: the user's graphs, and the button that makes a new one.

use leptos::form::ActionForm;
use leptos::prelude::*;
use leptos_meta::Title;

use crate::components::ErrorView;
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

/// Examples to start from: each card is a form, so it works before the
/// wasm has loaded too.
#[component]
fn Gallery(
    examples: Resource<Result<Vec<ExampleSummary>, crate::error::AppError>>,
    use_example: ServerAction<UseExample>,
) -> impl IntoView {
    let pending = use_example.pending();
    view! {
        <section class="gallery" aria-labelledby="gallery-title">
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
                                            view! {
                                                <li>
                                                    <ActionForm action=use_example attr:class="example-card-form">
                                                        <input type="hidden" name="slug" value=example.slug.clone() />
                                                        <button class="example-card" type="submit" disabled=pending>
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
        </section>
    }
}

/// A form, so that it works before (and without) the wasm: the server then
/// answers with a redirect to the new graph.
#[component]
fn NewGraphButton(create: ServerAction<CreateGraph>) -> impl IntoView {
    let pending = create.pending();
    view! {
        <ActionForm action=create attr:class="inline-form">
            <button class="button button-primary" type="submit" disabled=pending>
                <span class="button-icon" aria-hidden="true">"+"</span>
                {move || if pending.get() { "Creating…" } else { "New graph" }}
            </button>
        </ActionForm>
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
                "Create one to get started."
            </p>
            <NewGraphButton create />
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
