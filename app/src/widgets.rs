//! Chat widgets: a chat bubble for a published chat graph, embedded on
//! other sites with one script tag. A widget's token is public; it answers
//! only pages on its allowed origins, within rate limits, and its
//! conversations are threads of the graph that its editors open in the
//! app (runs labelled "Chat widget").

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::AppError;
#[cfg(feature = "ssr")]
use crate::http_status::with_error_status;

/// How a widget is set up.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WidgetSettings {
    /// What it is for, e.g. `Shop support`: 1 to 64 characters.
    pub name: String,
    /// The sites it answers: origins such as `https://shop.example` (1 to
    /// 20).
    pub allowed_origins: Vec<String>,
    /// The chat's title in its header; the graph's name when absent.
    #[serde(default)]
    pub title: Option<String>,
    /// Its colour, `#rrggbb` (`#4f46e5` by default).
    #[serde(default)]
    pub color: Option<String>,
    /// A first message shown before anyone writes.
    #[serde(default)]
    pub greeting: Option<String>,
    #[serde(default = "enabled")]
    pub enabled: bool,
}

fn enabled() -> bool {
    true
}

/// A widget as listed, with its public token.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Widget {
    pub id: String,
    pub graph_id: String,
    pub name: String,
    /// Public: it goes in the embedding page's script tag.
    pub token: String,
    pub allowed_origins: Vec<String>,
    pub title: String,
    pub color: String,
    pub greeting: Option<String>,
    pub enabled: bool,
    pub created_by: Option<String>,
    pub created_at: String,
}

impl Widget {
    /// The script tag that embeds it, for a server at `origin`.
    pub fn snippet(&self, origin: &str) -> String {
        format!(
            "<script src=\"{origin}/widget.js\" data-heddle-widget=\"{}\" async></script>",
            self.token
        )
    }
}

/// The graph's widgets (viewers and up).
#[server(endpoint = "list_widgets")]
pub async fn list_widgets(graph_id: String) -> Result<Vec<Widget>, AppError> {
    let (db, allowed) =
        crate::access::ssr::require_here(&graph_id, crate::access::Role::Viewer).await?;
    with_error_status(ssr::list(&db, &allowed).await)
}

/// Makes a widget (editors).
#[server(endpoint = "create_widget", input = leptos::server_fn::codec::Json)]
pub async fn create_widget(graph_id: String, settings: WidgetSettings) -> Result<Widget, AppError> {
    let (db, allowed) =
        crate::access::ssr::require_here(&graph_id, crate::access::Role::Editor).await?;
    with_error_status(ssr::create(&db, &allowed, settings).await)
}

/// Changes a widget (editors).
#[server(endpoint = "update_widget", input = leptos::server_fn::codec::Json)]
pub async fn update_widget(
    graph_id: String,
    id: String,
    settings: WidgetSettings,
) -> Result<Widget, AppError> {
    let (db, allowed) =
        crate::access::ssr::require_here(&graph_id, crate::access::Role::Editor).await?;
    with_error_status(ssr::update(&db, &allowed, &id, settings).await)
}

/// Deletes a widget (editors): pages embedding it show it unavailable.
#[server(endpoint = "delete_widget")]
pub async fn delete_widget(graph_id: String, id: String) -> Result<(), AppError> {
    let (db, allowed) =
        crate::access::ssr::require_here(&graph_id, crate::access::Role::Editor).await?;
    with_error_status(ssr::delete(&db, &allowed, &id).await)
}

#[cfg(feature = "ssr")]
pub mod ssr;
