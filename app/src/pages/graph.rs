//! A graph's page: its name and version, the canvas, and its details.
//!
//! The visual editor grows here; for now the canvas shows the graph's nodes
//! count and the side panel its stored document.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::{hooks::use_params, params::Params};

use crate::access::Role;
use crate::components::{ErrorView, GraphPreview, NotFoundView};
use crate::error::AppError;
use crate::graphs::{GraphDetail, display_timestamp, get_graph};
use crate::http_status::set_http_status;

#[derive(Params, Clone, Debug, PartialEq)]
struct GraphParams {
    id: Option<String>,
}

/// `/graphs/:id`.
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
    let graph = Resource::new(id, get_graph);

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
        name,
        version,
        created_at,
        updated_at,
        document,
    } = detail;
    let node_count = node_count(&document);
    view! {
        <Title text=name.clone() />
        <div class="graph-page">
            <div class="graph-bar">
                <nav class="breadcrumb" aria-label="Breadcrumb">
                    <a href="/">"Graphs"</a>
                    <span aria-hidden="true">"/"</span>
                </nav>
                <h1 class="graph-title">{name}</h1>
                <span class="badge" title="Every save makes a new version">
                    {format!("v{version}")}
                </span>
                <span class="badge role-badge" title=role.describe()>{role.as_str()}</span>
                <span class="save-status">
                    <span class="dot dot-ok" aria-hidden="true"></span>
                    "Saved"
                </span>
            </div>
            <div class="graph-body">
                <div class="canvas" aria-label="Canvas">
                    <GraphPreview document=document.clone() />
                    {(node_count == 0)
                        .then(|| {
                            view! {
                                <div class="canvas-empty">
                                    <h2>"This graph is empty"</h2>
                                    <p>"It has no nodes yet. Nodes and the edges between them appear here."</p>
                                </div>
                            }
                        })}
                </div>
                <aside class="inspector" aria-label="Graph details">
                    <h2 class="inspector-title">"Graph"</h2>
                    <dl class="facts">
                        <dt>"Nodes"</dt>
                        <dd>{node_count}</dd>
                        <dt>"Version"</dt>
                        <dd>{version}</dd>
                        <dt>"Created"</dt>
                        <dd>{display_timestamp(&created_at)}</dd>
                        <dt>"Updated"</dt>
                        <dd>{display_timestamp(&updated_at)}</dd>
                        <dt>"Id"</dt>
                        <dd class="mono">{id.to_string()}</dd>
                    </dl>
                    <details class="document">
                        <summary>"Document (JSON)"</summary>
                        <pre class="mono">{document}</pre>
                    </details>
                </aside>
            </div>
        </div>
    }
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

/// How many nodes a stored document holds (0 if it cannot be read).
fn node_count(document: &str) -> usize {
    serde_json::from_str::<serde_json::Value>(document)
        .ok()
        .and_then(|value| value.get("nodes")?.as_array().map(Vec::len))
        .unwrap_or(0)
}
