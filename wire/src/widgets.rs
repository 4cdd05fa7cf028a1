//! Chat widgets: a chat bubble for a published chat graph, embedded on
//! other sites with one script tag. A widget's token is public; it answers
//! only pages on its allowed origins, within rate limits, and its
//! conversations are threads of the graph that its editors open in the
//! app (runs labelled "Chat widget").

use crate::graphs::GraphId;
use serde::{Deserialize, Serialize};

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
    pub graph_id: GraphId,
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
