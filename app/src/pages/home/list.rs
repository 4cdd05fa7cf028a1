//! The graphs list: search, sort, and per row rename, duplicate and delete
//! (with a confirmation that says what goes with the graph).

use leptos::form::ActionForm;
use leptos::prelude::*;

use crate::access::Role;
use crate::components::LocalTime;
use crate::graphs::{CopyGraph, GraphSummary, RenameGraph};

/// How the list is ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    Changed,
    Name,
}

/// The graphs matching `query`, in `order`.
pub fn arrange(graphs: &[GraphSummary], query: &str, order: Order) -> Vec<GraphSummary> {
    let query = query.trim().to_lowercase();
    let mut shown: Vec<GraphSummary> = graphs
        .iter()
        .filter(|graph| {
            query.is_empty()
                || graph.name.to_lowercase().contains(&query)
                || graph.owner.to_lowercase().contains(&query)
        })
        .cloned()
        .collect();
    match order {
        Order::Changed => shown.sort_by(|a, b| b.updated_at.cmp(&a.updated_at)),
        Order::Name => shown.sort_by_key(|graph| graph.name.to_lowercase()),
    }
    shown
}

#[component]
pub fn GraphList(graphs: Vec<GraphSummary>, refresh: RwSignal<u32>) -> impl IntoView {
    let query = RwSignal::new(String::new());
    let order = RwSignal::new(Order::Changed);
    let count = graphs.len();
    let graphs = StoredValue::new(graphs);
    let shown = move || graphs.with_value(|all| arrange(all, &query.get(), order.get()));
    let deleting = RwSignal::new(None::<GraphSummary>);
    view! {
        <div class="list-tools">
            <input
                class="list-search"
                type="search"
                placeholder="Search graphs…"
                aria-label="Search graphs"
                prop:value=move || query.get()
                on:input=move |event| query.set(event_target_value(&event))
            />
            <label class="list-sort">
                "Sort by "
                <select on:change=move |event| {
                    order.set(if event_target_value(&event) == "name" { Order::Name } else { Order::Changed });
                }>
                    <option value="changed" selected>"last change"</option>
                    <option value="name">"name"</option>
                </select>
            </label>
            <span class="list-count">{format!("{count} graph{}", if count == 1 { "" } else { "s" })}</span>
        </div>
        <ul class="graph-list">
            <For each=shown key=|graph| (graph.id.clone(), graph.name.clone(), graph.updated_at.clone()) let:graph>
                <GraphRow graph refresh deleting />
            </For>
        </ul>
        {move || (shown().is_empty()).then(|| view! { <p class="empty-note">"No graph matches."</p> })}
        <DeleteDialog deleting refresh />
    }
}

#[component]
fn GraphRow(
    graph: GraphSummary,
    refresh: RwSignal<u32>,
    deleting: RwSignal<Option<GraphSummary>>,
) -> impl IntoView {
    let nodes = match graph.node_count {
        0 => "Empty".to_string(),
        1 => "1 node".to_string(),
        n => format!("{n} nodes"),
    };
    let renaming = RwSignal::new(false);
    let rename = ServerAction::<RenameGraph>::new();
    Effect::new(move |_| {
        if matches!(rename.value().get(), Some(Ok(()))) {
            renaming.set(false);
            refresh.update(|n| *n += 1);
        }
    });
    let duplicate = ServerAction::<CopyGraph>::new();
    let id = graph.id.to_string();
    let (rename_id, copy_id) = (id.clone(), id.clone());
    let name = graph.name.clone();
    let row = graph.clone();
    let href = graph.id.href();
    let shared = (graph.role != Role::Owner).then(|| {
        (
            graph.role.describe(),
            format!("shared by {} · {}", graph.owner, graph.role),
        )
    });
    let version = format!("v{}", graph.version);
    let updated = graph.updated_at.clone();
    let link = move || {
        let shared = shared.clone();
        view! {
            <a class="graph-row-link" href=href.clone()>
                <span class="graph-row-icon" aria-hidden="true"></span>
                <span class="graph-row-name">{name.clone()}</span>
                {shared.map(|(title, text)| view! { <span class="badge" title=title>{text}</span> })}
                <span class="graph-row-meta">{nodes.clone()}</span>
                <span class="graph-row-meta">{version.clone()}</span>
                <span class="graph-row-meta graph-row-time">"Updated " <LocalTime at=updated.clone() /></span>
            </a>
        }
    };
    // Each action is named with its graph: a screen reader going down the
    // list hears "Rename Support bot", not "Rename" again and again.
    let named = |action: &str| format!("{action} {}", graph.name);
    let (rename_label, copy_label, delete_label) =
        (named("Rename"), named("Duplicate"), named("Delete"));
    let form = move || {
        let rename_id = rename_id.clone();
        let current = row.name.clone();
        view! {
            <ActionForm action=rename attr:class="rename-form">
                <span class="graph-row-icon" aria-hidden="true"></span>
                <input type="hidden" name="id" value=rename_id />
                <input name="name" value=current aria-label="New name" required maxlength="200" autofocus />
                <button class="button button-small button-primary" type="submit">"Save name"</button>
                <button class="button button-small" type="button" on:click=move |_| renaming.set(false)>"Cancel"</button>
            </ActionForm>
        }
    };
    view! {
        <li class="graph-row" data-graph=id.clone()>
            {move || if renaming.get() { form().into_any() } else { link().into_any() }}
            <div class="graph-row-actions">
                {graph.role.can_edit().then(|| view! {
                    <button class="button button-small" type="button" aria-label=rename_label on:click=move |_| renaming.set(true)>"Rename"</button>
                })}
                <ActionForm action=duplicate attr:class="inline-form">
                    <input type="hidden" name="id" value=copy_id />
                    <button class="button button-small" type="submit" aria-label=copy_label>"Duplicate"</button>
                </ActionForm>
                {(graph.role == Role::Owner).then(|| {
                    let graph = graph.clone();
                    view! {
                        <button class="button button-small button-danger" type="button" aria-label=delete_label.clone() on:click=move |_| deleting.set(Some(graph.clone()))>"Delete"</button>
                    }
                })}
            </div>
        </li>
    }
}

/// "Delete this graph?" with what goes with it.
#[component]
fn DeleteDialog(deleting: RwSignal<Option<GraphSummary>>, refresh: RwSignal<u32>) -> impl IntoView {
    let error = RwSignal::new(None::<String>);
    move || {
        deleting.get().map(|graph| {
            let id = graph.id.to_string();
            let confirm = move |_| {
                let id = id.clone();
                leptos::task::spawn_local(async move {
                    match crate::graphs::delete_graph(id).await {
                        Ok(()) => {
                            deleting.set(None);
                            error.set(None);
                            refresh.update(|n| *n += 1);
                        }
                        Err(message) => error.set(Some(message.to_string())),
                    }
                });
            };
            view! {
                <div class="help-overlay" role="dialog" aria-label="Delete graph" on:click=move |_| deleting.set(None)>
                    <div class="help-card" on:click=|event| event.stop_propagation()>
                        <h2>{format!("Delete “{}”?", graph.name)}</h2>
                        <p>"Its versions, threads and runs are deleted with it, and the people you shared it with lose it. This cannot be undone."</p>
                        {move || error.get().map(|message| view! { <p class="field-error" role="alert">{message}</p> })}
                        <div class="conflict-actions">
                            <button class="button" type="button" on:click=move |_| deleting.set(None)>"Cancel"</button>
                            <button class="button button-danger" type="button" on:click=confirm>"Delete graph"</button>
                        </div>
                    </div>
                </div>
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{Order, arrange};
    use crate::access::Role;
    use crate::graphs::{GraphId, GraphSummary};

    fn graph(name: &str, updated_at: &str) -> GraphSummary {
        GraphSummary {
            id: GraphId::parse("3f2a0000-0000-4000-8000-000000000000")
                .unwrap_or_else(|| unreachable!()),
            name: name.into(),
            version: 1,
            node_count: 0,
            updated_at: updated_at.into(),
            owner: "ada".into(),
            role: Role::Owner,
        }
    }

    #[test]
    fn search_and_sort() {
        let all = [
            graph("beta", "2026-01-02"),
            graph("Alpha", "2026-01-01"),
            graph("gamma", "2026-01-03"),
        ];
        let names = |list: Vec<GraphSummary>| list.into_iter().map(|g| g.name).collect::<Vec<_>>();
        assert_eq!(
            names(arrange(&all, "", Order::Changed)),
            ["gamma", "beta", "Alpha"]
        );
        assert_eq!(
            names(arrange(&all, "", Order::Name)),
            ["Alpha", "beta", "gamma"]
        );
        assert_eq!(names(arrange(&all, "AL", Order::Name)), ["Alpha"]);
        assert_eq!(
            names(arrange(&all, "ada", Order::Name)).len(),
            3,
            "by owner too"
        );
    }
}
