//! Sharing a graph: the owner grants teammates a role by username, or makes
//! share links (a role, an optional expiry, optionally a run and a step to
//! open). Opening a link while logged in grants its role for as long as
//! the link lives; revoking it ends that access at once, open websockets
//! included.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use crate::access::Role;
use crate::error::AppError;
#[cfg(feature = "ssr")]
use crate::http_status::with_error_status;

/// A share link as its owner sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ShareLink {
    pub id: String,
    pub graph_id: String,
    pub role: Role,
    /// The link's path on this server: `/share/<token>`.
    pub path: String,
    pub run_id: Option<String>,
    pub step: Option<i64>,
    pub created_at: String,
    pub expires_at: Option<String>,
    pub revoked: bool,
    pub expired: bool,
    /// How many people opened it.
    pub uses: i64,
}

/// Someone the owner granted a role by name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Member {
    pub username: String,
    pub role: Role,
}

/// Everything the share dialog shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Sharing {
    pub links: Vec<ShareLink>,
    pub members: Vec<Member>,
}

/// What a link offers, shown before it is accepted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkPreview {
    pub graph_name: String,
    /// The graph owner's username.
    pub owner: String,
    pub role: Role,
}

/// What opening a link granted, and where to go.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Accepted {
    pub graph_id: String,
    pub role: Role,
    /// The graph's page, or its run's replay at the step.
    pub target: String,
}

/// The longest a link may live before it expires, in hours (a year).
pub const MAX_EXPIRY_HOURS: u32 = 24 * 366;

/// The graph's links and members (owner only).
#[server(endpoint = "sharing")]
pub async fn get_sharing(graph_id: String) -> Result<Sharing, AppError> {
    with_error_status(ssr::sharing_here(&graph_id).await)
}

/// Makes a share link (owner only). `role` is `viewer` or `editor`.
#[server(endpoint = "create_share_link")]
pub async fn create_share_link(
    graph_id: String,
    role: Grant,
    // Text, so the form's "never" (an empty value) reads as none.
    #[server(default)] expires_in_hours: Option<String>,
    #[server(default)] run_id: Option<String>,
    #[server(default)] step: Option<i64>,
) -> Result<ShareLink, AppError> {
    let expires_in_hours = match expires_in_hours.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(hours) => Some(hours.parse::<u32>().map_err(|_| {
            AppError::InvalidInput(format!(
                "`expires_in_hours` must be a number of hours, not `{hours}`"
            ))
        })?),
    };
    let run_id = run_id.filter(|run| !run.is_empty());
    with_error_status(ssr::create_link_here(&graph_id, role, expires_in_hours, run_id, step).await)
}

/// Revokes a link (owner only); whoever got access through it loses it now.
#[server(endpoint = "revoke_share_link")]
pub async fn revoke_share_link(graph_id: String, link_id: String) -> Result<(), AppError> {
    with_error_status(ssr::revoke_link_here(&graph_id, &link_id).await)
}

/// Grants `username` a role, changes it, or (`role` = `none`) takes it
/// away (owner only).
#[server(endpoint = "set_member_role")]
pub async fn set_member_role(
    graph_id: String,
    username: String,
    role: MemberAccess,
) -> Result<(), AppError> {
    with_error_status(ssr::set_member_here(&graph_id, &username, role).await)
}

/// What a share link offers (grants nothing).
#[server(endpoint = "preview_share_link")]
pub async fn preview_share_link(token: String) -> Result<LinkPreview, AppError> {
    with_error_status(ssr::preview_here(&token).await)
}

/// Opens a share link as the logged-in user: grants its role and sends
/// the browser to the graph (or the run and step the link names).
#[server(endpoint = "accept_share_link")]
pub async fn accept_share_link(token: String) -> Result<Accepted, AppError> {
    let accepted = with_error_status(ssr::accept_here(&token).await)?;
    leptos_axum::redirect(&accepted.target);
    Ok(accepted)
}

/// A role the owner may give: on a share link, or to a member.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Grant {
    Viewer,
    Editor,
}

impl From<Grant> for Role {
    fn from(grant: Grant) -> Role {
        match grant {
            Grant::Viewer => Role::Viewer,
            Grant::Editor => Role::Editor,
        }
    }
}

/// What the owner sets a teammate's access to: a role, or none (the
/// member is removed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MemberAccess {
    Viewer,
    Editor,
    None,
}

impl MemberAccess {
    /// The role it grants (`None` when it removes the member).
    pub fn grant(self) -> Option<Grant> {
        match self {
            MemberAccess::Viewer => Some(Grant::Viewer),
            MemberAccess::Editor => Some(Grant::Editor),
            MemberAccess::None => None,
        }
    }
}

#[cfg(feature = "ssr")]
pub mod ssr;
