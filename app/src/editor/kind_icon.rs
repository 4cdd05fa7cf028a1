//! A small line icon per node kind, so kinds are told apart at a glance in
//! the palette (and anywhere else a kind is listed). Drawn as one SVG path
//! on a 16 × 16 grid, in the kind's colour; a kind without its own icon
//! gets a plain box.

use leptos::prelude::*;

/// The icon's path for `kind`.
fn path(kind: &str) -> &'static str {
    match kind {
        "start" => "M5 3l8 5-8 5z",
        "end" => "M4 4h8v8H4z",
        "set" => "M3 13l1-3.5 7-7 2.5 2.5-7 7zM9.5 4l2.5 2.5",
        "condition" => "M8 2l6 6-6 6-6-6z",
        "join" => "M3 2v3c0 3 5 3 5 6v3M13 2v3c0 3-5 3-5 6",
        "fan_out" => "M8 2v4M8 6c0 3-5 3-5 6v2M8 6c0 3 5 3 5 6v2M8 6v8",
        "ask" => "M2.5 3h11v7.5H7l-3 2.5v-2.5H2.5zM6.5 5.5a1.5 1.5 0 1 1 2 1.4V8",
        "wait" => "M8 2a6 6 0 1 0 0.01 0zM8 4.5V8l2.5 1.5",
        "llm" => "M8 1.5l1.6 4.9L14.5 8l-4.9 1.6L8 14.5l-1.6-4.9L1.5 8l4.9-1.6z",
        "tools" => {
            "M10.5 2a3 3 0 0 0-2.9 3.8L2.5 10.9l2.6 2.6 5.1-5.1A3 3 0 0 0 14 5.5l-2 .7-1.8-1.8.7-2z"
        }
        "router" => "M8 1.5v13M8 3.5h4.5l1.5 1.5-1.5 1.5H8M8 8.5H3.5L2 10l1.5 1.5H8",
        "agent" => "M13.5 8A5.5 5.5 0 1 1 11.9 4.1M13.5 1.5v3.5H10M6 8h4M8 6v4",
        "memory" => "M2.5 3.5h11v3h-11zM2.5 9.5h11v3h-11zM5 5h.01M5 11h.01",
        "subgraph" => "M1.5 2.5h8v6h-8zM6.5 7.5h8v6h-8z",
        "human" => "M8 7a2.5 2.5 0 1 0 0-5 2.5 2.5 0 0 0 0 5zM3 14.5c0-3 2.2-5 5-5s5 2 5 5",
        "script" => "M5.5 4L2 8l3.5 4M10.5 4L14 8l-3.5 4",
        _ => "M3 3h10v10H3z",
    }
}

/// The icon of `kind`.
#[component]
pub fn KindIcon(#[prop(into)] kind: String) -> impl IntoView {
    view! {
        <svg class=format!("kind-icon kind-{kind}") viewBox="0 0 16 16" aria-hidden="true">
            <path d=path(&kind) />
        </svg>
    }
}
