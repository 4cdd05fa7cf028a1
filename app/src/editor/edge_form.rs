//! The inspector's form for an edge: where it goes (by the nodes' labels),
//! its condition (checked as it is typed, by the engine's own parser), and
//! its route, picked from the routes its source node may choose (the
//! engine says which, `heddle_engine::node_routes`), so a router's edge is
//! never a name typed from memory; and a button that deletes it.

use heddle_engine::{Catalog, EdgeId, NodeId, Registry};
use leptos::prelude::*;

use super::condition::condition_problem;
use super::state::Editor;
use crate::error::AppError;

#[component]
pub fn EdgeForm(
    editor: Editor,
    edge: EdgeId,
    /// The server's tools and models: a router's routes are known once its
    /// model is.
    catalog: Resource<Result<Catalog, AppError>>,
) -> impl IntoView {
    // Drawn once for the edge: the fields below follow it on their own.
    let current = editor
        .edges
        .with_untracked(|edges| edges.iter().find(|e| e.id == edge).cloned());
    let spec = move || {
        editor
            .edges
            .with(|edges| edges.iter().find(|e| e.id == edge).cloned())
    };
    // The fields follow the edge (an undo changes it under the open form).
    let condition_now = {
        let spec = spec.clone();
        move || spec().and_then(|edge| edge.condition).unwrap_or_default()
    };
    let Some(current) = current else {
        return ().into_any();
    };
    let id = current.id.clone();
    let read_only = !editor.can_edit;
    // The condition is parsed as it is typed, by the engine's own parser.
    let condition_error = RwSignal::new(condition_problem(
        current.condition.as_deref().unwrap_or_default(),
    ));
    let check_condition = move |event: leptos::ev::Event| {
        condition_error.set(condition_problem(&event_target_value(&event)));
    };
    let set = move |field: &'static str| {
        let id = id.clone();
        move |event: leptos::ev::Event| {
            let text = event_target_value(&event).trim().to_string();
            let value = (!text.is_empty()).then_some(text);
            editor.change(|document| match field {
                "condition" => {
                    if let Some(edge) = document.edges.iter_mut().find(|e| e.id == id) {
                        edge.condition = value;
                    }
                }
                _ => super::route_rename::route_edge(document, &id, value),
            });
        }
    };
    let name = |node: &NodeId| {
        editor
            .label_of(node.as_str())
            .unwrap_or_else(|| node.to_string())
    };
    let ends = format!("{} → {}", name(&current.from), name(&current.to));
    let source = current.from.clone();
    let source_name = name(&source);
    // A router's routes are a list of its own: a route typed here that it
    // lacks is added to it (`route_rename::route_edge`).
    let typed = editor.view_of(&source).is_some_and(|node| {
        node.spec
            .with_untracked(|spec| spec.kind == heddle_engine::kinds::BuiltinKind::Router.name())
    });
    view! {
        <section class="inspector-section" aria-label="Edge">
            <h2 class="inspector-title">"Edge"</h2>
            <p class="inspector-doc">{ends}</p>
            <label class="field">
                <span class="field-label">"Condition"</span>
                <input name="condition" class="mono" placeholder="count < 3" prop:value=condition_now
                    on:input=check_condition on:change=set("condition") readonly=read_only />
                <span class="field-hint">"Taken only when this holds (see the condition language)."</span>
                {move || condition_error.get().map(|error| view! { <span class="field-error" role="alert">{error}</span> })}
            </label>
            <RoutePicker editor edge=current.id.clone() source source_name catalog on_change=Callback::new(set("route")) read_only typed />
            // The mouse's way to remove it (the keyboard's is Delete): as
            // n8n's trash on an edge.
            {(!read_only).then(|| view! {
                <div class="form-actions">
                    <button class="button edge-delete" type="button" data-testid="edge-delete"
                        title="Delete this edge (Delete)"
                        on:click=move |_| super::keys::delete_selection(editor)>
                        "Delete edge"
                    </button>
                </div>
            })}
        </section>
    }
    .into_any()
}

/// The route field: a list of the source's routes when it chooses any
/// (with "always", no route, first), a note when it chooses none, and a
/// text field when the source cannot be built to ask (it has problems of
/// its own, shown on it). A router's (`typed`) is a text field offering
/// its routes, so a route it does not have yet can be typed: n8n's Switch
/// names a new output where it is drawn.
#[component]
fn RoutePicker(
    editor: Editor,
    edge: EdgeId,
    source: NodeId,
    source_name: String,
    catalog: Resource<Result<Catalog, AppError>>,
    on_change: Callback<leptos::ev::Event>,
    read_only: bool,
    typed: bool,
) -> impl IntoView {
    let route_now = {
        let edge = edge.clone();
        move || {
            editor.edges.with(|edges| {
                edges
                    .iter()
                    .find(|e| e.id == edge)
                    .and_then(|e| e.route.clone())
                    .unwrap_or_default()
            })
        }
    };
    let routes = Memo::new(move |_| {
        let registry = catalog
            .get()
            .and_then(Result::ok)
            .map(|catalog| Registry::for_validation(&catalog))
            .unwrap_or_default();
        editor.content.track();
        heddle_engine::node_routes(&editor.document(), &source, &registry)
    });
    // Which field to draw; the field itself stays put while the route
    // changes, so the keyboard keeps its place in the list.
    let shape = {
        let route_now = route_now.clone();
        Memo::new(move |_| match routes.get() {
            Some(routes) if !routes.is_empty() || !route_now().is_empty() => Shape::Pick(routes),
            Some(_) => Shape::NoRoutes,
            None => Shape::Free,
        })
    };
    let hint = format!("Taken when {source_name} picks this route.");
    let none = format!(
        "{source_name} picks no routes: this edge is always taken (or when its condition holds)."
    );
    move || {
        let route_now = route_now.clone();
        match shape.get() {
            Shape::Pick(routes) if typed => {
                let list = format!("edge-routes-{edge}");
                let offered = routes
                    .into_iter()
                    .map(|route| view! { <option value=route></option> })
                    .collect_view();
                let hint = format!(
                    "Taken when {source_name} picks this route; a new one typed is added to its routes. Empty: always taken."
                );
                view! {
                    <label class="field">
                        <span class="field-label">"Route"</span>
                        <input name="route" data-testid="edge-route" list=list.clone() autocomplete="off"
                            placeholder="always (no route)" prop:value=route_now readonly=read_only
                            on:change=move |event| on_change.run(event) />
                        <datalist id=list>{offered}</datalist>
                        <span class="field-hint">{hint}</span>
                    </label>
                }
                .into_any()
            }
            Shape::Pick(routes) => {
                let unknown = {
                    let (route_now, routes, source_name) =
                        (route_now.clone(), routes.clone(), source_name.clone());
                    move || {
                        let now = route_now();
                        (!now.is_empty() && !routes.contains(&now)).then(|| {
                            let text = format!("{now} (not a route of {source_name})");
                            view! { <option value=now>{text}</option> }
                        })
                    }
                };
                let choices = routes
                    .into_iter()
                    .map(|route| {
                        let text = route.clone();
                        view! { <option value=route>{text}</option> }
                    })
                    .collect_view();
                view! {
                    <label class="field">
                        <span class="field-label">"Route"</span>
                        <select name="route" data-testid="edge-route" disabled=read_only
                            prop:value=route_now on:change=move |event| on_change.run(event)>
                            <option value="">"Always (no route)"</option>
                            {choices}
                            {unknown}
                        </select>
                        <span class="field-hint">{hint.clone()}</span>
                    </label>
                }
                .into_any()
            }
            Shape::NoRoutes => view! {
                <p class="field-hint" data-testid="edge-no-routes">{none.clone()}</p>
            }
            .into_any(),
            Shape::Free => view! {
                <label class="field">
                    <span class="field-label">"Route"</span>
                    <input name="route" placeholder="billing" prop:value=route_now
                        on:change=move |event| on_change.run(event) readonly=read_only />
                    <span class="field-hint">"Taken when a router or condition node picks this route."</span>
                </label>
            }
            .into_any(),
        }
    }
}

/// The route field's form.
#[derive(Clone, PartialEq)]
enum Shape {
    /// A list of the source's routes.
    Pick(Vec<String>),
    /// The source picks none: no field, a note.
    NoRoutes,
    /// The source does not build, so its routes are unknown: text.
    Free,
}
