//! What the API's paths name, as typed structs: the OpenAPI document
//! describes each path parameter from these, and a malformed one (a
//! version that is not a number) is refused before any handler runs.

use schemars::JsonSchema;
use serde::Deserialize;

/// `/graphs/{id}`.
#[derive(Deserialize, JsonSchema)]
pub struct GraphPath {
    /// The graph's id (a UUID).
    pub id: String,
}

/// `/graphs/{id}/versions/{version}`.
#[derive(Deserialize, JsonSchema)]
pub struct VersionPath {
    /// The graph's id (a UUID).
    pub id: String,
    /// A saved version's number.
    pub version: i64,
}

/// `/runs/{id}`.
#[derive(Deserialize, JsonSchema)]
pub struct RunPath {
    /// The run's id.
    pub id: String,
}

/// `/threads/{id}`.
#[derive(Deserialize, JsonSchema)]
pub struct ThreadPath {
    /// The thread's id.
    pub id: String,
}

/// `/graphs/{id}/links/{link}`.
#[derive(Deserialize, JsonSchema)]
pub struct LinkPath {
    /// The graph's id (a UUID).
    pub id: String,
    /// The share link's id.
    pub link: String,
}

/// `/graphs/{id}/members/{username}`.
#[derive(Deserialize, JsonSchema)]
pub struct MemberPath {
    /// The graph's id (a UUID).
    pub id: String,
    /// The teammate's username.
    pub username: String,
}

/// `/share/{token}`.
#[derive(Deserialize, JsonSchema)]
pub struct TokenPath {
    /// The share link's token, from its URL.
    pub token: String,
}

/// `/secrets/{name}`.
#[derive(Deserialize, JsonSchema)]
pub struct SecretPath {
    /// The secret's name.
    pub name: String,
}

/// `/keys/{id}`.
#[derive(Deserialize, JsonSchema)]
pub struct KeyPath {
    /// The API key's id (not its secret).
    pub id: String,
}

/// `/graphs/{id}/webhooks/{hook}`.
#[derive(Deserialize, JsonSchema)]
pub struct WebhookPath {
    /// The graph's id (a UUID).
    pub id: String,
    /// The webhook's id (not its URL's token).
    pub hook: String,
}

/// `/hooks/{token}`.
#[derive(Deserialize, JsonSchema)]
pub struct HookPath {
    /// The secret token of the webhook's URL.
    pub token: String,
}

/// `/graphs/{id}/schedules/{schedule}`.
#[derive(Deserialize, JsonSchema)]
pub struct SchedulePath {
    /// The graph's id (a UUID).
    pub id: String,
    /// The schedule's id.
    pub schedule: String,
}

/// `/graphs/{id}/widgets/{widget}`.
#[derive(Deserialize, JsonSchema)]
pub struct WidgetPath {
    /// The graph's id (a UUID).
    pub id: String,
    /// The widget's id (not its token).
    pub widget: String,
}

/// `/graphs/{id}/datasets/{dataset}`.
#[derive(Deserialize, JsonSchema)]
pub struct DatasetPath {
    /// The graph's id (a UUID).
    pub id: String,
    /// The dataset's id.
    pub dataset: String,
}

/// `/graphs/{id}/datasets/{dataset}/examples/{example}`.
#[derive(Deserialize, JsonSchema)]
pub struct ExamplePath {
    /// The graph's id (a UUID).
    pub id: String,
    /// The dataset's id.
    pub dataset: String,
    /// The example's id (one of the latest version's).
    pub example: String,
}

/// `/graphs/{id}/experiments/{experiment}`.
#[derive(Deserialize, JsonSchema)]
pub struct ExperimentPath {
    /// The graph's id (a UUID).
    pub id: String,
    /// The experiment's id.
    pub experiment: String,
}
